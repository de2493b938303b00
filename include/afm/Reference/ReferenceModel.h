//===- ReferenceModel.h - the plain C++ reference evaluator -----*- C++ -*-===//
//
// Runs a model described by config.json + model.safetensors with the
// operations of ReferenceOps.h, one token at a time, keeping every
// position's keys and values. It is the oracle compiled models are checked
// against, so it favours being obviously right over being fast. Every
// architecture of docs/model-config.md runs: afm-dense, afm-on-device
// (Block-2 layers attend over their source layer's cache) and afm-pt-moe
// (tracks, track blocks, MoE layers).
//
// A runtime LoRA adapter (`applyAdapter`, docs/semantics.md section 4.1)
// adapts q/k/v/o projections. With f32 activations it is merged into the
// f32 weights, W' = W + B A (each element summed in double, then rounded to
// f32). With int8 activations it cannot be merged, because the compiled
// model adds its term to a product of rounded activations while the term
// itself reads the unrounded ones: the projection is then
// linear(roundToInt8Activations(x), W) + (x A^T) B^T, x unrounded.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_REFERENCE_REFERENCEMODEL_H
#define AFM_REFERENCE_REFERENCEMODEL_H

#include "afm/Model/ModelConfig.h"
#include "afm/Model/WeightSource.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace mlir::afm {

struct LoRAAdapter;

/// A model with its context: the keys and values of every position so far.
class ReferenceModel {
public:
  /// Checks `config` (`validateModelConfig`, for configs built in code) and
  /// `weights` against it (`checkWeights`), and converts every weight to
  /// f32 once. `weights` is not used afterwards.
  static llvm::Expected<ReferenceModel> create(const ModelConfig &config,
                                               const SafeTensorsFile &weights);
  /// The same over a weight source (one file or the shards of a checkpoint).
  /// With `allowUnused`, tensors the config does not name are ignored (an
  /// early-exit model: the first layers of a larger one).
  static llvm::Expected<ReferenceModel> create(const ModelConfig &config,
                                               const WeightSource &weights,
                                               bool allowUnused = false);

  /// Applies `adapter` (loadPEFTAdapter) to the attention projections it
  /// names, as the header comment says. An error, leaving the model
  /// unchanged, if a pair names a weight that is not a q/k/v/o projection
  /// of this model, its sizes do not match the weight's, or an adapter has
  /// already been applied.
  llvm::Error applyAdapter(const LoRAAdapter &adapter);

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

  /// The routing of the context so far: expertCounts()[c][e] is the number
  /// of tokens that the MoE layer with KV-cache index c (`kvCacheIndex`:
  /// t * L + i) sent to expert e. Empty rows for dense layers; all rows
  /// empty for the architectures without MoE. `reset` clears it.
  const std::vector<std::vector<int64_t>> &expertCounts() const {
    return routed;
  }

private:
  /// One layer's weights. A Block-2 layer has no kProj / vProj; an MoE
  /// layer has the router and the stacked experts instead of
  /// gateProj / upProj / downProj.
  /// The factors of a projection's adapter kept apart from its weight
  /// (int8 activations only): `a` [r, in], `b` [out, r] already scaled.
  struct AdapterTerm {
    std::vector<float> a, b;
  };
  struct LayerWeights {
    std::vector<float> inputNorm, qProj, kProj, vProj, oProj;
    /// Empty unless an unmerged adapter adapts the projection.
    AdapterTerm qAdapter, kAdapter, vAdapter, oAdapter;
    /// Empty unless the config has the bias or the norm.
    std::vector<float> qBias, kBias, vBias, oBias, qNorm, kNorm;
    std::vector<float> postAttentionNorm, gateProj, upProj, downProj;
    /// `sandwich_norms` only.
    std::vector<float> preFeedforwardNorm, postFeedforwardNorm;
    std::vector<float> router, expertsGateProj, expertsUpProj,
        expertsDownProj;
  };
  /// The keys or the values of one layer: one row of (G / n) * hd values
  /// per position (none for Block-2 layers). An f32 cache keeps the floats;
  /// an int8 cache (kv_cache_dtype "int8") keeps what the compiled model's
  /// does, the codes and one scale per head vector (`quantizeKV`), and
  /// gives back their dequantized values; an f16 cache keeps each float
  /// rounded to the nearest binary16 (`f32ToF16`, ties to even).
  class CachedRows {
  public:
    CachedRows() = default;
    CachedRows(int64_t headDim, KVCacheDType dtype)
        : headDim(headDim), dtype(dtype) {}
    /// Appends one position's row.
    void append(llvm::ArrayRef<float> row);
    /// Every position's row, as attention reads it.
    std::vector<float> read() const;
    /// The number of values held (positions * row length).
    size_t size() const {
      return dtype == KVCacheDType::Int8 ? codes.size() : floats.size();
    }

