//===- HFConfigTest.cpp - Hugging Face configs, RoPE scaling, shards ------===//

#include "ModelTestSupport.h"

#include "afm/Model/HFConfig.h"
#include "afm/Model/WeightSource.h"
#include "afm/TestModels/HFExampleModel.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>

using namespace mlir::afm;
using mlir::afm::test::errorText;
using ::testing::HasSubstr;

namespace {
/// meta-llama/Llama-3.2-1B's config.json as published.
constexpr const char *kLlama32 = R"({
  "architectures": ["LlamaForCausalLM"], "attention_bias": false,
  "attention_dropout": 0.0, "bos_token_id": 128000, "eos_token_id": 128001,
  "head_dim": 64, "hidden_act": "silu", "hidden_size": 2048,
  "initializer_range": 0.02, "intermediate_size": 8192,
  "max_position_embeddings": 131072, "mlp_bias": false, "model_type": "llama",
  "num_attention_heads": 32, "num_hidden_layers": 16, "num_key_value_heads": 8,
  "pretraining_tp": 1, "rms_norm_eps": 1e-05,
  "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0,
                   "low_freq_factor": 1.0,
                   "original_max_position_embeddings": 8192,
                   "rope_type": "llama3"},
  "rope_theta": 500000.0, "tie_word_embeddings": true,
  "torch_dtype": "bfloat16", "transformers_version": "4.45.0.dev0",
  "use_cache": true, "vocab_size": 128256
})";

/// mistralai/Mistral-7B-v0.1's config.json as published.
constexpr const char *kMistral7B = R"({
  "architectures": ["MistralForCausalLM"], "bos_token_id": 1,
  "eos_token_id": 2, "hidden_act": "silu", "hidden_size": 4096,
  "initializer_range": 0.02, "intermediate_size": 14336,
  "max_position_embeddings": 32768, "model_type": "mistral",
  "num_attention_heads": 32, "num_hidden_layers": 32,
  "num_key_value_heads": 8, "rms_norm_eps": 1e-05, "rope_theta": 10000.0,
  "sliding_window": 4096, "tie_word_embeddings": false,
  "torch_dtype": "bfloat16", "transformers_version": "4.34.0.dev0",
  "use_cache": true, "vocab_size": 32000
})";

/// Qwen/Qwen2.5-0.5B's config.json as published.
constexpr const char *kQwen25 = R"({
  "architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0,
  "bos_token_id": 151643, "eos_token_id": 151643, "hidden_act": "silu",
  "hidden_size": 896, "initializer_range": 0.02, "intermediate_size": 4864,
  "max_position_embeddings": 32768, "max_window_layers": 24,
  "model_type": "qwen2", "num_attention_heads": 14, "num_hidden_layers": 24,
  "num_key_value_heads": 2, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0,
  "sliding_window": 32768, "tie_word_embeddings": true,
  "torch_dtype": "bfloat16", "transformers_version": "4.40.1",
  "use_cache": true, "use_mrope": false, "use_sliding_window": false,
  "vocab_size": 151936
})";

/// Qwen/Qwen3-0.6B's config.json as published.
constexpr const char *kQwen3 = R"({
  "architectures": ["Qwen3ForCausalLM"], "attention_bias": false,
  "attention_dropout": 0.0, "bos_token_id": 151643, "eos_token_id": 151645,
  "head_dim": 128, "hidden_act": "silu", "hidden_size": 1024,
  "initializer_range": 0.02, "intermediate_size": 3072,
  "max_position_embeddings": 40960, "max_window_layers": 28,
  "model_type": "qwen3", "num_attention_heads": 16, "num_hidden_layers": 28,
  "num_key_value_heads": 8, "rms_norm_eps": 1e-06, "rope_scaling": null,
  "rope_theta": 1000000, "sliding_window": null, "tie_word_embeddings": true,
  "torch_dtype": "bfloat16", "transformers_version": "4.51.0",
  "use_cache": true, "use_sliding_window": false, "vocab_size": 151936
})";

