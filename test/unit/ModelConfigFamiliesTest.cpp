//===- ModelConfigFamiliesTest.cpp - afm-on-device and afm-pt-moe configs -===//
//
// The keys, defaults and errors of docs/model-config.md, "AFM families",
// and the layer helpers (Block 1 / Block 2, KV sources, MoE layers).
//
//===----------------------------------------------------------------------===//

#include "ModelTestSupport.h"

#include "afm/Model/ModelConfig.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace mlir::afm;
using namespace mlir::afm::test;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {
/// The required keys of an on-device config, 8 layers.
constexpr const char *kOnDevice = R"({
  "architecture": "afm-on-device", "vocab_size": 256, "hidden_size": 64,
  "intermediate_size": 128, "num_hidden_layers": 8, "num_attention_heads": 4
})";

/// The required keys of a PT-MoE config, 8 layers per track.
constexpr const char *kPTMoE = R"({
  "architecture": "afm-pt-moe", "vocab_size": 256, "hidden_size": 64,
  "intermediate_size": 128, "num_hidden_layers": 8, "num_attention_heads": 4
})";

ModelConfig parsed(llvm::StringRef json) {
  llvm::Expected<ModelConfig> config = parseModelConfig(json, "c.json");
  if (!config) {
    ADD_FAILURE() << errorText(config);
    return ModelConfig();
  }
  return *config;
}

TEST(ModelConfigFamilies, OnDeviceDefaults) {
  ModelConfig config = parsed(kOnDevice);
  EXPECT_EQ(config.architecture, Architecture::OnDevice);
  EXPECT_EQ(config.block1Fraction, 0.625);
  EXPECT_EQ(config.localPerGlobal, 3) << "the paper's LLLG pattern";
  EXPECT_FALSE(config.ropeInGlobalLayers) << "NoPE global layers";
  EXPECT_EQ(config.slidingWindow, 4096);
}

TEST(ModelConfigFamilies, PTMoEDefaults) {
  ModelConfig config = parsed(kPTMoE);
  EXPECT_EQ(config.architecture, Architecture::PTMoE);
  EXPECT_EQ(config.numTracks, 2);
  EXPECT_EQ(config.trackBlockDepth, 4);
  EXPECT_EQ(config.numExperts, 64);
  EXPECT_EQ(config.numExpertsPerTok, 2);
  EXPECT_EQ(config.moeLayerInterval, 2);
  EXPECT_EQ(config.moeIntermediateSize, 128) << "intermediate_size";
  EXPECT_EQ(config.localPerGlobal, 3);
  EXPECT_FALSE(config.ropeInGlobalLayers);
}

TEST(ModelConfigFamilies, ReadsEveryFamilyKey) {
  ModelConfig onDevice = parsed(withKey(
      withKey(withKey(kOnDevice, "block1_fraction", 0.5), "local_per_global",
              1),
      "rope_in_global_layers", true));
  EXPECT_EQ(onDevice.block1Fraction, 0.5);
  EXPECT_EQ(onDevice.localPerGlobal, 1);
  EXPECT_TRUE(onDevice.ropeInGlobalLayers);
  ModelConfig moe = parsed(R"({
    "architecture": "afm-pt-moe", "vocab_size": 256, "hidden_size": 64,
    "intermediate_size": 128, "num_hidden_layers": 6,
    "num_attention_heads": 6, "num_key_value_heads": 3, "head_dim": 8,
    "num_tracks": 3,
    "track_block_depth": 3, "num_experts": 5, "num_experts_per_tok": 5,
    "moe_layer_interval": 3, "moe_intermediate_size": 40,
    "local_per_global": 0
  })");
  EXPECT_EQ(moe.numTracks, 3);
  EXPECT_EQ(moe.trackBlockDepth, 3);
  EXPECT_EQ(moe.numExperts, 5);
  EXPECT_EQ(moe.numExpertsPerTok, 5) << "k == E is allowed";
  EXPECT_EQ(moe.moeLayerInterval, 3);
  EXPECT_EQ(moe.moeIntermediateSize, 40);
  EXPECT_EQ(moe.localPerGlobal, 0);
}

