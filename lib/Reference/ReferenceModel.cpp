//===- ReferenceModel.cpp - the plain C++ reference evaluator -------------===//
//
// Pre-norm residual decoder (docs/semantics.md sections 2-4, docs/model-config.md):
//   h = embed(token)
//   per track block (afm-pt-moe: D layers; otherwise all L layers, 1 track):
//     every track t starts from h_t = h and runs the block's layers:
//       h_t += o_proj(attn(rope?(q_proj(n)), K, V))   with n = rmsnorm(h_t)
//       h_t += ffn(m)                                  with m = rmsnorm(h_t)
//     h = mean_t(h_t)
//   logits = lm_head(rmsnorm(h))
// K and V are the layer's own rope?(k_proj(n)) and v_proj(n), appended to
// its cache, except for an on-device Block-2 layer, which attends over the
// cache of its source layer. The FFN is SwiGLU, or for an MoE layer the
// top-k mixture of expert SwiGLUs. An int8 KV cache stores each head vector
// of K and V (computed in f32) as int8 codes and a scale, and attention
// reads them dequantized, the current position's included; an f16 cache
// stores each value rounded to binary16 and attention reads that.
//
// A runtime LoRA adapter (applyAdapter) on q/k/v/o, W' = W + B A with B
// scaled: with f32 activations merged into the f32 weights (each element
// W + sum_k B[o,k] A[k,i] in double, rounded to f32 once); with int8
// activations kept as a separate term of the unrounded input,
// q = linear(round_int8(x), W) + (x A^T) B^T, as the compiled model's
// adapter slots compute it (docs/semantics.md section 4.1).
//
//===----------------------------------------------------------------------===//

#include "afm/Reference/ReferenceModel.h"

#include "afm/Compress/KVQuant.h"
#include "afm/Model/HalfFloat.h"
#include "afm/Model/ModelWeights.h"
#include "afm/Model/PEFTAdapter.h"
#include "afm/Reference/ReferenceOps.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <cassert>
#include <cmath>

using namespace mlir::afm;
using namespace mlir::afm::reference;
using llvm::ArrayRef;

/// RoPE's inverse frequencies with `rope_scaling`, written after
/// transformers' `_compute_default_rope_parameters` and
/// `_compute_llama3_parameters` (in double where they use f32): the
/// unscaled frequencies, divided by `factor` for long wavelengths, and
/// blended between the two for the wavelengths in between.
static std::vector<double> scaledRopeFrequencies(const ModelConfig &cfg) {
  const RopeScaling &rs = cfg.ropeScaling;
  int64_t dim = cfg.headDim;
  std::vector<double> invFreq;
  for (int64_t k = 0; k < dim; k += 2)
    invFreq.push_back(1.0 / std::pow(cfg.ropeTheta, double(k) / double(dim)));
  if (rs.type == RopeScalingType::Linear)
    for (double &f : invFreq)
      f = f / rs.factor;
  if (rs.type != RopeScalingType::Llama3)
    return invFreq;
  double oldContext = double(rs.originalMaxPositionEmbeddings);
  double lowFreqWavelen = oldContext / rs.lowFreqFactor;
  double highFreqWavelen = oldContext / rs.highFreqFactor;
  for (double &f : invFreq) {
    double wavelen = 2.0 * M_PI / f;
    double scaled = wavelen > lowFreqWavelen ? f / rs.factor : f;
    double smooth = (oldContext / wavelen - rs.lowFreqFactor) /
                    (rs.highFreqFactor - rs.lowFreqFactor);
    double smoothed = (1.0 - smooth) * scaled / rs.factor + smooth * scaled;
    bool medium = !(wavelen < highFreqWavelen) && !(wavelen > lowFreqWavelen);
    f = medium ? smoothed : scaled;
  }
  return invFreq;
}

llvm::Expected<ReferenceModel>
ReferenceModel::create(const ModelConfig &config,
                       const SafeTensorsFile &weights) {
  return create(config, WeightSource::borrow(weights));
}

