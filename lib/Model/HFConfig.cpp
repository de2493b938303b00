//===- HFConfig.cpp - Hugging Face model folders --------------------------===//
//
// The semantics follow transformers' LlamaConfig / MistralConfig /
// Qwen2Config / Qwen3Config and modeling_{llama,mistral,qwen2,qwen3}.py: a
// pre-norm decoder with RMSNorm, rotate-half RoPE, GQA and a SwiGLU MLP, the
// layout of afm-dense, with Qwen 2's q/k/v biases and Qwen 3's per-head q/k
// RMSNorms as the config's `attention_bias` and `qk_norm`. Keys are
// classified in one table per family, so that a key transformers would
// honour can never slip through unread.
//
//===----------------------------------------------------------------------===//

#include "afm/Model/HFConfig.h"

#include "afm/Model/BoundedJSON.h"
#include "afm/Model/ModelWeights.h"
#include "afm/Model/WeightSource.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir::afm;
using llvm::Error;
using llvm::Expected;
using llvm::StringRef;
namespace json = llvm::json;

namespace {
/// The families a folder can be, by `model_type`.
enum Family : unsigned {
  Llama = 1,
  Mistral = 2,
  Qwen2 = 4,
  Qwen3 = 8,
  Qwen3MoE = 16,
  /// Qwen 3 attention: per-head q/k norms, attention_bias on all four.
  Qwen3Attention = Qwen3 | Qwen3MoE,
  Qwen = Qwen2 | Qwen3Attention,
  Gemma3 = 32,
  All = Llama | Mistral | Qwen | Gemma3,
};

/// What a key is to the compiler.
enum class Role {
  /// Read into the ModelConfig (or checked to have the only value the
  /// compiler implements).
  Honoured,
  /// Only matters for training, loading or generation, never for the
  /// logits (its type is still checked where it has one).
  Irrelevant,
};

struct KeyRule {
  const char *key;
  unsigned families;
  Role role;
};

/// Every key a config.json of each family may hold (docs/hf-models.md),
/// after transformers' LlamaConfig, MistralConfig, Qwen2Config,
/// Qwen3Config and Qwen3MoeConfig.
constexpr KeyRule kKeys[] = {
    {"model_type", All, Role::Honoured},
    {"vocab_size", All, Role::Honoured},
    {"hidden_size", All, Role::Honoured},
    {"intermediate_size", All, Role::Honoured},
    {"num_hidden_layers", All, Role::Honoured},
    {"num_attention_heads", All, Role::Honoured},
    {"num_key_value_heads", All, Role::Honoured},
    {"head_dim", All, Role::Honoured},
    {"hidden_act", All & ~Gemma3, Role::Honoured},
    {"max_position_embeddings", All, Role::Honoured},
    {"rms_norm_eps", All, Role::Honoured},
    {"rope_theta", All, Role::Honoured},
    {"rope_scaling", All, Role::Honoured},
    {"tie_word_embeddings", All, Role::Honoured},
    {"attention_bias", Llama | Qwen3Attention | Gemma3, Role::Honoured},
    {"mlp_bias", Llama, Role::Honoured},
    {"pretraining_tp", Llama, Role::Honoured},
    {"sliding_window", Mistral | Qwen | Gemma3, Role::Honoured},
    {"use_sliding_window", Qwen, Role::Honoured},
    {"max_window_layers", Qwen, Role::Honoured},
    {"layer_types", Qwen | Gemma3, Role::Honoured},
    {"sliding_window_pattern", Gemma3, Role::Honoured},
    {"hidden_activation", Gemma3, Role::Honoured},
    {"query_pre_attn_scalar", Gemma3, Role::Honoured},
    {"rope_local_base_freq", Gemma3, Role::Honoured},
    {"attn_logit_softcapping", Gemma3, Role::Honoured},
    {"final_logit_softcapping", Gemma3, Role::Honoured},
    {"use_bidirectional_attention", Gemma3, Role::Honoured},
    {"cache_implementation", Gemma3, Role::Irrelevant},
    {"use_mrope", Qwen2, Role::Honoured},
    {"num_experts", Qwen3MoE, Role::Honoured},
    {"num_experts_per_tok", Qwen3MoE, Role::Honoured},
    {"moe_intermediate_size", Qwen3MoE, Role::Honoured},
    {"decoder_sparse_step", Qwen3MoE, Role::Honoured},
    {"mlp_only_layers", Qwen3MoE, Role::Honoured},
    {"norm_topk_prob", Qwen3MoE, Role::Honoured},
    {"output_router_logits", Qwen3MoE, Role::Irrelevant},
    {"router_aux_loss_coef", Qwen3MoE, Role::Irrelevant},
    {"_name_or_path", All, Role::Irrelevant},
    {"architectures", All, Role::Irrelevant},
    {"torch_dtype", All, Role::Irrelevant},
    {"dtype", All, Role::Irrelevant},
    {"transformers_version", All, Role::Irrelevant},
    {"initializer_range", All, Role::Irrelevant},
    {"use_cache", All, Role::Irrelevant},
    {"attention_dropout", All, Role::Irrelevant},
    {"bos_token_id", All, Role::Irrelevant},
    {"eos_token_id", All, Role::Irrelevant},
    {"pad_token_id", All, Role::Irrelevant},
};

/// The families by `model_type`, as the error for another one lists them.
constexpr std::pair<const char *, Family> kFamilies[] = {
    {"llama", Llama},
    {"mistral", Mistral},
    {"qwen2", Qwen2},
    {"qwen3", Qwen3},
    {"qwen3_moe", Qwen3MoE},
    {"gemma3_text", Gemma3},
};

/// Sizes fit in int32, as for afm's own config.json.
constexpr int64_t kMaxSize = std::numeric_limits<int32_t>::max();

class HFReader : public JSONKeyReader {
public:
  using JSONKeyReader::JSONKeyReader;