/// Qwen/Qwen3-30B-A3B's config.json as published.
constexpr const char *kQwen3MoE = R"({
  "architectures": ["Qwen3MoeForCausalLM"], "attention_bias": false,
  "attention_dropout": 0.0, "bos_token_id": 151643, "decoder_sparse_step": 1,
  "eos_token_id": 151645, "head_dim": 128, "hidden_act": "silu",
  "hidden_size": 2048, "initializer_range": 0.02, "intermediate_size": 6144,
  "max_position_embeddings": 40960, "max_window_layers": 48,
  "mlp_only_layers": [], "model_type": "qwen3_moe",
  "moe_intermediate_size": 768, "norm_topk_prob": true,
  "num_attention_heads": 32, "num_experts": 128, "num_experts_per_tok": 8,
  "num_hidden_layers": 48, "num_key_value_heads": 4,
  "output_router_logits": false, "rms_norm_eps": 1e-06, "rope_scaling": null,
  "rope_theta": 1000000.0, "router_aux_loss_coef": 0.001,
  "sliding_window": null, "tie_word_embeddings": false,
  "torch_dtype": "bfloat16", "transformers_version": "4.51.0",
  "use_cache": true, "use_sliding_window": false, "vocab_size": 151936
})";

/// google/gemma-3-1b-it's config.json as published.
constexpr const char *kGemma31B = R"({
  "architectures": ["Gemma3ForCausalLM"], "attention_bias": false,
  "attention_dropout": 0.0, "attn_logit_softcapping": null,
  "bos_token_id": 2, "cache_implementation": "hybrid",
  "eos_token_id": [1, 106], "final_logit_softcapping": null,
  "head_dim": 256, "hidden_activation": "gelu_pytorch_tanh",
  "hidden_size": 1152, "initializer_range": 0.02, "intermediate_size": 6912,
  "max_position_embeddings": 32768, "model_type": "gemma3_text",
  "num_attention_heads": 4, "num_hidden_layers": 26,
  "num_key_value_heads": 1, "pad_token_id": 0, "query_pre_attn_scalar": 256,
  "rms_norm_eps": 1e-06, "rope_local_base_freq": 10000,
  "rope_scaling": null, "rope_theta": 1000000, "sliding_window": 512,
  "sliding_window_pattern": 6, "torch_dtype": "bfloat16",
  "transformers_version": "4.50.0.dev0", "use_cache": true,
  "vocab_size": 262144
})";

std::string hfError(llvm::StringRef json) {
  llvm::Expected<HFConfig> config = parseHFConfig(json, "config.json");
  return config ? std::string() : llvm::toString(config.takeError());
}

std::string llamaWith(llvm::StringRef key,
                      std::optional<llvm::json::Value> value) {
  return test::withKey(kLlama32, key, std::move(value));
}

TEST(HFConfig, Llama32MapsOntoADenseConfig) {
  llvm::Expected<HFConfig> hf = parseHFConfig(kLlama32, "config.json");
  ASSERT_TRUE(bool(hf)) << errorText(hf);
  const ModelConfig &c = hf->config;
  EXPECT_EQ(hf->family, "llama");
  EXPECT_EQ(c.architecture, Architecture::Dense);
  EXPECT_EQ(c.vocabSize, 128256);
  EXPECT_EQ(c.hiddenSize, 2048);
  EXPECT_EQ(c.intermediateSize, 8192);
  EXPECT_EQ(c.numHiddenLayers, 16);
  EXPECT_EQ(c.numAttentionHeads, 32);
  EXPECT_EQ(c.numKeyValueHeads, 8);
  EXPECT_EQ(c.headDim, 64);
  EXPECT_EQ(c.rmsNormEps, 1e-5);
  EXPECT_EQ(c.ropeTheta, 500000.0);
  EXPECT_EQ(c.maxPositionEmbeddings, 131072);
  EXPECT_TRUE(c.tieWordEmbeddings);
  EXPECT_FALSE(c.allLayersLocal);
  EXPECT_EQ(c.localPerGlobal, 0);
  EXPECT_TRUE(c.ropeInGlobalLayers);
  EXPECT_EQ(c.ropeScaling.type, RopeScalingType::Llama3);
  EXPECT_EQ(c.ropeScaling.factor, 32.0);
  EXPECT_EQ(c.ropeScaling.lowFreqFactor, 1.0);
  EXPECT_EQ(c.ropeScaling.highFreqFactor, 4.0);
  EXPECT_EQ(c.ropeScaling.originalMaxPositionEmbeddings, 8192);
}