llvm::Expected<ReferenceModel>
ReferenceModel::create(const ModelConfig &config, const WeightSource &weights,
                       bool allowUnused) {
  if (llvm::Error err = validateModelConfig(config, "the model config"))
    return std::move(err);
  if (llvm::Error err = checkWeights(config, weights, allowUnused))
    return std::move(err);
  // checkWeights guarantees that every lookup below succeeds: only the
  // tensors of expectedTensors are loaded.
  auto load = [&](llvm::StringRef name) {
    WeightTensor tensor = weights.lookup(name);
    return tensor.file->toF32(*tensor.info);
  };
  // A norm's gain with Gemma's offset added once here: (1 + w).
  auto loadNorm = [&](llvm::StringRef name) {
    std::vector<float> gain = load(name);
    for (float &g : gain)
      g = static_cast<float>(double(g) + config.rmsNormWeightOffset);
    return gain;
  };
  ReferenceModel model(config);
  model.ropeInvFreq = scaledRopeFrequencies(config);
  model.ropeInvFreqLocal = model.ropeInvFreq;
  if (config.ropeLocalTheta != 0.0) {
    ModelConfig local = config;
    local.ropeTheta = config.ropeLocalTheta;
    local.ropeScaling = RopeScaling();
    model.ropeInvFreqLocal = scaledRopeFrequencies(local);
  }
  model.embedTokens = load(kEmbedTokensName);
  model.finalNorm = loadNorm(kFinalNormName);
  if (!config.tieWordEmbeddings)
    model.lmHead = load(kLmHeadName);
  bool tracks = config.architecture == Architecture::PTMoE;
  for (int64_t t = 0; t < trackCount(config); ++t) {
    for (int64_t i = 0; i < config.numHiddenLayers; ++i) {
      LayerTensorNames names =
          tracks ? trackLayerTensorNames(t, i) : layerTensorNames(i);
      LayerWeights w;
      w.inputNorm = loadNorm(names.inputNorm);
      w.qProj = load(names.qProj);
      if (!isBlock2Layer(config, i)) {
        w.kProj = load(names.kProj);
        w.vProj = load(names.vProj);
      }
      w.oProj = load(names.oProj);
      bool kv = !isBlock2Layer(config, i);
      if (config.attentionBias) {
        w.qBias = load(names.qBias);
        if (kv) {
          w.kBias = load(names.kBias);
          w.vBias = load(names.vBias);
        }
      }
      if (config.attentionOutputBias)
        w.oBias = load(names.oBias);
      if (config.qkNorm) {
        w.qNorm = loadNorm(names.qNorm);
        if (kv)
          w.kNorm = loadNorm(names.kNorm);
      }
      w.postAttentionNorm = loadNorm(names.postAttentionNorm);
      if (config.sandwichNorms) {
        w.preFeedforwardNorm = loadNorm(names.preFeedforwardNorm);
        w.postFeedforwardNorm = loadNorm(names.postFeedforwardNorm);
      }
      if (isMoELayer(config, i)) {
        w.router = load(names.router);
        // Stacked [E, ...] as mixtureOfExperts takes them.
        auto append = [&](std::vector<float> &stacked,
                          const std::string &name) {
          std::vector<float> expert = load(name);
          stacked.insert(stacked.end(), expert.begin(), expert.end());
        };
        for (int64_t e = 0; e < config.numExperts; ++e) {
          append(w.expertsGateProj, names.expertGateProj(e));
          append(w.expertsUpProj, names.expertUpProj(e));
          append(w.expertsDownProj, names.expertDownProj(e));
        }
      } else {
        w.gateProj = load(names.gateProj);
        w.upProj = load(names.upProj);
        w.downProj = load(names.downProj);
      }
      assert(static_cast<int64_t>(model.layers.size()) ==
                 kvCacheIndex(config, t, i) &&
             "layers are stored in KV-cache order");
      model.layers.push_back(std::move(w));
    }
  }
  model.reset();
  return std::move(model);
}

