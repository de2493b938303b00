//===- PEFTAdapter.cpp - LoRA adapters in PEFT's folder layout ------------===//
//
// adapter_config.json is read after PEFT's LoraConfig: `r` and `lora_alpha`
// default to its 8 and 8; `target_modules` is a list of module names, each
// matching a module whose dotted path is it or ends in "." + it, or one
// string, which PEFT full-matches as a regular expression against the
// module paths (here with llvm::Regex, extended POSIX syntax). The modules
// a config targets are matched against every linear module of the model;
// only attention projections may match. Which projections are adapted is
// then fixed, and adapter_model.safetensors must hold exactly their A and B
// factors: the file is the ground truth that the config is checked
// against, so an adapter saved for another model or layout is refused
// rather than half applied.
//
//===----------------------------------------------------------------------===//

#include "afm/Model/PEFTAdapter.h"

#include "afm/Model/BoundedJSON.h"
#include "afm/Model/ModelWeights.h"
#include "afm/Model/Random.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <optional>

using namespace mlir::afm;
using llvm::Error;
using llvm::Expected;
using llvm::StringRef;
namespace json = llvm::json;

static constexpr StringRef kKeyPrefix = "base_model.model.";
static constexpr StringRef kASuffix = ".lora_A.weight";
static constexpr StringRef kBSuffix = ".lora_B.weight";
/// The largest rank accepted (the paper's adapters have rank 32).
static constexpr int64_t kMaxRank = 256;

std::string mlir::afm::peftLoRAKey(StringRef weightName, bool isA) {
  StringRef module = weightName;
  module.consume_back(".weight");
  return (kKeyPrefix + module + (isA ? kASuffix : kBSuffix)).str();
}

namespace {

/// What a key of adapter_config.json is to the loader.
enum class Role {
  /// Read, or checked to have the only value that the loader implements.
  Honoured,
  /// Only matters for training, initialisation or bookkeeping, never for
  /// what a saved adapter computes.
  Irrelevant,
};

/// Every key of PEFT's LoraConfig (and PeftConfig) as saved by
/// save_pretrained.
constexpr std::pair<const char *, Role> kKeys[] = {
    {"r", Role::Honoured},
    {"lora_alpha", Role::Honoured},
    {"target_modules", Role::Honoured},
    {"use_rslora", Role::Honoured},
    {"peft_type", Role::Honoured},
    {"bias", Role::Honoured},
    {"fan_in_fan_out", Role::Honoured},
    {"use_dora", Role::Honoured},
    {"rank_pattern", Role::Honoured},
    {"alpha_pattern", Role::Honoured},
    {"modules_to_save", Role::Honoured},
    {"layers_to_transform", Role::Honoured},
    {"layers_pattern", Role::Honoured},
    {"layer_replication", Role::Honoured},
    {"exclude_modules", Role::Honoured},
    {"lora_bias", Role::Honoured},
    {"init_lora_weights", Role::Honoured},
    {"target_parameters", Role::Honoured},
    {"trainable_token_indices", Role::Honoured},
    {"use_qalora", Role::Honoured},
    {"alora_invocation_tokens", Role::Honoured},
    {"arrow_config", Role::Honoured},
    {"base_model_name_or_path", Role::Irrelevant},
    {"revision", Role::Irrelevant},
    {"task_type", Role::Irrelevant},
    {"inference_mode", Role::Irrelevant},
    {"lora_dropout", Role::Irrelevant},
    {"peft_version", Role::Irrelevant},
    {"auto_mapping", Role::Irrelevant},
    {"megatron_config", Role::Irrelevant},
    {"megatron_core", Role::Irrelevant},
    {"loftq_config", Role::Irrelevant},
    {"eva_config", Role::Irrelevant},
    {"corda_config", Role::Irrelevant},
    {"runtime_config", Role::Irrelevant},
    {"qalora_group_size", Role::Irrelevant},
    {"ensure_weight_tying", Role::Irrelevant},
};

/// A linear module of the model (a 2-D weight), by its dotted path.
struct Module {
  /// "model.layers.3.self_attn.q_proj".
  std::string path;
  /// Our weight name, `path` + ".weight".
  std::string weight;
  /// The decoder layer (of its track), -1 outside the layers.
  int64_t layer = -1;
  /// Whether it is one of the attention projections q/k/v/o.
  bool attention = false;
  int64_t outFeatures = 0, inFeatures = 0;
};

/// Every linear module of `config` in `expectedTensors` order, so that the
/// attention projections come layer by layer, q, k, v, o.
std::vector<Module> linearModules(const ModelConfig &config) {
  llvm::StringMap<int64_t> attentionLayer;
  for (int64_t t = 0; t < trackCount(config); ++t)
    for (int64_t i = 0; i < config.numHiddenLayers; ++i) {
      LayerTensorNames names = config.architecture == Architecture::PTMoE
                                   ? trackLayerTensorNames(t, i)
                                   : layerTensorNames(i);
      for (const std::string *name :
           {&names.qProj, &names.kProj, &names.vProj, &names.oProj})
        attentionLayer[*name] = i;
    }
  std::vector<Module> modules;
  for (const ExpectedTensor &tensor : expectedTensors(config)) {
    StringRef name = tensor.name;
    if (tensor.shape.size() != 2 || !name.ends_with(".weight"))
      continue;
    Module m;
    m.weight = tensor.name;
    m.path = name.drop_back(StringRef(".weight").size()).str();
    auto it = attentionLayer.find(name);
    m.attention = it != attentionLayer.end();
    m.layer = m.attention ? it->second : -1;
    m.outFeatures = tensor.shape[0];
    m.inFeatures = tensor.shape[1];
    modules.push_back(std::move(m));
  }
  return modules;
}

/// adapter_config.json, read.
struct AdapterSettings {
  int64_t rank = 8;
  double alpha = 8.0;
  bool useRslora = false;
  /// `target_modules` as a list, or as one regular expression.
  std::vector<std::string> targetList;
  std::optional<std::string> targetRegex;
  /// `layers_to_transform`; empty means every layer.
  std::vector<int64_t> layers;
};

class ConfigReader : public JSONKeyReader {
public:
  using JSONKeyReader::JSONKeyReader;

