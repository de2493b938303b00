//===- SafeTensorsWriter.cpp - write a .safetensors file ------------------===//
//
// Tensors are laid out in the order given, without gaps; the header is
// compact JSON padded with spaces so that the data area starts at a
// multiple of 8 bytes, as the safetensors spec recommends.
//
//===----------------------------------------------------------------------===//

#include "afm/Model/SafeTensors.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileOutputBuffer.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace mlir::afm;
using llvm::Error;
using llvm::Expected;

/// A tensor's name may be used once and is not the metadata key; `seen`
/// holds the names before it.
static Error checkName(llvm::StringRef name, llvm::StringSet<> &seen) {
  if (name == "__metadata__")
    return llvm::createStringError(
        "'__metadata__' is reserved and cannot name a tensor");
  if (!seen.insert(name).second)
    return llvm::createStringError("tensor '" + name + "' is given twice");
  return Error::success();
}

static Error checkTensors(llvm::ArrayRef<SafeTensor> tensors) {
  llvm::StringSet<> seen;
  for (const SafeTensor &tensor : tensors) {
    if (Error err = checkName(tensor.name, seen))
      return err;
    std::optional<int64_t> size = tensorByteSize(tensor.shape, tensor.dtype);
    if (!size || static_cast<uint64_t>(*size) != tensor.data.size())
      return llvm::createStringError(llvm::formatv(
          "tensor '{0}' has {1} bytes of data but shape {2} of {3} needs {4}",
          tensor.name, tensor.data.size(), formatShape(tensor.shape),
          dtypeName(tensor.dtype),
          size ? std::to_string(*size) : std::string("more than 2^63")));
  }
  return Error::success();
}

/// The header of tensors `specs`, laid out in order without gaps.
static std::string
headerJSON(llvm::ArrayRef<SafeTensorSpec> specs,
           const std::map<std::string, std::string> &metadata) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::json::OStream out(os);
  uint64_t offset = 0;
  out.object([&] {
    if (!metadata.empty())
      out.attributeObject("__metadata__", [&] {
        for (const auto &[key, value] : metadata)
          out.attribute(key, value);
      });
    for (const SafeTensorSpec &spec : specs) {
      uint64_t bytes = *tensorByteSize(spec.shape, spec.dtype);
      out.attributeObject(spec.name, [&] {
        out.attribute("dtype", dtypeName(spec.dtype));
        out.attributeArray("shape", [&] {
          for (int64_t dim : spec.shape)
            out.value(dim);
        });
        out.attributeArray("data_offsets", [&] {
          out.value(offset);
          out.value(offset + bytes);
        });
      });
      offset += bytes;
    }
  });
  // Pad so that 8 + header size, the start of the data area, is aligned.
  text.append((8 - text.size() % 8) % 8, ' ');
  return text;
}

static std::vector<SafeTensorSpec>
specsOf(llvm::ArrayRef<SafeTensor> tensors) {
  std::vector<SafeTensorSpec> specs;
  for (const SafeTensor &tensor : tensors)
    specs.push_back({tensor.name, tensor.dtype, tensor.shape});
  return specs;
}

Expected<std::string> mlir::afm::serializeSafeTensors(
    llvm::ArrayRef<SafeTensor> tensors,
    const std::map<std::string, std::string> &metadata) {
  if (Error err = checkTensors(tensors))
    return std::move(err);
  std::string header = headerJSON(specsOf(tensors), metadata);
  std::string file(8, '\0');
  llvm::support::endian::write64le(file.data(), header.size());
  file += header;
  for (const SafeTensor &tensor : tensors)
    file.append(reinterpret_cast<const char *>(tensor.data.data()),
                tensor.data.size());
  return file;
}