  /// An integer in [min, kMaxSize]; `out` keeps its value when the key is
  /// absent (or null, if `nullable`).
  Error readInt(StringRef key, int64_t &out, bool required, int64_t min = 1,
                bool nullable = false) const {
    const json::Value *v = get(key);
    if (!v || (nullable && v->kind() == json::Value::Null)) {
      if (required && !v)
        return llvm::createStringError(fileName + ": missing required key '" +
                                       key + "'");
      return Error::success();
    }
    // An integral number such as 64.0 is an integer too.
    std::optional<int64_t> i = v->getAsInteger();
    if (!i)
      return keyError(key, "expected an integer, got " + describe(*v));
    if (*i < min || *i > kMaxSize)
      return keyError(key, llvm::formatv("must be between {0} and {1}, got "
                                         "{2}",
                                         min, kMaxSize, *i));
    out = *i;
    return Error::success();
  }

  Error readPositive(StringRef key, double &out) const {
    return read(key, out, "a positive number", [](const json::Value &v) {
      std::optional<double> d = v.getAsNumber();
      return d && *d > 0.0 && std::isfinite(*d) ? d : std::nullopt;
    });
  }

  Error readBool(StringRef key, bool &out) const {
    return read(key, out, "true or false",
                [](const json::Value &v) { return v.getAsBoolean(); });
  }

  /// Reads `key`, when present, with `get`, which gives nullopt for a
  /// value that is not `expected`.
  template <typename T, typename Getter>
  Error read(StringRef key, T &out, StringRef expected, Getter get) const {
    const json::Value *v = object.get(key);
    if (!v)
      return Error::success();
    auto typed = get(*v);
    if (!typed)
      return keyError(key, "expected " + expected + ", got " + describe(*v));
    out = *typed;
    return Error::success();
  }

  /// `key`, when present, must equal `supported`: another value changes
  /// the math in a way the compiler does not implement.
  Error requireValue(StringRef key, const json::Value &supported,
                     StringRef why) const {
    const json::Value *v = get(key);
    if (!v || *v == supported)
      return Error::success();
    return keyError(key, "value " + describe(*v) + " is not supported (only " +
                             describe(supported) + "): " + why);
  }