  /// Whether `key` is absent, null, or an empty list, object or string.
  bool isEmpty(StringRef key) const {
    const json::Value *v = get(key);
    if (!v || v->kind() == json::Value::Null)
      return true;
    if (const json::Array *a = v->getAsArray())
      return a->empty();
    if (const json::Object *o = v->getAsObject())
      return o->empty();
    if (std::optional<StringRef> s = v->getAsString())
      return s->empty();
    return false;
  }

  /// `key`, when present and not null, must be `supported`.
  Error require(StringRef key, const json::Value &supported,
                StringRef why) const {
    const json::Value *v = get(key);
    if (!v || v->kind() == json::Value::Null || *v == supported)
      return Error::success();
    return keyError(key, "value " + describeJSON(*v) +
                             " is not supported (only " +
                             describeJSON(supported) + "): " + why);
  }

  /// `key` must be absent, null or empty.
  Error requireEmpty(StringRef key, StringRef why) const {
    if (isEmpty(key))
      return Error::success();
    return keyError(key, "must be null or empty, got " +
                             describeJSON(*get(key)) + ": " + why);
  }

  Error read(AdapterSettings &out) const;

private:
  Error readTargets(AdapterSettings &out) const;
  Error readLayers(AdapterSettings &out) const;
  Error readInit() const;
};

Error ConfigReader::read(AdapterSettings &out) const {
  llvm::SmallVector<StringRef> keys;
  for (const auto &entry : object)
    keys.push_back(entry.first);
  llvm::sort(keys);
  for (StringRef key : keys)
    if (llvm::none_of(kKeys, [&](const auto &k) { return key == k.first; }))
      return keyError(key, "unknown key of a LoRA adapter config: the loader "
                           "does not know whether it changes the adapter");

  if (const json::Value *v = get("r")) {
    std::optional<int64_t> r = v->getAsInteger();
    if (!r || *r < 1 || *r > kMaxRank)
      return keyError("r", llvm::formatv("the rank must be an integer "
                                         "between 1 and {0}, got {1}",
                                         kMaxRank, describeJSON(*v)));
    out.rank = *r;
  }
  if (const json::Value *v = get("lora_alpha")) {
    std::optional<double> alpha = v->getAsNumber();
    if (!alpha || !(*alpha > 0.0) || !std::isfinite(*alpha))
      return keyError("lora_alpha", "expected a positive finite number, got " +
                                        describeJSON(*v));
    out.alpha = *alpha;
  }
  if (const json::Value *v = get("use_rslora");
      v && v->kind() != json::Value::Null) {
    std::optional<bool> b = v->getAsBoolean();
    if (!b)
      return keyError("use_rslora", "expected true or false, got " +
                                        describeJSON(*v));
    out.useRslora = *b;
  }
  struct Fixed {
    const char *key;
    json::Value value;
    const char *why;
  };
  const Fixed fixed[] = {
      {"peft_type", "LORA", "only LoRA adapters are supported"},
      {"bias", "none", "the adapter must not train bias vectors"},
      {"fan_in_fan_out", false,
       "the factors are stored transposed (Conv1D-style layers)"},
      {"use_dora", false,
       "DoRA rescales each output column by a learned magnitude"},
      {"lora_bias", false, "the B factor must not have a bias"},
      {"use_qalora", false, "QA-LoRA pools the adapter's input"},
  };
  for (const Fixed &f : fixed)
    if (Error err = require(f.key, f.value, f.why))
      return err;
  struct MustBeEmpty {
    const char *key;
    const char *why;
  };
  const MustBeEmpty empty[] = {
      {"rank_pattern", "every projection must have the rank r"},
      {"alpha_pattern", "every projection must have the alpha lora_alpha"},
      {"modules_to_save", "fully trained copies of modules are not supported"},
      {"layer_replication", "the adapter must not duplicate layers"},
      {"exclude_modules", "exclusions are not supported"},
      {"target_parameters", "only linear modules can be adapted"},
      {"trainable_token_indices",
       "trained embedding rows are not supported"},
      {"alora_invocation_tokens",
       "activated LoRA (adapting only the tokens after an invocation) is not "
       "supported"},
      {"arrow_config", "Arrow routing between adapters is not supported"},
  };
  for (const MustBeEmpty &e : empty)
    if (Error err = requireEmpty(e.key, e.why))
      return err;
  if (Error err = readInit())
    return err;
  if (Error err = readLayers(out))
    return err;
  return readTargets(out);
}

Error ConfigReader::readInit() const {
  const json::Value *v = get("init_lora_weights");
  if (!v || v->kind() == json::Value::Null || v->getAsBoolean())
    return Error::success();
  std::optional<StringRef> init = v->getAsString();
  if (init && llvm::is_contained({"gaussian", "eva", "orthogonal"}, *init))
    return Error::success();
  if (init && (init->starts_with("pissa") || init->starts_with("olora") ||
               init->starts_with("corda") || *init == "loftq"))
    return keyError("init_lora_weights",
                    "value " + describeJSON(*v) +
                        " is not supported: this initialisation changes the "
                        "base weights, so the adapter only fits the modified "
                        "base (save it converted to a plain LoRA adapter)");
  return keyError("init_lora_weights",
                  "expected true, false, \"gaussian\", \"eva\" or "
                  "\"orthogonal\", got " +
                      describeJSON(*v));
}

Error ConfigReader::readLayers(AdapterSettings &out) const {
  if (const json::Value *v = get("layers_to_transform");
      v && v->kind() != json::Value::Null) {
    std::optional<std::vector<int64_t>> layers = indexOrIndexList(*v);
    if (!layers)
      return keyError("layers_to_transform",
                      "expected a layer index, a list of them or null, got " +
                          describeJSON(*v));
    if (layers->empty())
      return keyError("layers_to_transform", "an empty list selects no layer");
    out.layers = std::move(*layers);
  }
  // The layers of every model here are a module list called "layers".
  if (const json::Value *v = get("layers_pattern");
      v && v->kind() != json::Value::Null) {
    std::optional<StringRef> s = v->getAsString();
    const json::Array *list = v->getAsArray();
    bool layers = (s && *s == "layers") ||
                  (list && list->size() == 1 &&
                   (*list)[0].getAsString() == StringRef("layers"));
    if (!layers)
      return keyError("layers_pattern",
                      "only null or \"layers\" is supported, got " +
                          describeJSON(*v));
  }
  return Error::success();
}

Error ConfigReader::readTargets(AdapterSettings &out) const {
  const json::Value *v = get("target_modules");
  if (!v || v->kind() == json::Value::Null)
    return llvm::createStringError(
        fileName + ": missing required key 'target_modules' (the projections "
                   "the adapter applies to, e.g. [\"q_proj\", \"v_proj\"])");
  if (std::optional<StringRef> s = v->getAsString()) {
    if (*s == "all-linear")
      return keyError("target_modules",
                      "\"all-linear\" also adapts the MLP: only the "
                      "attention projections q_proj, k_proj, v_proj and "
                      "o_proj can be adapted");
    // One of the four names is taken as that name, not as the regular
    // expression (which would match no full module path).
    if (llvm::is_contained(kPEFTTargetModules, *s))
      out.targetList.push_back(s->str());
    else
      out.targetRegex = s->str();
    return Error::success();
  }
  const json::Array *list = v->getAsArray();
  if (!list || list->empty())
    return keyError("target_modules",
                    "expected a non-empty list of module names or a string, "
                    "got " + describeJSON(*v));
  for (const json::Value &e : *list) {
    std::optional<StringRef> s = e.getAsString();
    if (!s)
      return keyError("target_modules",
                      "expected module names, got " + describeJSON(e));
    StringRef last = s->rsplit('.').second.empty() ? *s : s->rsplit('.').second;
    if (!llvm::is_contained(kPEFTTargetModules, last))
      return keyError("target_modules",
                      "module '" + *s +
                          "' cannot be adapted: only the attention "
                          "projections q_proj, k_proj, v_proj and o_proj "
                          "can be adapted");
    out.targetList.push_back(s->str());
  }
  return Error::success();
}

/// PEFT's match of a list entry: the module path is it or ends in "." + it.
bool matchesName(StringRef path, StringRef target) {
  return path == target ||
         (path.ends_with(target) &&
          path.drop_back(target.size()).ends_with("."));
}

/// The modules `settings` adapts, as flags over `modules`.
Expected<std::vector<bool>> adaptedModules(const AdapterSettings &settings,
                                           llvm::ArrayRef<Module> modules,
                                           const ModelConfig &config,
                                           StringRef fileName) {
  auto keyError = [&](StringRef key, const llvm::Twine &message) {
    return llvm::createStringError(
        llvm::formatv("{0}: key '{1}': {2}", fileName, key, message.str())
            .str());
  };
  for (int64_t layer : settings.layers)
    if (layer >= config.numHiddenLayers)
      return keyError("layers_to_transform",
                      llvm::formatv("layer {0} does not exist: the model "
                                    "has {1} layers",
                                    layer, config.numHiddenLayers));
  std::vector<bool> matched(modules.size(), false);
  if (settings.targetRegex) {
    llvm::Regex regex("^(" + *settings.targetRegex + ")$");
    std::string why;
    if (!regex.isValid(why))
      return keyError("target_modules",
                      "invalid regular expression \"" +
                          *settings.targetRegex + "\": " + why);
    for (size_t i = 0; i < modules.size(); ++i)
      matched[i] = regex.match(modules[i].path);
    if (llvm::none_of(matched, [](bool b) { return b; }))
      return keyError("target_modules",
                      "the regular expression \"" + *settings.targetRegex +
                          "\" matches no module of this model");
  }
  for (const std::string &target : settings.targetList) {
    bool any = false;
    for (size_t i = 0; i < modules.size(); ++i)
      if (matchesName(modules[i].path, target))
        matched[i] = any = true;
    if (!any)
      return keyError("target_modules", "module '" + target +
                                            "' matches no module of this "
                                            "model");
  }
  for (size_t i = 0; i < modules.size(); ++i) {
    if (!matched[i])
      continue;
    if (!modules[i].attention)
      return keyError("target_modules",
                      "it selects '" + modules[i].path +
                          "': only the attention projections q_proj, "
                          "k_proj, v_proj and o_proj can be adapted");
    if (!settings.layers.empty() &&
        !llvm::is_contained(settings.layers, modules[i].layer))
      matched[i] = false;
  }
  return matched;
}

} // namespace