Error mlir::afm::writeSafeTensors(
    llvm::StringRef path, llvm::ArrayRef<SafeTensor> tensors,
    const std::map<std::string, std::string> &metadata) {
  Expected<std::string> bytes = serializeSafeTensors(tensors, metadata);
  if (!bytes)
    return llvm::createStringError(path + ": " +
                                   llvm::toString(bytes.takeError()));
  Expected<std::unique_ptr<llvm::FileOutputBuffer>> out =
      llvm::FileOutputBuffer::create(path, bytes->size());
  if (!out)
    return llvm::createStringError(path + ": cannot write: " +
                                   llvm::toString(out.takeError()));
  std::memcpy((*out)->getBufferStart(), bytes->data(), bytes->size());
  if (Error err = (*out)->commit())
    return llvm::createStringError(path + ": cannot write: " +
                                   llvm::toString(std::move(err)));
  return Error::success();
}

//===----------------------------------------------------------------------===//
// Streaming
//===----------------------------------------------------------------------===//

Expected<std::unique_ptr<SafeTensorsStreamWriter>>
SafeTensorsStreamWriter::create(llvm::StringRef path,
                                std::vector<SafeTensorSpec> specs,
                                const std::map<std::string, std::string> &metadata) {
  llvm::StringSet<> seen;
  for (const SafeTensorSpec &spec : specs) {
    if (Error err = checkName(spec.name, seen))
      return llvm::createStringError(path + ": " +
                                     llvm::toString(std::move(err)));
    if (!tensorByteSize(spec.shape, spec.dtype))
      return llvm::createStringError(path + ": tensor '" + spec.name +
                                     "' has more than 2^63 bytes");
  }
  std::unique_ptr<SafeTensorsStreamWriter> writer(new SafeTensorsStreamWriter);
  writer->path = path.str();
  writer->specs = std::move(specs);
  // Written next to the destination and renamed over it at the end, so that
  // a reader of an existing file never sees a half-written one.
  llvm::SmallString<256> model(path);
  model += ".tmp-%%%%%%";
  int fd;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueFile(model, fd, writer->tempPath))
    return llvm::createStringError(path + ": cannot write: " + ec.message());
  writer->out = std::make_unique<llvm::raw_fd_ostream>(fd, /*shouldClose=*/true);
  std::string header = headerJSON(writer->specs, metadata);
  char length[8];
  llvm::support::endian::write64le(length, header.size());
  writer->out->write(length, 8);
  *writer->out << header;
  return std::move(writer);
}

SafeTensorsStreamWriter::~SafeTensorsStreamWriter() {
  if (!out)
    return;
  // Not finished: an error path. Leave no temporary file behind.
  out->close();
  out->clear_error();
  llvm::sys::fs::remove(tempPath);
}

Error SafeTensorsStreamWriter::append(llvm::ArrayRef<uint8_t> data) {
  auto skipEmpty = [&] {
    while (current < specs.size() &&
           *tensorByteSize(specs[current].shape, specs[current].dtype) == 0)
      ++current;
  };
  skipEmpty();
  while (!data.empty()) {
    if (current >= specs.size())
      return llvm::createStringError(path + ": more data than the " +
                                     llvm::Twine(specs.size()) +
                                     " tensors of the header hold");
    uint64_t size = *tensorByteSize(specs[current].shape, specs[current].dtype);
    uint64_t take = std::min<uint64_t>(size - written, data.size());
    out->write(reinterpret_cast<const char *>(data.data()), take);
    written += take;
    data = data.drop_front(take);
    if (written == size) {
      ++current;
      written = 0;
      skipEmpty();
    }
  }
  if (out->has_error())
    return llvm::createStringError(path + ": cannot write: " +
                                   out->error().message());
  return Error::success();
}

Error SafeTensorsStreamWriter::finish() {
  if (Error err = append({}))
    return err;
  if (current != specs.size())
    return llvm::createStringError(path + ": tensor '" + specs[current].name +
                                   "' is incomplete");
  out->close();
  bool failed = out->has_error();
  std::string message = failed ? out->error().message() : "";
  out->clear_error();
  out.reset();
  if (!failed)
    if (std::error_code ec = llvm::sys::fs::rename(tempPath, path)) {
      failed = true;
      message = ec.message();
    }
  if (failed) {
    llvm::sys::fs::remove(tempPath);
    return llvm::createStringError(path + ": cannot write: " + message);
  }
  return Error::success();
}