TEST(HFConfig, Mistral7BHasEveryLayerLocal) {
  llvm::Expected<HFConfig> hf = parseHFConfig(kMistral7B, "config.json");
  ASSERT_TRUE(bool(hf)) << errorText(hf);
  const ModelConfig &c = hf->config;
  EXPECT_EQ(hf->family, "mistral");
  EXPECT_EQ(c.headDim, 128) << "hidden_size / num_attention_heads";
  EXPECT_TRUE(c.allLayersLocal);
  EXPECT_EQ(c.slidingWindow, 4096);
  for (int64_t layer = 0; layer < c.numHiddenLayers; ++layer)
    EXPECT_TRUE(isLocalLayer(c, layer)) << layer;
  EXPECT_FALSE(c.tieWordEmbeddings);
  EXPECT_EQ(c.ropeScaling.type, RopeScalingType::None);

  llvm::Expected<HFConfig> global = parseHFConfig(
      test::withKey(kMistral7B, "sliding_window", nullptr), "config.json");
  ASSERT_TRUE(bool(global)) << errorText(global);
  EXPECT_FALSE(global->config.allLayersLocal) << "null: every layer global";
}

TEST(HFConfig, Qwen25HasQKVBiasesAndNoWindow) {
  llvm::Expected<HFConfig> hf = parseHFConfig(kQwen25, "config.json");
  ASSERT_TRUE(bool(hf)) << errorText(hf);
  const ModelConfig &c = hf->config;
  EXPECT_EQ(hf->family, "qwen2");
  EXPECT_EQ(c.headDim, 64) << "hidden_size / num_attention_heads";
  EXPECT_EQ(c.numKeyValueHeads, 2);
  EXPECT_TRUE(c.attentionBias);
  EXPECT_FALSE(c.attentionOutputBias) << "o_proj has no bias in Qwen 2";
  EXPECT_FALSE(c.qkNorm);
  EXPECT_FALSE(c.allLayersLocal) << "use_sliding_window is false";
  EXPECT_TRUE(c.tieWordEmbeddings);
  EXPECT_EQ(c.ropeTheta, 1e6);
  EXPECT_EQ(c.rmsNormEps, 1e-6);

  // With the window on from layer 0, every layer slides.
  std::string sliding = test::withKey(
      test::withKey(kQwen25, "use_sliding_window", true), "max_window_layers",
      0);
  llvm::Expected<HFConfig> local = parseHFConfig(sliding, "config.json");
  ASSERT_TRUE(bool(local)) << errorText(local);
  EXPECT_TRUE(local->config.allLayersLocal);
  EXPECT_EQ(local->config.slidingWindow, 32768);
  // Qwen2Config's default num_key_value_heads is 32, not H.
  llvm::Expected<HFConfig> noKV = parseHFConfig(
      test::withKey(kQwen25, "num_key_value_heads", std::nullopt),
      "config.json");
  EXPECT_THAT(errorText(noKV),
              HasSubstr("num_key_value_heads': 32 does not divide"));
}

TEST(HFConfig, Qwen3HasQKNormsAndItsOwnHeadDim) {
  llvm::Expected<HFConfig> hf = parseHFConfig(kQwen3, "config.json");
  ASSERT_TRUE(bool(hf)) << errorText(hf);
  const ModelConfig &c = hf->config;
  EXPECT_EQ(hf->family, "qwen3");
  EXPECT_EQ(c.headDim, 128) << "not hidden_size / num_attention_heads (64)";
  EXPECT_TRUE(c.qkNorm);
  EXPECT_FALSE(c.attentionBias);
  EXPECT_FALSE(c.attentionOutputBias);
  EXPECT_FALSE(c.allLayersLocal);
  EXPECT_EQ(c.maxPositionEmbeddings, 40960);

  llvm::Expected<HFConfig> biased = parseHFConfig(
      test::withKey(kQwen3, "attention_bias", true), "config.json");
  ASSERT_TRUE(bool(biased)) << errorText(biased);
  EXPECT_TRUE(biased->config.attentionBias);
  EXPECT_TRUE(biased->config.attentionOutputBias);
  // Qwen3Config's head_dim defaults to 128 when absent.
  llvm::Expected<HFConfig> noHeadDim = parseHFConfig(
      test::withKey(kQwen3, "head_dim", std::nullopt), "config.json");
  ASSERT_TRUE(bool(noHeadDim)) << errorText(noHeadDim);
  EXPECT_EQ(noHeadDim->config.headDim, 128);
}

