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

#include <string>

namespace mlir::afm {

struct ConfigImportOptions {
  /// Tokens per prefill call; the runtime pads the last chunk.
  int64_t prefillChunk = 16;
  /// Recorded on the module as `afm.weights_file` for the packager.
  std::string weightsPath;
  /// Recorded as the model's name.
  std::string modelName = "model";
};

/// An error unless the importer can build `config`'s architecture: only
/// afm-dense so far (the reference evaluator runs the AFM families).
/// `origin` names the config file in the message.
llvm::Error checkImportSupported(const ModelConfig &config,
                                 llvm::StringRef origin);

/// The afm IR of `config`, which must pass `checkImportSupported`. Never
/// fails for such a config that parsed.
OwningOpRef<ModuleOp> importModelConfig(MLIRContext *context,
                                        const ModelConfig &config,
                                        const ConfigImportOptions &options);

/// Reads `configPath` (and checks the weights at options.weightsPath
/// against it, when given), then imports. Errors name the file.
llvm::Expected<OwningOpRef<ModuleOp>>
importModelFiles(MLIRContext *context, llvm::StringRef configPath,
                 const ConfigImportOptions &options);

} // namespace mlir::afm

#endif // AFM_IMPORT_CONFIGIMPORT_H
