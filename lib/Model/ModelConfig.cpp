//===- ModelConfig.cpp - parse and validate config.json -------------------===//
//
// Every error names the file and the key, so that a typo in a config points
// straight at the line to fix.
//
//===----------------------------------------------------------------------===//

#include "afm/Model/ModelConfig.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

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
};

/// Architectures named in docs/model-config.md that are not implemented yet.
constexpr const char *kFutureArchitectures[] = {"afm-on-device", "afm-pt-moe"};

/// Sizes are positive and fit in int32, like token ids and the runtime's
/// vocabulary size; products of two sizes then never overflow int64.
constexpr int64_t kMaxSize = std::numeric_limits<int32_t>::max();

/// Reads typed values out of the top-level object of one config file.
class ConfigReader {
public:
  ConfigReader(const json::Object &object, StringRef fileName)
      : object(object), fileName(fileName) {}

  /// An error about `key`: "<file>: key '<key>': <message>".
  Error keyError(StringRef key, const llvm::Twine &message) const {
    return llvm::createStringError(
        llvm::formatv("{0}: key '{1}': {2}", fileName, key, message.str())
            .str());
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
    switch (value.kind()) {
    case json::Value::Null:
      return "null";
    case json::Value::Object:
      return "an object";
    case json::Value::Array:
      return "an array";
    case json::Value::String:
      return "a string";
    default:
      return llvm::formatv("{0}", value).str();
    }
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
/// The first key of the top-level object that `json` (valid JSON) holds
/// twice: llvm::json silently keeps one of them.
std::optional<std::string> repeatedTopLevelKey(StringRef json) {
  llvm::StringSet<> seen;
  int depth = 0;
  for (size_t i = 0; i < json.size(); ++i) {
    char c = json[i];
    if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      --depth;
    } else if (c == '"') {
      size_t end = i + 1;
      while (end < json.size() && json[end] != '"')
        end += json[end] == '\\' ? 2 : 1;
      StringRef text = json.slice(i + 1, end);
      i = end;
      bool isKey = json.substr(end + 1).ltrim().starts_with(":");
      if (depth == 1 && isKey && !seen.insert(text).second)
        return text.str();
    }
  }
  return std::nullopt;
}

Error readArchitecture(const ConfigReader &reader, Architecture &out) {
  std::string name;
  if (Error err = reader.readString("architecture", name, /*required=*/true))
    return err;
  if (name == architectureName(Architecture::Dense)) {
    out = Architecture::Dense;
    return Error::success();
  }
  if (llvm::is_contained(kFutureArchitectures, StringRef(name)))
    return reader.keyError("architecture",
                           "'" + name + "' is not supported yet (supported: "
                                        "afm-dense)");
  return reader.keyError("architecture", "unknown architecture '" + name +
                                             "' (supported: afm-dense)");
}

/// Reads every key with its type; the defaults that depend on other keys
/// (`num_key_value_heads`, `head_dim`) are resolved by `resolveDefaults`.
Error readKeys(const ConfigReader &reader, ModelConfig &config) {
  Error err = readArchitecture(reader, config.architecture);
  if (err)
    return err;
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
  };
  for (const IntKey &k : intKeys)
    if ((err = reader.readInt(k.key, *k.field, k.required)))
      return err;
  if ((err = reader.readFloat("rms_norm_eps", config.rmsNormEps)) ||
      (err = reader.readFloat("rope_theta", config.ropeTheta)) ||
      (err = reader.readBool("tie_word_embeddings",
                             config.tieWordEmbeddings)) ||
      (err = reader.readBool("rope_in_global_layers",
                             config.ropeInGlobalLayers)))
    return err;
  return Error::success();
}

Error resolveDefaults(const ConfigReader &reader, ModelConfig &config) {
  if (!reader.has("num_key_value_heads"))
    config.numKeyValueHeads = config.numAttentionHeads;
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
  return Error::success();
}