TEST(HFConfig, Qwen3MoEHasExpertsInEveryLayer) {
  llvm::Expected<HFConfig> hf = parseHFConfig(kQwen3MoE, "config.json");
  ASSERT_TRUE(bool(hf)) << errorText(hf);
  const ModelConfig &c = hf->config;
  EXPECT_EQ(hf->family, "qwen3_moe");
  EXPECT_EQ(c.architecture, Architecture::Dense);
  EXPECT_TRUE(c.denseMoE);
  EXPECT_TRUE(c.qkNorm);
  EXPECT_EQ(c.numExperts, 128);
  EXPECT_EQ(c.numExpertsPerTok, 8);
  EXPECT_EQ(c.moeIntermediateSize, 768);
  EXPECT_EQ(c.moeLayerInterval, 1);
  for (int64_t layer : {0, 1, 47})
    EXPECT_TRUE(isMoELayer(c, layer)) << layer;
  // Every second layer with decoder_sparse_step 2: (i + 1) % 2 == 0.
  llvm::Expected<HFConfig> sparse = parseHFConfig(
      test::withKey(kQwen3MoE, "decoder_sparse_step", 2), "config.json");
  ASSERT_TRUE(bool(sparse)) << errorText(sparse);
  EXPECT_FALSE(isMoELayer(sparse->config, 0));
  EXPECT_TRUE(isMoELayer(sparse->config, 1));

  std::map<std::string, std::vector<int64_t>> shapes;
  for (const ExpectedTensor &t : expectedTensors(c))
    shapes[t.name] = t.shape;
  EXPECT_EQ(shapes["model.layers.3.mlp.gate.weight"],
            (std::vector<int64_t>{128, 2048}));
  EXPECT_EQ(shapes["model.layers.3.mlp.experts.127.down_proj.weight"],
            (std::vector<int64_t>{2048, 768}));
  EXPECT_EQ(shapes.count("model.layers.3.mlp.gate_proj.weight"), 0u);
  // About 30.5B parameters, as the model's name says.
  EXPECT_NEAR(double(parameterCount(c)), 30.5e9, 0.2e9);
}

TEST(HFConfig, Gemma31BHasFiveLocalLayersPerGlobalOne) {
  llvm::Expected<HFConfig> hf = parseHFConfig(kGemma31B, "config.json");
  ASSERT_TRUE(bool(hf)) << errorText(hf);
  const ModelConfig &c = hf->config;
  EXPECT_EQ(hf->family, "gemma3_text");
  EXPECT_EQ(c.localPerGlobal, 5);
  EXPECT_TRUE(c.ropeInGlobalLayers);
  EXPECT_EQ(c.slidingWindow, 512);
  for (int64_t layer = 0; layer < 26; ++layer)
    EXPECT_EQ(isLocalLayer(c, layer), (layer + 1) % 6 != 0) << layer;
  EXPECT_EQ(c.ropeLocalTheta, 10000.0);
  EXPECT_EQ(c.ropeTheta, 1e6);
  EXPECT_EQ(ropeConfigOfLayer(c, 0).ropeTheta, 10000.0);
  EXPECT_EQ(ropeConfigOfLayer(c, 5).ropeTheta, 1e6);
  EXPECT_EQ(c.rmsNormWeightOffset, 1.0);
  EXPECT_TRUE(c.sandwichNorms);
  EXPECT_TRUE(c.qkNorm);
  EXPECT_EQ(c.mlpActivation, MLPActivation::GELUTanh);
  EXPECT_DOUBLE_EQ(c.embeddingMultiplier, std::sqrt(1152.0));
  EXPECT_DOUBLE_EQ(c.attentionScale, 1.0 / 16.0);
  EXPECT_TRUE(c.tieWordEmbeddings) << "Gemma3TextConfig's default";
  EXPECT_EQ(c.headDim, 256);
  // About 1B parameters, as the model's name says.
  EXPECT_NEAR(double(parameterCount(c)), 1.0e9, 0.05e9);
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const ExpectedTensor &t : expectedTensors(c))
    shapes[t.name] = t.shape;
  EXPECT_EQ(shapes["model.layers.25.pre_feedforward_layernorm.weight"],
            (std::vector<int64_t>{1152}));
  EXPECT_EQ(shapes["model.layers.25.post_feedforward_layernorm.weight"],
            (std::vector<int64_t>{1152}));
  EXPECT_EQ(shapes["model.layers.25.self_attn.q_norm.weight"],
            (std::vector<int64_t>{256}));
}

