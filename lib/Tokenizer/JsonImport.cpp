//===- JsonImport.cpp - tokenizer.json to a TokenizerDescription ----------===//
//
// Follows the serde layout of Hugging Face `tokenizers` (0.23). Options that
// only change offsets (trim_offsets) are accepted and dropped; anything that
// would change ids or text and is not modelled is an error naming it.
//
//===----------------------------------------------------------------------===//

#include "afm/Tokenizer/JsonImport.h"

#include "afm/Model/BoundedJSON.h"
#include "afm/Tokenizer/RegexTranslate.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace llvm;

namespace mlir::afm::tokenizer {
namespace {

/// The GPT-2 split of ByteLevel's use_regex (tokenizers' byte_level.rs).
constexpr const char *kGpt2Pattern =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|"
    "\\s+(?!\\S)|\\s+";

class Importer {
public:
  explicit Importer(StringRef name) : name(name.str()) {}

  Expected<TokenizerDescription> run(const json::Value &root);

private:
  Error fail(const Twine &where, const Twine &message) {
    return createStringError(inconvertibleErrorCode(),
                             name + ": " + where + ": " + message);
  }

  /// The string at `key`, absent and null meaning `fallback`.
  Expected<std::string> getString(const json::Object &o, StringRef key,
                                  const Twine &where, StringRef fallback = "");
  Expected<bool> getBool(const json::Object &o, StringRef key,
                         const Twine &where, bool fallback);
  Expected<uint32_t> getUInt(const json::Object &o, StringRef key,
                             const Twine &where, uint32_t fallback);
  Expected<std::string> getType(const json::Object &o, const Twine &where);
  /// A {"String": s} or {"Regex": r} pattern as a PCRE2 pattern.
  Expected<std::string> getRegexPattern(const json::Object &o,
                                        const Twine &where);
  /// The string at `key`, which must be one character (a Rust char).
  Expected<std::string> getChar(const json::Object &o, StringRef key,
                                const Twine &where);
  /// Metaspace's replacement and prepend scheme (or the older
  /// add_prefix_space).
  Error getMetaspace(const json::Object &o, const Twine &where,
                     std::string &replacement,
                     PreTokenizer::PrependScheme &scheme);
  /// Replace's literal pattern and content.
  Expected<std::pair<std::string, std::string>>
  getReplace(const json::Object &o, const Twine &where);
  /// Imports each element of a Sequence's `key` array with `importOne`.
  Error importSequence(const json::Object &o, StringRef key, const Twine &where,
                       Error (Importer::*importOne)(const json::Value &,
                                                    const Twine &));

  Error importModel(const json::Value &value);
  Error importNormalizer(const json::Value &value, const Twine &where);
  Error importPreTokenizer(const json::Value &value, const Twine &where);
  Error importDecoder(const json::Value &value, const Twine &where);
  Error importAddedTokens(const json::Value &value);
  Error importPostProcessor(const json::Value &value, const Twine &where);

