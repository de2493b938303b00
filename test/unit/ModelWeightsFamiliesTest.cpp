//===- ModelWeightsFamiliesTest.cpp - tensors of the AFM families ---------===//
//
// The tensor tables of docs/model-config.md, "AFM families", the presets
// tiny-on-device and tiny-pt-moe, and zeroed example tensors.
//
//===----------------------------------------------------------------------===//

#include "ModelTestSupport.h"

#include "afm/TestModels/ExampleModel.h"
#include "afm/Model/ModelWeights.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace mlir::afm;
using namespace mlir::afm::test;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

namespace {
ModelConfig preset(llvm::StringRef name) {
  llvm::Expected<ModelConfig> config = examplePresetConfig(name);
  if (!config) {
    ADD_FAILURE() << errorText(config);
    return ModelConfig();
  }
  return *config;
}

/// The shape of `name` in `tensors`, or {-1} if there is no such tensor.
std::vector<int64_t> shapeOf(const std::vector<ExpectedTensor> &tensors,
                             llvm::StringRef name) {
  const ExpectedTensor *tensor = findTensor(tensors, name);
  return tensor ? tensor->shape : std::vector<int64_t>{-1};
}

TEST(ModelWeightsFamilies, OnDeviceBlock2LayersHaveNoKeyOrValueProjections) {
  ModelConfig config = preset("tiny-on-device");
  std::vector<ExpectedTensor> tensors = expectedTensors(config);
  // Embeddings, 5 Block-1 layers of 9 tensors, 3 Block-2 layers of 7, the
  // final norm (tied embeddings: no lm_head).
  EXPECT_EQ(tensors.size(), 1u + 5 * 9 + 3 * 7 + 1);
  EXPECT_THAT(shapeOf(tensors, "model.layers.4.self_attn.k_proj.weight"),
              ElementsAre(2 * 16, 64));
  EXPECT_THAT(shapeOf(tensors, "model.layers.4.self_attn.v_proj.weight"),
              ElementsAre(2 * 16, 64));
  for (int layer : {5, 6, 7}) {
    LayerTensorNames names = layerTensorNames(layer);
    EXPECT_EQ(findTensor(tensors, names.kProj), nullptr) << layer;
    EXPECT_EQ(findTensor(tensors, names.vProj), nullptr) << layer;
    EXPECT_THAT(shapeOf(tensors, names.qProj), ElementsAre(4 * 16, 64));
    EXPECT_THAT(shapeOf(tensors, names.oProj), ElementsAre(64, 4 * 16));
    EXPECT_THAT(shapeOf(tensors, names.downProj), ElementsAre(64, 128));
  }
  // Layer 5's tensors follow layer 4's, in the order of LayerTensorNames.
  const ExpectedTensor *q5 = findTensor(tensors, layerTensorNames(5).qProj);
  EXPECT_EQ((q5 + 1)->name, layerTensorNames(5).oProj);
  int64_t perLayer = 2 * 64 + 64 * 64 * 2 + 3 * 128 * 64;
  int64_t kv = 2 * 32 * 64;
  EXPECT_EQ(parameterCount(config),
            256 * 64 + 64 + 8 * perLayer + 5 * kv);
}

TEST(ModelWeightsFamilies, TrackLayerNamesCarryTheTrack) {
  LayerTensorNames names = trackLayerTensorNames(1, 3);
  EXPECT_EQ(names.inputNorm, "model.tracks.1.layers.3.input_layernorm.weight");
  EXPECT_EQ(names.kProj, "model.tracks.1.layers.3.self_attn.k_proj.weight");
  EXPECT_EQ(names.downProj, "model.tracks.1.layers.3.mlp.down_proj.weight");
  EXPECT_EQ(names.router, "model.tracks.1.layers.3.mlp.router.weight");
  EXPECT_EQ(names.expertGateProj(0),
            "model.tracks.1.layers.3.mlp.experts.0.gate_proj.weight");
  EXPECT_EQ(names.expertUpProj(2),
            "model.tracks.1.layers.3.mlp.experts.2.up_proj.weight");
  EXPECT_EQ(names.expertDownProj(11),
            "model.tracks.1.layers.3.mlp.experts.11.down_proj.weight");
  EXPECT_EQ(layerTensorNames(2).qProj,
            "model.layers.2.self_attn.q_proj.weight");
}

/// tiny-pt-moe with F_moe = 48 (different from d and F) and an untied head.
ModelConfig ptMoE() {
  ModelConfig config = preset("tiny-pt-moe");
  config.moeIntermediateSize = 48;
  config.tieWordEmbeddings = false;
  return config;
}

TEST(ModelWeightsFamilies, PTMoEHasPerTrackLayersWithDenseOrMoEFFNs) {
  std::vector<ExpectedTensor> tensors = expectedTensors(ptMoE());
  // Per track: layers 0 and 2 dense (9 tensors), 1 and 3 MoE (7 tensors and
  // 3 per expert).
  ASSERT_EQ(tensors.size(), 1u + 2 * (2 * 9 + 2 * (7 + 3 * 4)) + 1 + 1);
  // Track 0's layers, then track 1's.
  EXPECT_EQ(tensors[1].name, "model.tracks.0.layers.0.input_layernorm.weight");
  EXPECT_EQ(tensors[1 + 56].name,
            "model.tracks.1.layers.0.input_layernorm.weight");
  EXPECT_EQ(tensors.back().name, "lm_head.weight");
  for (int track : {0, 1}) {
    for (int layer : {0, 2}) {
      LayerTensorNames names = trackLayerTensorNames(track, layer);
      // Each track has H / n = 2 query heads and G / n = 1 KV head.
      EXPECT_THAT(shapeOf(tensors, names.qProj), ElementsAre(2 * 16, 64));
      EXPECT_THAT(shapeOf(tensors, names.kProj), ElementsAre(16, 64));
      EXPECT_THAT(shapeOf(tensors, names.vProj), ElementsAre(16, 64));
      EXPECT_THAT(shapeOf(tensors, names.oProj), ElementsAre(64, 2 * 16));
      EXPECT_THAT(shapeOf(tensors, names.gateProj), ElementsAre(128, 64));
      EXPECT_THAT(shapeOf(tensors, names.downProj), ElementsAre(64, 128));
      EXPECT_EQ(findTensor(tensors, names.router), nullptr);
    }
    for (int layer : {1, 3}) {
      LayerTensorNames names = trackLayerTensorNames(track, layer);
      EXPECT_THAT(shapeOf(tensors, names.router), ElementsAre(4, 64));
      for (int expert = 0; expert < 4; ++expert) {
        EXPECT_THAT(shapeOf(tensors, names.expertGateProj(expert)),
                    ElementsAre(48, 64));
        EXPECT_THAT(shapeOf(tensors, names.expertUpProj(expert)),
                    ElementsAre(48, 64));
        EXPECT_THAT(shapeOf(tensors, names.expertDownProj(expert)),
                    ElementsAre(64, 48));
      }
      EXPECT_EQ(findTensor(tensors, names.expertGateProj(4)), nullptr);
      EXPECT_EQ(findTensor(tensors, names.gateProj), nullptr);
      EXPECT_EQ(findTensor(tensors, names.upProj), nullptr);
      EXPECT_EQ(findTensor(tensors, names.downProj), nullptr);
    }
  }
  for (const ExpectedTensor &tensor : tensors)
    EXPECT_FALSE(llvm::StringRef(tensor.name).starts_with("model.layers."))
        << tensor.name;
  int64_t attention = 2 * 64 + 32 * 64 * 2 + 16 * 64 * 2;
  int64_t dense = 3 * 128 * 64, moe = 4 * 64 + 3 * 4 * 48 * 64;
  EXPECT_EQ(parameterCount(ptMoE()),
            2 * 256 * 64 + 64 + 2 * (4 * attention + 2 * dense + 2 * moe));
}

TEST(ModelWeightsFamilies, CheckWeightsHoldsTheFamiliesToTheirTables) {
  ModelConfig onDevice = preset("tiny-on-device");
  EXPECT_EQ(checkError(onDevice, generateExampleWeights(onDevice, 0)), "");
  EXPECT_EQ(checkError(ptMoE(), generateExampleWeights(ptMoE(), 0)), "");
  // Dense weights of the same sizes have K/V projections in Block 2.
  ModelConfig dense = onDevice;
  dense.architecture = Architecture::Dense;
  std::string error = checkError(onDevice, generateExampleWeights(dense, 0));
  EXPECT_THAT(error, HasSubstr("unexpected tensor "
                               "'model.layers.5.self_attn.k_proj.weight'"));
  EXPECT_THAT(error, HasSubstr("unexpected tensor "
                               "'model.layers.7.self_attn.v_proj.weight'"));
  EXPECT_THAT(error, testing::Not(HasSubstr("layers.4.")));
  // An MoE layer with a dense FFN.
  ModelConfig noMoE = ptMoE();
  noMoE.moeLayerInterval = 5;
  error = checkError(ptMoE(), generateExampleWeights(noMoE, 0));
  EXPECT_THAT(error, HasSubstr("missing tensor "
                               "'model.tracks.1.layers.3.mlp.router.weight' "
                               "(expected shape [4, 64])"));
  EXPECT_THAT(error, HasSubstr("unexpected tensor "
                               "'model.tracks.0.layers.1.mlp.gate_proj."
                               "weight'"));
}

TEST(ExampleModel, FamilyPresetsAreTheDocumentedModels) {
  for (const char *name : {"tiny-on-device", "tiny-pt-moe"}) {
    // tiny-dense's sizes with the paper's attention pattern, window 8.
    ModelConfig config = preset(name);
    EXPECT_EQ(config.vocabSize, 256) << name;
    EXPECT_EQ(config.hiddenSize, 64) << name;
    EXPECT_EQ(config.intermediateSize, 128) << name;
    EXPECT_EQ(config.numAttentionHeads, 4) << name;
    EXPECT_EQ(config.numKeyValueHeads, 2) << name;
    EXPECT_EQ(config.headDim, 16) << name;
    EXPECT_EQ(config.slidingWindow, 8) << name;
    EXPECT_EQ(config.localPerGlobal, 3) << name;
    EXPECT_FALSE(config.ropeInGlobalLayers) << name;
    EXPECT_EQ(config.ropeTheta, 10000.0) << name;
    EXPECT_TRUE(config.tieWordEmbeddings) << name;
  }
  ModelConfig onDevice = preset("tiny-on-device");
  EXPECT_EQ(onDevice.architecture, Architecture::OnDevice);
  EXPECT_EQ(onDevice.numHiddenLayers, 8);
  EXPECT_EQ(block1Layers(onDevice), 5);
  EXPECT_EQ(onDevice.maxPositionEmbeddings, 1024);

  ModelConfig moe = preset("tiny-pt-moe");
  EXPECT_EQ(moe.architecture, Architecture::PTMoE);
  EXPECT_EQ(moe.numHiddenLayers, 4);
  EXPECT_EQ(moe.moeIntermediateSize, 64);
  EXPECT_EQ(moe.numTracks, 2);
  EXPECT_EQ(moe.trackBlockDepth, 2);
  EXPECT_EQ(moe.numExperts, 4);
  EXPECT_EQ(moe.numExpertsPerTok, 2);
  EXPECT_EQ(moe.moeLayerInterval, 2);
  EXPECT_EQ(moe.maxPositionEmbeddings, 512);

  for (llvm::StringRef name : examplePresetNames()) {
    ModelConfig config = preset(name);
    EXPECT_EQ(errorText(validateModelConfig(config, name)), "");
    // The written config.json reads back to the preset.
    llvm::Expected<ModelConfig> back =
        parseModelConfig(toJSON(config), "config.json");
    ASSERT_TRUE(bool(back)) << errorText(back);
    EXPECT_EQ(toJSON(*back), toJSON(config));
  }
}

TEST(ExampleModel, ZeroTensorsZeroesExactlyTheMatchingTensors) {
  ModelConfig config = preset("tiny-pt-moe");
  std::vector<SafeTensor> random = generateExampleWeights(config, 0);
  std::vector<SafeTensor> zeroed = random;
  EXPECT_EQ(zeroTensors(zeroed, "router"), 4) << "2 tracks x 2 MoE layers";
  ASSERT_EQ(zeroed.size(), random.size());
  for (size_t i = 0; i < zeroed.size(); ++i) {
    bool router = llvm::StringRef(zeroed[i].name).contains("router");
    if (!router) {
      EXPECT_EQ(zeroed[i].data, random[i].data) << zeroed[i].name;
      continue;
    }
    EXPECT_EQ(zeroed[i].shape, random[i].shape);
    EXPECT_THAT(valuesOf(zeroed[i]), testing::Each(0.0f)) << zeroed[i].name;
    EXPECT_NE(zeroed[i].data, random[i].data);
  }
  EXPECT_EQ(zeroTensors(zeroed, "no such tensor"), 0);
  EXPECT_EQ(zeroTensors(zeroed, "tracks.1.layers.3.mlp.experts"), 3 * 4);
}
} // namespace
