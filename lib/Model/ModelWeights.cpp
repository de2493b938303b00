//===- ModelWeights.cpp - the tensors a config calls for ------------------===//

#include "afm/Model/ModelWeights.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>

using namespace mlir::afm;

/// The names of a layer whose tensors all start with `prefix`; an MoE
/// layer's router is `router` after it.
static LayerTensorNames namesWithPrefix(const std::string &prefix,
                                        const char *router) {
  return {
      prefix + "input_layernorm.weight",
      prefix + "self_attn.q_proj.weight",
      prefix + "self_attn.k_proj.weight",
      prefix + "self_attn.v_proj.weight",
      prefix + "self_attn.o_proj.weight",
      prefix + "self_attn.q_proj.bias",
      prefix + "self_attn.k_proj.bias",
      prefix + "self_attn.v_proj.bias",
      prefix + "self_attn.o_proj.bias",
      prefix + "self_attn.q_norm.weight",
      prefix + "self_attn.k_norm.weight",
      prefix + "post_attention_layernorm.weight",
      prefix + "pre_feedforward_layernorm.weight",
      prefix + "post_feedforward_layernorm.weight",
      prefix + "mlp.gate_proj.weight",
      prefix + "mlp.up_proj.weight",
      prefix + "mlp.down_proj.weight",
      prefix + router,
      prefix + "mlp.experts.",
  };
}

/// `{experts}{e}.{projection}.weight`.
static std::string expertTensor(const std::string &experts, int64_t e,
                                const char *projection) {
  return experts + std::to_string(e) + "." + projection + ".weight";
}
std::string LayerTensorNames::expertGateProj(int64_t e) const {
  return expertTensor(experts, e, "gate_proj");
}
std::string LayerTensorNames::expertUpProj(int64_t e) const {
  return expertTensor(experts, e, "up_proj");
}
std::string LayerTensorNames::expertDownProj(int64_t e) const {
  return expertTensor(experts, e, "down_proj");
}

LayerTensorNames mlir::afm::layerTensorNames(int64_t layer) {
  // Qwen-MoE's router name; PT-MoE tracks call theirs `router`.
  return namesWithPrefix("model.layers." + std::to_string(layer) + ".",
                         "mlp.gate.weight");
}

LayerTensorNames mlir::afm::trackLayerTensorNames(int64_t track,
                                                  int64_t layer) {
  return namesWithPrefix("model.tracks." + std::to_string(track) +
                             ".layers." + std::to_string(layer) + ".",
                         "mlp.router.weight");
}

namespace {
/// What one decoder layer has, beyond the norms and the q / o projections.
struct LayerShape {
  /// Query and key/value heads of the layer (per track for afm-pt-moe).
  int64_t heads, kvHeads;
  /// False for a Block-2 layer of afm-on-device.
  bool hasKV;
  /// True for an MoE layer of afm-pt-moe.
  bool moe;
};
} // namespace

/// Appends the tensors of the layer called `names`.
static void appendLayer(std::vector<ExpectedTensor> &tensors,
                        const ModelConfig &config,
                        const LayerTensorNames &names,
                        const LayerShape &layer) {
  int64_t d = config.hiddenSize, f = config.intermediateSize;
  int64_t qWidth = layer.heads * config.headDim;
  int64_t kvWidth = layer.kvHeads * config.headDim;
  int64_t hd = config.headDim;
  tensors.push_back({names.inputNorm, {d}});
  tensors.push_back({names.qProj, {qWidth, d}});
  if (layer.hasKV) {
    tensors.push_back({names.kProj, {kvWidth, d}});
    tensors.push_back({names.vProj, {kvWidth, d}});
  }
  tensors.push_back({names.oProj, {d, qWidth}});
  if (config.attentionBias) {
    tensors.push_back({names.qBias, {qWidth}});
    if (layer.hasKV) {
      tensors.push_back({names.kBias, {kvWidth}});
      tensors.push_back({names.vBias, {kvWidth}});
    }
  }
  if (config.attentionOutputBias)
    tensors.push_back({names.oBias, {d}});
  if (config.qkNorm) {
    tensors.push_back({names.qNorm, {hd}});
    if (layer.hasKV)
      tensors.push_back({names.kNorm, {hd}});
  }
  tensors.push_back({names.postAttentionNorm, {d}});
  if (config.sandwichNorms) {
    tensors.push_back({names.preFeedforwardNorm, {d}});
    tensors.push_back({names.postFeedforwardNorm, {d}});
  }
  if (layer.moe) {
    int64_t e = config.numExperts, fm = config.moeIntermediateSize;
    tensors.push_back({names.router, {e, d}});
    for (int64_t x = 0; x < e; ++x) {
      tensors.push_back({names.expertGateProj(x), {fm, d}});
      tensors.push_back({names.expertUpProj(x), {fm, d}});
      tensors.push_back({names.expertDownProj(x), {d, fm}});
    }
  } else {
    tensors.push_back({names.gateProj, {f, d}});
    tensors.push_back({names.upProj, {f, d}});
    tensors.push_back({names.downProj, {d, f}});
  }
}

