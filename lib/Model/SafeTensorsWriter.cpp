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
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace mlir::afm;
using llvm::Error;
using llvm::Expected;

static Error checkTensors(llvm::ArrayRef<SafeTensor> tensors) {
  llvm::StringSet<> seen;
  for (const SafeTensor &tensor : tensors) {
    if (tensor.name == "__metadata__")
      return llvm::createStringError(
          "'__metadata__' is reserved and cannot name a tensor");
    if (!seen.insert(tensor.name).second)
      return llvm::createStringError("tensor '" + tensor.name +
                                     "' is given twice");
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

static std::string
headerJSON(llvm::ArrayRef<SafeTensor> tensors,
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
    for (const SafeTensor &tensor : tensors) {
      out.attributeObject(tensor.name, [&] {
        out.attribute("dtype", dtypeName(tensor.dtype));
        out.attributeArray("shape", [&] {
          for (int64_t dim : tensor.shape)
            out.value(dim);
        });
        out.attributeArray("data_offsets", [&] {
          out.value(offset);
          out.value(offset + tensor.data.size());
        });
      });
      offset += tensor.data.size();
    }
  });
  // Pad so that 8 + header size, the start of the data area, is aligned.
  text.append((8 - text.size() % 8) % 8, ' ');
  return text;
}

Expected<std::string> mlir::afm::serializeSafeTensors(
    llvm::ArrayRef<SafeTensor> tensors,
    const std::map<std::string, std::string> &metadata) {
  if (Error err = checkTensors(tensors))
    return std::move(err);
  std::string header = headerJSON(tensors, metadata);
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
