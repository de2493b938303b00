//===- ModelConfig.cpp - parse and validate config.json -------------------===//
//
// Every error names the file and the key, so that a typo in a config points
// straight at the line to fix.
//
//===----------------------------------------------------------------------===//

#include "afm/Model/ModelConfig.h"

#include "afm/Model/BoundedJSON.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

using namespace mlir::afm;
using llvm::Error;
using llvm::Expected;
using llvm::StringRef;
namespace json = llvm::json;

llvm::StringRef mlir::afm::architectureName(Architecture arch) {
  switch (arch) {
  case Architecture::Dense:
    return "afm-dense";
  case Architecture::OnDevice:
    return "afm-on-device";
  case Architecture::PTMoE:
    return "afm-pt-moe";
  }
  llvm_unreachable("unknown architecture");
}

namespace {
/// The keys of docs/model-config.md, in the order of its table.
constexpr const char *kKnownKeys[] = {
    "architecture",
    "vocab_size",
    "hidden_size",
    "intermediate_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "rms_norm_eps",
    "rope_theta",
    "max_position_embeddings",
    "tie_word_embeddings",
    "sliding_window",
    "local_per_global",
    "rope_in_global_layers",
    "all_layers_local",
    "rope_scaling",
    "attention_bias",
    "attention_output_bias",
    "qk_norm",
    "rms_norm_weight_offset",
    "sandwich_norms",
    "mlp_activation",
    "embedding_multiplier",
    "attention_scale",
    "rope_local_theta",
    "block1_fraction",
    "num_tracks",
    "track_block_depth",
    "num_experts",
    "num_experts_per_tok",
    "moe_layer_interval",
    "moe_intermediate_size",
    "linear_weight_format",
    "q2_scale",
    "astc_offset",
    "embedding_format",
    "embedding_group_size",
    "lm_head_format",
    "kv_cache_dtype",
    "linear_activations",
    "lora_rank",
    "lora_alpha",
};

constexpr Architecture kArchitectures[] = {
    Architecture::Dense, Architecture::OnDevice, Architecture::PTMoE};

constexpr const char *kOnDeviceKeys[] = {"block1_fraction"};
constexpr const char *kPTMoEKeys[] = {
    "num_tracks",          "track_block_depth",  "num_experts",
    "num_experts_per_tok", "moe_layer_interval", "moe_intermediate_size"};
/// afm-dense has MoE layers when its config gives `num_experts`.
constexpr const char *kDenseMoEKeys[] = {"num_experts", "num_experts_per_tok",
                                         "moe_layer_interval",
                                         "moe_intermediate_size"};

/// The keys only `arch` (and maybe another family) has; every other key is
/// shared by all families.
llvm::ArrayRef<const char *> familyKeys(Architecture arch) {
  switch (arch) {
  case Architecture::Dense:
    return kDenseMoEKeys;
  case Architecture::OnDevice:
    return kOnDeviceKeys;
  case Architecture::PTMoE:
    return kPTMoEKeys;
  }
  llvm_unreachable("unknown architecture");
}

/// "afm-dense, afm-on-device, afm-pt-moe".
std::string supportedArchitectures() {
  std::string names;
  for (Architecture arch : kArchitectures)
    names += (names.empty() ? "" : ", ") + architectureName(arch).str();
  return names;
}

/// Sizes are positive and fit in int32, like token ids and the runtime's
/// vocabulary size; products of two sizes then never overflow int64.
constexpr int64_t kMaxSize = std::numeric_limits<int32_t>::max();

/// An error about `key`: "<origin>: key '<key>': <message>".
Error keyError(StringRef origin, StringRef key, const llvm::Twine &message) {
  return llvm::createStringError(
      llvm::formatv("{0}: key '{1}': {2}", origin, key, message.str()).str());
}

/// Reads typed values out of the top-level object of one config file.
class ConfigReader {
public:
  ConfigReader(const json::Object &object, StringRef fileName)
      : object(object), fileName(fileName) {}

  Error keyError(StringRef key, const llvm::Twine &message) const {
    return ::keyError(fileName, key, message);
  }

  Error fileError(const llvm::Twine &message) const {
    return llvm::createStringError(fileName + ": " + message);
  }

  Error checkNoUnknownKeys() const {
    llvm::SmallVector<StringRef> unknown;
    for (const auto &entry : object)
      if (!llvm::is_contained(kKnownKeys, StringRef(entry.first)))
        unknown.push_back(entry.first);
    if (unknown.empty())
      return Error::success();
    llvm::sort(unknown);
    return fileError("unknown key '" + unknown.front() + "'");
  }

  /// Reads `key` into `out` if present; `required` keys must be present.
  Error readInt(StringRef key, int64_t &out, bool required) const {
    return read(key, out, required, "an integer",
                [](const json::Value &v) { return v.getAsInteger(); });
  }

  Error readFloat(StringRef key, double &out) const {
    return read(key, out, /*required=*/false, "a number",
                [](const json::Value &v) { return v.getAsNumber(); });
  }

