//===- HFExampleModel.cpp - small Hugging Face model folders --------------===//
//
// The configs are text, keys sorted as `save_pretrained` writes them, so
// that the tests read what a published folder holds rather than what the
// compiler would print.
//
//===----------------------------------------------------------------------===//

#include "afm/TestModels/HFExampleModel.h"

#include "afm/Model/HalfFloat.h"
#include "afm/Model/HFConfig.h"
#include "afm/Model/SafeTensors.h"
#include "afm/TestModels/ExampleModel.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cassert>
#include <map>

using namespace mlir::afm;
using llvm::Error;
using llvm::StringRef;

static constexpr const char kLlamaConfig[] = R"({
  "architectures": [
    "LlamaForCausalLM"
  ],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "bos_token_id": 1,
  "eos_token_id": 2,
  "head_dim": 16,
  "hidden_act": "silu",
  "hidden_size": 64,
  "initializer_range": 0.02,
  "intermediate_size": 128,
  "max_position_embeddings": 131072,
  "mlp_bias": false,
  "model_type": "llama",
  "num_attention_heads": 4,
  "num_hidden_layers": 2,
  "num_key_value_heads": 2,
  "pretraining_tp": 1,
  "rms_norm_eps": 1e-05,
  "rope_scaling": {
    "factor": 32.0,
    "high_freq_factor": 4.0,
    "low_freq_factor": 1.0,
    "original_max_position_embeddings": 64,
    "rope_type": "llama3"
  },
  "rope_theta": 500000.0,
  "tie_word_embeddings": true,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.45.0",
  "use_cache": true,
  "vocab_size": 256
}
)";

static constexpr const char kMistralConfig[] = R"({
  "architectures": [
    "MistralForCausalLM"
  ],
  "bos_token_id": 1,
  "eos_token_id": 2,
  "hidden_act": "silu",
  "hidden_size": 64,
  "initializer_range": 0.02,
  "intermediate_size": 128,
  "max_position_embeddings": 32768,
  "model_type": "mistral",
  "num_attention_heads": 4,
  "num_hidden_layers": 2,
  "num_key_value_heads": 2,
  "rms_norm_eps": 1e-05,
  "rope_theta": 10000.0,
  "sliding_window": 8,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.34.0",
  "use_cache": true,
  "vocab_size": 256
}
)";

static constexpr const char kQwen2Config[] = R"({
  "architectures": [
    "Qwen2ForCausalLM"
  ],
  "attention_dropout": 0.0,
  "bos_token_id": 1,
  "eos_token_id": 2,
  "hidden_act": "silu",
  "hidden_size": 64,
  "initializer_range": 0.02,
  "intermediate_size": 128,
  "max_position_embeddings": 32768,
  "max_window_layers": 2,
  "model_type": "qwen2",
  "num_attention_heads": 4,
  "num_hidden_layers": 2,
  "num_key_value_heads": 2,
  "rms_norm_eps": 1e-06,
  "rope_theta": 1000000.0,
  "sliding_window": 32768,
  "tie_word_embeddings": true,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.40.1",
  "use_cache": true,
  "use_mrope": false,
  "use_sliding_window": false,
  "vocab_size": 256
}
)";

// head_dim 32 is not hidden_size / num_attention_heads (16), as in the
// published Qwen 3 models.
static constexpr const char kQwen3Config[] = R"({
  "architectures": [
    "Qwen3ForCausalLM"
  ],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "bos_token_id": 1,
  "eos_token_id": 2,
  "head_dim": 32,
  "hidden_act": "silu",
  "hidden_size": 64,
  "initializer_range": 0.02,
  "intermediate_size": 128,
  "max_position_embeddings": 40960,
  "max_window_layers": 2,
  "model_type": "qwen3",
  "num_attention_heads": 4,
  "num_hidden_layers": 2,
  "num_key_value_heads": 2,
  "rms_norm_eps": 1e-06,
  "rope_scaling": null,
  "rope_theta": 1000000,
  "sliding_window": null,
  "tie_word_embeddings": true,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.51.0",
  "use_cache": true,
  "use_sliding_window": false,
  "vocab_size": 256
}
)";

