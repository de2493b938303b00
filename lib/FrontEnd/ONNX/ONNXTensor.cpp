//===- ONNXTensor.cpp - ONNX tensors and types -> MLIR --------------------===//

#include "ONNXImporter.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mlir::afm;
using llvm::createStringError;
using llvm::formatv;

Type onnx_import::getElementType(MLIRContext *context, int32_t dataType) {
  // Unsigned ONNX types map onto signless integers of their width (what
  // arith and linalg compute on); the importer remembers which values are
  // unsigned (isUnsignedDataType) where a lowering must know.
  switch (dataType) {
  case onnx::TensorProto::FLOAT:
    return Float32Type::get(context);
  case onnx::TensorProto::FLOAT16:
    return Float16Type::get(context);
  case onnx::TensorProto::BFLOAT16:
    return BFloat16Type::get(context);
  case onnx::TensorProto::DOUBLE:
    return Float64Type::get(context);
  // A bool is a byte holding 0 or 1, in ONNX data and in our buffers
  // (vectors of i1 would be stored bit-packed).
  case onnx::TensorProto::BOOL:
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT8:
    return IntegerType::get(context, 8);
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::UINT16:
    return IntegerType::get(context, 16);
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::UINT32:
    return IntegerType::get(context, 32);
  case onnx::TensorProto::INT64:
  case onnx::TensorProto::UINT64:
    return IntegerType::get(context, 64);
  default:
    return nullptr;
  }
}

bool onnx_import::isUnsignedDataType(int32_t dataType) {
  return dataType == onnx::TensorProto::BOOL ||
         dataType == onnx::TensorProto::UINT8 ||
         dataType == onnx::TensorProto::UINT16 ||
         dataType == onnx::TensorProto::UINT32 ||
         dataType == onnx::TensorProto::UINT64;
}

int64_t onnx_import::getStorageBytes(Type elementType) {
  return std::max<int64_t>(1, elementType.getIntOrFloatBitWidth() / 8);
}

std::optional<int64_t>
onnx_import::getElementCount(llvm::ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t dim : shape)
    if (llvm::MulOverflow(count, dim, count))
      return std::nullopt;
  return count;
}

std::string onnx_import::getDataTypeName(int32_t dataType) {
  if (onnx::TensorProto::DataType_IsValid(dataType))
    return onnx::TensorProto::DataType_Name(
        static_cast<onnx::TensorProto::DataType>(dataType));
  return formatv("<data type {0}>", dataType).str();
}

/// The bytes of a tensor stored outside the model: the `location` entry is
/// relative to the model's directory; `offset` and `length` are optional.
/// Like ONNX's checker, locations that leave that directory (absolute
/// paths, `..`) are rejected: a model must not read arbitrary files.
static llvm::Expected<std::string>
readExternalData(const onnx::TensorProto &tensor, llvm::StringRef modelDir) {
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  for (const onnx::StringStringEntryProto &entry : tensor.external_data()) {
    if (entry.key() == "location") {
      location = entry.value();
      continue;
    }
    if (entry.key() != "offset" && entry.key() != "length")
      continue;
    uint64_t value;
    if (llvm::StringRef(entry.value()).getAsInteger(10, value))
      return createStringError(
          formatv("tensor '{0}': external data {1} '{2}' is not a "
                  "non-negative integer",
                  tensor.name(), entry.key(), entry.value()));
    if (entry.key() == "offset")
      offset = value;
    else
      length = value;
  }
  if (location.empty())
    return createStringError(formatv(
        "tensor '{0}': external data without a location", tensor.name()));
  if (llvm::sys::path::is_absolute(location) ||
      llvm::is_contained(llvm::make_range(llvm::sys::path::begin(location),
                                          llvm::sys::path::end(location)),
                         ".."))
    return createStringError(
        formatv("tensor '{0}': external data location '{1}' is not inside "
                "the model's directory",
                tensor.name(), location));
  llvm::SmallString<256> path(modelDir);
  llvm::sys::path::append(path, location);
  // Devices and pipes could block or never end.
  if (llvm::sys::fs::exists(path) && !llvm::sys::fs::is_regular_file(path))
    return createStringError(
        formatv("tensor '{0}': external data '{1}' is not a regular file",
                tensor.name(), path));
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                          /*RequiresNullTerminator=*/false);
  if (!file)
    return createStringError(
        formatv("tensor '{0}': cannot read external data '{1}': {2}",
                tensor.name(), path, file.getError().message()));
  llvm::StringRef bytes = (*file)->getBuffer();
  if (offset > bytes.size() || (length && *length > bytes.size() - offset))
    return createStringError(formatv(
        "tensor '{0}': external data range [{1}, +{2}) is outside "
        "'{3}' ({4} bytes)",
        tensor.name(), offset, length ? *length : 0, path, bytes.size()));
  return bytes.substr(offset, length.value_or(bytes.size() - offset)).str();
}

