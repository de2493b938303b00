//===- BoundedJSON.cpp - JSON parsing that refuses deep nesting -----------===//

#include "afm/Model/BoundedJSON.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir::afm;

llvm::Expected<llvm::json::Value>
mlir::afm::parseBoundedJSON(llvm::StringRef text) {
  unsigned depth = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i; // the escaped character cannot end the string
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJSONDepth)
        return llvm::createStringError(llvm::formatv(
            "JSON nested deeper than {0} levels (at byte {1})", kMaxJSONDepth,
            i));
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return llvm::json::parse(text);
}