  Error readBool(StringRef key, bool &out) const {
    return read(key, out, /*required=*/false, "true or false",
                [](const json::Value &v) { return v.getAsBoolean(); });
  }

  Error readString(StringRef key, std::string &out, bool required) const {
    return read(key, out, required, "a string",
                [](const json::Value &v) { return v.getAsString(); });
  }

  bool has(StringRef key) const { return object.get(key) != nullptr; }
  const json::Value *get(StringRef key) const { return object.get(key); }
  StringRef origin() const { return fileName; }

private:
  /// Reads `key` with `get`, which gives nullopt for a JSON value that is
  /// not `expected`.
  template <typename T, typename Getter>
  Error read(StringRef key, T &out, bool required, StringRef expected,
             Getter get) const {
    const json::Value *value = object.get(key);
    if (!value)
      return required ? fileError("missing required key '" + key + "'")
                      : Error::success();
    auto typed = get(*value);
    if (!typed)
      return keyError(key, "expected " + expected + ", got " +
                               describe(*value));
    out = T(*typed);
    return Error::success();
  }

  /// A short description of a JSON value for "expected X, got Y".
  static std::string describe(const json::Value &value) {
    return describeJSON(value, /*quoteStrings=*/false);
  }

  const json::Object &object;
  StringRef fileName;
};

/// The shortest decimal text that reads back as exactly `value`; whole
/// numbers without an exponent ("10000", not "1e+04").
std::string formatDouble(double value) {
  char text[64];
  if (value == std::floor(value) && std::abs(value) < 1e15) {
    std::snprintf(text, sizeof(text), "%.0f", value);
    return text;
  }
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(text, sizeof(text), "%.*g", precision, value);
    if (std::strtod(text, nullptr) == value)
      break;
  }
  return text;
}

Error readArchitecture(const ConfigReader &reader, Architecture &out) {
  std::string name;
  if (Error err = reader.readString("architecture", name, /*required=*/true))
    return err;
  for (Architecture arch : kArchitectures) {
    if (name == architectureName(arch)) {
      out = arch;
      return Error::success();
    }
  }
  return reader.keyError("architecture", "unknown architecture '" + name +
                                             "' (supported: " +
                                             supportedArchitectures() + ")");
}

/// Keys of one family are errors in the configs of the others: a
/// `num_experts` in an on-device config is a mistake, not a no-op.
Error checkFamilyKeys(const ConfigReader &reader, Architecture arch) {
  auto owns = [](Architecture family, StringRef key) {
    return llvm::is_contained(familyKeys(family), key);
  };
  for (Architecture family : kArchitectures) {
    if (family == arch)
      continue;
    for (StringRef key : familyKeys(family)) {
      if (!reader.has(key) || owns(arch, key))
        continue;
      llvm::SmallVector<std::string> owners;
      for (Architecture owner : kArchitectures)
        if (owns(owner, key))
          owners.push_back(architectureName(owner).str());
      return reader.keyError(key, "only " + llvm::join(owners, " and ") +
                                      " configs have it, not " +
                                      architectureName(arch));
    }
  }
  if (arch != Architecture::Dense || reader.has("num_experts"))
    return Error::success();
  for (StringRef key : kDenseMoEKeys)
    if (reader.has(key))
      return reader.keyError(key, "an afm-dense config has MoE layers only "
                                  "when it gives num_experts");
  return Error::success();
}

/// Reads the string-valued compression keys; each names one of a few
/// choices, and any other value is an error listing them.
Error readCompressionChoices(const ConfigReader &reader, ModelConfig &config) {
  auto choose = [&](StringRef key, llvm::ArrayRef<StringRef> names,
                    auto assign) -> Error {
    std::string name;
    if (Error err = reader.readString(key, name, /*required=*/false))
      return err;
    if (name.empty() && !reader.has(key))
      return Error::success();
    for (auto [index, choice] : llvm::enumerate(names))
      if (name == choice) {
        assign(index);
        return Error::success();
      }
    return reader.keyError(key, "unknown value '" + name + "' (supported: " +
                                    llvm::join(names, ", ") + ")");
  };
  if (Error err = choose("linear_weight_format", {"f32", "q2", "astc"},
                         [&](size_t i) {
                           config.linearWeightFormat = LinearWeightFormat(i);
                         }))
    return err;
  if (Error err = choose("q2_scale", {"per_tensor", "per_channel"},
                         [&](size_t i) { config.q2PerChannel = i == 1; }))
    return err;
  if (Error err = choose("astc_offset", {"linear_segment", "min"},
                         [&](size_t i) { config.astcOffsetMin = i == 1; }))
    return err;
  if (Error err = choose("embedding_format", {"f32", "q4"}, [&](size_t i) {
        config.embeddingFormat = EmbeddingFormat(i);
      }))
    return err;
  if (Error err = choose("lm_head_format", {"f32", "q2", "astc"},
                         [&](size_t i) {
                           config.lmHeadFormat = LinearWeightFormat(i);
                         }))
    return err;
  if (Error err = choose("mlp_activation", {"silu", "gelu_tanh"},
                         [&](size_t i) {
                           config.mlpActivation = MLPActivation(i);
                         }))
    return err;
  if (Error err = choose("kv_cache_dtype", {"f32", "int8", "f16"},
                         [&](size_t i) {
                           config.kvCacheDType = KVCacheDType(i);
                         }))
    return err;
  return choose("linear_activations", {"f32", "int8"},
                [&](size_t i) { config.int8Activations = i == 1; });
}

