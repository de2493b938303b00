//===- BoundedJSON.h - JSON parsing that refuses deep nesting ----*- C++ -*-===//
//
// llvm::json::parse recurses once per nesting level, so a config.json or a
// safetensors header nested some tens of thousands deep overflows the
// stack. Real files nest a few levels. This parser checks the depth first,
// in one flat scan, and refuses anything deeper than kMaxJSONDepth with an
// error instead of a crash.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_MODEL_BOUNDEDJSON_H
#define AFM_MODEL_BOUNDEDJSON_H

#include "llvm/Support/JSON.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::afm {

/// Arrays and objects inside each other, at most.
inline constexpr unsigned kMaxJSONDepth = 64;

/// json::parse of `text`, or an error when it nests deeper than
/// kMaxJSONDepth (or is not JSON).
llvm::Expected<llvm::json::Value> parseBoundedJSON(llvm::StringRef text);

/// The first key of the top-level object that `json` (valid JSON) holds
/// twice: llvm::json silently keeps one of them.
std::optional<std::string> repeatedTopLevelKey(llvm::StringRef json);

/// A short description of `value` for messages such as "expected X, got
/// Y": objects and arrays by kind, other values as their JSON text ("null",
/// "true", "4", "\"gelu\""), strings as "a string" unless `quoteStrings`.
std::string describeJSON(const llvm::json::Value &value,
                         bool quoteStrings = true);

/// The top-level object of the text `json` of a config file (named
/// `fileName` in errors): invalid or too deeply nested JSON, another
/// top-level value, and a key given twice are errors.
llvm::Expected<llvm::json::Object> parseTopLevelObject(llvm::StringRef json,
                                                       llvm::StringRef fileName);

/// The text of the file at `path` (a config to parse); the error names
/// the path.
llvm::Expected<std::string> readConfigText(llvm::StringRef path);

/// A non-negative integer, or a list of them (generation_config.json's
/// eos_token_id, PEFT's layers_to_transform); nullopt for anything else.
std::optional<std::vector<int64_t>>
indexOrIndexList(const llvm::json::Value &value);

/// The keys of one JSON object read from the file `fileName`: errors name
/// the file and the key. The readers of Hugging Face configs and PEFT
/// adapter configs build on it.
class JSONKeyReader {
public:
  JSONKeyReader(const llvm::json::Object &object, llvm::StringRef fileName)
      : object(object), fileName(fileName) {}

  llvm::Error keyError(llvm::StringRef key, const llvm::Twine &message) const;
  const llvm::json::Value *get(llvm::StringRef key) const {
    return object.get(key);
  }
  /// Whether `key` is present with the value null.
  bool isNull(llvm::StringRef key) const {
    const llvm::json::Value *v = get(key);
    return v && v->kind() == llvm::json::Value::Null;
  }
  llvm::StringRef file() const { return fileName; }

protected:
  const llvm::json::Object &object;
  llvm::StringRef fileName;
};

} // namespace mlir::afm

#endif // AFM_MODEL_BOUNDEDJSON_H