TEST(HFConfig, BiasesAndNormsAreExpectedTensors) {
  llvm::Expected<HFConfig> qwen3 = parseHFConfig(
      test::withKey(kQwen3, "attention_bias", true), "config.json");
  ASSERT_TRUE(bool(qwen3)) << errorText(qwen3);
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const ExpectedTensor &t : expectedTensors(qwen3->config))
    shapes[t.name] = t.shape;
  const std::string p = "model.layers.27.self_attn.";
  EXPECT_EQ(shapes[p + "q_proj.bias"], (std::vector<int64_t>{16 * 128}));
  EXPECT_EQ(shapes[p + "k_proj.bias"], (std::vector<int64_t>{8 * 128}));
  EXPECT_EQ(shapes[p + "v_proj.bias"], (std::vector<int64_t>{8 * 128}));
  EXPECT_EQ(shapes[p + "o_proj.bias"], (std::vector<int64_t>{1024}));
  EXPECT_EQ(shapes[p + "q_norm.weight"], (std::vector<int64_t>{128}));
  EXPECT_EQ(shapes[p + "k_norm.weight"], (std::vector<int64_t>{128}));
}

TEST(HFConfig, NullAndDefaultRopeScalingArePlainRope) {
  for (llvm::json::Value scaling :
       {llvm::json::Value(nullptr),
        llvm::json::Value(llvm::json::Object{{"rope_type", "default"}}),
        llvm::json::Value(llvm::json::Object{{"type", "default"}})}) {
    llvm::Expected<HFConfig> hf =
        parseHFConfig(llamaWith("rope_scaling", scaling), "config.json");
    ASSERT_TRUE(bool(hf)) << errorText(hf);
    EXPECT_EQ(hf->config.ropeScaling.type, RopeScalingType::None);
  }
}

TEST(HFConfigErrors, EveryRefusalNamesTheKey) {
  EXPECT_THAT(hfError(llamaWith("quantization_config", llvm::json::Object{})),
              HasSubstr("config.json: key 'quantization_config': unknown key "
                        "for model type 'llama'"));
  EXPECT_THAT(hfError(llamaWith("sliding_window", 4096)),
              HasSubstr("key 'sliding_window': unknown key for model type "
                        "'llama'"));
  EXPECT_THAT(hfError(llamaWith("hidden_act", "gelu")),
              HasSubstr("key 'hidden_act': value \"gelu\" is not supported "
                        "(only \"silu\")"));
  EXPECT_THAT(hfError(test::withKey(kQwen3MoE, "norm_topk_prob",
                                    std::nullopt)),
              HasSubstr("key 'norm_topk_prob': false (also its default when "
                        "absent)"));
  EXPECT_THAT(hfError(test::withKey(kQwen3MoE, "num_experts_per_tok", 129)),
              HasSubstr("key 'num_experts_per_tok': must be between 1 and "
                        "num_experts (128), got 129"));
  EXPECT_THAT(hfError(test::withKey(kQwen3MoE, "mlp_only_layers",
                                    llvm::json::Array{3, 7})),
              HasSubstr("key 'mlp_only_layers': only [] or null is "
                        "supported, got a list of 2 layers"));
  EXPECT_THAT(hfError(test::withKey(kGemma31B, "final_logit_softcapping",
                                    30.0)),
              HasSubstr("key 'final_logit_softcapping': value 30 is not "
                        "supported (only null)"));
  EXPECT_THAT(hfError(test::withKey(kGemma31B, "attn_logit_softcapping",
                                    50.0)),
              HasSubstr("key 'attn_logit_softcapping'"));
  EXPECT_THAT(hfError(test::withKey(kGemma31B,
                                    "use_bidirectional_attention", true)),
              HasSubstr("key 'use_bidirectional_attention': value true is "
                        "not supported"));
  EXPECT_THAT(hfError(test::withKey(kGemma31B, "hidden_activation",
                                    "gelu")),
              HasSubstr("key 'hidden_activation': value \"gelu\" is not "
                        "supported (only \"gelu_pytorch_tanh\")"));
  EXPECT_THAT(hfError(test::withKey(kGemma31B, "hidden_act", "silu")),
              HasSubstr("key 'hidden_act': unknown key for model type "
                        "'gemma3_text'"));
  {
    // Full layers at 0 and 2 of 4: no n-sliding-then-one-full pattern.
    llvm::json::Array types{"full_attention", "sliding_attention",
                            "full_attention", "sliding_attention"};
    std::string irregular = test::withKey(
        test::withKey(kGemma31B, "num_hidden_layers", 4), "layer_types",
        std::move(types));
    EXPECT_THAT(hfError(irregular),
                HasSubstr("key 'layer_types': 2 of the 4 layers attend over "
                          "a sliding window and the others over the whole "
                          "context, in no pattern"));
  }
  EXPECT_THAT(hfError(test::withKey(kQwen25, "use_mrope", true)),
              HasSubstr("key 'use_mrope': value true is not supported"));
  EXPECT_THAT(hfError(test::withKey(kQwen25, "attention_bias", true)),
              HasSubstr("key 'attention_bias': unknown key for model type "
                        "'qwen2'"));
  EXPECT_THAT(
      hfError(test::withKey(kQwen3, "layer_types",
                            llvm::json::Array{"full_attention"})),
      HasSubstr("key 'layer_types': expected a list of num_hidden_layers "
                "(28) strings"));
  EXPECT_THAT(hfError(llamaWith("mlp_bias", true)),
              HasSubstr("key 'mlp_bias': value true is not supported"));
  EXPECT_THAT(hfError(llamaWith("pretraining_tp", 2)),
              HasSubstr("key 'pretraining_tp': value 2 is not supported"));
  EXPECT_THAT(
      hfError(llamaWith("rope_scaling",
                        llvm::json::Object{{"rope_type", "yarn"},
                                           {"factor", 4.0}})),
      HasSubstr("key 'rope_scaling': rope type 'yarn' is not supported"));
  EXPECT_THAT(hfError(llamaWith("rope_scaling",
                                llvm::json::Object{{"rope_type", "llama3"},
                                                   {"factor", 8.0}})),
              HasSubstr("key 'rope_scaling': rope type 'llama3' needs "
                        "'low_freq_factor'"));
  EXPECT_THAT(hfError(llamaWith("model_type", "gemma3")),
              HasSubstr("key 'model_type': model type \"gemma3\" is not "
                        "supported (supported: llama, mistral, qwen2, qwen3, qwen3_moe, gemma3_text)"));
  EXPECT_THAT(hfError(llamaWith("model_type", std::nullopt)),
              HasSubstr("missing required key 'model_type'"));
  EXPECT_THAT(hfError(llamaWith("hidden_size", std::nullopt)),
              HasSubstr("missing required key 'hidden_size'"));
  EXPECT_THAT(hfError(llamaWith("eos_token_id", "</s>")),
              HasSubstr("key 'eos_token_id': expected an integer, a list"));
}

