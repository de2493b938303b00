//===- SafeTensors.cpp - dtypes and access to validated tensors -----------===//

#include "afm/Model/SafeTensors.h"

#include "afm/Model/HalfFloat.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/raw_ostream.h"


#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#include <unistd.h>
#endif

using namespace mlir::afm;
using llvm::StringRef;

StringRef mlir::afm::dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "F32";
  case DType::F16:
    return "F16";
  case DType::BF16:
    return "BF16";
  }
  llvm_unreachable("unknown dtype");
}

std::optional<DType> mlir::afm::parseDType(StringRef name) {
  for (DType dtype : {DType::F32, DType::F16, DType::BF16})
    if (name == dtypeName(dtype))
      return dtype;
  return std::nullopt;
}

int64_t mlir::afm::dtypeSize(DType dtype) {
  return dtype == DType::F32 ? 4 : 2;
}

std::optional<int64_t> mlir::afm::tensorByteSize(llvm::ArrayRef<int64_t> shape,
                                                DType dtype) {
  std::optional<int64_t> size = dtypeSize(dtype);
  for (int64_t dim : shape)
    if (dim < 0 || !(size = llvm::checkedMul(*size, dim)))
      return std::nullopt;
  return size;
}

std::string mlir::afm::formatShape(llvm::ArrayRef<int64_t> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "[";
  llvm::interleave(shape, os, ", ");
  os << "]";
  return text;
}

int64_t mlir::afm::shapeNumElements(llvm::ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  return count;
}

int64_t TensorInfo::numElements() const { return shapeNumElements(shape); }

std::vector<StringRef> SafeTensorsFile::names() const {
  std::vector<StringRef> result;
  result.reserve(infos.size());
  for (const TensorInfo &info : infos)
    result.push_back(info.name);
  return result;
}

const TensorInfo *SafeTensorsFile::lookup(StringRef name) const {
  auto it = indexByName.find(name);
  return it == indexByName.end() ? nullptr : &infos[it->second];
}

llvm::ArrayRef<uint8_t> SafeTensorsFile::bytes(const TensorInfo &tensor) const {
  const auto *data =
      reinterpret_cast<const uint8_t *>(buffer->getBufferStart()) + dataStart;
  return llvm::ArrayRef<uint8_t>(data + tensor.begin,
                                 tensor.end - tensor.begin);
}

std::vector<float> SafeTensorsFile::toF32(const TensorInfo &tensor) const {
  namespace endian = llvm::support::endian;
  const uint8_t *data = bytes(tensor).data();
  int64_t count = tensor.numElements();
  std::vector<float> values(count);
  for (int64_t i = 0; i < count; ++i) {
    switch (tensor.dtype) {
    case DType::F32:
      values[i] = llvm::bit_cast<float>(endian::read32le(data + 4 * i));
      break;
    case DType::F16:
      values[i] = f16ToF32(endian::read16le(data + 2 * i));
      break;
    case DType::BF16:
      values[i] = bf16ToF32(endian::read16le(data + 2 * i));
      break;
    }
  }
  return values;
}

std::optional<llvm::ArrayRef<float>>
SafeTensorsFile::f32View(const TensorInfo &tensor) const {
  llvm::ArrayRef<uint8_t> raw = bytes(tensor);
  if (tensor.dtype != DType::F32 ||
      reinterpret_cast<uintptr_t>(raw.data()) % alignof(float) != 0 ||
      !llvm::sys::IsLittleEndianHost)
    return std::nullopt;
  return llvm::ArrayRef<float>(reinterpret_cast<const float *>(raw.data()),
                               raw.size() / sizeof(float));
}

void SafeTensorsFile::releasePages(const TensorInfo &tensor, uint64_t begin,
                                   uint64_t end) const {
#if defined(__unix__) || defined(__APPLE__)
  // Only a mapping may be dropped: on a heap copy MADV_DONTNEED would
  // zero the data.
  if (buffer->getBufferKind() != llvm::MemoryBuffer::MemoryBuffer_MMap)
    return;
  uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
  auto first = reinterpret_cast<uintptr_t>(bytes(tensor).data() + begin);
  auto last = reinterpret_cast<uintptr_t>(bytes(tensor).data() +
                                          std::min(end, tensor.end - tensor.begin));
  // Whole pages inside the range only: the neighbours may still be needed.
  first = (first + page - 1) / page * page;
  last = last / page * page;
  if (last > first)
    madvise(reinterpret_cast<void *>(first), last - first, MADV_DONTNEED);
#else
  (void)tensor, (void)begin, (void)end;
#endif
}

llvm::Expected<std::vector<float>>
SafeTensorsFile::toF32(StringRef name) const {
  const TensorInfo *tensor = lookup(name);
  if (!tensor)
    return llvm::createStringError(path() + ": no tensor named '" + name +
                                   "'");
  return toF32(*tensor);
}

SafeTensor SafeTensor::fromF32(StringRef name, llvm::ArrayRef<int64_t> shape,
                               llvm::ArrayRef<float> values) {
  SafeTensor tensor;
  tensor.name = name.str();
  tensor.dtype = DType::F32;
  tensor.shape.assign(shape.begin(), shape.end());
  tensor.data.resize(values.size() * 4);
  for (size_t i = 0; i < values.size(); ++i)
    llvm::support::endian::write32le(tensor.data.data() + 4 * i,
                                     llvm::bit_cast<uint32_t>(values[i]));
  return tensor;
}