llvm::Error ReferenceModel::applyAdapter(const LoRAAdapter &adapter) {
  if (adapted)
    return llvm::createStringError("an adapter is already applied to the "
                                   "reference model");
  // The projections an adapter may name, with their adapter slots.
  struct Slot {
    std::vector<float> *weight;
    AdapterTerm *term;
    int64_t outFeatures, inFeatures;
  };
  llvm::StringMap<Slot> slots;
  int64_t d = cfg.hiddenSize, hd = cfg.headDim, tracks = trackCount(cfg);
  int64_t qWidth = cfg.numAttentionHeads / tracks * hd;
  int64_t kvWidth = cfg.numKeyValueHeads / tracks * hd;
  for (int64_t t = 0; t < tracks; ++t)
    for (int64_t i = 0; i < cfg.numHiddenLayers; ++i) {
      LayerTensorNames names = cfg.architecture == Architecture::PTMoE
                                   ? trackLayerTensorNames(t, i)
                                   : layerTensorNames(i);
      LayerWeights &w = layers[kvCacheIndex(cfg, t, i)];
      slots[names.qProj] = {&w.qProj, &w.qAdapter, qWidth, d};
      if (!isBlock2Layer(cfg, i)) {
        slots[names.kProj] = {&w.kProj, &w.kAdapter, kvWidth, d};
        slots[names.vProj] = {&w.vProj, &w.vAdapter, kvWidth, d};
      }
      slots[names.oProj] = {&w.oProj, &w.oAdapter, d, qWidth};
    }
  // Every pair is checked before anything changes.
  int64_t r = adapter.rank;
  llvm::StringMap<bool> seen;
  for (const LoRATensorPair &pair : adapter.pairs) {
    auto it = slots.find(pair.weightName);
    if (it == slots.end())
      return llvm::createStringError(
          "adapter: '" + pair.weightName +
          "' is not an attention projection (q/k/v/o) of this model");
    if (!seen.try_emplace(pair.weightName, true).second)
      return llvm::createStringError("adapter: '" + pair.weightName +
                                     "' is adapted twice");
    const Slot &slot = it->second;
    if (pair.outFeatures != slot.outFeatures ||
        pair.inFeatures != slot.inFeatures ||
        int64_t(pair.a.size()) != r * pair.inFeatures ||
        int64_t(pair.b.size()) != pair.outFeatures * r ||
        int64_t(slot.weight->size()) != slot.outFeatures * slot.inFeatures)
      return llvm::createStringError(llvm::formatv(
          "adapter: '{0}' is [{1}, {2}] with rank {3} and {4} + {5} "
          "values, but the weight is [{6}, {7}]",
          pair.weightName, pair.outFeatures, pair.inFeatures, r,
          pair.a.size(), pair.b.size(), slot.outFeatures, slot.inFeatures));
  }
  for (const LoRATensorPair &pair : adapter.pairs) {
    const Slot &slot = slots.find(pair.weightName)->second;
    if (cfg.int8Activations) {
      *slot.term = {pair.a, pair.b};
      continue;
    }
    std::vector<float> &weight = *slot.weight;
    int64_t in = pair.inFeatures;
    for (int64_t o = 0; o < pair.outFeatures; ++o)
      for (int64_t i = 0; i < in; ++i) {
        double sum = weight[o * in + i];
        for (int64_t k = 0; k < r; ++k)
          sum += double(pair.b[o * r + k]) * double(pair.a[k * in + i]);
        weight[o * in + i] = static_cast<float>(sum);
      }
  }
  adapted = true;
  return llvm::Error::success();
}

void ReferenceModel::CachedRows::append(ArrayRef<float> row) {
  switch (dtype) {
  case KVCacheDType::F32:
    floats.insert(floats.end(), row.begin(), row.end());
    return;
  case KVCacheDType::F16:
    for (float x : row)
      floats.push_back(f16ToF32(f32ToF16(x)));
    return;
  case KVCacheDType::Int8:
    break;
  }
  assert(row.size() % headDim == 0 && "a row is whole head vectors");
  size_t first = codes.size();
  codes.resize(first + row.size());
  for (size_t h = 0; h < row.size(); h += headDim)
    scales.push_back(quantizeKV(row.data() + h, headDim, &codes[first + h]));
}

std::vector<float> ReferenceModel::CachedRows::read() const {
  if (dtype != KVCacheDType::Int8)
    return floats;
  std::vector<float> out(codes.size());
  for (size_t i = 0; i < scales.size(); ++i)
    dequantizeKV(&codes[i * headDim], scales[i], headDim, &out[i * headDim]);
  return out;
}

void ReferenceModel::reset() {
  pos = 0;
  LayerCache empty{CachedRows(cfg.headDim, cfg.kvCacheDType),
                   CachedRows(cfg.headDim, cfg.kvCacheDType)};
  caches.assign(layers.size(), empty);
  routed.assign(layers.size(), {});
  for (int64_t t = 0; t < trackCount(cfg); ++t)
    for (int64_t i = 0; i < cfg.numHiddenLayers; ++i)
      if (isMoELayer(cfg, i))
        routed[kvCacheIndex(cfg, t, i)].assign(cfg.numExperts, 0);
}

