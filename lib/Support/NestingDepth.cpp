//===- NestingDepth.cpp - refuse MLIR text nested too deep ----------------===//

#include "afm/Support/NestingDepth.h"

#include "llvm/Support/FormatVariadic.h"

llvm::Error mlir::afm::checkIRNesting(const llvm::MemoryBuffer &buffer) {
  llvm::StringRef text = buffer.getBuffer();
  unsigned depth = 0, line = 1;
  size_t lineStart = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    switch (c) {
    case '\n':
      ++line;
      lineStart = i + 1;
      break;
    case '"': // a string: skip to its unescaped end on this line
      for (++i; i < text.size() && text[i] != '"' && text[i] != '\n'; ++i)
        if (text[i] == '\\')
          ++i;
      if (i < text.size() && text[i] == '\n')
        --i; // counted by the next iteration
      break;
    case '/': // a comment: skip the rest of the line
      if (i + 1 < text.size() && text[i + 1] == '/')
        while (i + 1 < text.size() && text[i + 1] != '\n')
          ++i;
      break;
    case '{':
    case '(':
    case '[':
    case '<':
      if (++depth > kMaxIRNesting)
        return llvm::createStringError(llvm::formatv(
            "{0}:{1}:{2}: error: the IR nests deeper than {3} levels here; "
            "refusing it rather than overflowing the stack",
            buffer.getBufferIdentifier(), line, i - lineStart + 1,
            kMaxIRNesting));
      break;
    case '>':
      if (i > 0 && text[i - 1] == '-')
        break; // "->"
      [[fallthrough]];
    case '}':
    case ')':
    case ']':
      if (depth > 0)
        --depth;
      break;
    default:
      break;
    }
  }
  return llvm::Error::success();
}