/// The Llama 3 bands computed by hand (awk, double precision) from
/// transformers' `_compute_llama3_parameters`: f = theta^(-2i/hd),
/// wavelength w = 2 pi / f; w < L / high: f; w > L / low: f / factor;
/// otherwise (1 - s) f / factor + s f with s = (L / w - low) / (high - low).
TEST(RopeScaling, Llama3InverseFrequenciesOfTheTestFolder) {
  // hd 16, theta 500000, factor 32, low 1, high 4, L 64 (the bands of
  // afm-gen-example --hf-family llama).
  ModelConfig config = test::smallConfig();
  config.headDim = 16;
  config.ropeTheta = 500000.0;
  config.ropeScaling = {RopeScalingType::Llama3, 32.0, 1.0, 4.0, 64};
  const double expected[] = {
      1.0,                    // w = 6.28 < 16: kept
      0.067133037511049903,   // w = 32.4: blended
      0.0011751884665894981,  // w = 167 > 64: divided by 32
      0.00022789577303803467, 4.4194173824159233e-05,
      8.5702554898814764e-06, 1.6619674677953088e-06,
      3.2229329303788942e-07};
  std::vector<double> got = ropeInverseFrequencies(config);
  ASSERT_EQ(got.size(), 8u);
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], expected[i], 1e-13 * expected[i]) << i;
}

TEST(RopeScaling, Llama32InverseFrequencies) {
  llvm::Expected<HFConfig> hf = parseHFConfig(kLlama32, "config.json");
  ASSERT_TRUE(bool(hf)) << errorText(hf);
  std::vector<double> got = ropeInverseFrequencies(hf->config);
  ASSERT_EQ(got.size(), 32u);
  // High band (w < 2048) untouched, the three blended entries, then f / 32.
  const std::pair<int, double> expected[] = {
      {0, 1.0},
      {14, 0.0032114459947525913},
      {15, 0.0012905479282092648},
      {16, 0.00042955679655936864},
      {17, 9.7082878026276946e-05},
      {18, 1.9461638184831131e-05},
      {23, 2.5044671007024935e-06}};
  for (auto [i, value] : expected)
    EXPECT_NEAR(got[i], value, 1e-13 * value) << i;
}