llvm::Error ReferenceModel::checkTokens(ArrayRef<int32_t> tokens) const {
  if (tokens.empty())
    return llvm::createStringError("no tokens to process");
  for (size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i] < 0 || tokens[i] >= cfg.vocabSize)
      return llvm::createStringError(llvm::formatv(
          "token {0} (at index {1}) is outside the vocabulary [0, {2})",
          tokens[i], i, cfg.vocabSize));
  if (pos + static_cast<int64_t>(tokens.size()) > cfg.maxPositionEmbeddings)
    return llvm::createStringError(llvm::formatv(
        "{0} tokens after position {1} exceed max_position_embeddings ({2})",
        tokens.size(), pos, cfg.maxPositionEmbeddings));
  return llvm::Error::success();
}

llvm::Expected<std::vector<float>>
ReferenceModel::forward(ArrayRef<int32_t> tokens) {
  if (llvm::Error err = checkTokens(tokens))
    return std::move(err);
  std::vector<float> hidden;
  for (int32_t token : tokens)
    hidden = decoderStep(token);
  return logits(hidden);
}

std::vector<float> ReferenceModel::decoderStep(int32_t token) {
  int64_t d = cfg.hiddenSize, layerCount = cfg.numHiddenLayers;
  int64_t tracks = trackCount(cfg);
  // A single-track model is one block of all its layers; the mean of one
  // track is that track exactly.
  int64_t depth = cfg.architecture == Architecture::PTMoE
                      ? cfg.trackBlockDepth
                      : layerCount;
  std::vector<float> h(embedTokens.begin() + token * d,
                       embedTokens.begin() + (token + 1) * d);
  for (float &x : h)
    x = static_cast<float>(double(x) * cfg.embeddingMultiplier);
  for (int64_t first = 0; first < layerCount; first += depth) {
    std::vector<double> sum(d, 0.0);
    for (int64_t t = 0; t < tracks; ++t) {
      std::vector<float> ht = h;
      for (int64_t i = first; i < first + depth; ++i)
        layerStep(t, i, ht);
      for (int64_t j = 0; j < d; ++j)
        sum[j] += ht[j];
    }
    for (int64_t j = 0; j < d; ++j)
      h[j] = static_cast<float>(sum[j] / static_cast<double>(tracks));
  }
  ++pos;
  return h;
}

void ReferenceModel::layerStep(int64_t track, int64_t layer,
                               std::vector<float> &h) {
  const LayerWeights &w = layers[kvCacheIndex(cfg, track, layer)];
  double eps = cfg.rmsNormEps;
  std::vector<float> attended =
      attentionBlock(track, layer, rmsNorm(h, w.inputNorm, eps));
  if (cfg.sandwichNorms) {
    // Gemma: the block outputs are normalized before the residual add.
    addInPlace(h, rmsNorm(attended, w.postAttentionNorm, eps));
    addInPlace(h, rmsNorm(ffnBlock(track, layer,
                                   rmsNorm(h, w.preFeedforwardNorm, eps)),
                          w.postFeedforwardNorm, eps));
    return;
  }
  addInPlace(h, attended);
  addInPlace(h, ffnBlock(track, layer, rmsNorm(h, w.postAttentionNorm, eps)));
}

