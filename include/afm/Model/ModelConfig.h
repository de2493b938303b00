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
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::afm {

/// The model families a config can name (docs/model-config.md).
enum class Architecture {
  /// `"afm-dense"`: a pre-norm dense decoder (Llama-style).
  Dense,
  /// `"afm-on-device"`: a dense decoder whose Block-2 layers read the KV
  /// cache of a Block-1 layer instead of having K/V projections.
  OnDevice,
  /// `"afm-pt-moe"`: parallel tracks synchronized at track-block ends, with
  /// mixture-of-experts FFNs in every `moe_layer_interval`-th layer.
  PTMoE,
};

/// How the transformer linear layers (attention q/k/v/o, dense FFN
/// gate/up/down) store their weights (docs/semantics.md section 5).
enum class LinearWeightFormat {
  /// `"f32"`: plain float weights.
  F32,
  /// `"q2"`: 2-bit balanced levels with a per-tensor or per-channel scale.
  Q2,
  /// `"astc"`: 6x6 ASTC HDR blocks with a per-block f16 offset.
  ASTC,
};

/// How the embedding table is stored.
enum class EmbeddingFormat {
  /// `"f32"`: plain float table.
  F32,
  /// `"q4"`: symmetric 4-bit codes, one scale per group of a row.
  Q4,
};

/// The element type of the KV caches.
enum class KVCacheDType {
  /// `"f32"`.
  F32,
  /// `"int8"`: symmetric int8, one f32 scale per token per head.
  Int8,
  /// `"f16"`: IEEE half precision, each value rounded to nearest even.
  F16,
};

/// How RoPE's frequencies are rescaled for long contexts (`rope_scaling`,
/// as Hugging Face configs spell it).
enum class RopeScalingType {
  /// `null` or `"default"`: inv_freq[i] = theta^(-2i/hd).
  None,
  /// `"linear"`: every frequency divided by `factor`.
  Linear,
  /// `"llama3"`: Llama 3.1's per-band scaling (`ropeInverseFrequencies`).
  Llama3,
};

/// The activation of the gated MLP's gate branch.
enum class MLPActivation {
  /// `"silu"`: SwiGLU.
  SiLU,
  /// `"gelu_tanh"`: GELU with the tanh approximation (GeGLU; Gemma's
  /// `gelu_pytorch_tanh`).
  GELUTanh,
};

/// The parameters of `rope_scaling`; the Llama 3 fields matter only for
/// RopeScalingType::Llama3.
struct RopeScaling {
  RopeScalingType type = RopeScalingType::None;
  double factor = 1.0;
  double lowFreqFactor = 1.0;
  double highFreqFactor = 4.0;
  int64_t originalMaxPositionEmbeddings = 8192;
};

/// The `architecture` string of `arch`, e.g. "afm-dense".
llvm::StringRef architectureName(Architecture arch);

/// A parsed and validated config.json. Field names follow the JSON keys
/// (`hidden_size` -> `hiddenSize`); the comments give the symbol used in
/// docs/semantics.md sections 2-4.
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
  /// Every layer is local (Mistral's `sliding_window`); needs
  /// `localPerGlobal == 0`.
  bool allLayersLocal = false;
  /// False: global layers use no positional embedding (NoPE).
  bool ropeInGlobalLayers = true;
  /// Rescaled RoPE frequencies (`rope_scaling`).
  RopeScaling ropeScaling;
  /// The q, k and v projections add a bias vector (Qwen 2).
  bool attentionBias = false;
  /// The o projection adds a bias vector.
  bool attentionOutputBias = false;
  /// Each query and key head vector is RMS-normalized over head_dim (with
  /// its own gain of hd values) before RoPE (Qwen 3).
  bool qkNorm = false;

  // Gemma 3's variations of the decoder (docs/model-config.md).
  /// Every RMSNorm multiplies by (gain + this): 1 for Gemma's (1 + w).
  double rmsNormWeightOffset = 0.0;
  /// Attention and FFN outputs are normalized before the residual add, and
  /// the FFN input by `pre_feedforward_layernorm` (Gemma 2/3).
  bool sandwichNorms = false;
  MLPActivation mlpActivation = MLPActivation::SiLU;
  /// The embeddings are multiplied by this (Gemma: sqrt(d)); the tied LM
  /// head is not.
  double embeddingMultiplier = 1.0;
  /// The attention's score scale; 0 means 1/sqrt(hd) (Gemma:
  /// query_pre_attn_scalar^-0.5).
  double attentionScale = 0.0;
  /// RoPE base of the local layers, which then use no `rope_scaling`; 0
  /// means `ropeTheta` (and the scaling) for every layer.
  double ropeLocalTheta = 0.0;

  // afm-on-device only.
  /// Block 1 is the first ceil(block1Fraction * L) layers; 0 < f <= 1.
  double block1Fraction = 0.625;

  /// afm-dense: the FFNs of the layers `isMoELayer` picks are
  /// mixtures of experts, as in every afm-pt-moe track (the JSON config has
  /// them when it gives `num_experts`; Qwen 3 MoE).
  bool denseMoE = false;

  // afm-pt-moe only (and afm-dense with `denseMoE`, from `numExperts` on);
  // `numHiddenLayers` counts the layers of one track.
  /// n, the number of tracks; divides H and G.
  int64_t numTracks = 2;
  /// D, the layers of a track block; divides L.
  int64_t trackBlockDepth = 4;
  /// E, the experts of an MoE layer.
  int64_t numExperts = 64;
  /// k, the experts each token is routed to; 1 <= k <= E.
  int64_t numExpertsPerTok = 2;
  /// Layer i of a track is an MoE layer iff i % interval == interval - 1.
  int64_t moeLayerInterval = 2;
  /// F_moe, the FFN width of one expert. parseModelConfig resolves its
  /// default (`intermediate_size`); a config built in code must set it.
  int64_t moeIntermediateSize = 0;

  // Compression (docs/model-config.md, "Compressed weights and caches").
  LinearWeightFormat linearWeightFormat = LinearWeightFormat::F32;
  /// 2-bit weights: one scale per output channel instead of per tensor.
  bool q2PerChannel = false;
  /// ASTC weights: the block offset is the block minimum (the paper)
  /// instead of a point that puts the block in the linear segment of the
  /// HDR curve (the default).
  bool astcOffsetMin = false;
  EmbeddingFormat embeddingFormat = EmbeddingFormat::F32;
  /// How an untied LM head (`lm_head.weight`) is stored; a tied head is the
  /// embedding table, stored as `embeddingFormat` says. A compressed head
  /// takes `q2PerChannel`, `astcOffsetMin` and `int8Activations` as the
  /// linear layers do.
  LinearWeightFormat lmHeadFormat = LinearWeightFormat::F32;
  /// Entries of a row sharing one 4-bit scale; divides hidden_size.
  int64_t embeddingGroupSize = 32;
  KVCacheDType kvCacheDType = KVCacheDType::F32;
  /// 2-bit linear layers quantize their inputs to int8 per row
  /// (`linear_activations: "int8"`) and multiply in integers.
  bool int8Activations = false;
  /// Rank of the quality-recovery adapters on compressed linear layers;
  /// 0 = none.
  int64_t loraRank = 0;
  /// The adapter's alpha (output scale alpha / rank); defaults to the rank.
  double loraAlpha = 0.0;
};