  private:
    int64_t headDim = 0;
    KVCacheDType dtype = KVCacheDType::F32;
    std::vector<float> floats;
    std::vector<int8_t> codes;
    std::vector<float> scales;
  };
  struct LayerCache {
    CachedRows keys, values;
  };

  explicit ReferenceModel(const ModelConfig &config) : cfg(config) {}

  llvm::Error checkTokens(llvm::ArrayRef<int32_t> tokens) const;
  /// Runs `token` at position `pos` through every track block (appending
  /// to the caches) and returns the final hidden state, before the last
  /// norm.
  std::vector<float> decoderStep(int32_t token);
  /// Adds layer `layer` of track `track` (attention, then FFN) to `h`.
  void layerStep(int64_t track, int64_t layer, std::vector<float> &h);
  /// The attention block of layer `layer` of track `track` for the
  /// normalized input `x`.
  std::vector<float> attentionBlock(int64_t track, int64_t layer,
                                    llvm::ArrayRef<float> x);
  /// The dense or MoE FFN of layer `layer` of track `track` for the
  /// normalized input `x`; records the routing of an MoE layer.
  std::vector<float> ffnBlock(int64_t track, int64_t layer,
                              llvm::ArrayRef<float> x);
  /// `x W^T` for an attention or dense FFN projection: with int8
  /// activations (`linear_activations: "int8"`), of `x` rounded to int8
  /// as the compiled kernels round it.
  std::vector<float> project(llvm::ArrayRef<float> x,
                             llvm::ArrayRef<float> weight) const;
  /// A projection of the attention block, plus the term of its unmerged
  /// adapter (of the unrounded `x`) and `bias` when they are non-empty.
  std::vector<float> projectWithBias(llvm::ArrayRef<float> x,
                                     llvm::ArrayRef<float> weight,
                                     llvm::ArrayRef<float> bias,
                                     const AdapterTerm &adapter) const;
  /// Normalizes each head vector of `heads` with `qk_norm`'s gain `norm`
  /// (nothing when `norm` is empty).
  void normalizeHeads(std::vector<float> &heads,
                      llvm::ArrayRef<float> norm) const;
  /// The final norm and the LM head.
  std::vector<float> logits(llvm::ArrayRef<float> hidden) const;

  ModelConfig cfg;
  /// RoPE's angle per position for each pair (i, i + hd/2), with
  /// `rope_scaling` applied: computed here in double, apart from the
  /// compiler's `ropeInverseFrequencies`.
  std::vector<double> ropeInvFreq;
  /// The same for local layers when the config gives them a base of their
  /// own (`rope_local_theta`, unscaled); otherwise equal to `ropeInvFreq`.
  std::vector<double> ropeInvFreqLocal;
  std::vector<float> embedTokens, finalNorm, lmHead;
  /// Indexed by KV-cache index (`kvCacheIndex`), like `caches`.
  std::vector<LayerWeights> layers;
  std::vector<LayerCache> caches;
  std::vector<std::vector<int64_t>> routed;
  int64_t pos = 0;
  /// Whether `applyAdapter` has run.
  bool adapted = false;
};

} // namespace mlir::afm

#endif // AFM_REFERENCE_REFERENCEMODEL_H