Error validate(const ConfigReader &reader, const ModelConfig &config) {
  struct SizeKey {
    const char *key;
    int64_t value;
    int64_t min;
  };
  const SizeKey sizes[] = {
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
  for (const SizeKey &s : sizes) {
    if (s.value < s.min)
      return reader.keyError(s.key, llvm::formatv("must be {0}, got {1}",
                                                  s.min == 0 ? "non-negative"
                                                             : "positive",
                                                  s.value));
    if (s.value > kMaxSize)
      return reader.keyError(s.key, llvm::formatv("{0} is larger than {1}",
                                                  s.value, kMaxSize));
  }
  if (config.numAttentionHeads % config.numKeyValueHeads != 0)
    return reader.keyError(
        "num_key_value_heads",
        llvm::formatv("{0} does not divide num_attention_heads ({1})",
                      config.numKeyValueHeads, config.numAttentionHeads));
  if (config.headDim % 2 != 0)
    return reader.keyError(
        "head_dim", llvm::formatv("must be even (RoPE rotates pairs), got {0}",
                                  config.headDim));
  const std::pair<const char *, double> positives[] = {
      {"rms_norm_eps", config.rmsNormEps}, {"rope_theta", config.ropeTheta}};
  for (const auto &[key, value] : positives)
    if (!(value > 0.0) || !std::isfinite(value))
      return reader.keyError(
          key, "must be a positive finite number, got " + formatDouble(value));
  return Error::success();
}

} // namespace

Expected<ModelConfig> mlir::afm::parseModelConfig(StringRef json,
                                                  StringRef fileName) {
  Expected<json::Value> parsed = json::parse(json);
  if (!parsed)
    return llvm::createStringError(fileName + ": invalid JSON: " +
                                   llvm::toString(parsed.takeError()));
  const json::Object *object = parsed->getAsObject();
  if (!object)
    return llvm::createStringError(fileName +
                                   ": expected a JSON object at the top level");
  if (std::optional<std::string> key = repeatedTopLevelKey(json))
    return llvm::createStringError(fileName + ": key '" + *key +
                                   "' is given twice");
  ConfigReader reader(*object, fileName);
  ModelConfig config;
  if (Error err = reader.checkNoUnknownKeys())
    return std::move(err);
  if (Error err = readKeys(reader, config))
    return std::move(err);
  if (Error err = resolveDefaults(reader, config))
    return std::move(err);
  if (Error err = validate(reader, config))
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
  if (config.localPerGlobal == 0)
    return false;
  return layer % (config.localPerGlobal + 1) < config.localPerGlobal;
}

bool mlir::afm::usesRope(const ModelConfig &config, int64_t layer) {
  return isLocalLayer(config, layer) || config.ropeInGlobalLayers;
}

std::string mlir::afm::toJSON(const ModelConfig &config) {
  std::string text;
  llvm::raw_string_ostream os(text);
  json::OStream out(os, /*IndentSize=*/2);
  out.object([&] {
    out.attribute("architecture", architectureName(config.architecture));
    out.attribute("vocab_size", config.vocabSize);
    out.attribute("hidden_size", config.hiddenSize);
    out.attribute("intermediate_size", config.intermediateSize);
    out.attribute("num_hidden_layers", config.numHiddenLayers);
    out.attribute("num_attention_heads", config.numAttentionHeads);
    out.attribute("num_key_value_heads", config.numKeyValueHeads);
    out.attribute("head_dim", config.headDim);
    out.attributeBegin("rms_norm_eps");
    out.rawValue(formatDouble(config.rmsNormEps));
    out.attributeEnd();
    out.attributeBegin("rope_theta");
    out.rawValue(formatDouble(config.ropeTheta));
    out.attributeEnd();
    out.attribute("max_position_embeddings", config.maxPositionEmbeddings);
    out.attribute("tie_word_embeddings", config.tieWordEmbeddings);
    out.attribute("sliding_window", config.slidingWindow);
    out.attribute("local_per_global", config.localPerGlobal);
    out.attribute("rope_in_global_layers", config.ropeInGlobalLayers);
  });
  os << "\n";
  return text;
}
