//===- ReferenceModelTest.cpp - the reference evaluator end to end --------===//
//
// Properties any correct decoder has: chunking does not matter, a KV cache
// gives the same logits as recomputing, the sliding window hides what lies
// outside it; plus models small enough to evaluate by hand, with f32 and
// int8 KV caches.
//
//===----------------------------------------------------------------------===//

#include "ModelTestSupport.h"

#include "afm/Model/ModelWeights.h"
#include "afm/Reference/ReferenceModel.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>

using namespace mlir::afm;
using namespace mlir::afm::test;
using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

namespace {
TEST(ReferenceModel, ForwardReturnsOneLogitPerVocabularyEntry) {
  llvm::Expected<ReferenceModel> model = exampleModel(smallConfig());
  ASSERT_TRUE(bool(model)) << errorText(model);
  EXPECT_EQ(model->position(), 0);
  llvm::Expected<std::vector<float>> logits = model->forward({3, 1, 4});
  ASSERT_TRUE(bool(logits)) << errorText(logits);
  EXPECT_EQ(logits->size(), 32u);
  EXPECT_EQ(model->position(), 3);
  for (float logit : *logits)
    EXPECT_TRUE(std::isfinite(logit));
}

TEST(ReferenceModel, ChunkingThePromptDoesNotChangeTheLogits) {
  ModelConfig config = smallConfig();
  std::vector<float> whole = freshLogits(config, {5, 9, 2});
  llvm::Expected<ReferenceModel> model = exampleModel(config);
  ASSERT_TRUE(bool(model)) << errorText(model);
  std::vector<float> last;
  for (int32_t token : {5, 9, 2})
    last = llvm::cantFail(model->forward(token));
  EXPECT_EQ(last, whole);
  // A different split: [5, 9] then [2].
  ASSERT_TRUE(bool(model)) << errorText(model);
  model->reset();
  llvm::cantFail(model->forward({5, 9}));
  EXPECT_EQ(llvm::cantFail(model->forward(2)), whole);
}

TEST(ReferenceModel, LaterTokensDoNotChangeEarlierLogits) {
  ModelConfig config = smallConfig();
  llvm::Expected<ReferenceModel> model = exampleModel(config);
  ASSERT_TRUE(bool(model)) << errorText(model);
  std::vector<float> first = llvm::cantFail(model->forward(7));
  llvm::cantFail(model->forward({8, 30}));
  // The logits at position 0 are those of the one-token prompt, and the
  // logits after [7, 8] do not depend on the 30 that followed.
  EXPECT_EQ(first, freshLogits(config, {7}));
  model->reset();
  llvm::cantFail(model->forward(7));
  std::vector<float> second = llvm::cantFail(model->forward(8));
  EXPECT_EQ(second, freshLogits(config, {7, 8}));
  EXPECT_NE(first, second);
}

TEST(ReferenceModel, CachedDecodingEqualsRecomputingThePrompt) {
  ModelConfig config = smallConfig();
  std::vector<int32_t> prompt = {1, 2, 3, 31, 0};
  llvm::Expected<ReferenceModel> model = exampleModel(config);
  ASSERT_TRUE(bool(model)) << errorText(model);
  llvm::cantFail(model->forward(prompt));
  std::vector<float> decoded = llvm::cantFail(model->forward(17));
  prompt.push_back(17);
  EXPECT_EQ(decoded, freshLogits(config, prompt));
}

TEST(ReferenceModel, ResetForgetsTheContext) {
  ModelConfig config = smallConfig();
  llvm::Expected<ReferenceModel> model = exampleModel(config);
  ASSERT_TRUE(bool(model)) << errorText(model);
  llvm::cantFail(model->forward({4, 4, 4}));
  model->reset();
  EXPECT_EQ(model->position(), 0);
  EXPECT_EQ(llvm::cantFail(model->forward({6, 2})),
            freshLogits(config, {6, 2}));
}

/// One local layer with window 4 (local_per_global = 1: layer 0 is local).
ModelConfig oneLocalLayer() {
  ModelConfig config = smallConfig(/*layers=*/1);
  config.localPerGlobal = 1;
  config.slidingWindow = 4;
  return config;
}

TEST(ReferenceModel, SlidingWindowHidesTokensOutsideIt) {
  ModelConfig config = oneLocalLayer();
  // The last position, 9, sees positions 6..9.
  std::vector<int32_t> tokens = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  std::vector<float> base = freshLogits(config, tokens);
  std::vector<int32_t> outside = tokens;
  outside[5] = 20;
  EXPECT_EQ(freshLogits(config, outside), base);
  outside[0] = 21;
  EXPECT_EQ(freshLogits(config, outside), base);
  std::vector<int32_t> inside = tokens;
  inside[6] = 20;
  EXPECT_NE(freshLogits(config, inside), base);
}

TEST(ReferenceModel, GlobalLayersSeeTheWholeContext) {
  ModelConfig config = oneLocalLayer();
  config.localPerGlobal = 0;
  std::vector<int32_t> tokens = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  std::vector<int32_t> changed = tokens;
  changed[0] = 20;
  EXPECT_NE(freshLogits(config, changed), freshLogits(config, tokens));
}

TEST(ReferenceModel, NopeGlobalLayersIgnoreTheOrderOfEarlierTokens) {
  // In one layer without RoPE, the last token attends to the set of
  // earlier keys and values, so swapping two earlier tokens changes the
  // logits only by summation order; with RoPE it changes them.
  ModelConfig config = smallConfig(/*layers=*/1);
  config.ropeInGlobalLayers = false;
  EXPECT_LT(maxAbsDiff(freshLogits(config, {3, 9, 5}),
                       freshLogits(config, {9, 3, 5})),
            1e-5);
  config.ropeInGlobalLayers = true;
  EXPECT_GT(maxAbsDiff(freshLogits(config, {3, 9, 5}),
                       freshLogits(config, {9, 3, 5})),
            1e-3);
}

TEST(ReferenceModel, BadTokensAreErrorsThatKeepTheContext) {
  ModelConfig config = smallConfig();
  config.maxPositionEmbeddings = 4;
  llvm::Expected<ReferenceModel> model = exampleModel(config);
  ASSERT_TRUE(bool(model)) << errorText(model);
  llvm::cantFail(model->forward({1, 2, 3}));
  llvm::Expected<std::vector<float>> empty = model->forward({});
  EXPECT_EQ(errorText(empty), "no tokens to process");
  llvm::Expected<std::vector<float>> negative = model->forward({5, -1});
  EXPECT_EQ(errorText(negative),
            "token -1 (at index 1) is outside the vocabulary [0, 32)");
  llvm::Expected<std::vector<float>> tooLarge = model->forward(32);
  EXPECT_THAT(errorText(tooLarge), HasSubstr("token 32 (at index 0)"));
  llvm::Expected<std::vector<float>> tooLong = model->forward({1, 2});
  EXPECT_EQ(errorText(tooLong), "2 tokens after position 3 exceed "
                                "max_position_embeddings (4)");
  EXPECT_EQ(model->position(), 3);
  llvm::Expected<std::vector<float>> last = model->forward(4);
  ASSERT_TRUE(bool(last)) << errorText(last);
  EXPECT_EQ(*last, freshLogits(config, {1, 2, 3, 4}));
}

TEST(ReferenceModel, CreateChecksTheWeights) {
  ModelConfig config = smallConfig();
  std::vector<SafeTensor> tensors = generateExampleWeights(config, 0);
  tensors.pop_back(); // model.norm.weight
  llvm::Expected<SafeTensorsFile> file =
      openBytes(llvm::cantFail(serializeSafeTensors(tensors)));
  ASSERT_TRUE(bool(file)) << errorText(file);
  llvm::Expected<ReferenceModel> model = ReferenceModel::create(config, *file);
  EXPECT_THAT(errorText(model),
              HasSubstr("missing tensor 'model.norm.weight'"));
}

/// One layer, d = hd = 2, one head, a vocabulary of `vocab`, tied
/// embedding: a model small enough to evaluate by hand.
static ModelConfig handSizedConfig(int64_t vocab) {
  ModelConfig config;
  config.vocabSize = vocab;
  config.hiddenSize = 2;
  config.intermediateSize = 1;
  config.numHiddenLayers = 1;
  config.numAttentionHeads = 1;
  config.numKeyValueHeads = 1;
  config.headDim = 2;
  config.tieWordEmbeddings = true;
  return config;
}

/// The weights of `config`: the `given` tensors, unit norm gains, zeros
/// everywhere else.
static std::vector<SafeTensor>
handWeights(const ModelConfig &config,
            const std::map<std::string, std::vector<float>> &given) {
  std::vector<SafeTensor> tensors;
  for (const ExpectedTensor &expected : expectedTensors(config)) {
    std::vector<float> values(expected.numElements(), 0.0f);
    if (auto it = given.find(expected.name); it != given.end())
      values = it->second;
    else if (expected.shape.size() == 1)
      values.assign(values.size(), 1.0f);
    tensors.push_back(SafeTensor::fromF32(expected.name, expected.shape,
                                          values));
  }
  return tensors;
}

TEST(ReferenceModel, ZeroLayersPassTheEmbeddingToATiedHead) {
  // d = 2, V = 3, one layer whose projections are all zero, so the residual
  // stream is the embedding: logits = E . rmsnorm(e_t).
  // E = [[1, 0], [0, 1], [1, 1]]; rmsnorm([1, 0]) = [sqrt 2, 0] (eps 1e-5
  // aside), so the logits of token 0 are [sqrt 2, 0, sqrt 2].
  ModelConfig config = handSizedConfig(/*vocab=*/3);
  llvm::Expected<ReferenceModel> model = modelWith(
      config, handWeights(config, {{kEmbedTokensName, {1, 0, 0, 1, 1, 1}}}));
  ASSERT_TRUE(bool(model)) << errorText(model);
  EXPECT_THAT(llvm::cantFail(model->forward(0)),
              Pointwise(FloatNear(1e-4f), {1.41421356f, 0.0f, 1.41421356f}));
  // Token 2 after token 0: still only its own embedding, [1, 1] -> [1, 1].
  EXPECT_THAT(llvm::cantFail(model->forward(2)),
              Pointwise(FloatNear(1e-4f), {1.0f, 1.0f, 2.0f}));
}

TEST(ReferenceModel, Int8CacheChangesTheLogitsSlightly) {
  // Quantizing K and V to 8 bits per value moves the logits, but by far
  // less than their scale (about 1e-3 of it on the compiled examples).
  ModelConfig config = smallConfig();
  std::vector<int32_t> prompt = {1, 2, 3, 31, 0, 17, 9};
  std::vector<float> f32 = freshLogits(config, prompt);
  config.kvCacheDType = KVCacheDType::Int8;
  std::vector<float> int8 = freshLogits(config, prompt);
  double scale = 0;
  for (float logit : f32)
    scale = std::max(scale, double(std::abs(logit)));
  EXPECT_GT(maxAbsDiff(f32, int8), 0.0);
  EXPECT_LT(maxAbsDiff(f32, int8), 1e-2 * scale);
}

/// handSizedConfig(2) with embedding [[1, 1], [2, 1]], W_q = W_k = 0
/// (every position gets the same weight), W_o = I and a zero FFN: the
/// residual is e_t + mean(dequantized V rows), where v = W_v rmsnorm(e) with
/// W_v = diag(1, v11).
static std::vector<float> valueMixLogits(KVCacheDType dtype, float v11,
                                         llvm::ArrayRef<int32_t> tokens) {
  ModelConfig config = handSizedConfig(/*vocab=*/2);
  config.kvCacheDType = dtype;
  LayerTensorNames names = layerTensorNames(0);
  return logitsWith(config,
                    handWeights(config, {{kEmbedTokensName, {1, 1, 2, 1}},
                                         {names.vProj, {1, 0, 0, v11}},
                                         {names.oProj, {1, 0, 0, 1}}}),
                    tokens);
}

TEST(ReferenceModel, Int8CacheStoresCodesOfAbsMaxOver127) {
  // With v11 = 0.3, token 0 has v = c [1, 0.3] (c = rmsnorm's 1/sqrt(1 +
  // eps)): scale c / 127, codes [127, round(38.1) = 38], read back as
  // c [1, 38/127]. Token 1 has v = c' [2, 0.3]: scale 2c' / 127, codes
  // [127, round(19.05) = 19], read back as c' [2, 38/127]. So the int8 model
  // is the f32 model with v11 = 38/127 (to rounding), and not the one with
  // 0.3.
  for (const std::vector<int32_t> &tokens :
       std::vector<std::vector<int32_t>>{{0}, {0, 1}}) {
    std::vector<float> int8 =
        valueMixLogits(KVCacheDType::Int8, 0.3f, tokens);
    EXPECT_THAT(int8, Pointwise(FloatNear(1e-6f),
                                valueMixLogits(KVCacheDType::F32,
                                               38.0f / 127.0f, tokens)));
    EXPECT_GT(maxAbsDiff(int8, valueMixLogits(KVCacheDType::F32, 0.3f,
                                              tokens)),
              1e-4);
  }
}
TEST(ReferenceModel, F16CacheStoresEachValueRoundedToHalf) {
  // With v11 = 1 + 2^-12, token 0 has v = c [1, 1 + 2^-12] (c = rmsnorm's
  // 1/sqrt(1 + eps), within 1e-6 of 1): the nearest halves are 1 and 1
  // (their spacing there is 2^-10), so the f16 model is the f32 model with
  // v11 = 1 (to c's rounding), and not the one with 1 + 2^-12.
  const float v11 = 1.0f + 1.0f / 4096.0f;
  for (const std::vector<int32_t> &tokens :
       std::vector<std::vector<int32_t>>{{0}, {0, 0}}) {
    std::vector<float> f16 = valueMixLogits(KVCacheDType::F16, v11, tokens);
    EXPECT_THAT(f16, Pointwise(FloatNear(1e-5f),
                               valueMixLogits(KVCacheDType::F32, 1.0f,
                                              tokens)));
    EXPECT_GT(maxAbsDiff(f16, valueMixLogits(KVCacheDType::F32, v11, tokens)),
              2e-5);
  }
}
} // namespace
