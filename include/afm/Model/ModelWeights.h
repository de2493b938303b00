//===- ModelWeights.h - the tensors a config calls for ----------*- C++ -*-===//
//
// The contract between config.json and model.safetensors: which tensors a
// model has and their shapes (docs/model-config.md, "Tensor names").
//
//===----------------------------------------------------------------------===//

#ifndef AFM_MODEL_MODELWEIGHTS_H
#define AFM_MODEL_MODELWEIGHTS_H

#include "afm/Model/ModelConfig.h"
#include "afm/Model/SafeTensors.h"
#include "afm/Model/WeightSource.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::afm {

/// `model.embed_tokens.weight`, [V, d].
inline constexpr const char kEmbedTokensName[] = "model.embed_tokens.weight";
/// `model.norm.weight`, [d].
inline constexpr const char kFinalNormName[] = "model.norm.weight";
/// `lm_head.weight`, [V, d]; absent when the embeddings are tied.
inline constexpr const char kLmHeadName[] = "lm_head.weight";

/// The stem of the run-time adapter slot that adapts the projection
/// `weightName` (its name without `.weight`): the slot's factors are
/// `<stem>.lora_a` [r, in] and `<stem>.lora_b` [out, r].
inline std::string adapterSlotName(llvm::StringRef weightName) {
  llvm::StringRef stem = weightName;
  stem.consume_back(".weight");
  return stem.str();
}

/// The tensor names a decoder layer can have. Which of them it has depends
/// on the config (see `expectedTensors`): a Block-2 layer of afm-on-device
/// has no `kProj` / `vProj`; an MoE layer of afm-pt-moe has the router and
/// its experts instead of `gateProj` / `upProj` / `downProj`.
struct LayerTensorNames {
  std::string inputNorm;
  std::string qProj;
  std::string kProj;
  std::string vProj;
  std::string oProj;
  /// `self_attn.{q,k,v,o}_proj.bias` (`attention_bias`,
  /// `attention_output_bias`).
  std::string qBias;
  std::string kBias;
  std::string vBias;
  std::string oBias;
  /// `self_attn.{q,k}_norm.weight`, [hd] (`qk_norm`).
  std::string qNorm;
  std::string kNorm;
  /// The FFN's input norm, or with `sandwich_norms` (Gemma) the norm of the
  /// attention's output.
  std::string postAttentionNorm;
  /// `sandwich_norms` only: the FFN's input and output norms.
  std::string preFeedforwardNorm;
  std::string postFeedforwardNorm;
  std::string gateProj;
  std::string upProj;
  std::string downProj;
  /// The router of an MoE layer, [E, d]: `mlp.router.weight` in PT-MoE
  /// tracks, `mlp.gate.weight` (Qwen-MoE's name) in afm-dense.
  std::string router;
  /// `mlp.experts.`: the prefix of every expert's tensors.
  std::string experts;

  /// `mlp.experts.{e}.{gate,up}_proj.weight` of expert `e`, [F_moe, d]
  /// (one tensor per expert, as Mixtral and Qwen-MoE checkpoints store them).
  std::string expertGateProj(int64_t e) const;
  std::string expertUpProj(int64_t e) const;
  /// `mlp.experts.{e}.down_proj.weight`, [d, F_moe].
  std::string expertDownProj(int64_t e) const;
};

/// The names of layer `layer` of afm-dense and afm-on-device
/// (`model.layers.{layer}.*`).
LayerTensorNames layerTensorNames(int64_t layer);

/// The names of layer `layer` of track `track` of afm-pt-moe
/// (`model.tracks.{track}.layers.{layer}.*`).
LayerTensorNames trackLayerTensorNames(int64_t track, int64_t layer);

/// A tensor the config calls for.
struct ExpectedTensor {
  std::string name;
  std::vector<int64_t> shape;

  /// The product of `shape`.
  int64_t numElements() const;
};

/// Every tensor of the model, in the order of docs/model-config.md: the
/// embeddings; each layer's tensors in the order of `LayerTensorNames`
/// (afm-pt-moe: track 0's layers, then track 1's, ...); the final norm;
/// and `lm_head` only when the embeddings are not tied.
std::vector<ExpectedTensor> expectedTensors(const ModelConfig &config);

/// The number of parameters of the model: the elements of every expected
/// tensor (INT64_MAX if that does not fit).
int64_t parameterCount(const ModelConfig &config);

/// Checks that `file` holds exactly the tensors of `expectedTensors` with
/// those shapes. The error lists every missing tensor, unexpected extra
/// tensor and shape mismatch (with both shapes), one per line.
llvm::Error checkWeights(const ModelConfig &config,
                         const SafeTensorsFile &file);

/// The same check over the tensors of a weight source (one file or the
/// shards of a checkpoint); problems name the file of the tensor. With
/// `allowUnused`, tensors the config does not name are fine (an early-exit
/// draft reads a subset of its model's weights).
llvm::Error checkWeights(const ModelConfig &config,
                         const WeightSource &weights,
                         bool allowUnused = false);

} // namespace mlir::afm

#endif // AFM_MODEL_MODELWEIGHTS_H
