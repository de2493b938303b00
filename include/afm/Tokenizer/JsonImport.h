//===- JsonImport.h - tokenizer.json to a TokenizerDescription -*- C++ -*-===//
//
// Reads a Hugging Face tokenizer.json (the `tokenizers` library's format).
// Every component or option that would change encode or decode and that the
// runtime does not implement is an error naming it, never ignored.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_TOKENIZER_JSONIMPORT_H
#define AFM_TOKENIZER_JSONIMPORT_H

#include "afm/Tokenizer/TokenizerDescription.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace mlir::afm::tokenizer {

/// Parses the text of a tokenizer.json; `name` prefixes error messages.
llvm::Expected<TokenizerDescription> importTokenizerJson(llvm::StringRef text,
                                                         llvm::StringRef name);

/// Reads and parses the file at `path`.
llvm::Expected<TokenizerDescription>
importTokenizerJsonFile(llvm::StringRef path);

} // namespace mlir::afm::tokenizer

#endif // AFM_TOKENIZER_JSONIMPORT_H