TEST(ModelConfigFamilies, ToJSONWritesTheKeysOfItsArchitecture) {
  for (llvm::StringRef base : {kOnDevice, kPTMoE}) {
    ModelConfig config = parsed(base);
    config.block1Fraction = 0.7;
    config.numExperts = 9;
    std::string text = toJSON(config);
    ModelConfig back = parsed(text);
    EXPECT_EQ(toJSON(back), text);
    EXPECT_EQ(back.architecture, config.architecture);
    EXPECT_THAT(text, HasSubstr("\"local_per_global\": 3"));
    if (config.architecture == Architecture::OnDevice) {
      EXPECT_EQ(back.block1Fraction, 0.7);
      EXPECT_THAT(text, HasSubstr("\"block1_fraction\": 0.7"));
      EXPECT_THAT(text, Not(HasSubstr("num_experts")));
    } else {
      EXPECT_EQ(back.numExperts, 9);
      for (const char *key :
           {"\"num_tracks\": 2", "\"track_block_depth\": 4",
            "\"num_experts\": 9", "\"num_experts_per_tok\": 2",
            "\"moe_layer_interval\": 2", "\"moe_intermediate_size\": 128"})
        EXPECT_THAT(text, HasSubstr(key));
      EXPECT_THAT(text, Not(HasSubstr("block1_fraction")));
    }
  }
  std::string dense = toJSON(ModelConfig());
  EXPECT_THAT(dense, Not(HasSubstr("block1_fraction")));
  EXPECT_THAT(dense, Not(HasSubstr("num_tracks")));
}

TEST(ModelConfigFamiliesErrors, KeysOfAnotherFamilyNameKeyAndArchitecture) {
  EXPECT_EQ(parseError(withKey(kOnDevice, "num_experts", 4)),
            "config.json: key 'num_experts': only afm-dense and afm-pt-moe "
            "configs have it, not afm-on-device");
  EXPECT_EQ(parseError(withKey(kOnDevice, "num_tracks", 2)),
            "config.json: key 'num_tracks': only afm-pt-moe configs have "
            "it, not afm-on-device");
  EXPECT_EQ(parseError(withKey(kPTMoE, "block1_fraction", 0.5)),
            "config.json: key 'block1_fraction': only afm-on-device configs "
            "have it, not afm-pt-moe");
  std::string dense = withKey(kOnDevice, "architecture", "afm-dense");
  EXPECT_EQ(parseError(withKey(dense, "moe_intermediate_size", 64)),
            "config.json: key 'moe_intermediate_size': an afm-dense config "
            "has MoE layers only when it gives num_experts");
  EXPECT_EQ(parseError(withKey(dense, "track_block_depth", 2)),
            "config.json: key 'track_block_depth': only afm-pt-moe configs "
            "have it, not afm-dense");
  EXPECT_EQ(parseError(withKey(dense, "block1_fraction", 1)),
            "config.json: key 'block1_fraction': only afm-on-device configs "
            "have it, not afm-dense");
}

TEST(ModelConfigFamilies, DenseWithNumExpertsHasMoELayers) {
  std::string dense = withKey(
      withKey(withKey(kOnDevice, "architecture", "afm-dense"),
              "block1_fraction", std::nullopt),
      "num_experts", 4);
  llvm::Expected<ModelConfig> config = parseModelConfig(dense, "config.json");
  ASSERT_TRUE(bool(config)) << errorText(config);
  EXPECT_TRUE(config->denseMoE);
  EXPECT_TRUE(hasMoELayers(*config));
  EXPECT_EQ(config->moeIntermediateSize, config->intermediateSize)
      << "moe_intermediate_size defaults to intermediate_size";
  EXPECT_FALSE(isMoELayer(*config, 0)) << "interval 2: layers 1, 3, ...";
  EXPECT_TRUE(isMoELayer(*config, 1));
  // The router keeps Qwen-MoE's name in a dense model.
  EXPECT_EQ(layerTensorNames(1).router, "model.layers.1.mlp.gate.weight");
  // toJSON prints the MoE keys, and they read back.
  std::string printed = toJSON(*config);
  EXPECT_THAT(printed, HasSubstr("\"num_experts\": 4"));
  EXPECT_THAT(printed, Not(HasSubstr("num_tracks")));
  llvm::Expected<ModelConfig> reread = parseModelConfig(printed, "x");
  ASSERT_TRUE(bool(reread)) << errorText(reread);
  EXPECT_EQ(toJSON(*reread), printed);
  EXPECT_THAT(parseError(withKey(dense, "num_experts_per_tok", 5)),
              HasSubstr("key 'num_experts_per_tok': must be between 1 and "
                        "num_experts (4), got 5"));
}

