//===- ModelWeights.cpp - the tensors a config calls for ------------------===//

#include "afm/Model/ModelWeights.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir::afm;

LayerTensorNames mlir::afm::layerTensorNames(int64_t layer) {
  std::string prefix = "model.layers." + std::to_string(layer) + ".";
  return {
      prefix + "input_layernorm.weight",
      prefix + "self_attn.q_proj.weight",
      prefix + "self_attn.k_proj.weight",
      prefix + "self_attn.v_proj.weight",
      prefix + "self_attn.o_proj.weight",
      prefix + "post_attention_layernorm.weight",
      prefix + "mlp.gate_proj.weight",
      prefix + "mlp.up_proj.weight",
      prefix + "mlp.down_proj.weight",
  };
}

std::vector<ExpectedTensor>
mlir::afm::expectedTensors(const ModelConfig &config) {
  int64_t v = config.vocabSize, d = config.hiddenSize,
          f = config.intermediateSize;
  int64_t qWidth = config.numAttentionHeads * config.headDim;
  int64_t kvWidth = config.numKeyValueHeads * config.headDim;
  std::vector<ExpectedTensor> tensors;
  tensors.push_back({kEmbedTokensName, {v, d}});
  for (int64_t i = 0; i < config.numHiddenLayers; ++i) {
    LayerTensorNames names = layerTensorNames(i);
    tensors.push_back({names.inputNorm, {d}});
    tensors.push_back({names.qProj, {qWidth, d}});
    tensors.push_back({names.kProj, {kvWidth, d}});
    tensors.push_back({names.vProj, {kvWidth, d}});
    tensors.push_back({names.oProj, {d, qWidth}});
    tensors.push_back({names.postAttentionNorm, {d}});
    tensors.push_back({names.gateProj, {f, d}});
    tensors.push_back({names.upProj, {f, d}});
    tensors.push_back({names.downProj, {d, f}});
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
  int64_t count = 0;
  for (const ExpectedTensor &tensor : expectedTensors(config))
    count += tensor.numElements();
  return count;
}

llvm::Error mlir::afm::checkWeights(const ModelConfig &config,
                                    const SafeTensorsFile &file) {
  std::string problems;
  llvm::raw_string_ostream os(problems);
  llvm::StringSet<> expectedNames;
  for (const ExpectedTensor &tensor : expectedTensors(config)) {
    expectedNames.insert(tensor.name);
    const TensorInfo *info = file.lookup(tensor.name);
    if (!info)
      os << file.path() << ": missing tensor '" << tensor.name
         << "' (expected shape " << formatShape(tensor.shape) << ")\n";
    else if (info->shape != tensor.shape)
      os << file.path() << ": tensor '" << tensor.name << "' has shape "
         << formatShape(info->shape) << " but the config expects "
         << formatShape(tensor.shape) << "\n";
  }
  for (const TensorInfo &info : file.tensors())
    if (!expectedNames.contains(info.name))
      os << file.path() << ": unexpected tensor '" << info.name << "' ("
         << (info.name == kLmHeadName
                 ? "the config ties the LM head to the embeddings"
                 : "not part of the model the config describes")
         << ")\n";
  if (problems.empty())
    return llvm::Error::success();
  problems.pop_back(); // The last newline.
  return llvm::createStringError(problems);
}