/// Parses and validates the text of a config.json. `fileName` only names
/// the file in error messages, which also name the offending key: unknown
/// keys, keys of another architecture, wrong JSON types, missing required
/// keys and invalid values (see `validateModelConfig`) are all errors. The
/// defaults of `local_per_global` and `rope_in_global_layers` depend on
/// the architecture (0 / true for afm-dense, 3 / false otherwise).
llvm::Expected<ModelConfig> parseModelConfig(llvm::StringRef json,
                                             llvm::StringRef fileName);

/// Reads and parses the config.json at `path`.
llvm::Expected<ModelConfig> loadModelConfig(llvm::StringRef path);

/// Checks the values of `config` as `parseModelConfig` does: sizes
/// positive and at most 2^31 - 1, H % G == 0, even head_dim, positive
/// finite eps and theta; afm-on-device: 0 < block1_fraction <= 1 and every
/// Block-2 layer has a Block-1 layer of its attention kind; afm-pt-moe:
/// n divides H and G, D divides L, 1 <= k <= E, n * L and the stacked
/// expert tensors within bounds. Errors read "<origin>: key '<key>': ...".
llvm::Error validateModelConfig(const ModelConfig &config,
                                llvm::StringRef origin);

/// Whether `layer` is a local (sliding-window) layer: every layer when
/// `allLayersLocal`; otherwise layers come in groups of `localPerGlobal`
/// local layers followed by one global layer, and with
/// `localPerGlobal == 0` every layer is global.
bool isLocalLayer(const ModelConfig &config, int64_t layer);

