//===- ReferenceModel.h - the plain C++ reference evaluator -----*- C++ -*-===//
//
// Runs a model described by config.json + model.safetensors with the
// operations of ReferenceOps.h, one token at a time, keeping every
// position's keys and values. It is the oracle compiled models are checked
// against, so it favours being obviously right over being fast.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_REFERENCE_REFERENCEMODEL_H
#define AFM_REFERENCE_REFERENCEMODEL_H

#include "afm/Model/ModelConfig.h"
#include "afm/Model/SafeTensors.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace mlir::afm {

/// A model with its context: the keys and values of every position so far.
class ReferenceModel {
public:
  /// Checks `weights` against `config` (`checkWeights`) and converts every
  /// weight to f32 once. `weights` is not used afterwards.
  static llvm::Expected<ReferenceModel> create(const ModelConfig &config,
                                               const SafeTensorsFile &weights);

  /// Appends `tokens` at the current position and returns the logits (V
  /// floats) of the last one. An error, leaving the context unchanged, if
  /// `tokens` is empty, holds an id outside [0, V), or would take the
  /// context past `max_position_embeddings`.
  llvm::Expected<std::vector<float>> forward(llvm::ArrayRef<int32_t> tokens);

  /// Forgets the context: the next token is at position 0.
  void reset();

  /// The number of tokens in the context.
  int64_t position() const { return pos; }

  const ModelConfig &config() const { return cfg; }

private:
  struct LayerWeights {
    std::vector<float> inputNorm, qProj, kProj, vProj, oProj;
    std::vector<float> postAttentionNorm, gateProj, upProj, downProj;
  };
  /// Keys and values of one layer: one row of G * hd floats per position.
  struct LayerCache {
    std::vector<float> keys, values;
  };

  explicit ReferenceModel(const ModelConfig &config) : cfg(config) {}

  llvm::Error checkTokens(llvm::ArrayRef<int32_t> tokens) const;
  /// Runs `token` at position `pos` through every layer (appending to the
  /// caches) and returns the final hidden state, before the last norm.
  std::vector<float> decoderStep(int32_t token);
  /// The attention block of `layer` for the normalized input `x`.
  std::vector<float> attentionBlock(int64_t layer, llvm::ArrayRef<float> x);
  /// The SwiGLU FFN of `layer` for the normalized input `x`.
  std::vector<float> ffnBlock(int64_t layer, llvm::ArrayRef<float> x) const;
  /// The final norm and the LM head.
  std::vector<float> logits(llvm::ArrayRef<float> hidden) const;

  ModelConfig cfg;
  std::vector<float> embedTokens, finalNorm, lmHead;
  std::vector<LayerWeights> layers;
  std::vector<LayerCache> caches;
  int64_t pos = 0;
};

} // namespace mlir::afm

#endif // AFM_REFERENCE_REFERENCEMODEL_H
