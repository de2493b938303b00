//===- ModelConfigTest.cpp - config.json: keys, defaults, errors ----------===//

#include "ModelTestSupport.h"

#include "afm/Model/ModelConfig.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace mlir::afm;
using mlir::afm::test::errorText;
using mlir::afm::test::parseError;
using ::testing::HasSubstr;

namespace {
/// The required keys only.
constexpr const char *kMinimal = R"({
  "architecture": "afm-dense", "vocab_size": 256, "hidden_size": 64,
  "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4
})";

/// kMinimal with `key` set to `value`.
std::string withKey(llvm::StringRef key, llvm::json::Value value) {
  return test::withKey(kMinimal, key, std::move(value));
}

/// kMinimal without `key`.
std::string withoutKey(llvm::StringRef key) {
  return test::withKey(kMinimal, key, std::nullopt);
}

TEST(ModelConfig, MinimalConfigTakesTheDocumentedDefaults) {
  llvm::Expected<ModelConfig> config = parseModelConfig(kMinimal, "c.json");
  ASSERT_TRUE(bool(config)) << errorText(config);
  EXPECT_EQ(config->architecture, Architecture::Dense);
  EXPECT_EQ(config->vocabSize, 256);
  EXPECT_EQ(config->hiddenSize, 64);
  EXPECT_EQ(config->intermediateSize, 128);
  EXPECT_EQ(config->numHiddenLayers, 2);
  EXPECT_EQ(config->numAttentionHeads, 4);
  EXPECT_EQ(config->numKeyValueHeads, 4) << "G defaults to H";
  EXPECT_EQ(config->headDim, 16) << "hd defaults to d / H";
  EXPECT_EQ(config->rmsNormEps, 1e-5);
  EXPECT_EQ(config->ropeTheta, 500000.0);
  EXPECT_EQ(config->maxPositionEmbeddings, 4096);
  EXPECT_FALSE(config->tieWordEmbeddings);
  EXPECT_EQ(config->slidingWindow, 4096);
  EXPECT_EQ(config->localPerGlobal, 0) << "afm-dense: every layer global";
  EXPECT_TRUE(config->ropeInGlobalLayers) << "afm-dense: RoPE everywhere";
}

TEST(ModelConfig, ReadsEveryKey) {
  llvm::Expected<ModelConfig> config = parseModelConfig(R"({
    "architecture": "afm-dense", "vocab_size": 100, "hidden_size": 48,
    "intermediate_size": 96, "num_hidden_layers": 5,
    "num_attention_heads": 6, "num_key_value_heads": 3, "head_dim": 10,
    "rms_norm_eps": 1e-6, "rope_theta": 10000, "max_position_embeddings": 77,
    "tie_word_embeddings": true, "sliding_window": 8, "local_per_global": 2,
    "rope_in_global_layers": false
  })",
                                                        "c.json");
  ASSERT_TRUE(bool(config)) << errorText(config);
  EXPECT_EQ(config->numKeyValueHeads, 3);
  EXPECT_EQ(config->headDim, 10) << "an explicit head_dim need not be d / H";
  EXPECT_EQ(config->rmsNormEps, 1e-6);
  EXPECT_EQ(config->ropeTheta, 10000.0) << "an integer is a valid float";
  EXPECT_EQ(config->maxPositionEmbeddings, 77);
  EXPECT_TRUE(config->tieWordEmbeddings);
  EXPECT_EQ(config->slidingWindow, 8);
  EXPECT_EQ(config->localPerGlobal, 2);
  EXPECT_FALSE(config->ropeInGlobalLayers);
}

TEST(ModelConfig, ToJSONWritesEveryKeyAndReadsBackTheSameConfig) {
  ModelConfig config;
  config.vocabSize = 300;
  config.hiddenSize = 40;
  config.intermediateSize = 72;
  config.numHiddenLayers = 3;
  config.numAttentionHeads = 4;
  config.numKeyValueHeads = 1;
  config.headDim = 6;
  config.rmsNormEps = 1e-6;
  config.ropeTheta = 12345.678;
  config.maxPositionEmbeddings = 99;
  config.tieWordEmbeddings = true;
  config.slidingWindow = 7;
  config.localPerGlobal = 3;
  config.ropeInGlobalLayers = false;
  std::string text = toJSON(config);
  for (const char *key : {"\"head_dim\": 6", "\"rope_theta\": 12345.678",
                          "\"rms_norm_eps\": 1e-06",
                          "\"rope_in_global_layers\": false"})
    EXPECT_THAT(text, HasSubstr(key));
  llvm::Expected<ModelConfig> back = parseModelConfig(text, "c.json");
  ASSERT_TRUE(bool(back)) << errorText(back);
  EXPECT_EQ(back->ropeTheta, config.ropeTheta);
  EXPECT_EQ(back->rmsNormEps, config.rmsNormEps);
  EXPECT_EQ(back->localPerGlobal, 3);
  EXPECT_EQ(toJSON(*back), text);
}

