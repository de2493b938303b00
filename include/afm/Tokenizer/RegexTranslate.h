//===- RegexTranslate.h - Oniguruma patterns as PCRE2 patterns -*- C++ -*-===//
//
// tokenizer.json's Split patterns are run by Oniguruma in `tokenizers`; the
// runtime runs PCRE2 with UTF and UCP. The two agree on the syntax these
// files use except for \s: Oniguruma's is Unicode White_Space, PCRE2's adds
// U+180E. Literal (String) patterns are quoted.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_TOKENIZER_REGEXTRANSLATE_H
#define AFM_TOKENIZER_REGEXTRANSLATE_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir::afm::tokenizer {

/// `pattern` (Oniguruma syntax) with \s and \S spelled as White_Space.
std::string translateOnigurumaRegex(llvm::StringRef pattern);

/// A PCRE2 pattern matching exactly `literal`.
std::string quoteLiteralRegex(llvm::StringRef literal);

} // namespace mlir::afm::tokenizer

#endif // AFM_TOKENIZER_REGEXTRANSLATE_H
