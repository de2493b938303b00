//===- ExampleModel.cpp - small random models for tests and demos ---------===//
//
// Compiled with -ffp-contract=off, like Random.cpp, so that the scaling of
// the normal samples rounds the same way on every target.
//
//===----------------------------------------------------------------------===//

#include "afm/Model/ExampleModel.h"

#include "afm/Model/ModelWeights.h"
#include "afm/Model/Random.h"

#include "llvm/ADT/StringExtras.h"

#include <cmath>

using namespace mlir::afm;

namespace {
struct Preset {
  const char *name;
  ModelConfig (*config)();
};

ModelConfig tinyDense() {
  ModelConfig config;
  config.architecture = Architecture::Dense;
  config.vocabSize = 256;
  config.hiddenSize = 64;
  config.intermediateSize = 128;
  config.numHiddenLayers = 2;
  config.numAttentionHeads = 4;
  config.numKeyValueHeads = 2;
  config.headDim = 16;
  config.rmsNormEps = 1e-5;
  config.ropeTheta = 10000.0;
  config.maxPositionEmbeddings = 512;
  config.tieWordEmbeddings = true;
  return config;
}

constexpr Preset kPresets[] = {{"tiny-dense", tinyDense}};
} // namespace

std::vector<llvm::StringRef> mlir::afm::examplePresetNames() {
  std::vector<llvm::StringRef> names;
  for (const Preset &preset : kPresets)
    names.push_back(preset.name);
  return names;
}

llvm::Expected<ModelConfig>
mlir::afm::examplePresetConfig(llvm::StringRef name) {
  for (const Preset &preset : kPresets)
    if (name == preset.name)
      return preset.config();
  return llvm::createStringError("unknown preset '" + name +
                                 "' (presets: " +
                                 llvm::join(examplePresetNames(), ", ") + ")");
}

std::vector<SafeTensor>
mlir::afm::generateExampleWeights(const ModelConfig &config, uint64_t seed) {
  SplitMix64 random(seed);
  std::vector<SafeTensor> tensors;
  for (const ExpectedTensor &expected : expectedTensors(config)) {
    double mean = 0.0, stddev = 1.0;
    if (expected.shape.size() == 1) {
      mean = 1.0; // RMSNorm gains.
      stddev = 0.1;
    } else if (expected.name == kEmbedTokensName) {
      // Small next to what the layers add to the residual stream, so that
      // with tied embeddings the next token is not simply the current one
      // (which would make greedy-token comparisons prove little).
      stddev = 0.1;
    } else {
      stddev = 1.0 / std::sqrt(static_cast<double>(expected.shape[1]));
    }
    std::vector<float> values(expected.numElements());
    for (float &value : values)
      value = static_cast<float>(random.nextNormal(mean, stddev));
    tensors.push_back(SafeTensor::fromF32(expected.name, expected.shape,
                                          values));
  }
  return tensors;
}