TEST(ModelConfig, CompressionKeysDefaultToFloatAndRoundTrip) {
  llvm::Expected<ModelConfig> plain = parseModelConfig(kMinimal, "c.json");
  ASSERT_TRUE(bool(plain)) << errorText(plain);
  EXPECT_EQ(plain->linearWeightFormat, LinearWeightFormat::F32);
  EXPECT_EQ(plain->embeddingFormat, EmbeddingFormat::F32);
  EXPECT_EQ(plain->kvCacheDType, KVCacheDType::F32);
  EXPECT_FALSE(plain->q2PerChannel);
  EXPECT_FALSE(plain->astcOffsetMin) << "linear_segment is the default";
  EXPECT_EQ(plain->loraRank, 0);

  std::string text = test::withKey(
      test::withKey(
          test::withKey(test::withKey(withKey("linear_weight_format", "astc"),
                                      "astc_offset", "min"),
                        "embedding_format", "q4"),
          "embedding_group_size", 16),
      "lora_rank", 8);
  llvm::Expected<ModelConfig> config = parseModelConfig(text, "c.json");
  ASSERT_TRUE(bool(config)) << errorText(config);
  EXPECT_EQ(config->linearWeightFormat, LinearWeightFormat::ASTC);
  EXPECT_TRUE(config->astcOffsetMin);
  EXPECT_EQ(config->embeddingFormat, EmbeddingFormat::Q4);
  EXPECT_EQ(config->embeddingGroupSize, 16);
  EXPECT_EQ(config->loraAlpha, 8.0) << "alpha defaults to the rank";
  llvm::Expected<ModelConfig> back =
      parseModelConfig(toJSON(*config), "c.json");
  ASSERT_TRUE(bool(back)) << errorText(back);
  EXPECT_EQ(toJSON(*back), toJSON(*config));
}

TEST(ModelConfig, KVCacheDTypesParseAndRoundTrip) {
  for (auto [name, dtype] :
       {std::pair{"f32", KVCacheDType::F32}, std::pair{"int8", KVCacheDType::Int8},
        std::pair{"f16", KVCacheDType::F16}}) {
    llvm::Expected<ModelConfig> config =
        parseModelConfig(withKey("kv_cache_dtype", name), "c.json");
    ASSERT_TRUE(bool(config)) << errorText(config);
    EXPECT_EQ(config->kvCacheDType, dtype) << name;
    EXPECT_THAT(toJSON(*config),
                HasSubstr(std::string("\"kv_cache_dtype\": \"") + name + "\""));
  }
  EXPECT_EQ(parseError(withKey("kv_cache_dtype", "bf16")),
            "config.json: key 'kv_cache_dtype': unknown value 'bf16' "
            "(supported: f32, int8, f16)");
}

TEST(ModelConfig, AnUntiedLMHeadTakesALinearFormat) {
  llvm::Expected<ModelConfig> plain = parseModelConfig(kMinimal, "c.json");
  ASSERT_TRUE(bool(plain)) << errorText(plain);
  EXPECT_EQ(plain->lmHeadFormat, LinearWeightFormat::F32);
  for (auto [name, format] : {std::pair{"q2", LinearWeightFormat::Q2},
                              std::pair{"astc", LinearWeightFormat::ASTC}}) {
    llvm::Expected<ModelConfig> config = parseModelConfig(
        test::withKey(withKey("lm_head_format", name), "tie_word_embeddings",
                      false),
        "c.json");
    ASSERT_TRUE(bool(config)) << errorText(config);
    EXPECT_EQ(config->lmHeadFormat, format) << name;
    EXPECT_THAT(toJSON(*config),
                HasSubstr(std::string("\"lm_head_format\": \"") + name + "\""));
  }
  // A tied head is the embedding table: its format is embedding_format's.
  EXPECT_THAT(parseError(test::withKey(withKey("lm_head_format", "q2"),
                                       "tie_word_embeddings", true)),
              HasSubstr("key 'lm_head_format': applies to an untied LM "
                        "head; a tied head is the embedding table "
                        "(embedding_format)"));
  EXPECT_EQ(parseError(withKey("lm_head_format", "q4")),
            "config.json: key 'lm_head_format': unknown value 'q4' "
            "(supported: f32, q2, astc)");
}