Expected<LoRAAdapter>
mlir::afm::parsePEFTAdapter(StringRef configJSON, StringRef configName,
                            const SafeTensorsFile &weights,
                            const ModelConfig &config) {
  Expected<json::Object> object = parseTopLevelObject(configJSON, configName);
  if (!object)
    return object.takeError();
  AdapterSettings settings;
  if (Error err = ConfigReader(*object, configName).read(settings))
    return std::move(err);
  std::vector<Module> modules = linearModules(config);
  Expected<std::vector<bool>> adapted =
      adaptedModules(settings, modules, config, configName);
  if (!adapted)
    return adapted.takeError();

  StringRef file = weights.path();
  auto tensorError = [&](StringRef name, const llvm::Twine &message) {
    return llvm::createStringError(
        llvm::formatv("{0}: tensor '{1}': {2}", file, name, message.str())
            .str());
  };
  llvm::StringMap<size_t> byPath;
  for (size_t i = 0; i < modules.size(); ++i)
    byPath[modules[i].path] = i;
  // Every tensor must be a factor of an adapted projection.
  for (const TensorInfo &tensor : weights.tensors()) {
    StringRef name = tensor.name, path = name;
    bool isA = path.consume_back(kASuffix);
    if (!isA && !path.consume_back(kBSuffix))
      return tensorError(name, "not a LoRA factor (expected "
                               "base_model.model.<module>.lora_A.weight or "
                               ".lora_B.weight)");
    if (!path.consume_front(kKeyPrefix))
      return tensorError(name, "expected the prefix 'base_model.model.'");
    auto it = byPath.find(path);
    if (it == byPath.end() || !modules[it->second].attention)
      return tensorError(name, "adapts no attention projection (q_proj, "
                               "k_proj, v_proj, o_proj) of this model");
    if (!(*adapted)[it->second])
      return tensorError(name,
                         "adapts '" + path +
                             "', which target_modules (and "
                             "layers_to_transform) of " +
                             configName + " do not select");
  }

  LoRAAdapter adapter;
  adapter.rank = settings.rank;
  adapter.alpha = settings.alpha;
  adapter.scale = settings.useRslora
                      ? settings.alpha / std::sqrt(double(settings.rank))
                      : settings.alpha / double(settings.rank);
  int64_t r = settings.rank;
  for (size_t i = 0; i < modules.size(); ++i) {
    if (!(*adapted)[i])
      continue;
    const Module &m = modules[i];
    std::string keyA = peftLoRAKey(m.weight, true);
    std::string keyB = peftLoRAKey(m.weight, false);
    const TensorInfo *a = weights.lookup(keyA);
    const TensorInfo *b = weights.lookup(keyB);
    if (!a && !b)
      return llvm::createStringError(
          llvm::formatv("{0}: no tensors for '{1}' (layer {2}), which "
                        "target_modules of {3} selects: expected '{4}' and "
                        "'{5}'",
                        file, m.path, m.layer, configName, keyA, keyB)
              .str());
    if (!a || !b)
      return tensorError(a ? keyA : keyB,
                         llvm::formatv("has no {0} factor '{1}'",
                                       a ? "lora_B" : "lora_A",
                                       a ? keyB : keyA));
    auto checkShape = [&](const TensorInfo &t,
                          std::vector<int64_t> expected) -> Error {
      if (t.shape == expected)
        return Error::success();
      return tensorError(t.name,
                         llvm::formatv("shape {0}, expected {1} ({2} [{3}] "
                                       "with r = {4}, in = {5}, out = {6})",
                                       formatShape(t.shape),
                                       formatShape(expected),
                                       &t == a ? "A" : "B",
                                       &t == a ? "r, in" : "out, r", r,
                                       m.inFeatures, m.outFeatures));
    };
    if (Error err = checkShape(*a, {r, m.inFeatures}))
      return std::move(err);
    if (Error err = checkShape(*b, {m.outFeatures, r}))
      return std::move(err);
    LoRATensorPair pair;
    pair.weightName = m.weight;
    pair.inFeatures = m.inFeatures;
    pair.outFeatures = m.outFeatures;
    pair.a = weights.toF32(*a);
    pair.b = weights.toF32(*b);
    for (const auto &[t, values] : {std::pair{a, &pair.a},
                                    std::pair{b, &pair.b}})
      for (size_t k = 0; k < values->size(); ++k)
        if (!std::isfinite((*values)[k]))
          return tensorError(t->name,
                             llvm::formatv("element {0} is not finite ({1})",
                                           k, (*values)[k]));
    for (float &x : pair.b)
      x = static_cast<float>(double(x) * adapter.scale);
    adapter.pairs.push_back(std::move(pair));
  }
  return adapter;
}

