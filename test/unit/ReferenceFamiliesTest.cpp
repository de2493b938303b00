//===- ReferenceFamiliesTest.cpp - reference on-device and PT-MoE models --===//
//
// Identities that pin the semantics of docs/model-config.md, "AFM
// families": models that must equal a dense model (or each other) by
// construction, changes that must or must not reach the logits, and the
// routing of MoE layers.
//
//===----------------------------------------------------------------------===//

#include "ModelTestSupport.h"

#include "afm/TestModels/ExampleModel.h"
#include "afm/Model/ModelWeights.h"
#include "afm/Reference/ReferenceModel.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace mlir::afm;
using namespace mlir::afm::test;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace {
ModelConfig preset(llvm::StringRef name) {
  return llvm::cantFail(examplePresetConfig(name));
}

/// Ten tokens, longer than the presets' window of 8.
const std::vector<int32_t> kPrompt = {3, 141, 59, 26, 5, 35, 89, 79, 32, 38};
/// Ten tokens of smallConfig's vocabulary of 32.
const std::vector<int32_t> kSmallPrompt = {3, 14, 15, 9, 26, 5, 3, 5, 8, 9};

/// Runs `prompt` then `decoded` one token at a time and checks that every
/// step's logits equal a fresh run of the whole sequence so far.
void expectCacheMatchesRecomputing(const ModelConfig &config,
                                   llvm::ArrayRef<int32_t> decoded) {
  llvm::Expected<ReferenceModel> model = exampleModel(config);
  ASSERT_TRUE(bool(model)) << errorText(model);
  std::vector<int32_t> sequence = kPrompt;
  llvm::cantFail(model->forward(sequence));
  for (int32_t token : decoded) {
    std::vector<float> step = llvm::cantFail(model->forward(token));
    sequence.push_back(token);
    EXPECT_EQ(step, freshLogits(config, sequence)) << sequence.size();
  }
}

TEST(ReferenceFamilies, OnDeviceCachedDecodingEqualsRecomputing) {
  expectCacheMatchesRecomputing(preset("tiny-on-device"), {7, 200, 7, 1});
}

TEST(ReferenceFamilies, PTMoECachedDecodingEqualsRecomputing) {
  expectCacheMatchesRecomputing(preset("tiny-pt-moe"), {7, 200, 7, 1});
}

TEST(ReferenceFamilies, PresetsGiveFiniteDistinctLogits) {
  for (const char *name : {"tiny-on-device", "tiny-pt-moe"}) {
    std::vector<float> a = freshLogits(preset(name), kPrompt);
    std::vector<int32_t> other = kPrompt;
    other.back() = 0;
    ASSERT_EQ(a.size(), 256u);
    for (float logit : a)
      EXPECT_TRUE(std::isfinite(logit)) << name;
    EXPECT_GT(maxAbsDiff(a, freshLogits(preset(name), other)), 1e-3) << name;
  }
}

//===----------------------------------------------------------------------===//
// afm-on-device
//===----------------------------------------------------------------------===//

TEST(ReferenceOnDevice, EmptyBlock2IsTheDenseModel) {
  ModelConfig onDevice = preset("tiny-on-device");
  onDevice.block1Fraction = 1.0;
  ModelConfig dense = onDevice;
  dense.architecture = Architecture::Dense;
  std::vector<SafeTensor> weights = generateExampleWeights(dense, 4);
  EXPECT_EQ(logitsWith(onDevice, weights, kPrompt),
            logitsWith(dense, weights, kPrompt));
}

/// Two global layers (RoPE as `rope` says): layer 0 in Block 1, layer 1 in
/// Block 2 reading layer 0's cache.
ModelConfig twoLayerOnDevice(bool rope) {
  ModelConfig config = smallConfig(/*layers=*/2);
  config.architecture = Architecture::OnDevice;
  config.block1Fraction = 0.5;
  config.localPerGlobal = 0;
  config.ropeInGlobalLayers = rope;
  return config;
}

TEST(ReferenceOnDevice, Block2LayerIsADenseLayerOverItsSourcesKeysAndValues) {
  // If layer 0 adds nothing to the residual (zero o_proj and down_proj) and
  // layer 1 normalizes with layer 0's gains, layer 1 of a dense model sees
  // layer 0's input. Giving it layer 0's k_proj and v_proj makes its keys
  // and values those of layer 0's cache: exactly what the on-device
  // Block-2 layer 1 attends over, with its own (rotated) queries.
  for (bool rope : {true, false}) {
    ModelConfig onDevice = twoLayerOnDevice(rope);
    ModelConfig dense = onDevice;
    dense.architecture = Architecture::Dense;
    std::vector<SafeTensor> weights = generateExampleWeights(dense, 2);
    LayerTensorNames l0 = layerTensorNames(0), l1 = layerTensorNames(1);
    for (const std::string &name : {l0.oProj, l0.downProj}) {
      SafeTensor &tensor = tensorNamed(weights, name);
      setValues(tensor, std::vector<float>(valuesOf(tensor).size(), 0.0f));
    }
    setValues(tensorNamed(weights, l1.inputNorm),
              valuesOf(tensorNamed(weights, l0.inputNorm)));
    std::vector<SafeTensor> ownKV = weights;
    setValues(tensorNamed(weights, l1.kProj),
              valuesOf(tensorNamed(weights, l0.kProj)));
    setValues(tensorNamed(weights, l1.vProj),
              valuesOf(tensorNamed(weights, l0.vProj)));
    std::vector<SafeTensor> block2 = weights;
    llvm::erase_if(block2, [&](const SafeTensor &t) {
      return t.name == l1.kProj || t.name == l1.vProj;
    });
    std::vector<int32_t> tokens = {4, 8, 15, 16, 23, 31};
    std::vector<float> shared = logitsWith(onDevice, block2, tokens);
    EXPECT_EQ(shared, logitsWith(dense, weights, tokens)) << rope;
    // The identity is not vacuous: layer 1's own K/V give other logits.
    EXPECT_GT(maxAbsDiff(shared, logitsWith(dense, ownKV, tokens)), 1e-4);
  }
}

TEST(ReferenceOnDevice, Block2LayersReadTheCacheOfTheirSource) {
  // tiny-on-device: layers 5 and 6 read layer 4's cache, layer 7 layer 3's.
  // With zero o_proj in layers 2-4 their attention adds nothing to the
  // residual, so their K/V (and the input norms they come from) reach the
  // logits only through the Block-2 layers that read them: layers 3 and 4
  // matter, layer 2 does not.
  ModelConfig config = preset("tiny-on-device");
  std::vector<SafeTensor> base = generateExampleWeights(config, 1);
  for (int layer : {2, 3, 4}) {
    SafeTensor &oProj = tensorNamed(base, layerTensorNames(layer).oProj);
    setValues(oProj, std::vector<float>(valuesOf(oProj).size(), 0.0f));
  }
  std::vector<float> reference = logitsWith(config, base, kPrompt);
  /// The logits after scaling the tensor `name` by 1.5.
  auto scaled = [&](const std::string &name) {
    std::vector<SafeTensor> weights = base;
    std::vector<float> values = valuesOf(tensorNamed(weights, name));
    for (float &v : values)
      v *= 1.5f;
    setValues(tensorNamed(weights, name), values);
    return logitsWith(config, weights, kPrompt);
  };
  for (int layer : {3, 4}) {
    LayerTensorNames names = layerTensorNames(layer);
    for (const std::string &name :
         {names.kProj, names.vProj, names.inputNorm})
      EXPECT_GT(maxAbsDiff(scaled(name), reference), 1e-5) << name;
  }
  LayerTensorNames unread = layerTensorNames(2);
  for (const std::string &name :
       {unread.kProj, unread.vProj, unread.inputNorm, unread.qProj})
    EXPECT_EQ(scaled(name), reference) << name;
}

TEST(ReferenceOnDevice, Block2LocalLayersUseTheWindowOverTheSourcePositions) {
  // Two local layers, window 4; layer 1 is in Block 2 and reads layer 0's
  // cache, whose keys and values at position p depend on token p only. So
  // the last position, 9, depends on tokens 6..9 alone. A dense model
  // recomputes layer 1's K/V from layer 0's outputs, which reach back
  // another 3 positions.
  ModelConfig onDevice = smallConfig(/*layers=*/2);
  onDevice.architecture = Architecture::OnDevice;
  onDevice.block1Fraction = 0.5;
  onDevice.localPerGlobal = 2;
  onDevice.slidingWindow = 4;
  ModelConfig dense = onDevice;
  dense.architecture = Architecture::Dense;
  std::vector<int32_t> tokens = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  std::vector<int32_t> before = tokens, inside = tokens;
  before[5] = 20;
  inside[6] = 20;
  std::vector<float> base = freshLogits(onDevice, tokens);
  EXPECT_EQ(freshLogits(onDevice, before), base);
  EXPECT_NE(freshLogits(onDevice, inside), base);
  EXPECT_NE(freshLogits(dense, before), freshLogits(dense, tokens));
}

//===----------------------------------------------------------------------===//
// afm-pt-moe
//===----------------------------------------------------------------------===//

/// A PT-MoE config of `tracks` tracks of two layers, one-layer blocks
/// (local, then global), each track with 2 query heads and 1 KV head;
/// layer 1 routes to `k` of 3 experts of width 24 (= F).
ModelConfig ptMoE(int64_t tracks, int64_t k) {
  ModelConfig config = smallConfig(/*layers=*/2);
  config.architecture = Architecture::PTMoE;
  config.numAttentionHeads = 2 * tracks;
  config.numKeyValueHeads = tracks;
  config.localPerGlobal = 1;
  config.slidingWindow = 3;
  config.numTracks = tracks;
  config.trackBlockDepth = 1;
  config.numExperts = 3;
  config.numExpertsPerTok = k;
  config.moeLayerInterval = 2;
  config.moeIntermediateSize = config.intermediateSize;
  return config;
}

/// Copies `from`'s tensors of track 0 into the tensors of track `track` of
/// `to`, which have the same shapes.
void copyTrack(llvm::ArrayRef<SafeTensor> from, std::vector<SafeTensor> &to,
               int64_t layers, int64_t track) {
  for (int64_t i = 0; i < layers; ++i) {
    std::string source = "model.tracks.0.layers." + std::to_string(i) + ".";
    std::string target = "model.tracks." + std::to_string(track) +
                         ".layers." + std::to_string(i) + ".";
    for (const SafeTensor &tensor : from)
      if (llvm::StringRef(tensor.name).starts_with(source))
        tensorNamed(to, target + tensor.name.substr(source.size())).data =
            tensor.data;
  }
}

TEST(ReferencePTMoE, OneTrackOfIdenticalExpertsIsTheDenseModel) {
  // Every expert of layer 1 is the dense layer's SwiGLU, so any gates that
  // sum to 1 give the dense FFN; k = 1 gives it bit for bit (gate exactly
  // 1). One track, so each block's mean is that track.
  for (int64_t k : {1, 2, 3}) {
    ModelConfig moe = ptMoE(/*tracks=*/1, k);
    ModelConfig dense = moe;
    dense.architecture = Architecture::Dense;
    std::vector<SafeTensor> denseWeights = generateExampleWeights(dense, 5);
    std::vector<SafeTensor> moeWeights = generateExampleWeights(moe, 6);
    for (int64_t i = 0; i < 2; ++i) {
      LayerTensorNames from = layerTensorNames(i);
      LayerTensorNames to = trackLayerTensorNames(0, i);
      std::vector<std::pair<std::string, std::string>> same = {
          {from.inputNorm, to.inputNorm},
          {from.qProj, to.qProj},
          {from.kProj, to.kProj},
          {from.vProj, to.vProj},
          {from.oProj, to.oProj},
          {from.postAttentionNorm, to.postAttentionNorm}};
      if (i == 0)
        same.insert(same.end(), {{from.gateProj, to.gateProj},
                                 {from.upProj, to.upProj},
                                 {from.downProj, to.downProj}});
      else
        for (int e = 0; e < 3; ++e)
          same.insert(same.end(), {{from.gateProj, to.expertGateProj(e)},
                                   {from.upProj, to.expertUpProj(e)},
                                   {from.downProj, to.expertDownProj(e)}});
      for (const auto &[d, m] : same)
        tensorNamed(moeWeights, m).data = tensorNamed(denseWeights, d).data;
    }
    for (const char *shared : {kEmbedTokensName, kFinalNormName})
      tensorNamed(moeWeights, shared).data =
          tensorNamed(denseWeights, shared).data;
    std::vector<int32_t> tokens = {9, 1, 30, 2, 2, 17, 5};
    std::vector<float> moeLogits = logitsWith(moe, moeWeights, tokens);
    std::vector<float> denseLogits = logitsWith(dense, denseWeights, tokens);
    if (k == 1)
      EXPECT_EQ(moeLogits, denseLogits);
    else
      EXPECT_LT(maxAbsDiff(moeLogits, denseLogits), 1e-5) << k;
  }
}

TEST(ReferencePTMoE, TwoIdenticalTracksEqualOneTrack) {
  // The mean of two equal tracks is that track, exactly.
  ModelConfig one = ptMoE(/*tracks=*/1, /*k=*/2);
  ModelConfig two = ptMoE(/*tracks=*/2, /*k=*/2);
  std::vector<SafeTensor> oneWeights = generateExampleWeights(one, 8);
  std::vector<SafeTensor> twoWeights = generateExampleWeights(two, 9);
  for (int64_t track : {0, 1})
    copyTrack(oneWeights, twoWeights, 2, track);
  for (const char *shared : {kEmbedTokensName, kFinalNormName})
    tensorNamed(twoWeights, shared).data = tensorNamed(oneWeights, shared).data;
  llvm::Expected<ReferenceModel> a = modelWith(one, oneWeights);
  ASSERT_TRUE(bool(a)) << errorText(a);
  llvm::Expected<ReferenceModel> b = modelWith(two, twoWeights);
  ASSERT_TRUE(bool(b)) << errorText(b);
  std::vector<float> first = llvm::cantFail(a->forward(kSmallPrompt));
  EXPECT_EQ(first, llvm::cantFail(b->forward(kSmallPrompt)));
  for (int32_t token : {6, 6, 28})
    EXPECT_EQ(llvm::cantFail(a->forward(token)),
              llvm::cantFail(b->forward(token)));
  // A different second track gives different logits.
  copyTrack(generateExampleWeights(one, 12), twoWeights, 2, 1);
  EXPECT_GT(maxAbsDiff(first, logitsWith(two, twoWeights, kSmallPrompt)), 1e-4);
}

/// Sets every tensor of `weights` whose name ends with one of `suffixes`
/// (and contains `prefix`) to zero.
void zeroMatching(std::vector<SafeTensor> &weights, llvm::StringRef prefix,
                  llvm::ArrayRef<llvm::StringRef> suffixes) {
  for (SafeTensor &tensor : weights)
    for (llvm::StringRef suffix : suffixes)
      if (llvm::StringRef(tensor.name).contains(prefix) &&
          llvm::StringRef(tensor.name).ends_with(suffix))
        setValues(tensor, std::vector<float>(valuesOf(tensor).size(), 0.0f));
}

/// `weights` with the tensors ending in `suffix` scaled by 1/2 (exact).
void halve(std::vector<SafeTensor> &weights, llvm::StringRef suffix) {
  for (SafeTensor &tensor : weights) {
    if (!llvm::StringRef(tensor.name).ends_with(suffix))
      continue;
    std::vector<float> values = valuesOf(tensor);
    for (float &v : values)
      v *= 0.5f;
    setValues(tensor, values);
  }
}

TEST(ReferencePTMoE, TracksAverageAtEveryBlockEnd) {
  // Track 1 adds nothing (zero o_proj, down_proj and expert down_proj), and
  // track 0's attention adds nothing (zero o_proj), so each layer of track 0
  // adds only its FFN f(h). With one-layer blocks every block then maps h to
  // mean(h + f(h), h) = h + f(h)/2: a one-track model whose FFN outputs are
  // halved. With one block of both layers the mean comes only at the end,
  // and the second layer sees h + f(h), not h + f(h)/2.
  ModelConfig two = ptMoE(/*tracks=*/2, /*k=*/2);
  std::vector<SafeTensor> twoWeights = generateExampleWeights(two, 10);
  zeroMatching(twoWeights, "", {"o_proj.weight"});
  zeroMatching(twoWeights, "model.tracks.1.", {"down_proj.weight"});
  ModelConfig one = ptMoE(/*tracks=*/1, /*k=*/2);
  std::vector<SafeTensor> oneWeights = generateExampleWeights(one, 11);
  copyTrack(twoWeights, oneWeights, 2, 0);
  for (const char *shared : {kEmbedTokensName, kFinalNormName})
    tensorNamed(oneWeights, shared).data = tensorNamed(twoWeights, shared).data;
  halve(oneWeights, "down_proj.weight");

  std::vector<float> halved = logitsWith(one, oneWeights, kSmallPrompt);
  double scale = maxAbsDiff(halved, std::vector<float>(halved.size(), 0));
  EXPECT_LT(maxAbsDiff(logitsWith(two, twoWeights, kSmallPrompt), halved),
            1e-5 * scale);
  ModelConfig oneBlock = two;
  oneBlock.trackBlockDepth = 2;
  EXPECT_GT(maxAbsDiff(logitsWith(oneBlock, twoWeights, kSmallPrompt), halved),
            1e-3 * scale);
}

TEST(ReferencePTMoE, ZeroRouterSendsEveryTokenToTheFirstKExperts) {
  ModelConfig config = preset("tiny-pt-moe");
  std::vector<SafeTensor> weights = generateExampleWeights(config, 0);
  ASSERT_EQ(zeroTensors(weights, "router"), 4);
  llvm::Expected<ReferenceModel> model = modelWith(config, weights);
  ASSERT_TRUE(bool(model)) << errorText(model);
  EXPECT_EQ(model->expertCounts().size(), 8u) << "2 tracks x 4 layers";
  llvm::cantFail(model->forward(kPrompt));
  llvm::cantFail(model->forward(77));
  for (int64_t t : {0, 1}) {
    for (int64_t i : {0, 2})
      EXPECT_THAT(model->expertCounts()[kvCacheIndex(config, t, i)],
                  ElementsAre())
          << "dense layer " << i;
    for (int64_t i : {1, 3})
      EXPECT_THAT(model->expertCounts()[kvCacheIndex(config, t, i)],
                  ElementsAre(11, 11, 0, 0))
          << "track " << t << " layer " << i;
  }
  model->reset();
  EXPECT_THAT(model->expertCounts()[1], ElementsAre(0, 0, 0, 0));
}

TEST(ReferencePTMoE, RandomRoutersSpreadKChoicesPerToken) {
  ModelConfig config = preset("tiny-pt-moe");
  llvm::Expected<ReferenceModel> model = exampleModel(config, 0);
  ASSERT_TRUE(bool(model)) << errorText(model);
  llvm::cantFail(model->forward(kPrompt));
  int64_t toLastExperts = 0;
  for (int64_t t : {0, 1}) {
    for (int64_t i : {1, 3}) {
      const std::vector<int64_t> &counts =
          model->expertCounts()[kvCacheIndex(config, t, i)];
      ASSERT_EQ(counts.size(), 4u);
      EXPECT_EQ(counts[0] + counts[1] + counts[2] + counts[3], 10 * 2);
      for (int64_t count : counts)
        EXPECT_LE(count, 10) << "an expert at most once per token";
      toLastExperts += counts[2] + counts[3];
    }
  }
  EXPECT_GT(toLastExperts, 0);
}

TEST(ReferencePTMoE, OtherArchitecturesRecordNoRouting) {
  llvm::Expected<ReferenceModel> model =
      exampleModel(preset("tiny-on-device"));
  ASSERT_TRUE(bool(model)) << errorText(model);
  llvm::cantFail(model->forward(kPrompt));
  for (const std::vector<int64_t> &counts : model->expertCounts())
    EXPECT_THAT(counts, ElementsAre());
}

TEST(ReferencePTMoE, CreateValidatesConfigsBuiltInCode) {
  ModelConfig config = ptMoE(/*tracks=*/2, /*k=*/2);
  std::vector<SafeTensor> weights = generateExampleWeights(config, 0);
  config.numExpertsPerTok = 4;
  llvm::Expected<ReferenceModel> model = modelWith(config, weights);
  EXPECT_EQ(errorText(model), "the model config: key 'num_experts_per_tok': "
                              "must be between 1 and num_experts (3), got 4");
}
} // namespace