TEST(ModelConfigFamilies, GemmaKeysRoundTripAndAreChecked) {
  std::string dense = withKey(withKey(kOnDevice, "architecture", "afm-dense"),
                              "block1_fraction", std::nullopt);
  std::string gemma = dense;
  for (auto [key, value] :
       std::initializer_list<std::pair<const char *, llvm::json::Value>>{
           {"rms_norm_weight_offset", 1.0},
           {"sandwich_norms", true},
           {"mlp_activation", "gelu_tanh"},
           {"embedding_multiplier", 8.0},
           {"attention_scale", 0.25},
           {"rope_local_theta", 10000.0},
           {"qk_norm", true}})
    gemma = withKey(gemma, key, value);
  llvm::Expected<ModelConfig> config = parseModelConfig(gemma, "config.json");
  ASSERT_TRUE(bool(config)) << errorText(config);
  EXPECT_EQ(config->rmsNormWeightOffset, 1.0);
  EXPECT_TRUE(config->sandwichNorms);
  EXPECT_EQ(config->mlpActivation, MLPActivation::GELUTanh);
  EXPECT_EQ(config->embeddingMultiplier, 8.0);
  EXPECT_EQ(config->attentionScale, 0.25);
  EXPECT_EQ(config->ropeLocalTheta, 10000.0);
  std::string printed = toJSON(*config);
  llvm::Expected<ModelConfig> reread = parseModelConfig(printed, "x");
  ASSERT_TRUE(bool(reread)) << errorText(reread);
  EXPECT_EQ(toJSON(*reread), printed);
  // Printed only when set: a plain dense config has none of them.
  std::string plain = toJSON(parsed(dense));
  for (const char *key : {"rms_norm_weight_offset", "sandwich_norms",
                          "mlp_activation", "embedding_multiplier",
                          "attention_scale", "rope_local_theta"})
    EXPECT_THAT(plain, Not(HasSubstr(key)));

  EXPECT_THAT(parseError(withKey(dense, "attention_scale", -1.0)),
              HasSubstr("key 'attention_scale': must be a positive finite "
                        "number (or 0 for the default), got -1"));
  EXPECT_THAT(parseError(withKey(dense, "mlp_activation", "relu")),
              HasSubstr("key 'mlp_activation': unknown value 'relu' "
                        "(supported: silu, gelu_tanh)"));
  EXPECT_THAT(parseError(withKey(dense, "rope_local_theta", -5.0)),
              HasSubstr("key 'rope_local_theta'"));
}

TEST(ModelConfigFamiliesErrors, Block1FractionMustBeInZeroToOne) {
  const std::pair<double, const char *> bad[] = {
      {0.0, "0"}, {-0.25, "-0.25"}, {1.5, "1.5"}};
  for (const auto &[value, text] : bad)
    EXPECT_EQ(parseError(withKey(kOnDevice, "block1_fraction", value)),
              std::string("config.json: key 'block1_fraction': must be in "
                          "(0, 1], got ") +
                  text);
  EXPECT_EQ(parseError(withKey(kOnDevice, "block1_fraction", 1)), "");
  EXPECT_EQ(parseError(withKey(kOnDevice, "block1_fraction", "half")),
            "config.json: key 'block1_fraction': expected a number, got a "
            "string");
}