// Four experts of which each token takes two, in every layer; untied, as
// the published Qwen 3 MoE models are.
static constexpr const char kQwen3MoEConfig[] = R"({
  "architectures": [
    "Qwen3MoeForCausalLM"
  ],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "bos_token_id": 1,
  "decoder_sparse_step": 1,
  "eos_token_id": 2,
  "head_dim": 16,
  "hidden_act": "silu",
  "hidden_size": 64,
  "initializer_range": 0.02,
  "intermediate_size": 128,
  "max_position_embeddings": 40960,
  "max_window_layers": 2,
  "mlp_only_layers": [],
  "model_type": "qwen3_moe",
  "moe_intermediate_size": 32,
  "norm_topk_prob": true,
  "num_attention_heads": 4,
  "num_experts": 4,
  "num_experts_per_tok": 2,
  "num_hidden_layers": 2,
  "num_key_value_heads": 2,
  "output_router_logits": false,
  "rms_norm_eps": 1e-06,
  "rope_scaling": null,
  "rope_theta": 1000000.0,
  "router_aux_loss_coef": 0.001,
  "sliding_window": null,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.51.0",
  "use_cache": true,
  "use_sliding_window": false,
  "vocab_size": 256
}
)";

// Six layers: five sliding over a window of 8, then one full layer with
// linearly scaled RoPE of another base (as gemma-3-4b's text model);
// head_dim 32 and query_pre_attn_scalar 24, neither d / H; one KV head;
// tied embeddings by default (no tie_word_embeddings key).
static constexpr const char kGemma3Config[] = R"({
  "architectures": [
    "Gemma3ForCausalLM"
  ],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "attn_logit_softcapping": null,
  "bos_token_id": 2,
  "cache_implementation": "hybrid",
  "eos_token_id": [
    1,
    106
  ],
  "final_logit_softcapping": null,
  "head_dim": 32,
  "hidden_activation": "gelu_pytorch_tanh",
  "hidden_size": 64,
  "initializer_range": 0.02,
  "intermediate_size": 128,
  "max_position_embeddings": 32768,
  "model_type": "gemma3_text",
  "num_attention_heads": 4,
  "num_hidden_layers": 6,
  "num_key_value_heads": 1,
  "pad_token_id": 0,
  "query_pre_attn_scalar": 24,
  "rms_norm_eps": 1e-06,
  "rope_local_base_freq": 10000.0,
  "rope_scaling": {
    "factor": 8.0,
    "rope_type": "linear"
  },
  "rope_theta": 1000000.0,
  "sliding_window": 8,
  "sliding_window_pattern": 6,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.50.0.dev0",
  "use_cache": true,
  "vocab_size": 256
}
)";

static constexpr const char kGemmaGeneration[] = R"({
  "bos_token_id": 2,
  "cache_implementation": "hybrid",
  "do_sample": true,
  "eos_token_id": [
    1,
    106
  ],
  "pad_token_id": 0,
  "top_k": 64,
  "top_p": 0.95,
  "transformers_version": "4.50.0.dev0"
}
)";

static constexpr const char kQwenGeneration[] = R"({
  "bos_token_id": 1,
  "do_sample": true,
  "eos_token_id": [
    3,
    2
  ],
  "pad_token_id": 1,
  "repetition_penalty": 1.05,
  "temperature": 0.7,
  "top_k": 20,
  "top_p": 0.8,
  "transformers_version": "4.37.0"
}
)";

static constexpr const char kLlamaGeneration[] = R"({
  "_from_model_config": true,
  "bos_token_id": 1,
  "do_sample": true,
  "eos_token_id": [
    2,
    3
  ],
  "temperature": 0.6,
  "top_p": 0.9,
  "transformers_version": "4.45.0"
}
)";

static constexpr const char kMistralGeneration[] = R"({
  "_from_model_config": true,
  "bos_token_id": 1,
  "eos_token_id": 2,
  "transformers_version": "4.34.0"
}
)";

namespace {
/// The files of one family's example folder.
struct ExampleFamily {
  const char *name;
  const char *config;
  const char *generation;
};
} // namespace

static constexpr ExampleFamily kExampleFamilies[] = {
    {"llama", kLlamaConfig, kLlamaGeneration},
    {"mistral", kMistralConfig, kMistralGeneration},
    {"qwen2", kQwen2Config, kQwenGeneration},
    {"qwen3", kQwen3Config, kQwenGeneration},
    {"qwen3_moe", kQwen3MoEConfig, kQwenGeneration},
    {"gemma3_text", kGemma3Config, kGemmaGeneration},
};

static const ExampleFamily *findExampleFamily(StringRef family) {
  for (const ExampleFamily &known : kExampleFamilies)
    if (family == known.name)
      return &known;
  return nullptr;
}

std::vector<StringRef> mlir::afm::hfExampleFamilies() {
  std::vector<StringRef> names;
  for (const ExampleFamily &known : kExampleFamilies)
    names.push_back(known.name);
  return names;
}

llvm::Expected<std::string> mlir::afm::hfExampleConfigJSON(StringRef family) {
  if (const ExampleFamily *known = findExampleFamily(family))
    return std::string(known->config);
  return llvm::createStringError("unknown Hugging Face example family '" +
                                 family + "' (known: " +
                                 llvm::join(hfExampleFamilies(), ", ") + ")");
}