TEST(RopeScaling, PlainAndLinear) {
  ModelConfig config = test::smallConfig();
  config.headDim = 4;
  config.ropeTheta = 10000.0;
  std::vector<double> plain = ropeInverseFrequencies(config);
  ASSERT_EQ(plain.size(), 2u);
  EXPECT_EQ(plain[0], 1.0);
  EXPECT_NEAR(plain[1], 0.01, 1e-15);
  config.ropeScaling = {RopeScalingType::Linear, 4.0, 1.0, 4.0, 8192};
  std::vector<double> linear = ropeInverseFrequencies(config);
  EXPECT_EQ(linear[0], 0.25);
  EXPECT_NEAR(linear[1], 0.0025, 1e-15);
}

TEST(RopeScaling, AFMConfigKeysRoundTrip) {
  ModelConfig config = test::smallConfig();
  config.ropeScaling = {RopeScalingType::Llama3, 8.0, 1.0, 4.0, 8192};
  config.allLayersLocal = true;
  config.slidingWindow = 16;
  std::string text = toJSON(config);
  llvm::Expected<ModelConfig> back = parseModelConfig(text, "c.json");
  ASSERT_TRUE(bool(back)) << errorText(back);
  EXPECT_EQ(toJSON(*back), text);
  EXPECT_TRUE(back->allLayersLocal);
  EXPECT_EQ(back->ropeScaling.type, RopeScalingType::Llama3);
  EXPECT_EQ(back->ropeScaling.factor, 8.0);
  config.localPerGlobal = 3;
  EXPECT_THAT(errorText(validateModelConfig(config, "c.json")),
              HasSubstr("key 'all_layers_local'"));
}

TEST(HFGenerationConfig, EosIsAnIdOrAList) {
  llvm::Expected<HFGenerationConfig> one = parseHFGenerationConfig(
      R"({"bos_token_id": 1, "eos_token_id": 2, "temperature": 0.6})", "g");
  ASSERT_TRUE(bool(one)) << errorText(one);
  EXPECT_EQ(one->bosTokenId, 1);
  EXPECT_EQ(one->eosTokenIds, std::vector<int64_t>({2}));
  llvm::Expected<HFGenerationConfig> list = parseHFGenerationConfig(
      R"({"eos_token_id": [128001, 128008, 128009]})", "g");
  ASSERT_TRUE(bool(list)) << errorText(list);
  EXPECT_FALSE(list->bosTokenId);
  EXPECT_EQ(list->eosTokenIds, std::vector<int64_t>({128001, 128008, 128009}));
  llvm::Expected<HFGenerationConfig> bad =
      parseHFGenerationConfig(R"({"eos_token_id": [1, "x"]})", "g.json");
  EXPECT_THAT(errorText(bad), HasSubstr("g.json: key 'eos_token_id'"));
}

/// A temporary folder, removed at the end of the test.
class TempFolder {
public:
  TempFolder() {
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("afm-hf-test", path));
  }
  ~TempFolder() { llvm::sys::fs::remove_directories(path); }
  std::string file(llvm::StringRef name) const {
    llvm::SmallString<256> p(path);
    llvm::sys::path::append(p, name);
    return p.str().str();
  }
  void write(llvm::StringRef name, llvm::StringRef text) const {
    std::error_code ec;
    llvm::raw_fd_ostream out(file(name), ec);
    out << text;
  }

private:
  llvm::SmallString<256> path;
};

SafeTensor tensor(llvm::StringRef name) {
  return SafeTensor::fromF32(name, {2}, {1.0f, 2.0f});
}

TEST(WeightSource, IndexJoinsTheShards) {
  TempFolder dir;
  ASSERT_EQ(errorText(writeSafeTensors(dir.file("a.safetensors"),
                                     {tensor("x"), tensor("y")})), "");
  ASSERT_EQ(errorText(writeSafeTensors(dir.file("b.safetensors"), {tensor("z")})), "");
  dir.write("model.safetensors.index.json",
            R"({"metadata": {"total_size": 24}, "weight_map":
                {"x": "a.safetensors", "y": "a.safetensors",
                 "z": "b.safetensors"}})");
  llvm::Expected<WeightSource> source =
      WeightSource::open(dir.file("model.safetensors.index.json"));
  ASSERT_TRUE(bool(source)) << errorText(source);
  EXPECT_EQ(source->files().size(), 2u);
  EXPECT_EQ(source->tensors().size(), 3u);
  WeightTensor z = source->lookup("z");
  ASSERT_TRUE(bool(z));
  EXPECT_EQ(z.file->path(), dir.file("b.safetensors"));
  EXPECT_FALSE(bool(source->lookup("w")));
}

