//===- ReferenceModel.cpp - the plain C++ reference evaluator -------------===//
//
// Pre-norm residual decoder (DESIGN.md section 1, docs/model-config.md):
//   h = embed(token)
//   per layer: h += o_proj(attn(rope?(q_proj(n)), rope?(k_proj(n)),
//                               v_proj(n)))      with n = rmsnorm(h)
//              h += down(silu(gate(m)) * up(m))  with m = rmsnorm(h)
//   logits = lm_head(rmsnorm(h))
//
//===----------------------------------------------------------------------===//

#include "afm/Reference/ReferenceModel.h"

#include "afm/Model/ModelWeights.h"
#include "afm/Reference/ReferenceOps.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir::afm;
using namespace mlir::afm::reference;
using llvm::ArrayRef;

llvm::Expected<ReferenceModel>
ReferenceModel::create(const ModelConfig &config,
                       const SafeTensorsFile &weights) {
  if (llvm::Error err = checkWeights(config, weights))
    return std::move(err);
  // checkWeights guarantees that every lookup below succeeds.
  auto load = [&](llvm::StringRef name) {
    return weights.toF32(*weights.lookup(name));
  };
  ReferenceModel model(config);
  model.embedTokens = load(kEmbedTokensName);
  model.finalNorm = load(kFinalNormName);
  if (!config.tieWordEmbeddings)
    model.lmHead = load(kLmHeadName);
  for (int64_t i = 0; i < config.numHiddenLayers; ++i) {
    LayerTensorNames names = layerTensorNames(i);
    model.layers.push_back({load(names.inputNorm), load(names.qProj),
                            load(names.kProj), load(names.vProj),
                            load(names.oProj), load(names.postAttentionNorm),
                            load(names.gateProj), load(names.upProj),
                            load(names.downProj)});
  }
  model.reset();
  return std::move(model);
}

void ReferenceModel::reset() {
  pos = 0;
  caches.assign(cfg.numHiddenLayers, LayerCache());
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
  int64_t d = cfg.hiddenSize;
  std::vector<float> h(embedTokens.begin() + token * d,
                       embedTokens.begin() + (token + 1) * d);
  for (int64_t i = 0; i < cfg.numHiddenLayers; ++i) {
    const LayerWeights &w = layers[i];
    addInPlace(h, attentionBlock(i, rmsNorm(h, w.inputNorm, cfg.rmsNormEps)));
    addInPlace(h, ffnBlock(i, rmsNorm(h, w.postAttentionNorm,
                                      cfg.rmsNormEps)));
  }
  ++pos;
  return h;
}

std::vector<float> ReferenceModel::attentionBlock(int64_t layer,
                                                  ArrayRef<float> x) {
  const LayerWeights &w = layers[layer];
  int64_t hd = cfg.headDim;
  std::vector<float> q = linear(x, w.qProj);
  std::vector<float> k = linear(x, w.kProj);
  std::vector<float> v = linear(x, w.vProj);
  if (usesRope(cfg, layer)) {
    for (int64_t h = 0; h < cfg.numAttentionHeads; ++h)
      applyRope(llvm::MutableArrayRef<float>(q).slice(h * hd, hd), pos,
                cfg.ropeTheta);
    for (int64_t g = 0; g < cfg.numKeyValueHeads; ++g)
      applyRope(llvm::MutableArrayRef<float>(k).slice(g * hd, hd), pos,
                cfg.ropeTheta);
  }
  LayerCache &cache = caches[layer];
  cache.keys.insert(cache.keys.end(), k.begin(), k.end());
  cache.values.insert(cache.values.end(), v.begin(), v.end());
  int64_t window = isLocalLayer(cfg, layer) ? cfg.slidingWindow : 0;
  std::vector<float> attended = attention(
      q, cache.keys, cache.values,
      {cfg.numAttentionHeads, cfg.numKeyValueHeads, hd},
      firstVisiblePosition(pos, window));
  return linear(attended, w.oProj);
}

std::vector<float> ReferenceModel::ffnBlock(int64_t layer,
                                            ArrayRef<float> x) const {
  const LayerWeights &w = layers[layer];
  return linear(swiglu(linear(x, w.gateProj), linear(x, w.upProj)),
                w.downProj);
}

std::vector<float> ReferenceModel::logits(ArrayRef<float> hidden) const {
  std::vector<float> normed = rmsNorm(hidden, finalNorm, cfg.rmsNormEps);
  return linear(normed, cfg.tieWordEmbeddings ? embedTokens : lmHead);
}