std::vector<float> ReferenceModel::attentionBlock(int64_t track,
                                                  int64_t layer,
                                                  ArrayRef<float> x) {
  int64_t index = kvCacheIndex(cfg, track, layer);
  const LayerWeights &w = layers[index];
  int64_t hd = cfg.headDim, tracks = trackCount(cfg);
  AttentionShape shape = {cfg.numAttentionHeads / tracks,
                          cfg.numKeyValueHeads / tracks, hd};
  bool rope = usesRope(cfg, layer);
  const std::vector<double> &invFreq =
      isLocalLayer(cfg, layer) ? ropeInvFreqLocal : ropeInvFreq;
  std::vector<float> q = projectWithBias(x, w.qProj, w.qBias, w.qAdapter);
  normalizeHeads(q, w.qNorm);
  if (rope)
    for (int64_t h = 0; h < shape.numHeads; ++h)
      applyRope(llvm::MutableArrayRef<float>(q).slice(h * hd, hd), pos,
                invFreq);
  // Each head's query rounded to int8 as int8 activations are
  // (`int8_query`): the compiled scores are integer dot products of codes.
  if (roundsQueryToInt8(cfg))
    for (int64_t h = 0; h < shape.numHeads; ++h) {
      llvm::MutableArrayRef<float> head =
          llvm::MutableArrayRef<float>(q).slice(h * hd, hd);
      llvm::copy(roundToInt8Activations(head), head.begin());
    }
  if (!isBlock2Layer(cfg, layer)) {
    std::vector<float> k = projectWithBias(x, w.kProj, w.kBias, w.kAdapter);
    std::vector<float> v = projectWithBias(x, w.vProj, w.vBias, w.vAdapter);
    normalizeHeads(k, w.kNorm);
    if (rope)
      for (int64_t g = 0; g < shape.numKVHeads; ++g)
        applyRope(llvm::MutableArrayRef<float>(k).slice(g * hd, hd), pos,
                  invFreq);
    LayerCache &cache = caches[index];
    cache.keys.append(k);
    cache.values.append(v);
  }
  // A Block-2 layer reads its source, an earlier layer of this step, which
  // has already appended the current position.
  const LayerCache &cache =
      caches[kvCacheIndex(cfg, track, kvSourceLayer(cfg, layer))];
  assert(static_cast<int64_t>(cache.keys.size()) ==
             (pos + 1) * shape.numKVHeads * hd &&
         "the cache holds positions 0..pos");
  int64_t window = isLocalLayer(cfg, layer) ? cfg.slidingWindow : 0;
  std::vector<float> attended =
      attention(q, cache.keys.read(), cache.values.read(), shape,
                firstVisiblePosition(pos, window), cfg.attentionScale);
  return projectWithBias(attended, w.oProj, w.oBias, w.oAdapter);
}

std::vector<float>
ReferenceModel::projectWithBias(ArrayRef<float> x, ArrayRef<float> weight,
                                ArrayRef<float> bias,
                                const AdapterTerm &adapter) const {
  std::vector<float> y = project(x, weight);
  if (!adapter.a.empty())
    addInPlace(y, linear(linear(x, adapter.a), adapter.b));
  if (!bias.empty())
    addInPlace(y, bias);
  return y;
}

void ReferenceModel::normalizeHeads(std::vector<float> &heads,
                                    ArrayRef<float> norm) const {
  if (norm.empty())
    return;
  int64_t hd = cfg.headDim;
  for (size_t h = 0; h < heads.size(); h += size_t(hd)) {
    llvm::MutableArrayRef<float> head =
        llvm::MutableArrayRef<float>(heads).slice(h, hd);
    llvm::copy(rmsNorm(head, norm, cfg.rmsNormEps), head.begin());
  }
}

std::vector<float> ReferenceModel::project(ArrayRef<float> x,
                                           ArrayRef<float> weight) const {
  return reference::project(x, weight, cfg.int8Activations);
}

std::vector<float> ReferenceModel::ffnBlock(int64_t track, int64_t layer,
                                            ArrayRef<float> x) {
  int64_t index = kvCacheIndex(cfg, track, layer);
  const LayerWeights &w = layers[index];
  if (!isMoELayer(cfg, layer)) {
    std::vector<float> gate = project(x, w.gateProj);
    std::vector<float> up = project(x, w.upProj);
    return project(cfg.mlpActivation == MLPActivation::GELUTanh
                       ? geglu(gate, up)
                       : swiglu(gate, up),
                   w.downProj);
  }
  std::vector<int64_t> selected;
  std::vector<float> y =
      mixtureOfExperts(x,
                       {w.router, w.expertsGateProj, w.expertsUpProj,
                        w.expertsDownProj, cfg.numExperts, cfg.int8Activations},
                       cfg.numExpertsPerTok, &selected);
  for (int64_t e : selected)
    ++routed[index][e];
  return y;
}

std::vector<float> ReferenceModel::logits(ArrayRef<float> hidden) const {
  std::vector<float> normed = rmsNorm(hidden, finalNorm, cfg.rmsNormEps);
  if (!cfg.tieWordEmbeddings)
    return cfg.lmHeadFormat == LinearWeightFormat::F32
               ? linear(normed, lmHead)
               : project(normed, lmHead);
  // A tied 4-bit table multiplies int8 activations when the linear layers
  // do (the compiled head's integer dot products).
  if (cfg.int8Activations && cfg.embeddingFormat == EmbeddingFormat::Q4)
    return linear(roundToInt8Activations(normed), embedTokens);
  return linear(normed, embedTokens);
}