TEST(ModelConfigErrors, CompressionValuesAreChecked) {
  EXPECT_EQ(parseError(withKey("q2_scale", "per_row")),
            "config.json: key 'q2_scale': unknown value 'per_row' "
            "(supported: per_tensor, per_channel)");
  EXPECT_THAT(parseError(test::withKey(withKey("embedding_format", "q4"),
                                       "embedding_group_size", 5)),
              HasSubstr("key 'embedding_group_size': must be positive and "
                        "divide hidden_size (64), got 5"));
  EXPECT_THAT(parseError(withKey("lora_rank", 4)),
              HasSubstr("key 'lora_rank': quality-recovery adapters need "
                        "compressed linear weights"));
  EXPECT_THAT(parseError(test::withKey(withKey("linear_weight_format", "q2"),
                                       "lora_rank", -1)),
              HasSubstr("key 'lora_rank': must be non-negative, got -1"));
}

TEST(ModelConfigErrors, TextThatIsNotAJSONObject) {
  EXPECT_THAT(parseError("{\"vocab_size\": "),
              HasSubstr("config.json: invalid JSON"));
  EXPECT_THAT(parseError("[1, 2]"),
              HasSubstr("config.json: expected a JSON object"));
}

TEST(ModelConfigErrors, UnknownKeyIsNamed) {
  EXPECT_EQ(parseError(withKey("hiden_size", 64)),
            "config.json: unknown key 'hiden_size'");
}

TEST(ModelConfigErrors, RepeatedKeyIsNamed) {
  EXPECT_EQ(parseError(R"({"architecture": "afm-dense", "vocab_size": 256,
      "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
      "num_attention_heads": 4, "vocab_size": 300})"),
            "config.json: key 'vocab_size' is given twice");
  // Keys of nested values and string contents do not count.
  EXPECT_EQ(parseError(withKey("architecture", "vocab_size")),
            "config.json: key 'architecture': unknown architecture "
            "'vocab_size' (supported: afm-dense, afm-on-device, afm-pt-moe)");
  EXPECT_EQ(parseError(withKey("rope_theta",
                               llvm::json::Object{{"vocab_size", 1}})),
            "config.json: key 'rope_theta': expected a number, got an "
            "object");
}

TEST(ModelConfigErrors, WrongJSONTypeNamesKeyAndValue) {
  EXPECT_EQ(parseError(withKey("hidden_size", "64")),
            "config.json: key 'hidden_size': expected an integer, got a "
            "string");
  EXPECT_EQ(parseError(withKey("num_hidden_layers", 2.5)),
            "config.json: key 'num_hidden_layers': expected an integer, got "
            "2.5");
  EXPECT_EQ(parseError(withKey("rope_theta", llvm::json::Array{1})),
            "config.json: key 'rope_theta': expected a number, got an array");
  EXPECT_EQ(parseError(withKey("tie_word_embeddings", 1)),
            "config.json: key 'tie_word_embeddings': expected true or false, "
            "got 1");
  EXPECT_EQ(parseError(withKey("architecture", nullptr)),
            "config.json: key 'architecture': expected a string, got null");
}

TEST(ModelConfigErrors, EveryRequiredKeyIsRequired) {
  for (const char *key :
       {"architecture", "vocab_size", "hidden_size", "intermediate_size",
        "num_hidden_layers", "num_attention_heads"})
    EXPECT_EQ(parseError(withoutKey(key)),
              std::string("config.json: missing required key '") + key + "'");
}

TEST(ModelConfigErrors, SizesMustBePositive) {
  for (const char *key :
       {"vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers",
        "num_attention_heads", "num_key_value_heads", "head_dim",
        "max_position_embeddings", "sliding_window"}) {
    EXPECT_EQ(parseError(withKey(key, 0)),
              std::string("config.json: key '") + key +
                  "': must be positive, got 0");
  }
  EXPECT_EQ(parseError(withKey("vocab_size", -3)),
            "config.json: key 'vocab_size': must be positive, got -3");
  EXPECT_EQ(parseError(withKey("local_per_global", -1)),
            "config.json: key 'local_per_global': must be non-negative, got "
            "-1");
  EXPECT_EQ(parseError(withKey("local_per_global", 0)), "");
}