TEST(WeightSourceErrors, EachInconsistencyIsNamed) {
  TempFolder dir;
  ASSERT_EQ(errorText(writeSafeTensors(dir.file("a.safetensors"),
                                     {tensor("x"), tensor("y")})), "");
  ASSERT_EQ(errorText(writeSafeTensors(dir.file("b.safetensors"),
                                     {tensor("y"), tensor("z")})), "");
  auto indexError = [&](llvm::StringRef map) {
    dir.write("index.json", ("{\"weight_map\": " + map + "}").str());
    llvm::Expected<WeightSource> source =
        WeightSource::openIndex(dir.file("index.json"));
    return errorText(source);
  };
  EXPECT_THAT(indexError(R"({"x": "a.safetensors", "q": "c.safetensors"})"),
              HasSubstr("index.json: shard 'c.safetensors' (of tensor 'q') "
                        "is missing"));
  EXPECT_THAT(indexError(R"({"x": "a.safetensors", "q": "a.safetensors"})"),
              HasSubstr("index.json: weight_map puts tensor 'q' in shard "
                        "'a.safetensors', which does not hold it"));
  EXPECT_THAT(indexError(R"({"x": "a.safetensors"})"),
              HasSubstr("index.json: shard 'a.safetensors' holds tensor "
                        "'y', which weight_map does not list"));
  EXPECT_THAT(indexError(R"({"x": "a.safetensors", "y": "b.safetensors",
                             "z": "b.safetensors"})"),
              HasSubstr("shard 'a.safetensors' holds tensor 'y', which "
                        "weight_map puts in another shard"));
  EXPECT_THAT(indexError(R"({"x": "../a.safetensors"})"),
              HasSubstr("is not a file name in the index's folder"));
  EXPECT_THAT(indexError(R"({})"), HasSubstr("weight_map is empty"));
  llvm::Expected<WeightSource> both = WeightSource::openFiles(
      {dir.file("a.safetensors"), dir.file("b.safetensors")});
  EXPECT_THAT(errorText(both), HasSubstr("tensor 'y' is in two files"));
}
} // namespace

namespace {
TEST(HFModelFolder, RecordsWeightsTokenizerAndGenerationConfig) {
  TempFolder dir;
  std::string folder = dir.file("llama");
  ASSERT_EQ(errorText(writeHFExampleFolder(folder, "llama", 2, 0)), "");
  llvm::Expected<HFModelFolder> loaded = loadHFModelFolder(folder, {});
  ASSERT_TRUE(bool(loaded)) << errorText(loaded);
  EXPECT_EQ(loaded->family, "llama");
  EXPECT_EQ(loaded->modelMaxPositionEmbeddings, 131072);
  EXPECT_EQ(loaded->config.maxPositionEmbeddings, kDefaultHFContext);
  EXPECT_EQ(loaded->config.ropeScaling.type, RopeScalingType::Llama3);
  EXPECT_THAT(loaded->weightsPath,
              ::testing::EndsWith("model.safetensors.index.json"));
  ASSERT_EQ(loaded->weightFiles.size(), 2u);
  EXPECT_THAT(loaded->weightFiles[0],
              ::testing::EndsWith("model-00001-of-00002.safetensors"));
  EXPECT_FALSE(loaded->tokenizerJson) << "the example has no tokenizer.json";
  ASSERT_TRUE(loaded->generationConfigJson);
  ASSERT_TRUE(loaded->generation);
  EXPECT_EQ(loaded->generation->bosTokenId, 1);
  EXPECT_EQ(loaded->generation->eosTokenIds, std::vector<int64_t>({2, 3}));

  // A tokenizer.json is recorded by path; --context sets the context.
  llvm::SmallString<256> tokenizer(folder);
  llvm::sys::path::append(tokenizer, "tokenizer.json");
  {
    std::error_code ec;
    llvm::raw_fd_ostream out(tokenizer, ec);
    out << "{}";
  }
  HFLoadOptions options;
  options.context = 64;
  llvm::Expected<HFModelFolder> shorter = loadHFModelFolder(folder, options);
  ASSERT_TRUE(bool(shorter)) << errorText(shorter);
  EXPECT_EQ(shorter->config.maxPositionEmbeddings, 64);
  EXPECT_EQ(shorter->tokenizerJson, tokenizer.str().str());
}
} // namespace