TEST(ModelConfigFamiliesErrors, Block2LayerNeedsABlock1LayerOfItsKind) {
  // 8 layers LLLG LLLG, Block 1 = ceil(0.375 * 8) = 3 layers, all local:
  // the global layer 3 has nothing to read.
  EXPECT_EQ(parseError(withKey(kOnDevice, "block1_fraction", 0.375)),
            "config.json: key 'block1_fraction': Block 1 (layers 0..2) has "
            "no global layer for the global Block-2 layer 3 to read");
  // Block 1 = 4 layers (LLLG) has both kinds.
  EXPECT_EQ(parseError(withKey(kOnDevice, "block1_fraction", 0.5)), "");
  // Three layers, all local: Block 2 has no global layer to feed.
  EXPECT_EQ(parseError(withKey(withKey(kOnDevice, "num_hidden_layers", 3),
                               "block1_fraction", 0.3)),
            "");
  // Every layer global: Block 1 is never short of one.
  EXPECT_EQ(parseError(withKey(withKey(kOnDevice, "local_per_global", 0),
                               "block1_fraction", 0.1)),
            "");
}

TEST(ModelConfigFamiliesErrors, TracksMustDivideTheHeads) {
  EXPECT_EQ(parseError(withKey(kPTMoE, "num_tracks", 3)),
            "config.json: key 'num_tracks': 3 does not divide "
            "num_attention_heads (4)");
  EXPECT_EQ(parseError(withKey(withKey(kPTMoE, "num_key_value_heads", 2),
                               "num_tracks", 4)),
            "config.json: key 'num_tracks': 4 does not divide "
            "num_key_value_heads (2)");
  EXPECT_EQ(parseError(withKey(kPTMoE, "num_tracks", 0)),
            "config.json: key 'num_tracks': must be positive, got 0");
  EXPECT_EQ(parseError(withKey(kPTMoE, "num_tracks", 4)), "");
}

TEST(ModelConfigFamiliesErrors, BlockDepthMustDivideTheLayers) {
  EXPECT_EQ(parseError(withKey(kPTMoE, "track_block_depth", 3)),
            "config.json: key 'track_block_depth': 3 does not divide "
            "num_hidden_layers (8)");
  EXPECT_EQ(parseError(withKey(kPTMoE, "track_block_depth", 8)), "");
}

TEST(ModelConfigFamiliesErrors, TopKMustBeBetweenOneAndTheExperts) {
  EXPECT_EQ(parseError(withKey(kPTMoE, "num_experts_per_tok", 0)),
            "config.json: key 'num_experts_per_tok': must be positive, got "
            "0");
  EXPECT_EQ(parseError(withKey(withKey(kPTMoE, "num_experts", 4),
                               "num_experts_per_tok", 5)),
            "config.json: key 'num_experts_per_tok': must be between 1 and "
            "num_experts (4), got 5");
  EXPECT_EQ(parseError(withKey(kPTMoE, "num_experts", 0)),
            "config.json: key 'num_experts': must be positive, got 0");
}

TEST(ModelConfigFamiliesErrors, IntervalAndExpertWidthMustBePositive) {
  EXPECT_EQ(parseError(withKey(kPTMoE, "moe_layer_interval", 0)),
            "config.json: key 'moe_layer_interval': must be positive, got 0");
  EXPECT_EQ(parseError(withKey(kPTMoE, "moe_intermediate_size", -1)),
            "config.json: key 'moe_intermediate_size': must be positive, got "
            "-1");
}

TEST(ModelConfigFamiliesErrors, HugeModelsAreErrorsNotOverflows) {
  EXPECT_EQ(parseError(withKey(withKey(kPTMoE, "num_experts", 2147483647),
                               "moe_intermediate_size", 2147483647)),
            "config.json: key 'num_experts': the experts of a layer "
            "[2147483647, 2147483647, 64] have more than 2147483647^2 "
            "elements");
  EXPECT_EQ(parseError(withKey(kPTMoE, "num_hidden_layers", 1 << 30)),
            "config.json: key 'num_tracks': 2 tracks of 1073741824 layers "
            "are more than 2147483647 layers");
}

TEST(ModelConfigFamiliesErrors, CodeBuiltConfigsAreValidatedToo) {
  ModelConfig config = parsed(kPTMoE);
  config.moeIntermediateSize = 0;
  EXPECT_EQ(errorText(validateModelConfig(config, "built")),
            "built: key 'moe_intermediate_size': must be positive, got 0");
  EXPECT_EQ(errorText(validateModelConfig(parsed(kOnDevice), "built")), "");
}

