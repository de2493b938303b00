//===- ModelWeightsTest.cpp - tensor names, shapes and example weights ----===//

#include "ModelTestSupport.h"

#include "afm/TestModels/ExampleModel.h"
#include "afm/Model/ModelWeights.h"
#include "afm/Model/Random.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace mlir::afm;
using namespace mlir::afm::test;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace {
/// d = 16, H = 4, G = 2 and hd = 6 != d / H, so every width differs.
ModelConfig oddWidths() {
  ModelConfig config = smallConfig(/*layers=*/2);
  config.headDim = 6;
  config.tieWordEmbeddings = false;
  return config;
}

TEST(ModelWeights, ExpectedTensorsFollowTheDocumentedNamesAndShapes) {
  std::vector<ExpectedTensor> tensors = expectedTensors(oddWidths());
  ASSERT_EQ(tensors.size(), 1u + 2 * 9 + 1 + 1);
  EXPECT_EQ(tensors.front().name, "model.embed_tokens.weight");
  EXPECT_THAT(tensors.front().shape, ElementsAre(32, 16));
  EXPECT_EQ(tensors.back().name, "lm_head.weight");
  EXPECT_THAT(tensors.back().shape, ElementsAre(32, 16));
  auto shapeOf = [&](llvm::StringRef name) {
    const ExpectedTensor *tensor = findTensor(tensors, name);
    return tensor ? tensor->shape : std::vector<int64_t>{-1};
  };
  EXPECT_THAT(shapeOf("model.layers.1.input_layernorm.weight"),
              ElementsAre(16));
  EXPECT_THAT(shapeOf("model.layers.1.self_attn.q_proj.weight"),
              ElementsAre(4 * 6, 16));
  EXPECT_THAT(shapeOf("model.layers.1.self_attn.k_proj.weight"),
              ElementsAre(2 * 6, 16));
  EXPECT_THAT(shapeOf("model.layers.1.self_attn.v_proj.weight"),
              ElementsAre(2 * 6, 16));
  EXPECT_THAT(shapeOf("model.layers.1.self_attn.o_proj.weight"),
              ElementsAre(16, 4 * 6));
  EXPECT_THAT(shapeOf("model.layers.1.post_attention_layernorm.weight"),
              ElementsAre(16));
  EXPECT_THAT(shapeOf("model.layers.1.mlp.gate_proj.weight"),
              ElementsAre(24, 16));
  EXPECT_THAT(shapeOf("model.layers.1.mlp.up_proj.weight"),
              ElementsAre(24, 16));
  EXPECT_THAT(shapeOf("model.layers.1.mlp.down_proj.weight"),
              ElementsAre(16, 24));
  EXPECT_THAT(shapeOf("model.norm.weight"), ElementsAre(16));
  EXPECT_EQ(parameterCount(oddWidths()),
            2 * 32 * 16 + 16 + 2 * (2 * 16 + 2 * 24 * 16 + 24 * 16 +
                                    2 * 24 * 16 + 2 * 12 * 16));
}

TEST(ModelWeights, TiedEmbeddingsHaveNoLmHead) {
  ModelConfig config = oddWidths();
  config.tieWordEmbeddings = true;
  std::vector<ExpectedTensor> tensors = expectedTensors(config);
  EXPECT_EQ(tensors.size(), 20u);
  EXPECT_EQ(findTensor(tensors, "lm_head.weight"), nullptr);
  EXPECT_EQ(tensors.back().name, "model.norm.weight");
}

TEST(ModelWeights, ExampleWeightsPassTheCheck) {
  EXPECT_EQ(checkError(oddWidths(), generateExampleWeights(oddWidths(), 0)),
            "");
}

TEST(ModelWeights, MissingTensorIsNamedWithItsShape) {
  std::vector<SafeTensor> tensors = generateExampleWeights(oddWidths(), 0);
  llvm::erase_if(tensors, [](const SafeTensor &t) {
    return t.name == "model.layers.1.mlp.up_proj.weight";
  });
  EXPECT_EQ(checkError(oddWidths(), tensors),
            "w.safetensors: missing tensor "
            "'model.layers.1.mlp.up_proj.weight' (expected shape [24, 16])");
}

TEST(ModelWeights, ExtraTensorIsNamed) {
  std::vector<SafeTensor> tensors = generateExampleWeights(oddWidths(), 0);
  tensors.push_back(
      SafeTensor::fromF32("model.layers.2.input_layernorm.weight", {1}, {1}));
  EXPECT_EQ(checkError(oddWidths(), tensors),
            "w.safetensors: unexpected tensor "
            "'model.layers.2.input_layernorm.weight' (not part of the model "
            "the config describes)");
  ModelConfig tied = oddWidths();
  tied.tieWordEmbeddings = true;
  EXPECT_THAT(checkError(tied, generateExampleWeights(oddWidths(), 0)),
              HasSubstr("unexpected tensor 'lm_head.weight' (the config ties "
                        "the LM head to the embeddings)"));
}

TEST(ModelWeights, ShapeMismatchNamesBothShapes) {
  std::vector<SafeTensor> tensors = generateExampleWeights(oddWidths(), 0);
  for (SafeTensor &tensor : tensors)
    if (tensor.name == "model.layers.0.self_attn.k_proj.weight")
      tensor = SafeTensor::fromF32(tensor.name, {16, 12},
                                   std::vector<float>(16 * 12));
  EXPECT_EQ(checkError(oddWidths(), tensors),
            "w.safetensors: tensor 'model.layers.0.self_attn.k_proj.weight' "
            "has shape [16, 12] but the config expects [12, 16]");
}

TEST(ModelWeights, EveryProblemIsListed) {
  std::vector<SafeTensor> tensors = generateExampleWeights(oddWidths(), 0);
  tensors.erase(tensors.begin()); // The embeddings.
  tensors.push_back(SafeTensor::fromF32("extra", {1}, {1}));
  std::string error = checkError(oddWidths(), tensors);
  EXPECT_THAT(error, HasSubstr("missing tensor 'model.embed_tokens.weight'"));
  EXPECT_THAT(error, HasSubstr("\nw.safetensors: unexpected tensor 'extra'"));
}

TEST(ExampleModel, TinyDensePresetIsTheDocumentedModel) {
  llvm::Expected<ModelConfig> config = examplePresetConfig("tiny-dense");
  ASSERT_TRUE(bool(config)) << errorText(config);
  EXPECT_EQ(config->vocabSize, 256);
  EXPECT_EQ(config->hiddenSize, 64);
  EXPECT_EQ(config->intermediateSize, 128);
  EXPECT_EQ(config->numHiddenLayers, 2);
  EXPECT_EQ(config->numAttentionHeads, 4);
  EXPECT_EQ(config->numKeyValueHeads, 2);
  EXPECT_EQ(config->headDim, 16);
  EXPECT_EQ(config->ropeTheta, 10000.0);
  EXPECT_EQ(config->maxPositionEmbeddings, 512);
  EXPECT_TRUE(config->tieWordEmbeddings);
  EXPECT_EQ(config->rmsNormEps, 1e-5);
  llvm::Expected<ModelConfig> unknown = examplePresetConfig("huge");
  EXPECT_EQ(errorText(unknown), "unknown preset 'huge' (presets: tiny-dense, "
                                "tiny-on-device, tiny-pt-moe, "
                                "afm-on-device-3b, afm-pt-moe-2t)");
}

// afm-gen-example writes large tensors in pieces on several threads: any
// piece of a tensor is the same values as that range of the whole.
TEST(ExampleModel, PiecesOfATensorAreRangesOfTheWhole) {
  std::vector<ExampleTensorPlan> plans = planExampleTensors(oddWidths());
  std::vector<SafeTensor> whole = generateExampleWeights(oddWidths(), 3);
  ASSERT_EQ(plans.size(), whole.size());
  for (size_t i = 0; i < plans.size(); ++i) {
    int64_t n = plans[i].numElements();
    std::vector<float> pieced(n);
    for (int64_t begin = 0; begin < n; begin += 7)
      generateExampleValues(
          plans[i], 3, begin,
          llvm::MutableArrayRef<float>(pieced).slice(
              begin, std::min<int64_t>(7, n - begin)));
    ASSERT_EQ(whole[i].data.size(), size_t(4 * n)) << plans[i].name;
    EXPECT_EQ(std::memcmp(whole[i].data.data(), pieced.data(), 4 * n), 0)
        << plans[i].name;
  }
}

TEST(ExampleModel, WeightsDependOnlyOnConfigAndSeed) {
  std::vector<SafeTensor> a = generateExampleWeights(oddWidths(), 7);
  std::vector<SafeTensor> b = generateExampleWeights(oddWidths(), 7);
  std::vector<SafeTensor> c = generateExampleWeights(oddWidths(), 8);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_EQ(a[i].data, b[i].data) << a[i].name;
  EXPECT_NE(a[0].data, c[0].data);
}

/// Mean and variance of the f32 values of `tensor`.
std::pair<double, double> moments(const SafeTensor &tensor) {
  std::vector<float> values = valuesOf(tensor);
  double sum = 0, sumSquares = 0;
  for (float v : values) {
    sum += v;
    sumSquares += double(v) * v;
  }
  double mean = sum / values.size();
  return {mean, sumSquares / values.size() - mean * mean};
}

TEST(ExampleModel, WeightsHaveTheDocumentedDistributions) {
  ModelConfig config = smallConfig(1);
  config.vocabSize = 1024;
  config.hiddenSize = 64;
  config.intermediateSize = 256;
  config.headDim = 16;
  // PT-MoE adds routers [E, d] and stacked experts [E, F_moe, d] and
  // [E, d, F_moe]: fan_in is the last dimension.
  ModelConfig moe = config;
  moe.architecture = Architecture::PTMoE;
  moe.numHiddenLayers = 2;
  moe.trackBlockDepth = 1;
  moe.numExperts = 4;
  moe.moeIntermediateSize = 32;
  for (const ModelConfig &c : {config, moe}) {
    for (const SafeTensor &tensor : generateExampleWeights(c, 3)) {
      auto [mean, variance] = moments(tensor);
      double expectedMean = 0, expectedVariance = 1;
      if (tensor.shape.size() == 1) {
        expectedMean = 1;
        expectedVariance = 0.01;
      } else if (tensor.name == kEmbedTokensName) {
        expectedVariance = 0.01;
      } else {
        expectedVariance = 1.0 / tensor.shape.back();
      }
      // Loose bounds: every tensor has at least 64 values.
      EXPECT_NEAR(mean, expectedMean, 0.5 * std::sqrt(expectedVariance))
          << tensor.name;
      EXPECT_NEAR(variance / expectedVariance, 1.0, 0.5) << tensor.name;
    }
  }
}

TEST(Random, SplitMix64MatchesTheReferenceStream) {
  // The first outputs of the published splitmix64.c for seed 0.
  SplitMix64 random(0);
  EXPECT_EQ(random.next(), 0xe220a8397b1dcdafull);
  EXPECT_EQ(random.next(), 0x6e789e6aa1b965f4ull);
}

TEST(Random, ReproducibleLogAndCosAreAccurate) {
  for (double x : {1e-300, 1e-17, 0.001, 0.3, 0.70710678, 0.9999, 1.0, 2.5}) {
    EXPECT_NEAR(reproducibleLog(x), std::log(x),
                4e-16 * std::abs(std::log(x)) + 1e-16)
        << x;
  }
  for (int i = 0; i <= 64; ++i) {
    double u = i / 64.0 + 1e-3 * (i % 3);
    EXPECT_NEAR(reproducibleCos2Pi(u), std::cos(2 * M_PI * u), 1e-15) << u;
  }
}

TEST(Random, NormalSamplesHaveUnitVariance) {
  SplitMix64 random(123);
  double sum = 0, sumSquares = 0;
  const int count = 20000;
  for (int i = 0; i < count; ++i) {
    double z = random.nextNormal();
    sum += z;
    sumSquares += z * z;
  }
  EXPECT_NEAR(sum / count, 0.0, 0.05);
  EXPECT_NEAR(sumSquares / count, 1.0, 0.05);
}
} // namespace