  std::string name;
  TokenizerDescription result;
  StringMap<uint32_t> vocab;
};

Expected<std::string> Importer::getString(const json::Object &o, StringRef key,
                                          const Twine &where,
                                          StringRef fallback) {
  const json::Value *v = o.get(key);
  if (!v || v->kind() == json::Value::Null)
    return fallback.str();
  if (auto s = v->getAsString())
    return s->str();
  return fail(where, "'" + key + "' is not a string");
}

Expected<bool> Importer::getBool(const json::Object &o, StringRef key,
                                 const Twine &where, bool fallback) {
  const json::Value *v = o.get(key);
  if (!v || v->kind() == json::Value::Null)
    return fallback;
  if (auto b = v->getAsBoolean())
    return *b;
  return fail(where, "'" + key + "' is not a boolean");
}

Expected<uint32_t> Importer::getUInt(const json::Object &o, StringRef key,
                                     const Twine &where, uint32_t fallback) {
  const json::Value *v = o.get(key);
  if (!v || v->kind() == json::Value::Null)
    return fallback;
  if (auto i = v->getAsInteger())
    if (*i >= 0 && *i <= UINT32_MAX)
      return static_cast<uint32_t>(*i);
  return fail(where, "'" + key + "' is not an integer in [0, 2^32)");
}

Expected<std::string> Importer::getType(const json::Object &o,
                                        const Twine &where) {
  auto type = o.getString("type");
  if (!type)
    return fail(where, "has no \"type\"");
  return type->str();
}

Expected<std::string> Importer::getRegexPattern(const json::Object &o,
                                                const Twine &where) {
  const json::Object *pattern = o.getObject("pattern");
  if (!pattern)
    return fail(where, "'pattern' is not an object");
  if (auto s = pattern->getString("String"))
    return quoteLiteralRegex(*s);
  if (auto r = pattern->getString("Regex"))
    return translateOnigurumaRegex(*r);
  return fail(where, "'pattern' is neither {\"String\": ...} nor "
                     "{\"Regex\": ...}");
}

Expected<std::string> Importer::getChar(const json::Object &o, StringRef key,
                                        const Twine &where) {
  auto s = getString(o, key, where);
  if (!s)
    return s.takeError();
  unsigned char lead = s->empty() ? 0 : (*s)[0];
  size_t length = lead < 0x80 ? 1 : lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4;
  if (s->empty() || s->size() != length)
    return fail(where, "'" + key + "' \"" + *s + "\" is not one character");
  return *s;
}

Error Importer::getMetaspace(const json::Object &o, const Twine &where,
                             std::string &replacement,
                             PreTokenizer::PrependScheme &scheme) {
  auto r = getChar(o, "replacement", where);
  if (!r)
    return r.takeError();
  replacement = *r;
  using S = PreTokenizer::PrependScheme;
  if (o.get("prepend_scheme")) {
    auto name = getString(o, "prepend_scheme", where);
    if (!name)
      return name.takeError();
    if (*name == "always")
      scheme = S::Always;
    else if (*name == "never")
      scheme = S::Never;
    else if (*name == "first")
      scheme = S::First;
    else
      return fail(where,
                  "Metaspace prepend_scheme '" + *name + "' is not known");
    return Error::success();
  }
  auto prefix = getBool(o, "add_prefix_space", where, true);
  if (!prefix)
    return prefix.takeError();
  scheme = *prefix ? S::Always : S::Never;
  return Error::success();
}

Expected<std::pair<std::string, std::string>>
Importer::getReplace(const json::Object &o, const Twine &where) {
  const json::Object *pattern = o.getObject("pattern");
  if (!pattern)
    return fail(where, "Replace: 'pattern' is not an object");
  if (pattern->get("Regex"))
    return fail(where, "Replace with a Regex pattern is not supported (only "
                       "String)");
  auto literal = pattern->getString("String");
  if (!literal)
    return fail(where, "Replace: 'pattern' is not {\"String\": ...}");
  if (literal->empty())
    return fail(where, "Replace with an empty pattern is not supported");
  auto content = getString(o, "content", where);
  if (!content)
    return content.takeError();
  return std::make_pair(literal->str(), *content);
}

Error Importer::importSequence(const json::Object &o, StringRef key,
                               const Twine &where,
                               Error (Importer::*importOne)(const json::Value &,
                                                            const Twine &)) {
  const json::Array *list = o.getArray(key);
  if (!list)
    return fail(where, "Sequence has no '" + key + "' array");
  for (size_t i = 0; i < list->size(); ++i)
    if (Error e = (this->*importOne)((*list)[i], where + "[" + Twine(i) + "]"))
      return e;
  return Error::success();
}

Error Importer::importModel(const json::Value &value) {
  const json::Object *o = value.getAsObject();
  if (!o)
    return fail("model", "is not an object");
  auto type = getType(*o, "model");
  if (!type)
    return type.takeError();
  if (*type != "BPE")
    return fail("model", "type '" + *type + "' is not supported (only BPE)");
  if (const json::Value *dropout = o->get("dropout"))
    if (dropout->kind() != json::Value::Null &&
        dropout->getAsNumber().value_or(1) != 0)
      return fail("model", "'dropout' is not supported (encode would be "
                           "random)");
  for (StringRef affix : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    auto s = getString(*o, affix, "model");
    if (!s)
      return s.takeError();
    if (!s->empty())
      return fail("model", "'" + affix + "' \"" + *s + "\" is not supported");
  }
  BPEModel &model = result.model;
  for (auto [key, flag] :
       {std::pair<StringRef, bool *>{"fuse_unk", &model.fuseUnk},
        {"byte_fallback", &model.byteFallback},
        {"ignore_merges", &model.ignoreMerges}}) {
    auto b = getBool(*o, key, "model", false);
    if (!b)
      return b.takeError();
    *flag = *b;
  }

  const json::Object *vocabObject = o->getObject("vocab");
  if (!vocabObject)
    return fail("model", "'vocab' is not an object");
  DenseMap<uint32_t, StringRef> byId;
  model.vocab.reserve(vocabObject->size());
  for (const auto &[key, id] : *vocabObject) {
    auto i = id.getAsInteger();
    if (!i || *i < 0 || *i >= (1 << 24))
      return fail("model.vocab", "the id of '" + key.str() +
                                     "' is not an integer in [0, 2^24)");
    auto [it, inserted] = byId.try_emplace(static_cast<uint32_t>(*i), key);
    if (!inserted)
      return fail("model.vocab", formatv("id {0} is given to both '{1}' and "
                                         "'{2}'",
                                         *i, it->second, key.str()));
    model.vocab.emplace_back(key.str(), static_cast<uint32_t>(*i));
    vocab[key] = static_cast<uint32_t>(*i);
  }

  auto unk = getString(*o, "unk_token", "model");
  if (!unk)
    return unk.takeError();
  if (!unk->empty()) {
    auto it = vocab.find(*unk);
    if (it == vocab.end())
      return fail("model", "unk_token '" + *unk + "' is not in the vocab");
    model.unkId = it->second;
  }

  const json::Array *merges = o->getArray("merges");
  if (!merges)
    return fail("model", "'merges' is not an array");
  // A pair listed again takes its later rank (tokenizers builds a hash map
  // from the list): keep only its last occurrence, the order of the rest.
  DenseMap<std::pair<uint32_t, uint32_t>, size_t> lastRank;
  std::vector<std::array<uint32_t, 3>> all;
  all.reserve(merges->size());
  for (size_t rank = 0; rank < merges->size(); ++rank) {
    const json::Value &merge = (*merges)[rank];
    std::string left, right;
    if (auto s = merge.getAsString()) {
      size_t space = s->find(' ');
      if (space == StringRef::npos ||
          s->find(' ', space + 1) != StringRef::npos)
        return fail("model.merges",
                    formatv("merge {0} '{1}' is not two tokens separated by "
                            "one space",
                            rank, *s));
      left = s->substr(0, space).str();
      right = s->substr(space + 1).str();
    } else if (const json::Array *pair = merge.getAsArray();
               pair && pair->size() == 2 && (*pair)[0].getAsString() &&
               (*pair)[1].getAsString()) {
      left = (*pair)[0].getAsString()->str();
      right = (*pair)[1].getAsString()->str();
    } else {
      return fail("model.merges", formatv("merge {0} is neither \"a b\" nor "
                                          "[\"a\", \"b\"]",
                                          rank));
    }
    std::array<uint32_t, 3> ids;
    std::string parts[3] = {left, right, left + right};
    for (int k = 0; k < 3; ++k) {
      auto it = vocab.find(parts[k]);
      if (it == vocab.end())
        return fail("model.merges", formatv("merge {0} ('{1}' '{2}'): '{3}' "
                                            "is not in the vocab",
                                            rank, left, right, parts[k]));
      ids[k] = it->second;
    }
    lastRank[{ids[0], ids[1]}] = all.size();
    all.push_back(ids);
  }
  for (size_t i = 0; i < all.size(); ++i)
    if (lastRank[{all[i][0], all[i][1]}] == i)
      model.merges.push_back(all[i]);
  return Error::success();
}

Error Importer::importNormalizer(const json::Value &value, const Twine &where) {
  if (value.kind() == json::Value::Null)
    return Error::success();
  const json::Object *o = value.getAsObject();
  if (!o)
    return fail(where, "is not an object");
  auto type = getType(*o, where);
  if (!type)
    return type.takeError();
  Normalizer n;
  if (*type == "Sequence")
    return importSequence(*o, "normalizers", where,
                          &Importer::importNormalizer);
  if (*type == "NFC") {
    n.kind = Normalizer::Kind::NFC;
  } else if (*type == "NFD") {
    n.kind = Normalizer::Kind::NFD;
  } else if (*type == "NFKC") {
    n.kind = Normalizer::Kind::NFKC;
  } else if (*type == "NFKD") {
    n.kind = Normalizer::Kind::NFKD;
  } else if (*type == "Prepend") {
    n.kind = Normalizer::Kind::Prepend;
    auto s = getString(*o, "prepend", where);
    if (!s)
      return s.takeError();
    n.content = *s;
  } else if (*type == "Replace") {
    n.kind = Normalizer::Kind::Replace;
    auto replace = getReplace(*o, where);
    if (!replace)
      return replace.takeError();
    std::tie(n.pattern, n.content) = *replace;
  } else {
    return fail(where, "normalizer '" + *type + "' is not supported");
  }
  result.normalizers.push_back(std::move(n));
  return Error::success();
}

Error Importer::importPreTokenizer(const json::Value &value,
                                   const Twine &where) {
  if (value.kind() == json::Value::Null)
    return Error::success();
  const json::Object *o = value.getAsObject();
  if (!o)
    return fail(where, "is not an object");
  auto type = getType(*o, where);
  if (!type)
    return type.takeError();
  PreTokenizer p;
  if (*type == "Sequence")
    return importSequence(*o, "pretokenizers", where,
                          &Importer::importPreTokenizer);
  if (*type == "Split") {
    p.kind = PreTokenizer::Kind::Split;
    auto regex = getRegexPattern(*o, where + " (Split)");
    if (!regex)
      return regex.takeError();
    p.regex = *regex;
    auto behavior = getString(*o, "behavior", where);
    if (!behavior)
      return behavior.takeError();
    using B = PreTokenizer::Behavior;
    static const std::pair<StringRef, B> behaviors[] = {
        {"Removed", B::Removed},
        {"Isolated", B::Isolated},
        {"MergedWithPrevious", B::MergedWithPrevious},
        {"MergedWithNext", B::MergedWithNext},
        {"Contiguous", B::Contiguous}};
    auto it =
        llvm::find_if(behaviors, [&](auto &b) { return b.first == *behavior; });
    if (it == std::end(behaviors))
      return fail(where, "Split behavior '" + *behavior + "' is not known");
    p.behavior = it->second;
    auto invert = getBool(*o, "invert", where, false);
    if (!invert)
      return invert.takeError();
    p.invert = *invert;
  } else if (*type == "ByteLevel") {
    p.kind = PreTokenizer::Kind::ByteLevel;
    auto prefix = getBool(*o, "add_prefix_space", where, true);
    auto useRegex = getBool(*o, "use_regex", where, true);
    if (!prefix)
      return prefix.takeError();
    if (!useRegex)
      return useRegex.takeError();
    p.addPrefixSpace = *prefix;
    if (*useRegex)
      p.regex = translateOnigurumaRegex(kGpt2Pattern);
  } else if (*type == "Digits") {
    // Digits splits on char::is_numeric (Nd, Nl, No), each digit or each
    // run isolated.
    p.kind = PreTokenizer::Kind::Split;
    auto individual = getBool(*o, "individual_digits", where, false);
    if (!individual)
      return individual.takeError();
    p.regex = *individual ? "\\p{N}" : "\\p{N}+";
    p.behavior = PreTokenizer::Behavior::Isolated;
  } else if (*type == "Metaspace") {
    p.kind = PreTokenizer::Kind::Metaspace;
    if (Error e = getMetaspace(*o, where, p.replacement, p.prependScheme))
      return e;
    auto split = getBool(*o, "split", where, true);
    if (!split)
      return split.takeError();
    p.split = *split;
  } else {
    return fail(where, "pre-tokenizer '" + *type + "' is not supported");
  }
  result.preTokenizers.push_back(std::move(p));
  return Error::success();
}

Error Importer::importDecoder(const json::Value &value, const Twine &where) {
  const json::Object *o = value.getAsObject();
  if (!o)
    return fail(where, value.kind() == json::Value::Null
                           ? "null (tokens joined by spaces) is not supported"
                           : "is not an object");
  auto type = getType(*o, where);
  if (!type)
    return type.takeError();
  Decoder d;
  if (*type == "Sequence")
    return importSequence(*o, "decoders", where, &Importer::importDecoder);
  if (*type == "ByteLevel") {
    // Its add_prefix_space, trim_offsets and use_regex do not change
    // decoding.
    d.kind = Decoder::Kind::ByteLevel;
  } else if (*type == "ByteFallback") {
    d.kind = Decoder::Kind::ByteFallback;
  } else if (*type == "Fuse") {
    d.kind = Decoder::Kind::Fuse;
  } else if (*type == "Replace") {
    d.kind = Decoder::Kind::Replace;
    auto replace = getReplace(*o, where);
    if (!replace)
      return replace.takeError();
    std::tie(d.pattern, d.content) = *replace;
  } else if (*type == "Strip") {
    d.kind = Decoder::Kind::Strip;
    auto content = getChar(*o, "content", where);
    if (!content)
      return content.takeError();
    auto start = getUInt(*o, "start", where, 0);
    auto stop = getUInt(*o, "stop", where, 0);
    if (!start)
      return start.takeError();
    if (!stop)
      return stop.takeError();
    d.content = *content;
    d.start = *start;
    d.stop = *stop;
  } else if (*type == "Metaspace") {
    d.kind = Decoder::Kind::Metaspace;
    if (Error e = getMetaspace(*o, where, d.content, d.prependScheme))
      return e;
  } else {
    return fail(where, "decoder '" + *type + "' is not supported");
  }
  result.decoders.push_back(std::move(d));
  return Error::success();
}

Error Importer::importAddedTokens(const json::Value &value) {
  if (value.kind() == json::Value::Null)
    return Error::success();
  const json::Array *list = value.getAsArray();
  if (!list)
    return fail("added_tokens", "is not an array");
  // Ids as tokenizers' AddedVocabulary::add_tokens gives them: a token of
  // the vocab keeps its id, a new one comes after the vocab. A file whose
  // ids disagree is refused rather than silently renumbered.
  StringMap<uint32_t> added;
  std::optional<uint32_t> maxAdded;
  uint32_t vocabSize = result.model.vocab.size();
  for (size_t i = 0; i < list->size(); ++i) {
    std::string where = formatv("added_tokens[{0}]", i).str();
    const json::Object *o = (*list)[i].getAsObject();
    if (!o)
      return fail(where, "is not an object");
    auto content = getString(*o, "content", where);
    if (!content)
      return content.takeError();
    auto id = getUInt(*o, "id", where, UINT32_MAX);
    if (!id)
      return id.takeError();
    auto special = getBool(*o, "special", where, false);
    if (!special)
      return special.takeError();
    bool flags[3];
    StringRef flagNames[3] = {"lstrip", "rstrip", "single_word"};
    for (int k = 0; k < 3; ++k) {
      auto b = getBool(*o, flagNames[k], where, false);
      if (!b)
        return b.takeError();
      flags[k] = *b;
    }
    auto normalized = getBool(*o, "normalized", where, !*special);
    if (!normalized)
      return normalized.takeError();
    if (*normalized && !result.normalizers.empty())
      return fail(where,
                  "'" + *content + "': normalized = true is not supported");
    if (content->empty() || added.count(*content))
      continue; // tokenizers ignores these too
    uint32_t expected;
    if (auto it = vocab.find(*content); it != vocab.end())
      expected = it->second;
    else if (!maxAdded)
      expected = vocabSize;
    else
      expected =
          *maxAdded >= vocabSize || vocabSize == 0 ? *maxAdded + 1 : vocabSize;
    if (*id != expected)
      return fail(where, formatv("'{0}' has id {1}, but tokenizers would "
                                 "give it {2}",
                                 *content, *id, expected));
    added[*content] = expected;
    maxAdded = std::max(maxAdded.value_or(0), expected);
    result.addedTokens.push_back(
        {*content, expected, *special, flags[0], flags[1], flags[2]});
  }
  return Error::success();
}

Error Importer::importPostProcessor(const json::Value &value,
                                    const Twine &where) {
  if (value.kind() == json::Value::Null)
    return Error::success();
  const json::Object *o = value.getAsObject();
  if (!o)
    return fail(where, "is not an object");
  auto type = getType(*o, where);
  if (!type)
    return type.takeError();
  if (*type == "ByteLevel")
    return Error::success(); // offsets only
  if (*type == "Sequence")
    return importSequence(*o, "processors", where,
                          &Importer::importPostProcessor);
  if (*type != "TemplateProcessing")
    return fail(where, "post-processor '" + *type + "' is not supported");
  const json::Array *single = o->getArray("single");
  const json::Object *specials = o->getObject("special_tokens");
  if (!single || !specials)
    return fail(where, "TemplateProcessing lacks 'single' or "
                       "'special_tokens'");
  bool seenSequence = false;
  for (const json::Value &piece : *single) {
    const json::Object *p = piece.getAsObject();
    if (p && p->get("Sequence")) {
      seenSequence = true;
      continue;
    }
    const json::Object *special = p ? p->getObject("SpecialToken") : nullptr;
    auto name = special ? special->getString("id") : std::nullopt;
    if (!name)
      return fail(where, "a 'single' piece is neither Sequence nor "
                         "SpecialToken");
    const json::Object *entry = specials->getObject(*name);
    const json::Array *ids = entry ? entry->getArray("ids") : nullptr;
    if (!ids)
      return fail(where, "special token '" + *name + "' has no ids");
    for (const json::Value &id : *ids) {
      auto i = id.getAsInteger();
      if (!i || *i < 0 || *i > UINT32_MAX)
        return fail(where, "special token '" + *name + "' has a bad id");
      (seenSequence ? result.suffixIds : result.prefixIds)
          .push_back(static_cast<uint32_t>(*i));
    }
  }
  return Error::success();
}

Expected<TokenizerDescription> Importer::run(const json::Value &root) {
  const json::Object *o = root.getAsObject();
  if (!o)
    return fail("tokenizer", "is not a JSON object");
  for (StringRef key : {"truncation", "padding"})
    if (const json::Value *v = o->get(key); v && v->kind() != json::Value::Null)
      return fail(key, "is not supported (only null)");
  const json::Value *model = o->get("model");
  if (!model)
    return fail("tokenizer", "has no 'model'");
  if (Error e = importModel(*model))
    return std::move(e);
  static const json::Value null(nullptr);
  auto getOrNull = [&](StringRef key) -> const json::Value & {
    const json::Value *v = o->get(key);
    return v ? *v : null;
  };
  if (Error e = importNormalizer(getOrNull("normalizer"), "normalizer"))
    return std::move(e);
  if (Error e = importPreTokenizer(getOrNull("pre_tokenizer"), "pre_tokenizer"))
    return std::move(e);
  if (Error e = importDecoder(getOrNull("decoder"), "decoder"))
    return std::move(e);
  if (Error e = importAddedTokens(getOrNull("added_tokens")))
    return std::move(e);
  if (Error e =
          importPostProcessor(getOrNull("post_processor"), "post_processor"))
    return std::move(e);
  return std::move(result);
}

} // namespace

Expected<TokenizerDescription> importTokenizerJson(StringRef text,
                                                   StringRef name) {
  Expected<json::Value> root = parseBoundedJSON(text);
  if (!root)
    return createStringError(inconvertibleErrorCode(),
                             name + ": " + toString(root.takeError()));
  return Importer(name).run(*root);
}

Expected<TokenizerDescription> importTokenizerJsonFile(StringRef path) {
  auto buffer = MemoryBuffer::getFile(path, /*IsText=*/false,
                                      /*RequiresNullTerminator=*/false);
  if (!buffer)
    return createStringError(buffer.getError(),
                             path + ": " + buffer.getError().message());
  return importTokenizerJson((*buffer)->getBuffer(), path);
}

} // namespace mlir::afm::tokenizer
