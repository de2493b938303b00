//===- ExampleModel.cpp - small random models for tests and demos ---------===//
//
// Compiled with -ffp-contract=off, like Random.cpp, so that the scaling of
// the normal samples rounds the same way on every target.
//
//===----------------------------------------------------------------------===//

#include "afm/TestModels/ExampleModel.h"

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

/// The paper's on-device model (about 3B parameters): 26 layers, Block 1
/// the first 62.5% (17 layers), Block 2 reading their KV caches; 3 local
/// layers (window 4096) then one NoPE global layer; 24 query and 8 KV
/// heads of 128; the paper's 150k vocabulary; compressed as deployed:
/// 2-bit linear weights on int8 activations, a 4-bit tied embedding, an
/// int8 KV cache.
ModelConfig onDevice3B() {
  ModelConfig config;
  config.architecture = Architecture::OnDevice;
  config.vocabSize = 150000;
  config.hiddenSize = 3072;
  config.intermediateSize = 8192;
  config.numHiddenLayers = 26;
  config.numAttentionHeads = 24;
  config.numKeyValueHeads = 8;
  config.headDim = 128;
  config.rmsNormEps = 1e-5;
  config.ropeTheta = 500000.0;
  config.maxPositionEmbeddings = 8192;
  config.tieWordEmbeddings = true;
  config.slidingWindow = 4096;
  config.localPerGlobal = 3;
  config.ropeInGlobalLayers = false;
  config.block1Fraction = 0.625;
  config.linearWeightFormat = LinearWeightFormat::Q2;
  config.q2PerChannel = true;
  config.embeddingFormat = EmbeddingFormat::Q4;
  config.kvCacheDType = KVCacheDType::Int8;
  config.int8Activations = true;
  return config;
}

/// A PT-MoE model sized for a 2-core, 24 GiB machine (about 1.4B
/// parameters): 2 tracks of 12 layers in blocks of 4, every other layer of
/// a track an MoE of 8 experts (top 2); compressed as afm-on-device-3b.
ModelConfig ptMoE2Tracks() {
  ModelConfig config = onDevice3B();
  config.architecture = Architecture::PTMoE;
  config.hiddenSize = 2048;
  config.intermediateSize = 5632;
  config.numHiddenLayers = 12;
  config.numAttentionHeads = 16;
  config.numKeyValueHeads = 4;
  config.numTracks = 2;
  config.trackBlockDepth = 4;
  config.numExperts = 8;
  config.numExpertsPerTok = 2;
  config.moeLayerInterval = 2;
  config.moeIntermediateSize = 1408;
  return config;
}

constexpr Preset kPresets[] = {{"tiny-dense", tinyDense},
                               {"tiny-on-device", tinyOnDevice},
                               {"tiny-pt-moe", tinyPTMoE},
                               {"afm-on-device-3b", onDevice3B},
                               {"afm-pt-moe-2t", ptMoE2Tracks}};
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

int64_t ExampleTensorPlan::numElements() const {
  return shapeNumElements(shape);
}

std::vector<ExampleTensorPlan>
mlir::afm::planExampleTensors(const ModelConfig &config) {
  std::vector<ExampleTensorPlan> plans;
  uint64_t draw = 0;
  for (const ExpectedTensor &expected : expectedTensors(config)) {
    ExampleTensorPlan plan;
    plan.name = expected.name;
    plan.shape = expected.shape;
    if (llvm::StringRef(expected.name).ends_with(".bias")) {
      // Large enough to move the logits: Qwen's q/k biases are.
      plan.stddev = 0.5;
    } else if (expected.shape.size() == 1) {
      plan.mean = 1.0; // RMSNorm gains.
      plan.stddev = 0.1;
    } else if (expected.name == kEmbedTokensName) {
      // Small next to what the layers add to the residual stream, so that
      // with tied embeddings the next token is not simply the current one
      // (which would make greedy-token comparisons prove little).
      plan.stddev = 0.1;
    } else {
      // The input width: [out, in] matrices, routers [E, d] and stacked
      // experts [E, F_moe, d] / [E, d, F_moe].
      plan.stddev = 1.0 / std::sqrt(static_cast<double>(expected.shape.back()));
    }
    plan.firstDraw = draw;
    draw += 2 * uint64_t(plan.numElements());
    plans.push_back(std::move(plan));
  }
  return plans;
}

void mlir::afm::generateExampleValues(const ExampleTensorPlan &plan,
                                      uint64_t seed, int64_t begin,
                                      llvm::MutableArrayRef<float> out) {
  SplitMix64 random(seed);
  random.skip(plan.firstDraw + 2 * uint64_t(begin));
  for (float &value : out)
    value = static_cast<float>(random.nextNormal(plan.mean, plan.stddev));
}

std::vector<SafeTensor>
mlir::afm::generateExampleWeights(const ModelConfig &config, uint64_t seed) {
  std::vector<SafeTensor> tensors;
  for (const ExampleTensorPlan &plan : planExampleTensors(config)) {
    std::vector<float> values(plan.numElements());
    generateExampleValues(plan, seed, 0, values);
    tensors.push_back(SafeTensor::fromF32(plan.name, plan.shape, values));
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