  static std::string describe(const json::Value &value) {
    return describeJSON(value);
  }
};

/// Checks the types of the irrelevant keys that have one, so that a
/// malformed config is still reported.
Error checkIrrelevantKeys(const HFReader &reader) {
  for (StringRef key : {"bos_token_id", "eos_token_id", "pad_token_id"}) {
    const json::Value *v = reader.get(key);
    if (!v || v->kind() == json::Value::Null || v->getAsInteger())
      continue;
    const json::Array *list = v->getAsArray();
    if (!list || !llvm::all_of(*list, [](const json::Value &e) {
          return e.getAsInteger().has_value();
        }))
      return reader.keyError(key, "expected an integer, a list of integers "
                                  "or null, got " +
                                      HFReader::describe(*v));
  }
  if (const json::Value *v = reader.get("attention_dropout"))
    if (std::optional<double> d = v->getAsNumber(); !d || *d < 0.0 || *d > 1.0)
      return reader.keyError("attention_dropout",
                             "expected a probability, got " +
                                 HFReader::describe(*v));
  if (const json::Value *v = reader.get("architectures")) {
    const json::Array *list = v->getAsArray();
    if (!list || !llvm::all_of(*list, [](const json::Value &e) {
          return e.getAsString().has_value();
        }))
      return reader.keyError("architectures",
                             "expected a list of strings, got " +
                                 HFReader::describe(*v));
  }
  return Error::success();
}

/// Qwen3MoeConfig's experts: every `decoder_sparse_step`-th layer's MLP
/// is a mixture of `num_experts` experts of which each token takes the
/// top `num_experts_per_tok`, weighted by the softmax of their router
/// logits (norm_topk_prob: the top-k probabilities renormalized), which is
/// afm-dense with `denseMoE`.
Error readExperts(const HFReader &reader, ModelConfig &config) {
  config.denseMoE = true;
  // Qwen3MoeConfig's defaults.
  config.numExperts = 128;
  config.numExpertsPerTok = 8;
  config.moeIntermediateSize = 768;
  config.moeLayerInterval = 1;
  if (Error err = reader.readInt("num_experts", config.numExperts, false))
    return err;
  if (Error err = reader.readInt("num_experts_per_tok",
                                 config.numExpertsPerTok, false))
    return err;
  if (Error err = reader.readInt("moe_intermediate_size",
                                 config.moeIntermediateSize, false))
    return err;
  if (Error err = reader.readInt("decoder_sparse_step",
                                 config.moeLayerInterval, false))
    return err;
  bool normalized = false;
  if (Error err = reader.readBool("norm_topk_prob", normalized))
    return err;
  if (!normalized)
    return reader.keyError(
        "norm_topk_prob",
        "false (also its default when absent) weights the chosen experts by "
        "their probabilities over all experts, not renormalized; only true "
        "is supported (the weights are the softmax over the chosen logits)");
  if (const json::Value *dense = reader.get("mlp_only_layers");
      dense && dense->kind() != json::Value::Null) {
    const json::Array *list = dense->getAsArray();
    if (!list || !list->empty())
      return reader.keyError(
          "mlp_only_layers",
          "only [] or null is supported, got " +
              (list ? "a list of " + std::to_string(list->size()) + " layers"
                    : HFReader::describe(*dense)) +
              ": dense layers at listed indices do not follow afm's "
              "every-n-th-layer rule");
  }
  return Error::success();
}

/// Maps which layers slide onto afm's layouts: none (every layer global),
/// all (`all_layers_local`), or groups of n sliding layers then one full
/// layer (`local_per_global` n, Gemma's pattern). Anything else is refused,
/// naming `key`.
Error mapSlidingLayers(const HFReader &reader, StringRef key,
                       const std::vector<bool> &sliding, int64_t window,
                       ModelConfig &config) {
  int64_t layers = int64_t(sliding.size());
  int64_t slidingLayers = llvm::count(sliding, true);
  if (slidingLayers == 0)
    return Error::success();
  config.slidingWindow = window;
  if (slidingLayers == layers) {
    config.allLayersLocal = true;
    return Error::success();
  }
  // The first full layer closes the first group.
  int64_t group = std::find(sliding.begin(), sliding.end(), false) -
                  sliding.begin();
  bool grouped = group > 0;
  for (int64_t i = 0; i < layers && grouped; ++i)
    grouped = sliding[i] == ((i + 1) % (group + 1) != 0);
  if (!grouped)
    return reader.keyError(
        key, llvm::formatv("{0} of the {1} layers attend over a sliding "
                           "window and the others over the whole context, "
                           "in no pattern of n sliding layers then one full "
                           "layer; only that pattern, all or none is "
                           "supported",
                           slidingLayers, layers));
  config.localPerGlobal = group;
  return Error::success();
}

/// Reads `layer_types` into `sliding` when the config has it: a list of
/// num_hidden_layers "full_attention" or "sliding_attention". A layer
/// called sliding in a model without a window attends to everything.
Error readLayerTypes(const HFReader &reader, int64_t window,
                     std::vector<bool> &sliding) {
  const json::Value *types = reader.get("layer_types");
  if (!types || types->kind() == json::Value::Null)
    return Error::success();
  int64_t layers = int64_t(sliding.size());
  const json::Array *list = types->getAsArray();
  if (!list || int64_t(list->size()) != layers)
    return reader.keyError(
        "layer_types",
        llvm::formatv("expected a list of num_hidden_layers ({0}) "
                      "strings, got {1}",
                      layers, HFReader::describe(*types)));
  for (int64_t i = 0; i < layers; ++i) {
    std::optional<StringRef> kind = (*list)[i].getAsString();
    if (kind != StringRef("full_attention") &&
        kind != StringRef("sliding_attention"))
      return reader.keyError(
          "layer_types",
          "expected \"full_attention\" or \"sliding_attention\", got " +
              HFReader::describe((*list)[i]));
    sliding[i] = window > 0 && *kind == "sliding_attention";
  }
  return Error::success();
}

/// Which layers attend over a sliding window, and how wide it is.
Error readAttentionLayout(const HFReader &reader, Family family,
                          ModelConfig &config) {
  config.localPerGlobal = 0;
  config.ropeInGlobalLayers = true;
  config.allLayersLocal = false;
  int64_t layers = config.numHiddenLayers;
  // The default window: Mistral's and Gemma 3's, and Qwen2Config's (used
  // only with use_sliding_window); a llama config has no such key.
  int64_t window = family == Llama ? 0 : 4096;
  if (reader.isNull("sliding_window"))
    window = 0;
  else if (Error err = reader.readInt("sliding_window", window, false))
    return err;
  // Mistral: every layer attends over the last `sliding_window` positions.
  std::vector<bool> sliding(layers, family == Mistral && window > 0);
  if (family & Qwen) {
    // Qwen2Config / Qwen3Config: the window applies only with
    // use_sliding_window, to the layers from max_window_layers on, unless
    // layer_types lists each layer's kind.
    bool useSliding = false;
    int64_t maxWindowLayers = 28;
    if (Error err = reader.readBool("use_sliding_window", useSliding))
      return err;
    if (Error err = reader.readInt("max_window_layers", maxWindowLayers,
                                   false, /*min=*/0))
      return err;
    if (!useSliding)
      window = 0;
    for (int64_t i = 0; i < layers; ++i)
      sliding[i] = window > 0 && i >= maxWindowLayers;
  }
  if (family == Gemma3) {
    // Gemma3TextConfig: every sliding_window_pattern-th layer is full,
    // the others slide, unless layer_types lists each layer's kind.
    int64_t pattern = 6;
    if (Error err = reader.readInt("sliding_window_pattern", pattern, false))
      return err;
    for (int64_t i = 0; i < layers; ++i)
      sliding[i] = window > 0 && (i + 1) % pattern != 0;
  }
  if (Error err = readLayerTypes(reader, window, sliding))
    return err;
  StringRef key = reader.get("layer_types")     ? "layer_types"
                  : family & Qwen               ? "max_window_layers"
                  : family == Gemma3            ? "sliding_window_pattern"
                                                : "sliding_window";
  return mapSlidingLayers(reader, key, sliding, window, config);
}

/// Gemma 3's departures from the llama layout (modeling_gemma3.py):
/// (1 + w) RMSNorms, sandwich norms, a GeGLU MLP with the tanh GELU,
/// embeddings times sqrt(d), scores times query_pre_attn_scalar^-0.5,
/// per-head q/k norms, and local layers with a RoPE base of their own.
Error readGemma3Keys(const HFReader &reader, ModelConfig &config) {
  config.rmsNormWeightOffset = 1.0;
  config.sandwichNorms = true;
  config.qkNorm = true;
  config.mlpActivation = MLPActivation::GELUTanh;
  config.embeddingMultiplier = std::sqrt(double(config.hiddenSize));
  double queryScalar = 256.0;
  if (Error err = reader.readPositive("query_pre_attn_scalar", queryScalar))
    return err;
  config.attentionScale = 1.0 / std::sqrt(queryScalar);
  config.ropeLocalTheta = 10000.0;
  if (Error err =
          reader.readPositive("rope_local_base_freq", config.ropeLocalTheta))
    return err;
  if (Error err = reader.requireValue(
          "hidden_activation", "gelu_pytorch_tanh",
          "the MLP is GeGLU with the tanh GELU, gelu(gate) * up"))
    return err;
  for (const char *key : {"attn_logit_softcapping", "final_logit_softcapping"})
    if (Error err = reader.requireValue(key, nullptr,
                                        "soft-capping (Gemma 2's tanh cap on "
                                        "the logits) is not implemented"))
      return err;
  return reader.requireValue("use_bidirectional_attention", false,
                             "attention is causal (EmbeddingGemma's "
                             "bidirectional attention is not a decoder)");
}

Error readHonouredKeys(const HFReader &reader, Family family,
                       ModelConfig &config) {
  // transformers' defaults for the keys a config may leave out; the sizes
  // are required (a published config always has them, and defaulting to
  // a 7B model's would only produce confusing shape errors).
  config.rmsNormEps = 1e-6;
  bool gemma = family == Gemma3;
  config.ropeTheta = gemma ? 1e6 : 10000.0;
  config.maxPositionEmbeddings = family == Llama     ? 2048
                                 : family == Mistral ? 4096 * 32
                                 : gemma             ? 131072
                                                     : 32768;
  config.tieWordEmbeddings = gemma;
  struct IntKey {
    const char *key;
    int64_t *field;
  };
  for (IntKey k : {IntKey{"vocab_size", &config.vocabSize},
                   IntKey{"hidden_size", &config.hiddenSize},
                   IntKey{"intermediate_size", &config.intermediateSize},
                   IntKey{"num_hidden_layers", &config.numHiddenLayers},
                   IntKey{"num_attention_heads", &config.numAttentionHeads}})
    if (Error err = reader.readInt(k.key, *k.field, /*required=*/true))
      return err;
  // num_key_value_heads: null means H; absent means H for llama, and the
  // default argument of MistralConfig (8), Qwen2Config / Qwen3Config (32)
  // or Qwen3MoeConfig / Gemma3TextConfig (4).
  config.numKeyValueHeads = config.numAttentionHeads;
  if (!reader.get("num_key_value_heads") && family != Llama)
    config.numKeyValueHeads =
        family == Mistral ? 8 : (family & (Qwen3MoE | Gemma3)) ? 4 : 32;
  if (Error err = reader.readInt("num_key_value_heads",
                                 config.numKeyValueHeads, false, 1,
                                 /*nullable=*/true))
    return err;
  // Qwen3Config's head_dim defaults to 128, Gemma3TextConfig's to 256; the
  // others' to d / H.
  config.headDim = 0;
  if (!reader.get("head_dim") && (family & (Qwen3 | Gemma3)))
    config.headDim = family == Qwen3 ? 128 : 256;
  if (Error err = reader.readInt("head_dim", config.headDim, false, 1,
                                 /*nullable=*/true))
    return err;
  if (config.headDim == 0) {
    if (config.hiddenSize % config.numAttentionHeads != 0)
      return reader.keyError(
          "head_dim",
          llvm::formatv("not given, and hidden_size / num_attention_heads "
                        "({0} / {1}) is not an integer",
                        config.hiddenSize, config.numAttentionHeads));
    config.headDim = config.hiddenSize / config.numAttentionHeads;
  }
  if (Error err = reader.readInt("max_position_embeddings",
                                 config.maxPositionEmbeddings, false))
    return err;
  if (Error err = reader.readPositive("rms_norm_eps", config.rmsNormEps))
    return err;
  if (Error err = reader.readPositive("rope_theta", config.ropeTheta))
    return err;
  if (Error err =
          reader.readBool("tie_word_embeddings", config.tieWordEmbeddings))
    return err;
  if (const json::Value *scaling = reader.get("rope_scaling"))
    if (Error err = parseRopeScaling(*scaling, reader.file(),
                                     config.ropeScaling))
      return err;
  if (Error err = reader.requireValue(
          "hidden_act", "silu", "the MLP is SwiGLU, silu(gate) * up"))
    return err;
  if (gemma)
    if (Error err = readGemma3Keys(reader, config))
      return err;
  // Qwen 2's q/k/v projections always have biases; llama's and Qwen 3's
  // q/k/v/o projections have them when `attention_bias` says so.
  if (family == Qwen2) {
    config.attentionBias = true;
  } else {
    bool bias = false;
    if (Error err = reader.readBool("attention_bias", bias))
      return err;
    config.attentionBias = config.attentionOutputBias = bias;
  }
  config.qkNorm = (family & (Qwen3Attention | Gemma3)) != 0;
  if (family == Qwen3MoE)
    if (Error err = readExperts(reader, config))
      return err;
  if (Error err = reader.requireValue(
          "use_mrope", false,
          "multimodal RoPE is for Qwen2-VL's image positions"))
    return err;
  if (Error err = reader.requireValue("mlp_bias", false,
                                      "the MLP projections have no bias "
                                      "tensors"))
    return err;
  if (Error err = reader.requireValue(
          "pretraining_tp", int64_t(1),
          "slices the projections as transformers does for tensor "
          "parallelism"))
    return err;
  return readAttentionLayout(reader, family, config);
}

} // namespace