/// Reads every key with its type; the defaults that depend on other keys
/// (`num_key_value_heads`, `head_dim`) are resolved by `resolveDefaults`.
Error readKeys(const ConfigReader &reader, ModelConfig &config) {
  Error err = readArchitecture(reader, config.architecture);
  if (err)
    return err;
  if ((err = checkFamilyKeys(reader, config.architecture)))
    return err;
  config.denseMoE = config.architecture == Architecture::Dense &&
                    reader.has("num_experts");
  // The AFM families default to the paper's attention pattern: three
  // local layers, then one NoPE global layer.
  if (config.architecture != Architecture::Dense) {
    config.localPerGlobal = 3;
    config.ropeInGlobalLayers = false;
  }
  struct IntKey {
    const char *key;
    int64_t *field;
    bool required;
  };
  const IntKey intKeys[] = {
      {"vocab_size", &config.vocabSize, true},
      {"hidden_size", &config.hiddenSize, true},
      {"intermediate_size", &config.intermediateSize, true},
      {"num_hidden_layers", &config.numHiddenLayers, true},
      {"num_attention_heads", &config.numAttentionHeads, true},
      {"num_key_value_heads", &config.numKeyValueHeads, false},
      {"head_dim", &config.headDim, false},
      {"max_position_embeddings", &config.maxPositionEmbeddings, false},
      {"sliding_window", &config.slidingWindow, false},
      {"local_per_global", &config.localPerGlobal, false},
      {"num_tracks", &config.numTracks, false},
      {"track_block_depth", &config.trackBlockDepth, false},
      {"num_experts", &config.numExperts, false},
      {"num_experts_per_tok", &config.numExpertsPerTok, false},
      {"moe_layer_interval", &config.moeLayerInterval, false},
      {"moe_intermediate_size", &config.moeIntermediateSize, false},
      {"embedding_group_size", &config.embeddingGroupSize, false},
      {"lora_rank", &config.loraRank, false},
  };
  for (const IntKey &k : intKeys)
    if ((err = reader.readInt(k.key, *k.field, k.required)))
      return err;
  if ((err = reader.readFloat("block1_fraction", config.block1Fraction)) ||
      (err = reader.readFloat("rms_norm_eps", config.rmsNormEps)) ||
      (err = reader.readFloat("rope_theta", config.ropeTheta)) ||
      (err = reader.readBool("tie_word_embeddings",
                             config.tieWordEmbeddings)) ||
      (err = reader.readBool("rope_in_global_layers",
                             config.ropeInGlobalLayers)) ||
      (err = reader.readBool("all_layers_local", config.allLayersLocal)) ||
      (err = reader.readBool("attention_bias", config.attentionBias)) ||
      (err = reader.readBool("attention_output_bias",
                             config.attentionOutputBias)) ||
      (err = reader.readBool("qk_norm", config.qkNorm)) ||
      (err = reader.readFloat("rms_norm_weight_offset",
                              config.rmsNormWeightOffset)) ||
      (err = reader.readBool("sandwich_norms", config.sandwichNorms)) ||
      (err = reader.readFloat("embedding_multiplier",
                              config.embeddingMultiplier)) ||
      (err = reader.readFloat("attention_scale", config.attentionScale)) ||
      (err = reader.readFloat("rope_local_theta", config.ropeLocalTheta)) ||
      (err = reader.readFloat("lora_alpha", config.loraAlpha)))
    return err;
  if (const json::Value *scaling = reader.get("rope_scaling"))
    if ((err = parseRopeScaling(*scaling, reader.origin(), config.ropeScaling)))
      return err;
  return readCompressionChoices(reader, config);
}

Error resolveDefaults(const ConfigReader &reader, ModelConfig &config) {
  if (!reader.has("num_key_value_heads"))
    config.numKeyValueHeads = config.numAttentionHeads;
  if (hasMoELayers(config) && !reader.has("moe_intermediate_size"))
    config.moeIntermediateSize = config.intermediateSize;
  // A non-positive H is reported by `validate`.
  if (!reader.has("head_dim") && config.numAttentionHeads > 0) {
    if (config.hiddenSize % config.numAttentionHeads != 0)
      return reader.keyError(
          "head_dim", llvm::formatv("not given, and its default hidden_size / "
                                    "num_attention_heads ({0} / {1}) is not "
                                    "an integer",
                                    config.hiddenSize,
                                    config.numAttentionHeads));
    config.headDim = config.hiddenSize / config.numAttentionHeads;
  }
  // 0 (or absent) means "the rank": the adapter's scale alpha/r is then 1.
  if (!reader.has("lora_alpha") || config.loraAlpha == 0.0)
    config.loraAlpha = static_cast<double>(config.loraRank);
  return Error::success();
}

