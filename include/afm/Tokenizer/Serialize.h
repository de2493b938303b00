//===- Serialize.h - TokenizerDescription to the runtime's bytes -*- C++
//-*-===//
//
// The binary form the C runtime loads (afm_tokenizer_load): an
// afm.tokenizer.Tokenizer message of runtime/proto/tokenizer.proto.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_TOKENIZER_SERIALIZE_H
#define AFM_TOKENIZER_SERIALIZE_H

#include "afm/Tokenizer/TokenizerDescription.h"

#include <string>

namespace mlir::afm::tokenizer {

/// The version the runtime accepts (AFM_TOKENIZER_FORMAT_VERSION).
constexpr uint32_t kTokenizerFormatVersion = 1;

std::string serializeTokenizer(const TokenizerDescription &description);

/// One past the largest id of the vocabulary and the added tokens (the
/// runtime's afm_tokenizer_id_limit).
uint32_t tokenizerIdLimit(const TokenizerDescription &description);

} // namespace mlir::afm::tokenizer

#endif // AFM_TOKENIZER_SERIALIZE_H
