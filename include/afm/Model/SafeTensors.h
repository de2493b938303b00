//===- SafeTensors.h - read and write .safetensors files --------*- C++ -*-===//
//
// The safetensors format: an 8-byte little-endian header length N, N bytes
// of JSON header (`{"name": {"dtype", "shape", "data_offsets"}, ...}` and an
// optional `"__metadata__"` string map), then the data area that the
// offsets index. Only the float dtypes a model config allows (F32, F16,
// BF16) are read; every other dtype is an error naming the tensor.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_MODEL_SAFETENSORS_H
#define AFM_MODEL_SAFETENSORS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir::afm {

/// Element types of weight tensors.
enum class DType { F32, F16, BF16 };

/// The safetensors spelling: "F32", "F16", "BF16".
llvm::StringRef dtypeName(DType dtype);

/// The dtype spelled `name`, or nullopt for any other (e.g. "I8").
std::optional<DType> parseDType(llvm::StringRef name);

/// Bytes per element.
int64_t dtypeSize(DType dtype);

/// The product of `shape` (1 for a scalar); the caller makes sure it fits.
int64_t shapeNumElements(llvm::ArrayRef<int64_t> shape);

/// The byte size of a tensor of `shape` and `dtype`, or nullopt if it
/// does not fit in int64.
std::optional<int64_t> tensorByteSize(llvm::ArrayRef<int64_t> shape,
                                      DType dtype);

/// "[2, 3]": how shapes appear in error messages.
std::string formatShape(llvm::ArrayRef<int64_t> shape);

/// One tensor of an open file; `begin` and `end` are byte offsets into the
/// data area, already validated against it.
struct TensorInfo {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  uint64_t begin = 0;
  uint64_t end = 0;

  /// The product of `shape` (1 for a scalar).
  int64_t numElements() const;
};

/// A validated safetensors file held in memory (mapped when large). Every
/// accessor works on data checked by `open`, so none of them can read out
/// of bounds.
class SafeTensorsFile {
public:
  /// Opens and validates the file at `path`: the header length lies within
  /// the file, the header is a JSON object, `__metadata__` (if present)
  /// maps strings to strings, every tensor has a supported dtype, a shape of
  /// non-negative integers, `data_offsets` [begin, end] inside the data
  /// area with end - begin == elements * dtype size, and no two tensors
  /// overlap. Gaps between tensors are allowed.
  static llvm::Expected<SafeTensorsFile> open(llvm::StringRef path);

  /// Validates `buffer` as `open` does; errors name the buffer identifier.
  static llvm::Expected<SafeTensorsFile>
  fromBuffer(std::unique_ptr<llvm::MemoryBuffer> buffer);

  /// The path (buffer identifier) the file was read from.
  llvm::StringRef path() const { return buffer->getBufferIdentifier(); }

  /// Every tensor in file order (ascending data offset; empty tensors at
  /// the same offset by name).
  llvm::ArrayRef<TensorInfo> tensors() const { return infos; }

  /// The tensor names in file order.
  std::vector<llvm::StringRef> names() const;

  /// The tensor called `name`, or null.
  const TensorInfo *lookup(llvm::StringRef name) const;

  /// The `__metadata__` map (empty if absent).
  const std::map<std::string, std::string> &metadata() const {
    return meta;
  }

  /// The raw little-endian bytes of `tensor`, which must come from this
  /// file's `tensors()` or `lookup()`.
  llvm::ArrayRef<uint8_t> bytes(const TensorInfo &tensor) const;

  /// The elements of `tensor` widened exactly to f32.
  std::vector<float> toF32(const TensorInfo &tensor) const;

  /// The elements of an F32 `tensor` read in place from the mapped file
  /// (no copy); nothing for other dtypes or unaligned data.
  std::optional<llvm::ArrayRef<float>> f32View(const TensorInfo &tensor) const;

  /// Tells the OS that bytes [begin, end) of `tensor` will not be read
  /// again soon: a mapped file's pages leave the process's resident set
  /// (they stay in the page cache). Streaming a model tensor by tensor
  /// this way keeps memory bounded by a tensor, not the file.
  void releasePages(const TensorInfo &tensor, uint64_t begin,
                    uint64_t end) const;

  /// The elements of the tensor called `name` as f32; an error naming the
  /// file and the tensor if there is no such tensor.
  llvm::Expected<std::vector<float>> toF32(llvm::StringRef name) const;

private:
  SafeTensorsFile() = default;

  std::unique_ptr<llvm::MemoryBuffer> buffer;
  /// Offset of the data area in `buffer`.
  uint64_t dataStart = 0;
  std::vector<TensorInfo> infos;
  llvm::StringMap<size_t> indexByName;
  std::map<std::string, std::string> meta;
};

/// A tensor to write: name, dtype, shape and its little-endian bytes.
struct SafeTensor {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;

  /// An F32 tensor holding `values`.
  static SafeTensor fromF32(llvm::StringRef name,
                            llvm::ArrayRef<int64_t> shape,
                            llvm::ArrayRef<float> values);
};

/// The header entry of a tensor: its name, element type and shape.
struct SafeTensorSpec {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
};

/// Writes a .safetensors file tensor by tensor, so that a model larger than
/// memory can be written: the header comes from `specs`, then the tensors'
/// bytes follow in that order, in pieces of any size. The file appears at
/// `path` (atomically, by rename) only when `finish` succeeds; a writer
/// destroyed before that leaves nothing behind.
class SafeTensorsStreamWriter {
public:
  static llvm::Expected<std::unique_ptr<SafeTensorsStreamWriter>>
  create(llvm::StringRef path, std::vector<SafeTensorSpec> specs,
         const std::map<std::string, std::string> &metadata = {});
  ~SafeTensorsStreamWriter();

  /// The next bytes of the data area (they may span tensors).
  llvm::Error append(llvm::ArrayRef<uint8_t> data);

  /// Checks that every tensor is complete and moves the file into place.
  llvm::Error finish();

private:
  SafeTensorsStreamWriter() = default;

  std::string path;
  llvm::SmallString<256> tempPath;
  std::vector<SafeTensorSpec> specs;
  std::unique_ptr<llvm::raw_fd_ostream> out;
  size_t current = 0;
  uint64_t written = 0;
};

/// The bytes of a safetensors file holding `tensors` in the given order
/// (header JSON padded with spaces to a multiple of 8 bytes, data packed
/// without gaps) and the `metadata` string map if it is not empty. An error
/// if a name repeats or is "__metadata__", or a tensor's byte count does not
/// match its shape and dtype.
llvm::Expected<std::string> serializeSafeTensors(
    llvm::ArrayRef<SafeTensor> tensors,
    const std::map<std::string, std::string> &metadata = {});

/// Writes `serializeSafeTensors(tensors, metadata)` to `path`.
llvm::Error
writeSafeTensors(llvm::StringRef path, llvm::ArrayRef<SafeTensor> tensors,
                 const std::map<std::string, std::string> &metadata = {});

} // namespace mlir::afm

#endif // AFM_MODEL_SAFETENSORS_H