/// The on-device checks: a valid fraction, and a source layer for every
/// Block-2 layer.
Error validateOnDevice(StringRef origin, const ModelConfig &config) {
  double fraction = config.block1Fraction;
  if (!(fraction > 0.0 && fraction <= 1.0))
    return keyError(origin, "block1_fraction",
                    "must be in (0, 1], got " + formatDouble(fraction));
  // Layer 0 is local whenever there are local layers, so only a global
  // Block-2 layer can lack a source: the first global layer at or after
  // Block 2's start, when Block 1 holds no global layer.
  int64_t block1 = block1Layers(config);
  if (config.localPerGlobal == 0 || block1 > config.localPerGlobal)
    return Error::success();
  int64_t firstGlobal = config.localPerGlobal; // In Block 2.
  if (firstGlobal < config.numHiddenLayers)
    return keyError(origin, "block1_fraction",
                    llvm::formatv("Block 1 (layers 0..{0}) has no global "
                                  "layer for the global Block-2 layer {1} to "
                                  "read",
                                  block1 - 1, firstGlobal));
  return Error::success();
}

/// k experts of E, and the experts of a layer within bounds.
Error validateExperts(StringRef origin, const ModelConfig &config) {
  if (config.numExpertsPerTok > config.numExperts)
    return keyError(origin, "num_experts_per_tok",
                    llvm::formatv("must be between 1 and num_experts ({0}), "
                                  "got {1}",
                                  config.numExperts, config.numExpertsPerTok));
  // Like the product of two sizes, the experts of one layer together
  // ([E, F_moe, d], stacked as the ONNX form takes them) must have fewer
  // than kMaxSize^2 elements.
  if (config.numExperts * config.moeIntermediateSize >
      kMaxSize * kMaxSize / config.hiddenSize)
    return keyError(origin, "num_experts",
                    llvm::formatv("the experts of a layer [{0}, {1}, {2}] "
                                  "have more than {3}^2 elements",
                                  config.numExperts,
                                  config.moeIntermediateSize,
                                  config.hiddenSize, kMaxSize));
  return Error::success();
}

/// The PT-MoE checks: tracks split the heads, blocks split the layers, and
/// the experts'.
Error validatePTMoE(StringRef origin, const ModelConfig &config) {
  int64_t n = config.numTracks;
  const std::pair<const char *, int64_t> headCounts[] = {
      {"num_attention_heads", config.numAttentionHeads},
      {"num_key_value_heads", config.numKeyValueHeads}};
  for (const auto &[key, heads] : headCounts)
    if (heads % n != 0)
      return keyError(origin, "num_tracks",
                      llvm::formatv("{0} does not divide {1} ({2})", n, key,
                                    heads));
  if (config.numHiddenLayers % config.trackBlockDepth != 0)
    return keyError(origin, "track_block_depth",
                    llvm::formatv("{0} does not divide num_hidden_layers ({1})",
                                  config.trackBlockDepth,
                                  config.numHiddenLayers));
  // KV caches are numbered t * L + i, like layers of a dense model.
  if (n * config.numHiddenLayers > kMaxSize)
    return keyError(origin, "num_tracks",
                    llvm::formatv("{0} tracks of {1} layers are more than {2} "
                                  "layers",
                                  n, config.numHiddenLayers, kMaxSize));
  return validateExperts(origin, config);
}
} // namespace

