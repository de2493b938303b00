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

namespace mlir::afm {

/// Arrays and objects inside each other, at most.
inline constexpr unsigned kMaxJSONDepth = 64;

/// json::parse of `text`, or an error when it nests deeper than
/// kMaxJSONDepth (or is not JSON).
llvm::Expected<llvm::json::Value> parseBoundedJSON(llvm::StringRef text);

} // namespace mlir::afm

#endif // AFM_MODEL_BOUNDEDJSON_H
