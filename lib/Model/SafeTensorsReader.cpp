//===- SafeTensorsReader.cpp - open and validate a .safetensors file ------===//
//
// Everything a later access relies on is checked here, once: after `open`
// succeeds every tensor's bytes lie inside the file and match its shape.
//
//===----------------------------------------------------------------------===//

#include "afm/Model/SafeTensors.h"

#include "afm/Model/BoundedJSON.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

using namespace mlir::afm;
using llvm::Error;
using llvm::Expected;
using llvm::StringRef;
namespace json = llvm::json;

namespace {
/// Builds "<file>: <message>" errors.
struct ErrorContext {
  StringRef file;

  Error fail(const llvm::Twine &message) const {
    return llvm::createStringError(file + ": " + message);
  }
  Error failTensor(StringRef name, const llvm::Twine &message) const {
    return fail("tensor '" + name + "': " + message);
  }
};

/// A non-negative integer, or nullopt.
std::optional<int64_t> getNonNegative(const json::Value &value) {
  std::optional<int64_t> integer = value.getAsInteger();
  if (!integer || *integer < 0)
    return std::nullopt;
  return integer;
}

Error parseMetadata(const ErrorContext &ctx, const json::Value &value,
                    std::map<std::string, std::string> &metadata) {
  const json::Object *object = value.getAsObject();
  if (!object)
    return ctx.fail("'__metadata__' must be an object of strings");
  for (const auto &[key, entry] : *object) {
    std::optional<StringRef> text = entry.getAsString();
    if (!text)
      return ctx.fail("'__metadata__' entry '" + StringRef(key) +
                      "' is not a string");
    metadata[key.str()] = text->str();
  }
  return Error::success();
}

Expected<std::vector<int64_t>> parseShape(const ErrorContext &ctx,
                                          StringRef name,
                                          const json::Object &entry) {
  const json::Array *array = entry.getArray("shape");
  if (!array)
    return ctx.failTensor(name, "'shape' must be an array of non-negative "
                                "integers");
  std::vector<int64_t> shape;
  for (const json::Value &dim : *array) {
    std::optional<int64_t> size = getNonNegative(dim);
    if (!size)
      return ctx.failTensor(name, "'shape' must be an array of non-negative "
                                  "integers");
    shape.push_back(*size);
  }
  return shape;
}

Expected<TensorInfo> parseTensor(const ErrorContext &ctx, StringRef name,
                                 const json::Value &value, uint64_t dataSize) {
  const json::Object *entry = value.getAsObject();
  if (!entry)
    return ctx.failTensor(name, "expected an object with dtype, shape and "
                                "data_offsets");
  TensorInfo info;
  info.name = name.str();

  std::optional<StringRef> dtype = entry->getString("dtype");
  if (!dtype)
    return ctx.failTensor(name, "missing string 'dtype'");
  std::optional<DType> parsed = parseDType(*dtype);
  if (!parsed)
    return ctx.failTensor(name, "dtype '" + *dtype +
                                    "' is not supported (supported: F32, "
                                    "F16, BF16)");
  info.dtype = *parsed;

  Expected<std::vector<int64_t>> shape = parseShape(ctx, name, *entry);
  if (!shape)
    return shape.takeError();
  info.shape = std::move(*shape);

  const json::Array *offsets = entry->getArray("data_offsets");
  std::optional<int64_t> begin, end;
  if (offsets && offsets->size() == 2) {
    begin = getNonNegative((*offsets)[0]);
    end = getNonNegative((*offsets)[1]);
  }
  if (!begin || !end)
    return ctx.failTensor(name, "'data_offsets' must be [begin, end] with "
                                "non-negative integers");
  if (*begin > *end || static_cast<uint64_t>(*end) > dataSize)
    return ctx.failTensor(
        name, llvm::formatv("data_offsets [{0}, {1}] are outside the data "
                            "area ({2} bytes)",
                            *begin, *end, dataSize));
  info.begin = *begin;
  info.end = *end;

  std::optional<int64_t> expected = tensorByteSize(info.shape, info.dtype);
  if (!expected || *expected != *end - *begin)
    return ctx.failTensor(
        name, llvm::formatv("data_offsets cover {0} bytes but shape {1} of {2} "
                            "needs {3}",
                            *end - *begin, formatShape(info.shape),
                            dtypeName(info.dtype),
                            expected ? std::to_string(*expected)
                                     : std::string("more than 2^63")));
  return info;
}

/// Sorts `infos` into file order and rejects overlapping byte ranges.
Error sortAndCheckOverlap(const ErrorContext &ctx,
                          std::vector<TensorInfo> &infos) {
  llvm::sort(infos, [](const TensorInfo &a, const TensorInfo &b) {
    return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
  });
  const TensorInfo *furthest = nullptr;
  for (const TensorInfo &info : infos) {
    if (info.begin == info.end)
      continue; // Empty tensors occupy no bytes.
    if (furthest && info.begin < furthest->end)
      return ctx.fail(llvm::formatv(
          "tensors '{0}' [{1}, {2}] and '{3}' [{4}, {5}] overlap",
          furthest->name, furthest->begin, furthest->end, info.name,
          info.begin, info.end));
    if (!furthest || info.end > furthest->end)
      furthest = &info;
  }
  return Error::success();
}
} // namespace

Expected<SafeTensorsFile> SafeTensorsFile::open(StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!buffer)
    return llvm::createStringError(path + ": cannot read: " +
                                   buffer.getError().message());
  return fromBuffer(std::move(*buffer));
}

Expected<SafeTensorsFile>
SafeTensorsFile::fromBuffer(std::unique_ptr<llvm::MemoryBuffer> buffer) {
  ErrorContext ctx{buffer->getBufferIdentifier()};
  StringRef contents = buffer->getBuffer();
  if (contents.size() < 8)
    return ctx.fail(llvm::formatv("truncated: {0} bytes is too short for the "
                                  "8-byte header length",
                                  contents.size()));
  uint64_t headerSize = llvm::support::endian::read64le(contents.data());
  if (headerSize > contents.size() - 8)
    return ctx.fail(llvm::formatv("header length {0} runs past the end of the "
                                  "file ({1} bytes follow the length field)",
                                  headerSize, contents.size() - 8));
  Expected<json::Value> header =
      parseBoundedJSON(contents.substr(8, headerSize));
  if (!header)
    return ctx.fail("header is not valid JSON: " +
                    llvm::toString(header.takeError()));
  const json::Object *object = header->getAsObject();
  if (!object)
    return ctx.fail("header is not a JSON object");

  SafeTensorsFile file;
  file.dataStart = 8 + headerSize;
  uint64_t dataSize = contents.size() - file.dataStart;
  // Visit entries by name so that the first error reported is stable.
  std::vector<StringRef> keys;
  for (const auto &entry : *object)
    keys.push_back(entry.first);
  llvm::sort(keys);
  for (StringRef key : keys) {
    const json::Value &value = *object->get(key);
    if (key == "__metadata__") {
      if (Error err = parseMetadata(ctx, value, file.meta))
        return std::move(err);
      continue;
    }
    Expected<TensorInfo> info = parseTensor(ctx, key, value, dataSize);
    if (!info)
      return info.takeError();
    file.infos.push_back(std::move(*info));
  }
  if (Error err = sortAndCheckOverlap(ctx, file.infos))
    return std::move(err);
  for (size_t i = 0; i < file.infos.size(); ++i)
    file.indexByName[file.infos[i].name] = i;
  file.buffer = std::move(buffer);
  return std::move(file);
}