Error mlir::afm::validateModelConfig(const ModelConfig &config,
                                     StringRef origin) {
  struct SizeKey {
    const char *key;
    int64_t value;
    int64_t min;
  };
  llvm::SmallVector<SizeKey> sizes = {
      {"vocab_size", config.vocabSize, 1},
      {"hidden_size", config.hiddenSize, 1},
      {"intermediate_size", config.intermediateSize, 1},
      {"num_hidden_layers", config.numHiddenLayers, 1},
      {"num_attention_heads", config.numAttentionHeads, 1},
      {"num_key_value_heads", config.numKeyValueHeads, 1},
      {"head_dim", config.headDim, 1},
      {"max_position_embeddings", config.maxPositionEmbeddings, 1},
      {"sliding_window", config.slidingWindow, 1},
      {"local_per_global", config.localPerGlobal, 0},
  };
  if (config.architecture == Architecture::PTMoE)
    sizes.append({{"num_tracks", config.numTracks, 1},
                  {"track_block_depth", config.trackBlockDepth, 1}});
  if (hasMoELayers(config))
    sizes.append({{"num_experts", config.numExperts, 1},
                  {"num_experts_per_tok", config.numExpertsPerTok, 1},
                  {"moe_layer_interval", config.moeLayerInterval, 1},
                  {"moe_intermediate_size", config.moeIntermediateSize, 1}});
  for (const SizeKey &s : sizes) {
    if (s.value < s.min)
      return keyError(origin, s.key,
                      llvm::formatv("must be {0}, got {1}",
                                    s.min == 0 ? "non-negative" : "positive",
                                    s.value));
    if (s.value > kMaxSize)
      return keyError(origin, s.key,
                      llvm::formatv("{0} is larger than {1}", s.value,
                                    kMaxSize));
  }
  if (config.embeddingFormat == EmbeddingFormat::Q4 &&
      (config.embeddingGroupSize < 1 ||
       config.hiddenSize % config.embeddingGroupSize != 0))
    return keyError(origin, "embedding_group_size",
                    llvm::formatv("must be positive and divide hidden_size "
                                  "({0}), got {1}",
                                  config.hiddenSize,
                                  config.embeddingGroupSize));
  if (config.lmHeadFormat != LinearWeightFormat::F32 &&
      config.tieWordEmbeddings)
    return keyError(origin, "lm_head_format",
                    "applies to an untied LM head; a tied head is the "
                    "embedding table (embedding_format)");
  if (config.loraRank < 0 || config.loraRank > kMaxSize)
    return keyError(origin, "lora_rank",
                    llvm::formatv("must be non-negative, got {0}",
                                  config.loraRank));
  if (config.loraRank > 0 && config.linearWeightFormat == LinearWeightFormat::F32)
    return keyError(origin, "lora_rank",
                    "quality-recovery adapters need compressed linear "
                    "weights (linear_weight_format q2 or astc)");
  if (config.int8Activations &&
      config.linearWeightFormat == LinearWeightFormat::F32)
    return keyError(origin, "linear_activations",
                    "int8 activations need compressed linear weights "
                    "(linear_weight_format q2 or astc)");
  if (config.int8Activations && config.loraRank > 0)
    return keyError(origin, "linear_activations",
                    "int8 activations and quality-recovery adapters "
                    "(lora_rank > 0) do not combine: the adapter would "
                    "read the unrounded activations");
  if (config.loraRank > 0 && !(config.loraAlpha > 0.0 &&
                               std::isfinite(config.loraAlpha)))
    return keyError(origin, "lora_alpha",
                    "must be a positive finite number, got " +
                        formatDouble(config.loraAlpha));
  if (config.numAttentionHeads % config.numKeyValueHeads != 0)
    return keyError(
        origin, "num_key_value_heads",
        llvm::formatv("{0} does not divide num_attention_heads ({1})",
                      config.numKeyValueHeads, config.numAttentionHeads));
  if (config.headDim % 2 != 0)
    return keyError(
        origin, "head_dim",
        llvm::formatv("must be even (RoPE rotates pairs), got {0}",
                      config.headDim));
  const std::pair<const char *, double> positives[] = {
      {"rms_norm_eps", config.rmsNormEps}, {"rope_theta", config.ropeTheta}};
  for (const auto &[key, value] : positives)
    if (!(value > 0.0) || !std::isfinite(value))
      return keyError(origin, key,
                      "must be a positive finite number, got " +
                          formatDouble(value));
  // 0 means "not set" for these.
  const std::pair<const char *, double> optionalPositives[] = {
      {"attention_scale", config.attentionScale},
      {"rope_local_theta", config.ropeLocalTheta}};
  for (const auto &[key, value] : optionalPositives)
    if (value != 0.0 && (!(value > 0.0) || !std::isfinite(value)))
      return keyError(origin, key,
                      "must be a positive finite number (or 0 for the "
                      "default), got " +
                          formatDouble(value));
  const std::pair<const char *, double> finites[] = {
      {"rms_norm_weight_offset", config.rmsNormWeightOffset},
      {"embedding_multiplier", config.embeddingMultiplier}};
  for (const auto &[key, value] : finites)
    if (!std::isfinite(value))
      return keyError(origin, key,
                      "must be a finite number, got " + formatDouble(value));
  if (config.allLayersLocal && config.localPerGlobal != 0)
    return keyError(origin, "all_layers_local",
                    llvm::formatv("every layer local leaves no room for "
                                  "groups of local_per_global ({0}) local "
                                  "layers: set local_per_global to 0",
                                  config.localPerGlobal));
  const RopeScaling &scaling = config.ropeScaling;
  if (scaling.type != RopeScalingType::None &&
      !(scaling.factor > 0.0 && std::isfinite(scaling.factor)))
    return keyError(origin, "rope_scaling",
                    "'factor' must be a positive number, got " +
                        formatDouble(scaling.factor));
  if (scaling.type == RopeScalingType::Llama3 &&
      (!(scaling.lowFreqFactor > 0.0) ||
       !(scaling.highFreqFactor > scaling.lowFreqFactor) ||
       !std::isfinite(scaling.highFreqFactor) ||
       scaling.originalMaxPositionEmbeddings < 1))
    return keyError(origin, "rope_scaling",
                    llvm::formatv("llama3 needs 0 < low_freq_factor < "
                                  "high_freq_factor and "
                                  "original_max_position_embeddings >= 1, got "
                                  "{0}, {1}, {2}",
                                  formatDouble(scaling.lowFreqFactor),
                                  formatDouble(scaling.highFreqFactor),
                                  scaling.originalMaxPositionEmbeddings));
  switch (config.architecture) {
  case Architecture::Dense:
    return config.denseMoE ? validateExperts(origin, config)
                           : Error::success();
  case Architecture::OnDevice:
    return validateOnDevice(origin, config);
  case Architecture::PTMoE:
    return validatePTMoE(origin, config);
  }
  llvm_unreachable("unknown architecture");
}

