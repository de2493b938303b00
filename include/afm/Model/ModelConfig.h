//===- ModelConfig.h - config.json of a model -------------------*- C++ -*-===//
//
// The hyper-parameters of a model, read from the config.json described in
// docs/model-config.md. Every key of that document is a field here, with the
// documented default.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_MODEL_MODELCONFIG_H
#define AFM_MODEL_MODELCONFIG_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace mlir::afm {

/// The model families a config can name. Only the dense decoder is
/// supported so far; the others are rejected with "not supported yet".
enum class Architecture {
  /// `"afm-dense"`: a pre-norm dense decoder (Llama-style).
  Dense,
};

/// The `architecture` string of `arch`, e.g. "afm-dense".
llvm::StringRef architectureName(Architecture arch);

/// A parsed and validated config.json. Field names follow the JSON keys
/// (`hidden_size` -> `hiddenSize`); the comments give the symbol used in
/// DESIGN.md section 1.
struct ModelConfig {
  Architecture architecture = Architecture::Dense;
  /// V.
  int64_t vocabSize = 0;
  /// d.
  int64_t hiddenSize = 0;
  /// F, the FFN width.
  int64_t intermediateSize = 0;
  /// L.
  int64_t numHiddenLayers = 0;
  /// H, query heads.
  int64_t numAttentionHeads = 0;
  /// G, key/value heads; defaults to H.
  int64_t numKeyValueHeads = 0;
  /// hd; defaults to d / H.
  int64_t headDim = 0;
  double rmsNormEps = 1e-5;
  double ropeTheta = 500000.0;
  /// The context length the compiled model supports.
  int64_t maxPositionEmbeddings = 4096;
  /// The LM head reuses `model.embed_tokens.weight`.
  bool tieWordEmbeddings = false;
  /// w, the window of local layers.
  int64_t slidingWindow = 4096;
  /// Groups of this many local layers then one global; 0 = all global.
  int64_t localPerGlobal = 0;
  /// False: global layers use no positional embedding (NoPE).
  bool ropeInGlobalLayers = true;
};

/// Parses and validates the text of a config.json. `fileName` only names
/// the file in error messages, which also name the offending key: unknown
/// keys, wrong JSON types, missing required keys and invalid values
/// (non-positive sizes, H % G != 0, odd head_dim, unknown or unsupported
/// architecture) are all errors.
llvm::Expected<ModelConfig> parseModelConfig(llvm::StringRef json,
                                             llvm::StringRef fileName);

/// Reads and parses the config.json at `path`.
llvm::Expected<ModelConfig> loadModelConfig(llvm::StringRef path);

/// Whether `layer` is a local (sliding-window) layer: layers come in
/// groups of `localPerGlobal` local layers followed by one global layer;
/// with `localPerGlobal == 0` every layer is global.
bool isLocalLayer(const ModelConfig &config, int64_t layer);

/// Whether `layer` applies RoPE to queries and keys: local layers always,
/// global layers iff `ropeInGlobalLayers`.
bool usesRope(const ModelConfig &config, int64_t layer);

/// The config as config.json text with every key explicit, in the order of
/// docs/model-config.md. `parseModelConfig` reads it back to the same
/// config (floats are printed so that they round-trip exactly).
std::string toJSON(const ModelConfig &config);

} // namespace mlir::afm

#endif // AFM_MODEL_MODELCONFIG_H
