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

} // namespace mlir::afm

#endif // AFM_MODEL_BOUNDEDJSON_H