Expected<HFConfig> mlir::afm::parseHFConfig(StringRef json,
                                            StringRef fileName) {
  Expected<json::Object> object = parseTopLevelObject(json, fileName);
  if (!object)
    return object.takeError();
  HFReader reader(*object, fileName);

  const json::Value *typeValue = reader.get("model_type");
  if (!typeValue)
    return llvm::createStringError(
        fileName + ": missing required key 'model_type' (a Hugging Face "
                   "config.json; afm's own configs are read with --config)");
  std::optional<StringRef> type = typeValue->getAsString();
  const auto *known = llvm::find_if(kFamilies, [&](const auto &entry) {
    return type == StringRef(entry.first);
  });
  if (known == std::end(kFamilies))
    return reader.keyError("model_type",
                           "model type " + HFReader::describe(*typeValue) +
                               " is not supported (supported: llama, "
                               "mistral, qwen2, qwen3, qwen3_moe, "
                               "gemma3_text)");
  Family family = known->second;

  // Every key must be classified for this family.
  llvm::SmallVector<StringRef> keys;
  for (const auto &entry : *object)
    keys.push_back(entry.first);
  llvm::sort(keys);
  for (StringRef key : keys) {
    const KeyRule *rule = llvm::find_if(
        kKeys, [&](const KeyRule &r) { return key == r.key; });
    if (rule == std::end(kKeys) || !(rule->families & family))
      return reader.keyError(key, "unknown key for model type '" + *type +
                                      "': the compiler does not know "
                                      "whether it changes the model");
  }
  if (Error err = checkIrrelevantKeys(reader))
    return std::move(err);
  HFConfig result;
  result.family = type->str();
  ModelConfig &config = result.config;
  config.architecture = Architecture::Dense;
  if (Error err = readHonouredKeys(reader, family, config))
    return std::move(err);
  if (Error err = validateModelConfig(config, fileName))
    return std::move(err);
  return result;
}