TEST(ModelConfigErrors, SizesMustFitInt32) {
  EXPECT_EQ(parseError(withKey("vocab_size", int64_t(1) << 31)),
            "config.json: key 'vocab_size': 2147483648 is larger than "
            "2147483647");
}

TEST(ModelConfigErrors, KeyValueHeadsMustDivideHeads) {
  EXPECT_EQ(parseError(withKey("num_key_value_heads", 3)),
            "config.json: key 'num_key_value_heads': 3 does not divide "
            "num_attention_heads (4)");
  EXPECT_EQ(parseError(withKey("num_key_value_heads", 2)), "");
}

TEST(ModelConfigErrors, HeadDimMustBeEven) {
  EXPECT_EQ(parseError(withKey("head_dim", 15)),
            "config.json: key 'head_dim': must be even (RoPE rotates pairs), "
            "got 15");
  // The default d / H = 60 / 4 = 15 is odd too.
  EXPECT_EQ(parseError(withKey("hidden_size", 60)),
            "config.json: key 'head_dim': must be even (RoPE rotates pairs), "
            "got 15");
}

TEST(ModelConfigErrors, HeadDimDefaultNeedsHeadsToDivideHiddenSize) {
  EXPECT_EQ(parseError(withKey("hidden_size", 66)),
            "config.json: key 'head_dim': not given, and its default "
            "hidden_size / num_attention_heads (66 / 4) is not an integer");
}

TEST(ModelConfigErrors, FloatsMustBePositive) {
  EXPECT_EQ(parseError(withKey("rms_norm_eps", 0)),
            "config.json: key 'rms_norm_eps': must be a positive finite "
            "number, got 0");
  EXPECT_THAT(parseError(withKey("rope_theta", -1.5)),
              HasSubstr("key 'rope_theta': must be a positive finite number"));
}

TEST(ModelConfigErrors, UnknownArchitectureListsTheSupportedOnes) {
  EXPECT_EQ(parseError(withKey("architecture", "gpt2")),
            "config.json: key 'architecture': unknown architecture 'gpt2' "
            "(supported: afm-dense, afm-on-device, afm-pt-moe)");
}

TEST(ModelConfigErrors, UnreadableFileIsNamed) {
  llvm::Expected<ModelConfig> config =
      loadModelConfig("/nonexistent/dir/config.json");
  EXPECT_THAT(errorText(config),
              HasSubstr("/nonexistent/dir/config.json: cannot read"));
}

ModelConfig withPattern(int64_t localPerGlobal, bool ropeInGlobal) {
  ModelConfig config;
  config.localPerGlobal = localPerGlobal;
  config.ropeInGlobalLayers = ropeInGlobal;
  return config;
}

TEST(ModelConfig, LocalLayersComeInGroupsFollowedByOneGlobal) {
  ModelConfig config = withPattern(3, false);
  std::string pattern;
  for (int layer = 0; layer < 9; ++layer)
    pattern += isLocalLayer(config, layer) ? 'L' : 'G';
  EXPECT_EQ(pattern, "LLLGLLLGL");
  config.localPerGlobal = 1;
  EXPECT_TRUE(isLocalLayer(config, 0));
  EXPECT_FALSE(isLocalLayer(config, 1));
  EXPECT_TRUE(isLocalLayer(config, 2));
}

TEST(ModelConfig, ZeroLocalPerGlobalMakesEveryLayerGlobal) {
  ModelConfig config = withPattern(0, true);
  for (int layer = 0; layer < 5; ++layer)
    EXPECT_FALSE(isLocalLayer(config, layer)) << layer;
}

TEST(ModelConfig, GlobalLayersUseRopeOnlyWhenConfigured) {
  ModelConfig nope = withPattern(1, false);
  EXPECT_TRUE(usesRope(nope, 0)) << "local layers always use RoPE";
  EXPECT_FALSE(usesRope(nope, 1)) << "a NoPE global layer";
  ModelConfig rope = withPattern(1, true);
  EXPECT_TRUE(usesRope(rope, 0));
  EXPECT_TRUE(usesRope(rope, 1));
}
} // namespace
