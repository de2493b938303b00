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

/// tiny-dense's sizes with the paper's attention pattern: three local layers
/// (window 8, shorter than the tests' contexts) then one NoPE global layer.
ModelConfig tinyFamily(Architecture architecture, int64_t layers,
                       int64_t context) {
  ModelConfig config = tinyDense();
  config.architecture = architecture;
  config.numHiddenLayers = layers;
  config.maxPositionEmbeddings = context;
  config.slidingWindow = 8;
  config.localPerGlobal = 3;
  config.ropeInGlobalLayers = false;
  return config;
}

/// Eight layers, LLLG LLLG: Block 1 = layers 0-4, Block 2 = 5-7 (5 and 6
/// read layer 4's cache, 7 reads layer 3's).
ModelConfig tinyOnDevice() {
  ModelConfig config = tinyFamily(Architecture::OnDevice, 8, 1024);
  config.block1Fraction = 0.625;
  return config;
}

/// Two tracks of four layers (LLLG), blocks of two layers; layers 1 and 3
/// of each track route to 2 of 4 experts.
ModelConfig tinyPTMoE() {
  ModelConfig config = tinyFamily(Architecture::PTMoE, 4, 512);
  config.numTracks = 2;
  config.trackBlockDepth = 2;
  config.numExperts = 4;
  config.numExpertsPerTok = 2;
  config.moeLayerInterval = 2;
  config.moeIntermediateSize = 64;
  return config;
}

constexpr Preset kPresets[] = {{"tiny-dense", tinyDense},
                               {"tiny-on-device", tinyOnDevice},
                               {"tiny-pt-moe", tinyPTMoE}};
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
      // The input width: [out, in] matrices, routers [E, d] and stacked
      // experts [E, F_moe, d] / [E, d, F_moe].
      stddev = 1.0 / std::sqrt(static_cast<double>(expected.shape.back()));
    }
    std::vector<float> values(expected.numElements());
    for (float &value : values)
      value = static_cast<float>(random.nextNormal(mean, stddev));
    tensors.push_back(SafeTensor::fromF32(expected.name, expected.shape,
                                          values));
  }
  return tensors;
}

int64_t mlir::afm::zeroTensors(std::vector<SafeTensor> &tensors,
                               llvm::StringRef substring) {
  int64_t count = 0;
  for (SafeTensor &tensor : tensors) {
    if (!llvm::StringRef(tensor.name).contains(substring))
      continue;
    // All-zero bytes are +0.0 in F32, F16 and BF16 alike.
    std::fill(tensor.data.begin(), tensor.data.end(), 0);
    ++count;
  }
  return count;
}