Expected<LoRAAdapter> mlir::afm::loadPEFTAdapter(StringRef dir,
                                                 const ModelConfig &config) {
  if (!llvm::sys::fs::is_directory(dir))
    return llvm::createStringError(
        dir + ": not an adapter folder (a directory with " + kPEFTConfigName +
        " and " + kPEFTWeightsName + ")");
  auto inFolder = [&](StringRef name) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, name);
    return path.str().str();
  };
  std::string configPath = inFolder(kPEFTConfigName);
  Expected<std::string> text = readConfigText(configPath);
  if (!text)
    return text.takeError();
  std::string weightsPath = inFolder(kPEFTWeightsName);
  if (!llvm::sys::fs::exists(weightsPath))
    return llvm::createStringError(weightsPath + ": no such file (an adapter "
                                                 "saved as .bin is not "
                                                 "supported)");
  Expected<SafeTensorsFile> weights = SafeTensorsFile::open(weightsPath);
  if (!weights)
    return weights.takeError();
  return parsePEFTAdapter(*text, configPath, *weights, config);
}

Expected<PEFTAdapterFiles>
mlir::afm::makeExampleAdapter(const ModelConfig &config,
                              const ExampleAdapterOptions &options) {
  if (options.rank < 1 || options.rank > kMaxRank)
    return llvm::createStringError(llvm::formatv(
        "adapter rank {0}: must be between 1 and {1}", options.rank,
        kMaxRank));
  if (!(options.alpha >= 0.0) || !std::isfinite(options.alpha))
    return llvm::createStringError(
        llvm::formatv("adapter alpha {0}: must be positive", options.alpha));
  if (options.targets.empty())
    return llvm::createStringError("no adapter target modules");
  llvm::StringSet<> targets;
  for (const std::string &t : options.targets) {
    if (!llvm::is_contained(kPEFTTargetModules, t))
      return llvm::createStringError(
          "adapter target '" + t +
          "': only the attention projections q_proj, k_proj, v_proj and "
          "o_proj can be adapted");
    if (!targets.insert(t).second)
      return llvm::createStringError("adapter target '" + t +
                                     "' is given twice");
  }
  int64_t r = options.rank;
  double alpha = options.alpha == 0.0 ? double(r) : options.alpha;
  double scale = options.useRslora ? alpha / std::sqrt(double(r))
                                   : alpha / double(r);
  // The scaled B ~ N(0, ratio^2 / r): with A ~ N(0, 1/in), B A x has about
  // `ratio` times the spread of W x for W ~ N(0, 1/in).
  constexpr double kRatio = 0.2;
  double stddevB = kRatio / (scale * std::sqrt(double(r)));

  PEFTAdapterFiles files;
  // Another stream than the model's weights of the same seed.
  SplitMix64 rng(options.seed ^ 0xada97e5ada97e5ull);
  for (const Module &m : linearModules(config)) {
    if (!m.attention ||
        !targets.contains(StringRef(m.path).rsplit('.').second))
      continue;
    double stddevA = 1.0 / std::sqrt(double(m.inFeatures));
    std::vector<float> a(r * m.inFeatures), b(m.outFeatures * r);
    for (float &x : a)
      x = static_cast<float>(rng.nextNormal(0.0, stddevA));
    for (float &x : b)
      x = static_cast<float>(rng.nextNormal(0.0, stddevB));
    files.tensors.push_back(
        SafeTensor::fromF32(peftLoRAKey(m.weight, true), {r, m.inFeatures}, a));
    files.tensors.push_back(SafeTensor::fromF32(
        peftLoRAKey(m.weight, false), {m.outFeatures, r}, b));
  }
  json::Array targetList;
  for (const char *t : kPEFTTargetModules)
    if (targets.contains(t))
      targetList.push_back(t);
  json::Object object{
      {"base_model_name_or_path", options.baseModelName},
      {"bias", "none"},
      {"fan_in_fan_out", false},
      {"inference_mode", true},
      {"init_lora_weights", false},
      {"lora_alpha", alpha},
      {"lora_dropout", 0.0},
      {"peft_type", "LORA"},
      {"r", r},
      {"target_modules", std::move(targetList)},
      {"task_type", "CAUSAL_LM"},
      {"use_rslora", options.useRslora},
  };
  files.configJSON =
      llvm::formatv("{0:2}", json::Value(std::move(object))).str() + "\n";
  return files;
}

Error mlir::afm::writePEFTAdapter(StringRef dir,
                                 const PEFTAdapterFiles &files) {
  if (llvm::sys::fs::exists(dir) && !llvm::sys::fs::is_directory(dir))
    return llvm::createStringError(dir + ": exists and is not a directory");
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return llvm::createStringError(dir + ": cannot create: " + ec.message());
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, kPEFTConfigName);
  {
    std::error_code ec;
    llvm::raw_fd_ostream out(path, ec, llvm::sys::fs::OF_Text);
    if (ec)
      return llvm::createStringError(path + ": cannot write: " + ec.message());
    out << files.configJSON;
    out.close();
    if (out.has_error())
      return llvm::createStringError(path + ": cannot write: " +
                                     out.error().message());
  }
  llvm::sys::path::remove_filename(path);
  llvm::sys::path::append(path, kPEFTWeightsName);
  return writeSafeTensors(path, files.tensors,
                          {{"format", "pt"}, {"generator", "afm-gen-example"}});
}