/// Whether `layer` applies RoPE to queries and keys: local layers always,
/// global layers iff `ropeInGlobalLayers`.
bool usesRope(const ModelConfig &config, int64_t layer);

/// The RoPE config of `layer`: `config` itself, or for a local layer of a
/// config with `ropeLocalTheta`, the same with that base and no scaling.
ModelConfig ropeConfigOfLayer(const ModelConfig &config, int64_t layer);

/// RoPE's inverse frequencies inv_freq[i], i < head_dim / 2, in double: the
/// angle of pair (i, i + hd/2) at position p is p * inv_freq[i]. Without
/// `rope_scaling` theta^(-2i/hd); `"linear"` divides them by `factor`;
/// `"llama3"` follows transformers' `_compute_llama3_parameters`: with
/// wavelength 2 pi / f and L = original_max_position_embeddings, f stays
/// when the wavelength is below L / high_freq_factor, becomes f / factor
/// above L / low_freq_factor, and in between (1 - s) f / factor + s f with
/// s = (L / wavelength - low_freq_factor) / (high - low).
std::vector<double> ropeInverseFrequencies(const ModelConfig &config);

/// Parses a `rope_scaling` value (null, or an object whose `rope_type` or
/// `type` is "default", "linear" or "llama3" with that type's keys) into
/// `out`. Other types (dynamic, yarn, longrope, ...) and unknown keys are
/// errors naming `origin`, the key `rope_scaling` and the value.
llvm::Error parseRopeScaling(const llvm::json::Value &value,
                             llvm::StringRef origin, RopeScaling &out);

/// Whether attention rounds each query head vector to int8 before its
/// scores (`afm.attention`'s `int8_query`): with int8 linear activations
/// over an int8 KV cache, so a score is an integer dot product of codes.
bool roundsQueryToInt8(const ModelConfig &config);

/// The number of Block-1 layers of an afm-on-device config:
/// ceil(block1Fraction * L), at least 1 (see docs/model-config.md,
/// "Decisions", for the rounding); L for the other architectures.
int64_t block1Layers(const ModelConfig &config);

/// Whether `layer` of an afm-on-device config lies in Block 2 (it has no
/// K/V projections and reads the cache of `kvSourceLayer`). Always false
/// for the other architectures.
bool isBlock2Layer(const ModelConfig &config, int64_t layer);

/// The layer whose KV cache `layer` attends over: `layer` itself, except
/// for a Block-2 layer, whose source is the last Block-1 layer of the same
/// attention kind (local or global); -1 if there is none (a config that
/// `validateModelConfig` rejects).
int64_t kvSourceLayer(const ModelConfig &config, int64_t layer);

/// The config of the model's first `layers` layers, with its final norm
/// and LM head: an early-exit model that reads a subset of the same
/// weights (a self-speculative draft, afm-compile --draft-layers). Each
/// layer computes what it computes in the whole model: on-device models
/// keep only Block-1 layers (all own their caches), PT-MoE models whole
/// track blocks. An error says why `layers` does not fit.
llvm::Expected<ModelConfig> earlyExitConfig(const ModelConfig &config,
                                            int64_t layers);

/// Whether the config has MoE layers: afm-pt-moe, and afm-dense with
/// `denseMoE`.
bool hasMoELayers(const ModelConfig &config);

/// Whether layer `layerOfTrack` of each track of a config with MoE layers
/// has an MoE FFN: layerOfTrack % interval == interval - 1. Always false
/// for the other configs.
bool isMoELayer(const ModelConfig &config, int64_t layerOfTrack);

/// The number of tracks: `numTracks` for afm-pt-moe, 1 otherwise.
int64_t trackCount(const ModelConfig &config);

/// The KV cache (the compiled model's `afm.layer`) of layer `layer` of track
/// `track`: track * L + layer; `layer` for a single-track model.
int64_t kvCacheIndex(const ModelConfig &config, int64_t track, int64_t layer);

/// The config as config.json text with every key of its architecture
/// explicit, in the order of docs/model-config.md. `parseModelConfig`
/// reads it back to the same config (floats are printed so that they
/// round-trip exactly).
std::string toJSON(const ModelConfig &config);

} // namespace mlir::afm

#endif // AFM_MODEL_MODELCONFIG_H