using onnx_import::getElementCount;
using onnx_import::kStringBytes;

/// A STRING tensor's elements as [S..., kStringBytes] NUL-padded bytes.
static llvm::Expected<DenseElementsAttr>
convertStringTensor(MLIRContext *context, const onnx::TensorProto &tensor) {
  llvm::SmallVector<int64_t> shape(tensor.dims().begin(), tensor.dims().end());
  for (int64_t dim : shape)
    if (dim < 0)
      return createStringError(
          formatv("tensor '{0}' has a negative dimension", tensor.name()));
  std::optional<int64_t> count = getElementCount(shape);
  if (!count || *count != tensor.string_data_size())
    return createStringError(
        formatv("tensor '{0}' holds {1} strings; its shape needs {2}",
                tensor.name(), tensor.string_data_size(),
                count ? std::to_string(*count) : "more than fit in 64 bits"));
  llvm::SmallVector<char> bytes;
  bytes.reserve(*count * kStringBytes);
  for (const auto &[index, element] : llvm::enumerate(tensor.string_data())) {
    if (static_cast<int64_t>(element.size()) >= kStringBytes ||
        element.find('\0') != std::string::npos)
      return createStringError(formatv(
          "tensor '{0}': string {1} is {2} bytes{3}; STRING elements are at "
          "most {4} bytes without NULs here",
          tensor.name(), index, element.size(),
          element.find('\0') != std::string::npos ? " with a NUL" : "",
          kStringBytes - 1));
    bytes.append(element.begin(), element.end());
    bytes.append(kStringBytes - element.size(), 0);
  }
  shape.push_back(kStringBytes);
  return DenseElementsAttr::getFromRawBuffer(
      RankedTensorType::get(shape, IntegerType::get(context, 8)), bytes);
}

