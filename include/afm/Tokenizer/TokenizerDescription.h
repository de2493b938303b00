//===- TokenizerDescription.h - a tokenizer.json, typed -------*- C++ -*-===//
//
// What the compiler keeps of a Hugging Face tokenizer.json: every part that
// changes encode or decode, with names resolved to ids and chains flattened.
// JsonImport fills it (refusing what it does not model), Serialize writes it
// as runtime/proto/tokenizer.proto for the C runtime.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_TOKENIZER_TOKENIZERDESCRIPTION_H
#define AFM_TOKENIZER_TOKENIZERDESCRIPTION_H

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::afm::tokenizer {

/// A BPE model ("type": "BPE"); dropout and subword affixes are refused.
struct BPEModel {
  /// (token, id), in the order of the file's vocab.
  std::vector<std::pair<std::string, uint32_t>> vocab;
  /// Merges by rank: left id, right id, id of the concatenation. A pair
  /// listed twice keeps its last rank, as in tokenizers' merge map.
  std::vector<std::array<uint32_t, 3>> merges;
  std::optional<uint32_t> unkId;
  bool fuseUnk = false;
  bool byteFallback = false;
  bool ignoreMerges = false;
};

struct Normalizer {
  enum class Kind { NFC, NFD, NFKC, NFKD, Prepend, Replace };
  Kind kind;
  /// Replace: the literal string replaced.
  std::string pattern;
  /// Prepend: what is prepended; Replace: the replacement.
  std::string content;
};

struct PreTokenizer {
  enum class Kind { Split, ByteLevel, Metaspace };
  enum class PrependScheme { Always, Never, First };
  enum class Behavior {
    Removed,
    Isolated,
    MergedWithPrevious,
    MergedWithNext,
    Contiguous
  };
  Kind kind;
  /// A PCRE2 pattern (UTF, UCP): Split's, or ByteLevel's GPT-2 split
  /// when use_regex (empty otherwise).
  std::string regex;
  Behavior behavior = Behavior::Isolated;
  bool invert = false;
  bool addPrefixSpace = false;
  /// Metaspace: the character spaces become, when it is prepended, and
  /// whether pieces are split in front of it.
  std::string replacement;
  PrependScheme prependScheme = PrependScheme::Always;
  bool split = true;
};

struct Decoder {
  enum class Kind { ByteLevel, ByteFallback, Fuse, Replace, Strip, Metaspace };
  Kind kind;
  std::string pattern;
  std::string content;
  uint32_t start = 0;
  uint32_t stop = 0;
  /// Metaspace (the replacement is `content`).
  PreTokenizer::PrependScheme prependScheme =
      PreTokenizer::PrependScheme::Always;
};

struct AddedToken {
  std::string content;
  uint32_t id;
  bool special;
  bool lstrip = false;
  bool rstrip = false;
  bool singleWord = false;
};

struct TokenizerDescription {
  BPEModel model;
  std::vector<Normalizer> normalizers;
  std::vector<PreTokenizer> preTokenizers;
  std::vector<Decoder> decoders;
  std::vector<AddedToken> addedTokens;
  /// The ids a single sequence gets before and after it when special
  /// tokens are added (TemplateProcessing); not applied by encode.
  std::vector<uint32_t> prefixIds;
  std::vector<uint32_t> suffixIds;
};

} // namespace mlir::afm::tokenizer

#endif // AFM_TOKENIZER_TOKENIZERDESCRIPTION_H
