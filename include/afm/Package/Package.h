//===- Package.h - compiled module + weights -> .afmb -----------*- C++ -*-===//

#ifndef AFM_COMPILER_PACKAGE_H
#define AFM_COMPILER_PACKAGE_H

#include "afm/Model/WeightSource.h"
#include "afm/Target/TargetDescription.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mlir::afm {

/// The weights a module is packaged with: those at `path` (a .safetensors
/// file, a sharded index or a model folder, as `WeightSource::open` takes
/// them), or when `path` is empty at the module's `afm.weights_file`, or
/// none (all weights inline). Errors name the file.
llvm::Expected<std::optional<WeightSource>>
openPackageWeights(ModuleOp module, llvm::StringRef path);

/// Writes the .afmb of a module lowered by the afm-codegen pipeline (it
/// carries the weight and KV layouts) with its compiled shared `library`.
/// External weights are read from `weights` (converted to f32); inline ones
/// from the layout. Errors name the weight at fault.
llvm::Error writePackage(llvm::raw_ostream &os, ModuleOp lowered,
                         llvm::StringRef library,
                         const TargetDescription &target,
                         const WeightSource *weights);

class WeightEncoder;

/// The text side of a package (docs/afmb-format.md, format 1.1): what turns
/// ids into text and back, and what ends generation.
struct PackageText {
  /// The serialized runtime tokenizer (runtime/proto/tokenizer.proto);
  /// empty: the package has no tokenizer section.
  std::string tokenizer;
  /// One past its largest id: at most the model's vocabulary.
  uint32_t tokenizerIdLimit = 0;
  /// The ids that end generation, each below the vocabulary size.
  std::vector<uint32_t> eosIds;
};

/// Called as weights are packaged (from several threads, one at a time):
/// the weight just done, the bytes of the section written so far and in
/// all.
using PackageProgress =
    std::function<void(llvm::StringRef weight, uint64_t done, uint64_t total)>;

/// The compiled shared library of a package, asked for once the weights
/// are encoded (afm-compile builds it meanwhile, on another thread).
using LibraryProducer = llvm::function_ref<llvm::Expected<std::string>()>;

/// `writePackage` with a caller's encoder, which afterwards holds every
/// encoded weight (for `printCompileReport` and the effective weights), and
/// the library from `library`, called after the weights are encoded (its
/// error is returned as it is). Weights are encoded in parallel, each
/// released once it is in the package. `text` is checked against the
/// model's vocabulary.
llvm::Error writePackage(llvm::raw_ostream &os, ModuleOp lowered,
                         LibraryProducer library,
                         const TargetDescription &target,
                         WeightEncoder &encoder,
                         const PackageProgress &progress = nullptr,
                         const PackageText &text = {});

/// Writes to `path`, as an F32 safetensors file, the float weights the
/// compiled model `lowered` computes with (`afm-compile
/// --dequantized-weights`, for a reference run): compressed weights
/// dequantized, split-off adapters folded back in, adapter factors left
/// out. Weights are encoded again one at a time and streamed to the file,
/// so memory holds one weight's values.
llvm::Error writeEffectiveWeights(ModuleOp lowered,
                                  const WeightSource *weights,
                                  llvm::StringRef path,
                                  const PackageProgress &progress = nullptr);

/// The compile report of `afm-compile --report`: per weight its format,
/// bits per weight and SNR against the float weights; model totals (weight
/// bytes, KV bytes per token).
void printCompileReport(llvm::raw_ostream &os, ModuleOp lowered,
                        const WeightEncoder &encoder);

} // namespace mlir::afm

#endif // AFM_COMPILER_PACKAGE_H