Expected<HFGenerationConfig>
mlir::afm::parseHFGenerationConfig(StringRef json, StringRef fileName) {
  Expected<json::Object> object = parseTopLevelObject(json, fileName);
  if (!object)
    return object.takeError();
  HFReader reader(*object, fileName);
  HFGenerationConfig result;
  if (const json::Value *bos = reader.get("bos_token_id");
      bos && bos->kind() != json::Value::Null) {
    std::optional<int64_t> id = bos->getAsInteger();
    if (!id || *id < 0)
      return reader.keyError("bos_token_id",
                             "expected a token id or null, got " +
                                 HFReader::describe(*bos));
    result.bosTokenId = id;
  }
  if (const json::Value *eos = reader.get("eos_token_id");
      eos && eos->kind() != json::Value::Null) {
    std::optional<std::vector<int64_t>> ids = indexOrIndexList(*eos);
    if (!ids)
      return reader.keyError("eos_token_id",
                             "expected a token id, a list of them or null, "
                             "got " +
                                 HFReader::describe(*eos));
    result.eosTokenIds = std::move(*ids);
  }
  return result;
}

bool HFTokenizerConfig::rebuildsTemplate() const {
  return llvm::is_contained({"LlamaTokenizer", "LlamaTokenizerFast",
                             "CodeLlamaTokenizer", "CodeLlamaTokenizerFast",
                             "GemmaTokenizer", "GemmaTokenizerFast"},
                            tokenizerClass);
}

