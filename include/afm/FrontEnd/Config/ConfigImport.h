//===- ConfigImport.h - config.json (+ safetensors) -> afm IR ---*- C++ -*-===//
//
// Builds the afm IR of a model described by a ModelConfig: two entry
// points with the signature afm-bind-entry-abi expects, `prefill` over a
// chunk of tokens and `decode` over one, whose weights are `afm.weight`
// ops naming the safetensors entries (docs/model-config.md).
//
//===----------------------------------------------------------------------===//

#ifndef AFM_IMPORT_CONFIGIMPORT_H
#define AFM_IMPORT_CONFIGIMPORT_H

#include "afm/Model/ModelConfig.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <optional>
#include <string>

namespace mlir::afm {

/// The prefill chunk a model gets when none is asked for: 128 tokens for
/// models of hidden_size 1024 or more, whose chunk GEMMs gain more than
/// the padding of a short prompt costs (128 is the fastest measured for
/// the 3B preset: README, "Real size"), 16 for smaller ones; never more
/// than max_position_embeddings.
int64_t defaultPrefillChunk(const ModelConfig &config);

/// The most rows a verify entry may have (its logits are T x vocab floats).
inline constexpr int64_t kMaxVerifyTokens = 16;
/// The largest run-time adapter rank (the paper's adapters have rank 32).
inline constexpr int64_t kMaxAdapterRank = 256;

struct ConfigImportOptions {
  /// Tokens per prefill call; the runtime pads the last chunk. Absent:
  /// defaultPrefillChunk.
  std::optional<int64_t> prefillChunk;
  /// Rows of the verify entry (speculative decoding: the last accepted
  /// token and up to T-1 drafted ones, every row's logits); 0: no verify
  /// entry. Local layers' ring caches get T-1 slots of slack so a verify
  /// step can be rewound.
  int64_t verifyTokens = 0;
  /// Import only the first N layers (earlyExitConfig): a self-speculative
  /// draft over the same weights file; 0: every layer.
  int64_t draftLayers = 0;
  /// Rank of the run-time LoRA adapter slots on every attention projection
  /// (q, k, v, o): `afm.adapter_weight` factors in the session's memory,
  /// zero until an adapter is attached; 0: none.
  int64_t adapterRank = 0;
  /// Recorded on the module as `afm.weights_file` for the packager.
  std::string weightsPath;
  /// Recorded as the model's name.
  std::string modelName = "model";
};

/// Checks what `importModelConfig` assumes of `options` (a prefill chunk
/// of at least 1 token; verify rows 0 or in [2, kMaxVerifyTokens]; an
/// adapter rank in [0, kMaxAdapterRank]).
llvm::Error checkConfigImportOptions(const ConfigImportOptions &options);

/// The afm IR of `config` (any architecture of docs/model-config.md).
/// Never fails for a config that parsed and options that pass
/// `checkConfigImportOptions`.
OwningOpRef<ModuleOp> importModelConfig(MLIRContext *context,
                                        const ModelConfig &config,
                                        const ConfigImportOptions &options);

/// Parses `json` (named `origin` in errors), checks the weights at
/// options.weightsPath against it when given, then imports.
llvm::Expected<OwningOpRef<ModuleOp>>
importModelJSON(MLIRContext *context, llvm::StringRef json,
                llvm::StringRef origin, const ConfigImportOptions &options);

/// Reads `configPath` (and checks the weights at options.weightsPath
/// against it, when given), then imports. Errors name the file.
llvm::Expected<OwningOpRef<ModuleOp>>
importModelFiles(MLIRContext *context, llvm::StringRef configPath,
                 const ConfigImportOptions &options);

} // namespace mlir::afm

#endif // AFM_IMPORT_CONFIGIMPORT_H