std::vector<ExpectedTensor>
mlir::afm::expectedTensors(const ModelConfig &config) {
  int64_t v = config.vocabSize, d = config.hiddenSize;
  int64_t layers = config.numHiddenLayers;
  std::vector<ExpectedTensor> tensors;
  tensors.push_back({kEmbedTokensName, {v, d}});
  if (config.architecture == Architecture::PTMoE) {
    int64_t n = config.numTracks;
    for (int64_t t = 0; t < n; ++t)
      for (int64_t i = 0; i < layers; ++i)
        appendLayer(tensors, config, trackLayerTensorNames(t, i),
                    {config.numAttentionHeads / n, config.numKeyValueHeads / n,
                     /*hasKV=*/true, isMoELayer(config, i)});
  } else {
    for (int64_t i = 0; i < layers; ++i)
      appendLayer(tensors, config, layerTensorNames(i),
                  {config.numAttentionHeads, config.numKeyValueHeads,
                   !isBlock2Layer(config, i), isMoELayer(config, i)});
  }
  tensors.push_back({kFinalNormName, {d}});
  if (!config.tieWordEmbeddings)
    tensors.push_back({kLmHeadName, {v, d}});
  return tensors;
}

int64_t ExpectedTensor::numElements() const {
  return shapeNumElements(shape);
}

int64_t mlir::afm::parameterCount(const ModelConfig &config) {
  // Saturates rather than overflows: a caller compares it with a limit.
  int64_t count = 0;
  for (const ExpectedTensor &tensor : expectedTensors(config))
    if (llvm::AddOverflow(count, tensor.numElements(), count))
      return std::numeric_limits<int64_t>::max();
  return count;
}

llvm::Error mlir::afm::checkWeights(const ModelConfig &config,
                                    const SafeTensorsFile &file) {
  return checkWeights(config, WeightSource::borrow(file));
}

llvm::Error mlir::afm::checkWeights(const ModelConfig &config,
                                    const WeightSource &weights,
                                    bool allowUnused) {
  std::string problems;
  llvm::raw_string_ostream os(problems);
  llvm::StringSet<> expectedNames;
  for (const ExpectedTensor &tensor : expectedTensors(config)) {
    expectedNames.insert(tensor.name);
    WeightTensor found = weights.lookup(tensor.name);
    const TensorInfo *info = found.info;
    if (!info)
      os << weights.path() << ": missing tensor '" << tensor.name
         << "' (expected shape " << formatShape(tensor.shape) << ")\n";
    else if (info->shape != tensor.shape)
      os << found.file->path() << ": tensor '" << tensor.name << "' has shape "
         << formatShape(info->shape) << " but the config expects "
         << formatShape(tensor.shape) << "\n";
  }
  for (WeightTensor tensor : weights.tensors())
    if (!allowUnused && !expectedNames.contains(tensor.info->name))
      os << tensor.file->path() << ": unexpected tensor '" << tensor.info->name << "' ("
         << (tensor.info->name == kLmHeadName
                 ? "the config ties the LM head to the embeddings"
                 : "not part of the model the config describes")
         << ")\n";
  if (problems.empty())
    return llvm::Error::success();
  problems.pop_back(); // The last newline.
  return llvm::createStringError(problems);
}