static Error writeText(StringRef path, StringRef text) {
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return llvm::createStringError(path + ": cannot write: " + ec.message());
  out << text;
  out.close();
  if (out.has_error())
    return llvm::createStringError(path + ": cannot write: " +
                                   out.error().message());
  return Error::success();
}

/// The tensor of `plan` for `seed`, rounded to BF16.
static SafeTensor bf16Tensor(const ExampleTensorPlan &plan, uint64_t seed) {
  std::vector<float> values(plan.numElements());
  generateExampleValues(plan, seed, 0, values);
  SafeTensor tensor;
  tensor.name = plan.name;
  tensor.dtype = DType::BF16;
  tensor.shape = plan.shape;
  tensor.data.resize(2 * values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    uint16_t bits = f32ToBF16(values[i]);
    tensor.data[2 * i] = uint8_t(bits & 0xff);
    tensor.data[2 * i + 1] = uint8_t(bits >> 8);
  }
  return tensor;
}

Error mlir::afm::writeHFExampleFolder(StringRef dir, StringRef family,
                                      int64_t shards, uint64_t seed,
                                      llvm::ArrayRef<std::string> zeroSubstrings,
                                      std::optional<int64_t> vocabSize) {
  llvm::Expected<std::string> configText = hfExampleConfigJSON(family);
  if (!configText)
    return configText.takeError();
  if (vocabSize) {
    // Every example config spells the key this way, once.
    std::string key = "\"vocab_size\": 256";
    size_t at = configText->find(key);
    assert(at != std::string::npos && "the example configs have vocab 256");
    configText->replace(at, key.size(),
                        "\"vocab_size\": " + std::to_string(*vocabSize));
  }
  llvm::Expected<HFConfig> hf = parseHFConfig(*configText, "config.json");
  if (!hf)
    return hf.takeError();
  std::vector<ExampleTensorPlan> plans = planExampleTensors(hf->config);
  if (shards < 1 || shards > int64_t(plans.size()))
    return llvm::createStringError(llvm::formatv(
        "--shards must be between 1 and the model's {0} tensors, got {1}",
        plans.size(), shards).str());
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return llvm::createStringError(dir + ": cannot create: " + ec.message());
  auto inFolder = [&](StringRef name) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, name);
    return path.str().str();
  };
  if (Error err = writeText(inFolder("config.json"), *configText))
    return err;
  if (Error err = writeText(inFolder("generation_config.json"),
                            findExampleFamily(family)->generation))
    return err;

  std::vector<SafeTensor> tensors;
  uint64_t totalBytes = 0;
  for (const ExampleTensorPlan &plan : plans) {
    tensors.push_back(bf16Tensor(plan, seed));
    totalBytes += tensors.back().data.size();
  }
  // The messages of afm-gen-example's --zero-tensors for presets.
  for (const std::string &substring : zeroSubstrings) {
    if (substring.empty())
      return llvm::createStringError(
          "--zero-tensors needs a non-empty substring");
    if (zeroTensors(tensors, substring) == 0)
      return llvm::createStringError("--zero-tensors '" + substring +
                                     "' matches no tensor of the model");
  }
  std::map<std::string, std::string> metadata = {{"format", "pt"}};
  if (shards == 1)
    return writeSafeTensors(inFolder("model.safetensors"), tensors, metadata);

  // Consecutive tensors, a new shard once this one holds its share.
  llvm::json::Object weightMap;
  size_t next = 0;
  uint64_t written = 0; // Bytes of the tensors placed so far.
  for (int64_t shard = 0; shard < shards; ++shard) {
    std::string name;
    llvm::raw_string_ostream(name)
        << llvm::format("model-%05d-of-%05d.safetensors", int(shard + 1),
                        int(shards));
    uint64_t share = totalBytes * uint64_t(shard + 1) / uint64_t(shards);
    std::vector<SafeTensor> part;
    // Leave at least one tensor for each later shard.
    size_t last = tensors.size() - size_t(shards - 1 - shard);
    while (next < last &&
           (part.empty() || written + tensors[next].data.size() <= share)) {
      written += tensors[next].data.size();
      weightMap[tensors[next].name] = name;
      part.push_back(std::move(tensors[next++]));
    }
    if (shard == shards - 1)
      while (next < tensors.size()) {
        weightMap[tensors[next].name] = name;
        part.push_back(std::move(tensors[next++]));
      }
    if (Error err = writeSafeTensors(inFolder(name), part, metadata))
      return err;
  }
  llvm::json::Object index{
      {"metadata", llvm::json::Object{{"total_size", int64_t(totalBytes)}}},
      {"weight_map", std::move(weightMap)}};
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(index))) << "\n";
  return writeText(inFolder("model.safetensors.index.json"), text);
}