Expected<HFTokenizerConfig>
mlir::afm::parseHFTokenizerConfig(StringRef json, StringRef fileName) {
  Expected<json::Object> object = parseTopLevelObject(json, fileName);
  if (!object)
    return object.takeError();
  HFReader reader(*object, fileName);
  HFTokenizerConfig result;
  if (const json::Value *cls = reader.get("tokenizer_class");
      cls && cls->kind() != json::Value::Null) {
    std::optional<StringRef> name = cls->getAsString();
    if (!name)
      return reader.keyError("tokenizer_class",
                             "expected a string, got " +
                                 HFReader::describe(*cls));
    result.tokenizerClass = name->str();
  }
  for (auto [key, out] : {std::pair{"add_bos_token", &result.addBosToken},
                          std::pair{"add_eos_token", &result.addEosToken}}) {
    bool value = false;
    if (!reader.get(key))
      continue;
    if (Error err = reader.readBool(key, value))
      return std::move(err);
    *out = value;
  }
  for (auto [key, out] : {std::pair{"bos_token", &result.bosToken},
                          std::pair{"eos_token", &result.eosToken}}) {
    const json::Value *token = reader.get(key);
    if (!token || token->kind() == json::Value::Null)
      continue;
    std::optional<StringRef> text = token->getAsString();
    if (const json::Object *added = token->getAsObject())
      if (const json::Value *content = added->get("content"))
        text = content->getAsString();
    if (!text)
      return reader.keyError(key, "expected a token string or an object "
                                  "with its \"content\", got " +
                                      HFReader::describe(*token));
    *out = text->str();
  }
  return result;
}

