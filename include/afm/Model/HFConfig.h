//===- HFConfig.h - Hugging Face model folders ------------------*- C++ -*-===//
//
// A model folder as Hugging Face publishes it (config.json, the weights as
// model.safetensors or shards with model.safetensors.index.json,
// tokenizer.json, generation_config.json) for the `llama`, `mistral`,
// `qwen2`, `qwen3`, `qwen3_moe` and `gemma3_text` families, read into the
// compiler's ModelConfig (docs/hf-models.md). Every key of config.json is
// either honoured, known not to matter for inference, or refused: nothing
// that changes the math is ignored.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_MODEL_HFCONFIG_H
#define AFM_MODEL_HFCONFIG_H

#include "afm/Model/ModelConfig.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::afm {

/// The context a folder is compiled for when none is asked for: the model's
/// `max_position_embeddings`, at most this (a KV cache at 128k positions
/// would take gigabytes per session).
inline constexpr int64_t kDefaultHFContext = 4096;

/// A Hugging Face config.json mapped onto a ModelConfig.
struct HFConfig {
  /// `model_type`: "llama", "mistral", "qwen2", "qwen3", "qwen3_moe" or
  /// "gemma3_text".
  std::string family;
  /// An afm-dense config; its `maxPositionEmbeddings` is the model's
  /// `max_position_embeddings` and its `slidingWindow` / `allLayersLocal`
  /// mistral's `sliding_window` (null: every layer global).
  ModelConfig config;
};

/// Parses a published config.json of `model_type` "llama", "mistral",
/// "qwen2", "qwen3", "qwen3_moe" or "gemma3_text". Errors name `fileName`
/// and the key: an unknown key, a key with a value that changes the math in
/// an unsupported way (`hidden_act` other than "silu", `mlp_bias` true,
/// `pretraining_tp` other than 1, `rope_scaling` of another type than
/// default, linear or llama3, `use_mrope` true, sliding layers in no
/// pattern afm has, `norm_topk_prob` false, `mlp_only_layers` not empty,
/// Gemma's soft-capping), a missing size, a wrong type.
llvm::Expected<HFConfig> parseHFConfig(llvm::StringRef json,
                                       llvm::StringRef fileName);

/// The token ids of a generation_config.json (its other keys, sampling
/// parameters, are not read).
struct HFGenerationConfig {
  std::optional<int64_t> bosTokenId;
  /// `eos_token_id`: an integer or a list of them; empty when absent.
  std::vector<int64_t> eosTokenIds;
};

/// Parses the text of a generation_config.json; errors name `fileName` and
/// the key (`bos_token_id` must be an integer or null, `eos_token_id` an
/// integer, a list of integers or null).
llvm::Expected<HFGenerationConfig>
parseHFGenerationConfig(llvm::StringRef json, llvm::StringRef fileName);

/// What tokenizer_config.json says about the special tokens a sequence gets
/// (its chat template and other keys are not read).
struct HFTokenizerConfig {
  /// `tokenizer_class`, e.g. "LlamaTokenizerFast"; empty when absent.
  std::string tokenizerClass;
  std::optional<bool> addBosToken, addEosToken;
  /// `bos_token` / `eos_token`: a string, or an AddedToken object's
  /// `content`; empty when absent or null.
  std::string bosToken, eosToken;

  /// Whether transformers rebuilds this class's post-processor from
  /// add_bos_token / add_eos_token (LlamaTokenizerFast's and
  /// GemmaTokenizerFast's update_post_processor), overriding
  /// tokenizer.json's template.
  bool rebuildsTemplate() const;
};

/// Parses the text of a tokenizer_config.json; errors name `fileName` and
/// the key (add_bos_token / add_eos_token must be booleans, the tokens
/// strings, AddedToken objects or null).
llvm::Expected<HFTokenizerConfig>
parseHFTokenizerConfig(llvm::StringRef json, llvm::StringRef fileName);

/// What the compiler chooses that a Hugging Face folder does not say.
struct HFLoadOptions {
  /// The compiled context (the KV caches' length); default
  /// min(max_position_embeddings, kDefaultHFContext). More than the
  /// model's max_position_embeddings is an error.
  std::optional<int64_t> context;
};

/// A model folder, read and checked.
struct HFModelFolder {
  /// The folder.
  std::string path;
  std::string family;
  /// The model at the chosen context: `maxPositionEmbeddings` is the
  /// compiled context, `modelMaxPositionEmbeddings` the model's.
  ModelConfig config;
  int64_t modelMaxPositionEmbeddings = 0;
  /// What `WeightSource::open` and the packager read: the index file of a
  /// sharded checkpoint, or model.safetensors.
  std::string weightsPath;
  /// Every weights file (the shards in name order, or model.safetensors).
  std::vector<std::string> weightFiles;
  /// tokenizer.json and generation_config.json, when the folder has them.
  std::optional<std::string> tokenizerJson;
  std::optional<std::string> generationConfigJson;
  /// generation_config.json's token ids, when the folder has one.
  std::optional<HFGenerationConfig> generation;
  /// tokenizer_config.json, parsed, when the folder has one.
  std::optional<std::string> tokenizerConfigJson;
  std::optional<HFTokenizerConfig> tokenizerConfig;
};

/// Reads the folder `dir`: config.json (parseHFConfig), the weights (see
/// `WeightSource::open`; every tensor checked against the config), and the
/// paths of tokenizer.json and generation_config.json (the latter parsed).
llvm::Expected<HFModelFolder> loadHFModelFolder(llvm::StringRef dir,
                                                const HFLoadOptions &options);

} // namespace mlir::afm

#endif // AFM_MODEL_HFCONFIG_H