llvm::Expected<DenseElementsAttr>
onnx_import::convertTensor(MLIRContext *context,
                           const onnx::TensorProto &tensor,
                           llvm::StringRef modelDir) {
  if (tensor.data_type() == onnx::TensorProto::STRING) {
    if (tensor.data_location() == onnx::TensorProto::EXTERNAL)
      return createStringError(formatv(
          "tensor '{0}': STRING data cannot be external", tensor.name()));
    return convertStringTensor(context, tensor);
  }
  Type elementType = getElementType(context, tensor.data_type());
  if (!elementType)
    return createStringError(
        formatv("tensor '{0}' has element type {1}, which the importer does "
                "not support",
                tensor.name(), getDataTypeName(tensor.data_type())));
  for (int64_t dim : tensor.dims())
    if (dim < 0)
      return createStringError(
          formatv("tensor '{0}' has a negative dimension", tensor.name()));
  llvm::SmallVector<int64_t> shape(tensor.dims().begin(), tensor.dims().end());
  std::optional<int64_t> numElements = getElementCount(shape);
  int64_t byteSize;
  if (!numElements ||
      llvm::MulOverflow(*numElements, getStorageBytes(elementType), byteSize))
    return createStringError(formatv(
        "tensor '{0}' has more bytes than fit in 64 bits", tensor.name()));
  auto type = RankedTensorType::get(shape, elementType);

  std::string external;
  const std::string *raw = nullptr;
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    auto bytes = readExternalData(tensor, modelDir);
    if (!bytes)
      return bytes.takeError();
    external = std::move(*bytes);
    raw = &external;
  } else if (tensor.has_raw_data()) {
    raw = &tensor.raw_data();
  }
  if (raw) {
    // raw_data is little-endian, like the hosts this compiler runs on.
    if (static_cast<int64_t>(raw->size()) != byteSize)
      return createStringError(
          formatv("tensor '{0}' holds {1} bytes of data; its type needs {2}",
                  tensor.name(), raw->size(), byteSize));
    return DenseElementsAttr::getFromRawBuffer(
        type, llvm::ArrayRef<char>(raw->data(), raw->size()));
  }

  auto checkCount = [&](int64_t count) -> llvm::Error {
    if (count == *numElements)
      return llvm::Error::success();
    return createStringError(
        formatv("tensor '{0}' holds {1} values; its shape needs {2}",
                tensor.name(), count, *numElements));
  };
  // The typed fields: narrow integers, bools and 16-bit floats sit in
  // int32_data (the latter as bit patterns), unsigned 32/64-bit integers
  // in uint64_data.
  auto fromInts = [&](auto values) -> llvm::Expected<DenseElementsAttr> {
    if (auto err = checkCount(values.size()))
      return std::move(err);
    unsigned width = elementType.getIntOrFloatBitWidth();
    llvm::SmallVector<APInt> ints(llvm::map_range(values, [&](auto v) {
      return APInt(width, static_cast<uint64_t>(v), /*isSigned=*/false,
                   /*implicitTrunc=*/true);
    }));
    if (auto floatType = dyn_cast<FloatType>(elementType)) {
      llvm::SmallVector<APFloat> floats(llvm::map_range(ints, [&](APInt i) {
        return APFloat(floatType.getFloatSemantics(), i);
      }));
      return DenseElementsAttr::get(type, floats);
    }
    return DenseElementsAttr::get(type, ints);
  };
  switch (tensor.data_type()) {
  case onnx::TensorProto::FLOAT:
    if (auto err = checkCount(tensor.float_data_size()))
      return std::move(err);
    return DenseElementsAttr::get(
        type, llvm::ArrayRef<float>(tensor.float_data().data(),
                                    tensor.float_data_size()));
  case onnx::TensorProto::DOUBLE:
    if (auto err = checkCount(tensor.double_data_size()))
      return std::move(err);
    return DenseElementsAttr::get(
        type, llvm::ArrayRef<double>(tensor.double_data().data(),
                                     tensor.double_data_size()));
  case onnx::TensorProto::INT64:
    return fromInts(tensor.int64_data());
  case onnx::TensorProto::UINT32:
  case onnx::TensorProto::UINT64:
    return fromInts(tensor.uint64_data());
  default:
    return fromInts(tensor.int32_data());
  }
}

llvm::Expected<RankedTensorType>
onnx_import::convertValueType(MLIRContext *context,
                              const onnx::ValueInfoProto &info,
                              const llvm::StringMap<int64_t> &boundDims) {
  if (!info.type().has_tensor_type())
    return createStringError(formatv("'{0}' is not a tensor", info.name()));
  const onnx::TypeProto::Tensor &tensorType = info.type().tensor_type();
  bool isString = tensorType.elem_type() == onnx::TensorProto::STRING;
  Type elementType = isString ? IntegerType::get(context, 8)
                              : getElementType(context, tensorType.elem_type());
  if (!elementType)
    return createStringError(
        formatv("'{0}' has element type {1}, which the importer does not "
                "support",
                info.name(), getDataTypeName(tensorType.elem_type())));
  if (!tensorType.has_shape())
    return createStringError(formatv("'{0}' has no shape", info.name()));
  llvm::SmallVector<int64_t> shape;
  for (const auto &[index, dim] : llvm::enumerate(tensorType.shape().dim())) {
    if (dim.has_dim_param()) {
      auto bound = boundDims.find(dim.dim_param());
      if (bound != boundDims.end()) {
        shape.push_back(bound->second);
        continue;
      }
      return createStringError(formatv(
          "'{0}' has a symbolic dimension {1} ('{2}'); bind it to a size "
          "with --bind-dim {2}=N (shapes are static)",
          info.name(), index, dim.dim_param()));
    }
    if (!dim.has_dim_value() || dim.dim_value() < 0)
      return createStringError(formatv(
          "'{0}' has a dynamic dimension {1}; only static shapes are "
          "supported",
          info.name(), index));
    shape.push_back(dim.dim_value());
  }
  if (isString)
    shape.push_back(kStringBytes);
  if (!getElementCount(shape))
    return createStringError(formatv(
        "'{0}' has more elements than fit in 64 bits", info.name()));
  return RankedTensorType::get(shape, elementType);
}