Expected<HFModelFolder>
mlir::afm::loadHFModelFolder(StringRef dir, const HFLoadOptions &options) {
  if (!llvm::sys::fs::is_directory(dir))
    return llvm::createStringError(dir + ": not a model folder (a directory "
                                         "with config.json and the weights)");
  auto inFolder = [&](StringRef name) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, name);
    return path.str().str();
  };
  HFModelFolder folder;
  folder.path = dir.str();
  std::string configPath = inFolder("config.json");
  Expected<std::string> text = readConfigText(configPath);
  if (!text)
    return text.takeError();
  Expected<HFConfig> hf = parseHFConfig(*text, configPath);
  if (!hf)
    return hf.takeError();
  folder.family = hf->family;
  folder.config = hf->config;
  ModelConfig &config = folder.config;
  folder.modelMaxPositionEmbeddings = config.maxPositionEmbeddings;
  int64_t context = options.context.value_or(
      std::min(config.maxPositionEmbeddings, kDefaultHFContext));
  if (context < 1 || context > config.maxPositionEmbeddings)
    return llvm::createStringError(llvm::formatv(
        "--context {0}: must be between 1 and the model's "
        "max_position_embeddings ({1}, {2})",
        context, config.maxPositionEmbeddings, configPath).str());
  config.maxPositionEmbeddings = context;
  // A window that covers the whole context is no window: every layer is
  // then global, the same math with a plain cache.
  // (Not with a RoPE base of the local layers' own: they stay local.)
  if (config.allLayersLocal && config.slidingWindow >= context &&
      config.ropeLocalTheta == 0.0)
    config.allLayersLocal = false;

  Expected<WeightSource> weights = WeightSource::open(dir);
  if (!weights)
    return weights.takeError();
  folder.weightsPath = weights->path().str();
  for (const SafeTensorsFile *file : weights->files())
    folder.weightFiles.push_back(file->path().str());
  if (Error err = checkWeights(config, *weights))
    return std::move(err);

  std::string tokenizer = inFolder("tokenizer.json");
  if (llvm::sys::fs::exists(tokenizer))
    folder.tokenizerJson = tokenizer;
  // The optional JSON files, each parsed when the folder has it.
  auto readOptional = [&](StringRef name, auto parse, auto &path,
                          auto &parsed) -> Error {
    std::string file = inFolder(name);
    if (!llvm::sys::fs::exists(file))
      return Error::success();
    Expected<std::string> text = readConfigText(file);
    if (!text)
      return text.takeError();
    auto result = parse(*text, file);
    if (!result)
      return result.takeError();
    path = file;
    parsed = std::move(*result);
    return Error::success();
  };
  if (Error err = readOptional("generation_config.json",
                               parseHFGenerationConfig,
                               folder.generationConfigJson, folder.generation))
    return std::move(err);
  if (Error err = readOptional("tokenizer_config.json",
                               parseHFTokenizerConfig,
                               folder.tokenizerConfigJson,
                               folder.tokenizerConfig))
    return std::move(err);
  return folder;
}