Expected<ModelConfig> mlir::afm::parseModelConfig(StringRef json,
                                                  StringRef fileName) {
  Expected<json::Object> object = parseTopLevelObject(json, fileName);
  if (!object)
    return object.takeError();
  ConfigReader reader(*object, fileName);
  ModelConfig config;
  if (Error err = reader.checkNoUnknownKeys())
    return std::move(err);
  if (Error err = readKeys(reader, config))
    return std::move(err);
  if (Error err = resolveDefaults(reader, config))
    return std::move(err);
  if (Error err = validateModelConfig(config, fileName))
    return std::move(err);
  return config;
}

Expected<ModelConfig> mlir::afm::loadModelConfig(StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return llvm::createStringError(path + ": cannot read: " +
                                   buffer.getError().message());
  return parseModelConfig((*buffer)->getBuffer(), path);
}

bool mlir::afm::isLocalLayer(const ModelConfig &config, int64_t layer) {
  if (config.allLayersLocal)
    return true;
  if (config.localPerGlobal == 0)
    return false;
  return layer % (config.localPerGlobal + 1) < config.localPerGlobal;
}

bool mlir::afm::usesRope(const ModelConfig &config, int64_t layer) {
  return isLocalLayer(config, layer) || config.ropeInGlobalLayers;
}

bool mlir::afm::roundsQueryToInt8(const ModelConfig &config) {
  return config.int8Activations && config.kvCacheDType == KVCacheDType::Int8;
}

int64_t mlir::afm::block1Layers(const ModelConfig &config) {
  int64_t layers = config.numHiddenLayers;
  if (config.architecture != Architecture::OnDevice)
    return layers;
  // 1e-6 absorbs the rounding of a decimal fraction times L (< 2^31), so
  // that 0.1 * 30 gives 3, not 4.
  double exact = config.block1Fraction * static_cast<double>(layers);
  int64_t count = static_cast<int64_t>(std::ceil(exact - 1e-6));
  return std::clamp<int64_t>(count, 1, layers);
}

bool mlir::afm::isBlock2Layer(const ModelConfig &config, int64_t layer) {
  return config.architecture == Architecture::OnDevice &&
         layer >= block1Layers(config);
}

int64_t mlir::afm::kvSourceLayer(const ModelConfig &config, int64_t layer) {
  if (!isBlock2Layer(config, layer))
    return layer;
  int64_t last = block1Layers(config) - 1;
  if (config.localPerGlobal == 0)
    return last; // Every layer is global.
  int64_t period = config.localPerGlobal + 1;
  if (isLocalLayer(config, layer))
    // Global layers stand alone, so one of the last two layers is local.
    return isLocalLayer(config, last) ? last : last - 1;
  // The last j <= last with j % period == localPerGlobal.
  if (last < config.localPerGlobal)
    return -1;
  return last - (last - config.localPerGlobal) % period;
}

llvm::Expected<ModelConfig>
mlir::afm::earlyExitConfig(const ModelConfig &config, int64_t layers) {
  int64_t total = config.numHiddenLayers;
  if (layers < 1 || layers >= total)
    return llvm::createStringError(llvm::formatv(
        "an early-exit draft keeps 1 to {0} of the model's {1} layers, not "
        "{2}",
        total - 1, total, layers));
  ModelConfig draft = config;
  draft.numHiddenLayers = layers;
  if (config.architecture == Architecture::OnDevice) {
    // Block-2 layers read caches by a rule that depends on the layer
    // count; the first Block-1 layers compute the same alone.
    if (layers > block1Layers(config))
      return llvm::createStringError(llvm::formatv(
          "an early-exit draft of an afm-on-device model keeps Block-1 "
          "layers only: at most {0}, not {1}",
          block1Layers(config), layers));
    draft.block1Fraction = 1.0;
  }
  if (config.architecture == Architecture::PTMoE &&
      layers % config.trackBlockDepth != 0)
    return llvm::createStringError(llvm::formatv(
        "an early-exit draft of an afm-pt-moe model keeps whole track "
        "blocks: a multiple of track_block_depth {0}, not {1}",
        config.trackBlockDepth, layers));
  return draft;
}

