//===- RegexTranslate.cpp - Oniguruma patterns as PCRE2 patterns ----------===//

#include "afm/Tokenizer/RegexTranslate.h"

#include "llvm/ADT/StringExtras.h"

using namespace llvm;

namespace mlir::afm::tokenizer {

std::string translateOnigurumaRegex(StringRef pattern) {
  std::string out;
  out.reserve(pattern.size() + 32);
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c != '\\' || i + 1 == pattern.size()) {
      out += c;
      continue;
    }
    // An escape: \s and \S change, every other one is copied whole so that
    // an escaped backslash never starts a new escape.
    char next = pattern[++i];
    if (next == 's')
      out += "\\p{White_Space}";
    else if (next == 'S')
      out += "\\P{White_Space}";
    else {
      out += '\\';
      out += next;
    }
  }
  return out;
}

std::string quoteLiteralRegex(StringRef literal) {
  std::string out;
  for (unsigned char c : literal) {
    if (c == 0)
      out += "\\x{0}";
    else if (c < 0x80 && !isAlnum(c)) {
      // In PCRE2 a backslash before any ASCII non-alphanumeric is literal.
      out += '\\';
      out += static_cast<char>(c);
    } else
      out += static_cast<char>(c);
  }
  return out;
}

} // namespace mlir::afm::tokenizer
