//===- WeightSource.h - a model's tensors over one or more files -*- C++ -*-===//
//
// The weights of a model as one name -> tensor map, whether they sit in one
// .safetensors file or are sharded over several, as Hugging Face folders
// ship them (`model.safetensors.index.json` maps each tensor name to its
// shard). Each file stays mapped, so readers stream tensor by tensor.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_MODEL_WEIGHTSOURCE_H
#define AFM_MODEL_WEIGHTSOURCE_H

#include "afm/Model/SafeTensors.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir::afm {

/// One tensor of a weight source and the file that holds it.
struct WeightTensor {
  const SafeTensorsFile *file = nullptr;
  const TensorInfo *info = nullptr;

  explicit operator bool() const { return info != nullptr; }
};

/// The tensors of one or more validated safetensors files, each name in
/// exactly one file.
class WeightSource {
public:
  /// The weights at `path`: a model folder, whose
  /// `model.safetensors.index.json` or else `model.safetensors` is opened;
  /// a sharded index (a name ending in `.index.json`, see `openIndex`); or
  /// any other file as one .safetensors file.
  static llvm::Expected<WeightSource> open(llvm::StringRef path);

  /// The union of the safetensors files at `paths`; a tensor name in two of
  /// them is an error naming both files.
  static llvm::Expected<WeightSource> openFiles(llvm::ArrayRef<std::string> paths);

  /// A sharded checkpoint: the JSON at `indexPath` has a `weight_map`
  /// object (tensor name -> shard file name, relative to the index's
  /// folder; other top-level keys such as `metadata` are ignored). Every
  /// shard it names is opened; errors name the index and the tensor or
  /// shard: a shard that cannot be opened, a tensor the index puts in a
  /// shard that does not hold it, a tensor of a shard that the index does
  /// not list (or puts in another shard), a name in two shards.
  static llvm::Expected<WeightSource> openIndex(llvm::StringRef indexPath);

  /// A source over `file`, which the caller keeps alive.
  static WeightSource borrow(const SafeTensorsFile &file);

  /// The tensor called `name`, or an empty WeightTensor.
  WeightTensor lookup(llvm::StringRef name) const;

  /// Every tensor: file by file in the order given (shards in the order
  /// of their names), each file's tensors in file order.
  std::vector<WeightTensor> tensors() const;

  /// The files, in the order of `tensors`.
  const std::vector<const SafeTensorsFile *> &files() const { return list; }

  /// How errors name the source: the path it was opened from.
  llvm::StringRef path() const { return origin; }

private:
  WeightSource() = default;
  /// Adds `file`'s tensors; an error if a name is already present.
  llvm::Error add(const SafeTensorsFile *file);

  std::string origin;
  std::vector<std::unique_ptr<SafeTensorsFile>> owned;
  std::vector<const SafeTensorsFile *> list;
  llvm::StringMap<WeightTensor> byName;
};

} // namespace mlir::afm

#endif // AFM_MODEL_WEIGHTSOURCE_H