bool mlir::afm::hasMoELayers(const ModelConfig &config) {
  return config.architecture == Architecture::PTMoE ||
         (config.architecture == Architecture::Dense && config.denseMoE);
}

bool mlir::afm::isMoELayer(const ModelConfig &config, int64_t layerOfTrack) {
  return hasMoELayers(config) &&
         layerOfTrack % config.moeLayerInterval ==
             config.moeLayerInterval - 1;
}

int64_t mlir::afm::trackCount(const ModelConfig &config) {
  return config.architecture == Architecture::PTMoE ? config.numTracks : 1;
}

int64_t mlir::afm::kvCacheIndex(const ModelConfig &config, int64_t track,
                                int64_t layer) {
  return track * config.numHiddenLayers + layer;
}

std::string mlir::afm::toJSON(const ModelConfig &config) {
  std::string text;
  llvm::raw_string_ostream os(text);
  json::OStream out(os, /*IndentSize=*/2);
  // Floats are written so that they read back exactly.
  auto writeFloat = [&](llvm::StringRef key, double value) {
    out.attributeBegin(key);
    out.rawValue(formatDouble(value));
    out.attributeEnd();
  };
  out.object([&] {
    out.attribute("architecture", architectureName(config.architecture));
    out.attribute("vocab_size", config.vocabSize);
    out.attribute("hidden_size", config.hiddenSize);
    out.attribute("intermediate_size", config.intermediateSize);
    out.attribute("num_hidden_layers", config.numHiddenLayers);
    out.attribute("num_attention_heads", config.numAttentionHeads);
    out.attribute("num_key_value_heads", config.numKeyValueHeads);
    out.attribute("head_dim", config.headDim);
    writeFloat("rms_norm_eps", config.rmsNormEps);
    writeFloat("rope_theta", config.ropeTheta);
    out.attribute("max_position_embeddings", config.maxPositionEmbeddings);
    out.attribute("tie_word_embeddings", config.tieWordEmbeddings);
    out.attribute("sliding_window", config.slidingWindow);
    out.attribute("local_per_global", config.localPerGlobal);
    out.attribute("rope_in_global_layers", config.ropeInGlobalLayers);
    // Printed only when set, so that configs from before these keys print
    // as they did.
    if (config.allLayersLocal)
      out.attribute("all_layers_local", true);
    const RopeScaling &scaling = config.ropeScaling;
    if (scaling.type != RopeScalingType::None)
      out.attributeObject("rope_scaling", [&] {
        bool llama3 = scaling.type == RopeScalingType::Llama3;
        out.attribute("rope_type", llama3 ? "llama3" : "linear");
        writeFloat("factor", scaling.factor);
        if (!llama3)
          return;
        writeFloat("low_freq_factor", scaling.lowFreqFactor);
        writeFloat("high_freq_factor", scaling.highFreqFactor);
        out.attribute("original_max_position_embeddings",
                      scaling.originalMaxPositionEmbeddings);
      });
    if (config.attentionBias)
      out.attribute("attention_bias", true);
    if (config.attentionOutputBias)
      out.attribute("attention_output_bias", true);
    if (config.qkNorm)
      out.attribute("qk_norm", true);
    if (config.rmsNormWeightOffset != 0.0)
      writeFloat("rms_norm_weight_offset", config.rmsNormWeightOffset);
    if (config.sandwichNorms)
      out.attribute("sandwich_norms", true);
    if (config.mlpActivation != MLPActivation::SiLU)
      out.attribute("mlp_activation", "gelu_tanh");
    if (config.embeddingMultiplier != 1.0)
      writeFloat("embedding_multiplier", config.embeddingMultiplier);
    if (config.attentionScale != 0.0)
      writeFloat("attention_scale", config.attentionScale);
    if (config.ropeLocalTheta != 0.0)
      writeFloat("rope_local_theta", config.ropeLocalTheta);
    switch (config.architecture) {
    case Architecture::Dense:
      if (!config.denseMoE)
        break;
      [[fallthrough]];
    case Architecture::PTMoE:
      if (config.architecture == Architecture::PTMoE) {
        out.attribute("num_tracks", config.numTracks);
        out.attribute("track_block_depth", config.trackBlockDepth);
      }
      out.attribute("num_experts", config.numExperts);
      out.attribute("num_experts_per_tok", config.numExpertsPerTok);
      out.attribute("moe_layer_interval", config.moeLayerInterval);
      out.attribute("moe_intermediate_size", config.moeIntermediateSize);
      break;
    case Architecture::OnDevice:
      writeFloat("block1_fraction", config.block1Fraction);
      break;
    }
    const char *linearFormats[] = {"f32", "q2", "astc"};
    out.attribute("linear_weight_format",
                  linearFormats[int(config.linearWeightFormat)]);
    out.attribute("q2_scale", config.q2PerChannel ? "per_channel" : "per_tensor");
    out.attribute("astc_offset", config.astcOffsetMin ? "min" : "linear_segment");
    out.attribute("embedding_format",
                  config.embeddingFormat == EmbeddingFormat::Q4 ? "q4" : "f32");
    out.attribute("embedding_group_size", config.embeddingGroupSize);
    out.attribute("lm_head_format", linearFormats[int(config.lmHeadFormat)]);
    constexpr const char *kvCacheDTypes[] = {"f32", "int8", "f16"};
    out.attribute("kv_cache_dtype", kvCacheDTypes[int(config.kvCacheDType)]);
    out.attribute("linear_activations",
                  config.int8Activations ? "int8" : "f32");
    out.attribute("lora_rank", config.loraRank);
    writeFloat("lora_alpha", config.loraAlpha);
  });
  os << "\n";
  return text;
}