/// An on-device config with `layers` layers, `localPerGlobal` and
/// `fraction`, built in code.
ModelConfig onDevice(int64_t layers, int64_t localPerGlobal,
                     double fraction) {
  ModelConfig config = parsed(kOnDevice);
  config.numHiddenLayers = layers;
  config.localPerGlobal = localPerGlobal;
  config.block1Fraction = fraction;
  return config;
}

TEST(ModelConfigFamilies, Block1IsTheRoundedUpFraction) {
  EXPECT_EQ(block1Layers(onDevice(8, 3, 0.625)), 5);
  EXPECT_EQ(block1Layers(onDevice(7, 3, 0.5)), 4) << "ceil(3.5)";
  EXPECT_EQ(block1Layers(onDevice(30, 0, 0.1)), 3)
      << "0.1 * 30 is 3.0000000000000004 in double";
  EXPECT_EQ(block1Layers(onDevice(8, 3, 1.0)), 8);
  EXPECT_EQ(block1Layers(onDevice(8, 3, 0.01)), 1);
  ModelConfig dense = onDevice(8, 3, 0.5);
  dense.architecture = Architecture::Dense;
  EXPECT_EQ(block1Layers(dense), 8) << "other architectures: all layers";
  EXPECT_FALSE(isBlock2Layer(dense, 7));
}

/// "i>s" for every layer i with KV source s, "i" for a Block-1 layer.
std::string sources(const ModelConfig &config) {
  std::string text;
  for (int64_t i = 0; i < config.numHiddenLayers; ++i) {
    text += text.empty() ? "" : " ";
    text += std::to_string(i);
    if (isBlock2Layer(config, i))
      text += ">" + std::to_string(kvSourceLayer(config, i));
    else
      EXPECT_EQ(kvSourceLayer(config, i), i);
  }
  return text;
}

TEST(ModelConfigFamilies, Block2LayersReadTheLastBlock1LayerOfTheirKind) {
  // LLLG LLLG, Block 1 = 0..4: 5 and 6 (local) read 4, 7 (global) reads 3.
  EXPECT_EQ(sources(onDevice(8, 3, 0.625)), "0 1 2 3 4 5>4 6>4 7>3");
  // Block 1 ends with a global layer: local layers read the one before.
  EXPECT_EQ(sources(onDevice(8, 3, 0.5)), "0 1 2 3 4>2 5>2 6>2 7>3");
  // LG LG LG, Block 1 = L G L.
  EXPECT_EQ(sources(onDevice(6, 1, 0.5)), "0 1 2 3>1 4>2 5>1");
  // All global.
  EXPECT_EQ(sources(onDevice(4, 0, 0.5)), "0 1 2>1 3>1");
  // Block 2 empty.
  EXPECT_EQ(sources(onDevice(4, 3, 1.0)), "0 1 2 3");
  // A config validation rejects: no global layer in Block 1.
  EXPECT_EQ(kvSourceLayer(onDevice(4, 3, 0.75), 3), -1);
}

TEST(ModelConfigFamilies, MoELayersAreEveryIntervalthLayerOfATrack) {
  ModelConfig config = parsed(kPTMoE);
  auto pattern = [&](int64_t interval) {
    config.moeLayerInterval = interval;
    std::string text;
    for (int64_t i = 0; i < 8; ++i)
      text += isMoELayer(config, i) ? 'M' : 'D';
    return text;
  };
  EXPECT_EQ(pattern(2), "DMDMDMDM");
  EXPECT_EQ(pattern(3), "DDMDDMDD");
  EXPECT_EQ(pattern(1), "MMMMMMMM");
  EXPECT_EQ(pattern(9), "DDDDDDDD");
  EXPECT_FALSE(isMoELayer(parsed(kOnDevice), 1));
}

TEST(ModelConfigFamilies, TracksAndKVCacheIndices) {
  ModelConfig config = parsed(withKey(kPTMoE, "num_tracks", 4));
  EXPECT_EQ(trackCount(config), 4);
  EXPECT_EQ(kvCacheIndex(config, 0, 5), 5);
  EXPECT_EQ(kvCacheIndex(config, 3, 2), 3 * 8 + 2);
  EXPECT_EQ(trackCount(parsed(kOnDevice)), 1);
  EXPECT_EQ(kvCacheIndex(parsed(kOnDevice), 0, 6), 6);
}
} // namespace
