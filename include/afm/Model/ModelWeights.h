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

/// The tensor names of decoder layer `layer` (`model.layers.{layer}.*`).
struct LayerTensorNames {
  std::string inputNorm;
  std::string qProj;
  std::string kProj;
  std::string vProj;
  std::string oProj;
  std::string postAttentionNorm;
  std::string gateProj;
  std::string upProj;
  std::string downProj;
};

LayerTensorNames layerTensorNames(int64_t layer);

/// A tensor the config calls for.
struct ExpectedTensor {
  std::string name;
  std::vector<int64_t> shape;

  /// The product of `shape`.
  int64_t numElements() const;
};

/// Every tensor of the model, in the order of docs/model-config.md: the
/// embeddings, each layer's nine tensors, the final norm, and `lm_head`
/// only when the embeddings are not tied.
std::vector<ExpectedTensor> expectedTensors(const ModelConfig &config);

/// The number of parameters of the model: the elements of every expected
/// tensor.
int64_t parameterCount(const ModelConfig &config);

/// Checks that `file` holds exactly the tensors of `expectedTensors` with
/// those shapes. The error lists every missing tensor, unexpected extra
/// tensor and shape mismatch (with both shapes), one per line.
llvm::Error checkWeights(const ModelConfig &config,
                         const SafeTensorsFile &file);

} // namespace mlir::afm

#endif // AFM_MODEL_MODELWEIGHTS_H