Error mlir::afm::parseRopeScaling(const json::Value &value, StringRef origin,
                                  RopeScaling &out) {
  out = RopeScaling();
  if (value.kind() == json::Value::Null)
    return Error::success();
  auto fail = [&](const llvm::Twine &message) {
    return keyError(origin, "rope_scaling", message);
  };
  const json::Object *object = value.getAsObject();
  if (!object)
    return fail("expected null or an object");
  // transformers reads `rope_type`, and `type` in older configs.
  const json::Value *typeValue = object->get("rope_type");
  if (!typeValue)
    typeValue = object->get("type");
  std::optional<StringRef> type =
      typeValue ? typeValue->getAsString() : std::nullopt;
  if (!type)
    return fail("expected a string 'rope_type' (or 'type')");
  llvm::SmallVector<StringRef> allowed = {"rope_type", "type"};
  if (*type == "default") {
    out.type = RopeScalingType::None;
  } else if (*type == "linear") {
    out.type = RopeScalingType::Linear;
    allowed.push_back("factor");
  } else if (*type == "llama3") {
    out.type = RopeScalingType::Llama3;
    allowed.append({"factor", "low_freq_factor", "high_freq_factor",
                    "original_max_position_embeddings"});
  } else {
    return fail("rope type '" + *type +
                "' is not supported (supported: default, linear, llama3): "
                "it changes the attention math");
  }
  for (const auto &entry : *object)
    if (!llvm::is_contained(allowed, StringRef(entry.first)))
      return fail("unknown key '" + StringRef(entry.first) + "' for rope type '" +
                  *type + "'");
  auto number = [&](StringRef key, double &field) -> Error {
    const json::Value *v = object->get(key);
    if (!v)
      return fail("rope type '" + *type + "' needs '" + key + "'");
    std::optional<double> d = v->getAsNumber();
    if (!d || !std::isfinite(*d) || *d <= 0.0)
      return fail("'" + key + "' must be a positive number");
    field = *d;
    return Error::success();
  };
  if (out.type == RopeScalingType::None)
    return Error::success();
  if (Error err = number("factor", out.factor))
    return err;
  if (out.type == RopeScalingType::Linear)
    return Error::success();
  double original = 0.0;
  if (Error err = number("low_freq_factor", out.lowFreqFactor))
    return err;
  if (Error err = number("high_freq_factor", out.highFreqFactor))
    return err;
  if (Error err = number("original_max_position_embeddings", original))
    return err;
  if (original != std::floor(original) || original > kMaxSize)
    return fail("'original_max_position_embeddings' must be an integer");
  out.originalMaxPositionEmbeddings = static_cast<int64_t>(original);
  return Error::success();
}

ModelConfig mlir::afm::ropeConfigOfLayer(const ModelConfig &config,
                                         int64_t layer) {
  ModelConfig rope = config;
  if (config.ropeLocalTheta != 0.0 && isLocalLayer(config, layer)) {
    rope.ropeTheta = config.ropeLocalTheta;
    rope.ropeScaling = RopeScaling();
  }
  return rope;
}

std::vector<double> mlir::afm::ropeInverseFrequencies(const ModelConfig &config) {
  int64_t half = config.headDim / 2;
  const RopeScaling &s = config.ropeScaling;
  std::vector<double> invFreq(half);
  for (int64_t i = 0; i < half; ++i) {
    double f = std::pow(config.ropeTheta,
                        -2.0 * double(i) / double(config.headDim));
    switch (s.type) {
    case RopeScalingType::None:
      break;
    case RopeScalingType::Linear:
      f /= s.factor;
      break;
    case RopeScalingType::Llama3: {
      double old = double(s.originalMaxPositionEmbeddings);
      double wavelength = 2.0 * M_PI / f;
      if (wavelength > old / s.lowFreqFactor) {
        f /= s.factor;
      } else if (!(wavelength < old / s.highFreqFactor)) {
        double smooth = (old / wavelength - s.lowFreqFactor) /
                        (s.highFreqFactor - s.lowFreqFactor);
        f = (1.0 - smooth) * f / s.factor + smooth * f;
      }
      break;
    }
    }
    invFreq[i] = f;
  }
  return invFreq;
}
