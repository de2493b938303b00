//===- TokenizerTest.cpp - the runtime tokenizer on hand-made tokenizers --===//
//
// Small tokenizer.json files whose ids can be worked out by hand, taken
// through the compiler's conversion (lib/Tokenizer) and the C runtime
// (afm/tokenizer.h): byte-level BPE, SentencePiece-style byte fallback,
// added tokens, streaming decode, and hostile serialized input. Parity with
// Hugging Face on real vocabularies is test/tokenizer/hf-parity.test.
//
//===----------------------------------------------------------------------===//

#include "TokenizerTestSupport.h"

#include "afm/tokenizer.h"
#include "afm/Tokenizer/JsonImport.h"
#include "afm/Tokenizer/Serialize.h"

#include "runtime/proto/tokenizer.pb.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

using namespace mlir::afm::tokenizer;
using afm::test::byteLevelChar;
using afm::test::jsonString;

namespace {

struct Deleter {
  void operator()(afm_tokenizer *t) const { afm_tokenizer_free(t); }
  void operator()(afm_detokenizer *d) const { afm_detokenizer_free(d); }
};
using TokenizerPtr = std::unique_ptr<afm_tokenizer, Deleter>;
using DetokenizerPtr = std::unique_ptr<afm_detokenizer, Deleter>;

/// The serialized form of a tokenizer.json text (the test fails if the
/// import does).
std::string serialize(const std::string &json) {
  auto description = importTokenizerJson(json, "test.json");
  if (!description) {
    ADD_FAILURE() << llvm::toString(description.takeError());
    return {};
  }
  return serializeTokenizer(*description);
}

TokenizerPtr load(const std::string &bytes) {
  afm_tokenizer *tokenizer = nullptr;
  afm_status status =
      afm_tokenizer_load(bytes.data(), bytes.size(), &tokenizer);
  EXPECT_EQ(status, AFM_OK) << afm_last_error();
  return TokenizerPtr(tokenizer);
}

std::vector<int32_t> encode(afm_tokenizer *tokenizer, const std::string &text) {
  int32_t *ids = nullptr;
  size_t count = 0;
  EXPECT_EQ(
      afm_tokenizer_encode(tokenizer, text.data(), text.size(), &ids, &count),
      AFM_OK)
      << afm_last_error();
  std::vector<int32_t> result(ids, ids + count);
  std::free(ids);
  return result;
}

std::string decode(afm_tokenizer *tokenizer, const std::vector<int32_t> &ids,
                   bool skipSpecial = false) {
  char *text = nullptr;
  size_t length = 0;
  EXPECT_EQ(afm_tokenizer_decode(tokenizer, ids.data(), ids.size(), skipSpecial,
                                 &text, &length),
            AFM_OK)
      << afm_last_error();
  std::string result(text ? text : "", length);
  std::free(text);
  return result;
}

/// A GPT-2-style tokenizer: the 256 byte characters with ids 0..255 (id =
/// byte), then he=256, ll=257, hell=258, hello=259, Ġw=260, Ġwo=261 from
/// merges of those ranks; added tokens <|a|>=262 (special) and
/// <|a|>b=263 (not special).
std::string byteLevelJson() {
  std::string vocab;
  for (unsigned b = 0; b < 256; ++b)
    vocab += jsonString(byteLevelChar(b)) + ": " + std::to_string(b) + ", ";
  std::string g = byteLevelChar(' ');
  vocab += "\"he\": 256, \"ll\": 257, \"hell\": 258, \"hello\": 259, " +
           jsonString(g + "w") + ": 260, " + jsonString(g + "wo") + ": 261";
  return R"({"model": {"type": "BPE", "vocab": {)" + vocab +
         R"(}, "merges": ["h e", "l l", "he ll", "hell o", )" +
         jsonString(g + " w") + ", " + jsonString(g + "w o") +
         R"(]},
  "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false,
                    "use_regex": true},
  "decoder": {"type": "ByteLevel"},
  "added_tokens": [
    {"id": 262, "content": "<|a|>", "special": true, "lstrip": false,
     "rstrip": false, "single_word": false, "normalized": false},
    {"id": 263, "content": "<|a|>b", "special": false, "lstrip": false,
     "rstrip": false, "single_word": false, "normalized": false}]})";
}

/// A Llama-2-style tokenizer: <unk>=0, <0x00>..<0xFF>=1..256, ▁=257,
/// a=258, b=259, ▁a=260; Prepend ▁ and spaces as ▁; byte fallback.
std::string byteFallbackJson(bool byteFallback = true) {
  std::string vocab = "\"<unk>\": 0, ";
  for (unsigned b = 0; b < 256; ++b) {
    char entry[32];
    std::snprintf(entry, sizeof(entry), "\"<0x%02X>\": %u, ", b, b + 1);
    vocab += entry;
  }
  vocab += "\"▁\": 257, \"a\": 258, \"b\": 259, \"▁a\": 260";
  return R"({"normalizer": {"type": "Sequence", "normalizers": [
      {"type": "Prepend", "prepend": "▁"},
      {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
  "model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": true,
            "byte_fallback": )" +
         std::string(byteFallback ? "true" : "false") + R"(, "vocab": {)" +
         vocab + R"(}, "merges": ["▁ a"]},
  "decoder": {"type": "Sequence", "decoders": [
      {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
      {"type": "ByteFallback"}, {"type": "Fuse"},
      {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
  "added_tokens": [
    {"id": 0, "content": "<unk>", "special": true, "lstrip": false,
     "rstrip": false, "single_word": false, "normalized": false}]})";
}

TEST(TokenizerTest, ByteLevelBPEMergesByRank) {
  TokenizerPtr tok = load(serialize(byteLevelJson()));
  ASSERT_TRUE(tok);
  // GPT-2's split gives "hello" and " wo"; each merges all the way.
  EXPECT_EQ(encode(tok.get(), "hello wo"), (std::vector<int32_t>{259, 261}));
  // Two "l l" pairs of equal rank: the leftmost merges first.
  EXPECT_EQ(encode(tok.get(), "lll"), (std::vector<int32_t>{257, 'l'}));
  // Bytes outside ASCII are their byte-level characters.
  EXPECT_EQ(encode(tok.get(), "é"), (std::vector<int32_t>{0xc3, 0xa9}));
  EXPECT_EQ(decode(tok.get(), {259, 261, 0xc3, 0xa9}), "hello woé");
  EXPECT_EQ(encode(tok.get(), ""), std::vector<int32_t>{});
  // A cut character decodes to U+FFFD, as String::from_utf8_lossy does.
  EXPECT_EQ(decode(tok.get(), {'a', 0xc3, 'b'}), "a\xef\xbf\xbd"
                                                 "b");
}

TEST(TokenizerTest, ByteFallbackAndUnknown) {
  TokenizerPtr tok = load(serialize(byteFallbackJson()));
  ASSERT_TRUE(tok);
  // "a b€" -> "▁a▁b€": € is not in the vocab, so its three bytes.
  std::vector<int32_t> ids = encode(tok.get(), "a b€");
  EXPECT_EQ(
      ids, (std::vector<int32_t>{260, 257, 259, 1 + 0xe2, 1 + 0x82, 1 + 0xac}));
  EXPECT_EQ(decode(tok.get(), ids), "a b€");
  // An incomplete byte sequence: one U+FFFD per byte (tokenizers'
  // ByteFallback decoder).
  EXPECT_EQ(decode(tok.get(), {258, 1 + 0xe2, 1 + 0x82}),
            "a\xef\xbf\xbd\xef\xbf\xbd");

  TokenizerPtr noFallback = load(serialize(byteFallbackJson(false)));
  ASSERT_TRUE(noFallback);
  // Without byte fallback, consecutive unknown characters fuse into one
  // <unk>.
  EXPECT_EQ(encode(noFallback.get(), "a€€b"),
            (std::vector<int32_t>{260, 0, 259}));
}

TEST(TokenizerTest, AddedTokensSplitFirstLeftmostLongest) {
  TokenizerPtr tok = load(serialize(byteLevelJson()));
  ASSERT_TRUE(tok);
  // "<|a|>b" is longer than "<|a|>" at the same start.
  EXPECT_EQ(encode(tok.get(), "he<|a|>bhe<|a|>"),
            (std::vector<int32_t>{256, 263, 256, 262}));
  // Only special tokens are skipped on request.
  EXPECT_EQ(decode(tok.get(), {256, 263, 262}, /*skipSpecial=*/true),
            "he<|a|>b");
  EXPECT_EQ(decode(tok.get(), {256, 263, 262}), "he<|a|>b<|a|>");

  // The normalizer runs on each stretch between added tokens: Prepend
  // gives the text after <unk> its own ▁.
  TokenizerPtr sp = load(serialize(byteFallbackJson()));
  ASSERT_TRUE(sp);
  EXPECT_EQ(encode(sp.get(), "a<unk>a"), (std::vector<int32_t>{260, 0, 260}));
  // Every id skipped: the decoder chain (Fuse, Strip) runs on no tokens.
  EXPECT_EQ(decode(sp.get(), {0, 0}, /*skipSpecial=*/true), "");
}

TEST(TokenizerTest, StreamingNeverSplitsACharacter) {
  TokenizerPtr tok = load(serialize(byteFallbackJson()));
  ASSERT_TRUE(tok);
  afm_detokenizer *raw = nullptr;
  ASSERT_EQ(afm_detokenizer_create(tok.get(), 0, &raw), AFM_OK);
  DetokenizerPtr stream(raw);
  std::vector<std::string> pieces;
  // "▁a" then € as three byte tokens, then "▁b".
  for (int32_t id : {260, 1 + 0xe2, 1 + 0x82, 1 + 0xac, 257, 259}) {
    const char *text;
    size_t length;
    ASSERT_EQ(afm_detokenizer_push(stream.get(), id, &text, &length), AFM_OK)
        << afm_last_error();
    pieces.emplace_back(text, length);
  }
  EXPECT_EQ(pieces, (std::vector<std::string>{"a", "", "", "€", " ", "b"}));

  // A character cut at the end of the stream comes out as U+FFFD on flush.
  const char *text;
  size_t length;
  ASSERT_EQ(afm_detokenizer_push(stream.get(), 1 + 0xc3, &text, &length),
            AFM_OK);
  EXPECT_EQ(length, 0u);
  ASSERT_EQ(afm_detokenizer_flush(stream.get(), &text, &length), AFM_OK);
  EXPECT_EQ(std::string(text, length), "\xef\xbf\xbd");

  // Byte-level: é's two byte tokens give nothing, then all of é.
  TokenizerPtr bl = load(serialize(byteLevelJson()));
  ASSERT_TRUE(bl);
  ASSERT_EQ(afm_detokenizer_create(bl.get(), 0, &raw), AFM_OK);
  DetokenizerPtr blStream(raw);
  ASSERT_EQ(afm_detokenizer_push(blStream.get(), 0xc3, &text, &length), AFM_OK);
  EXPECT_EQ(length, 0u);
  ASSERT_EQ(afm_detokenizer_push(blStream.get(), 0xa9, &text, &length), AFM_OK);
  EXPECT_EQ(std::string(text, length), "é");
}

TEST(TokenizerTest, PostProcessorIdsAreRecordedNotAdded) {
  // Llama 2's template: <s> before a single sequence, nothing after.
  std::string json = byteFallbackJson();
  json.insert(json.rfind('}'), R"(, "post_processor": {
      "type": "TemplateProcessing",
      "single": [{"SpecialToken": {"id": "<unk>", "type_id": 0}},
                 {"Sequence": {"id": "A", "type_id": 0}},
                 {"SpecialToken": {"id": "<unk>", "type_id": 0}}],
      "pair": [], "special_tokens": {"<unk>": {"id": "<unk>", "ids": [0],
                                               "tokens": ["<unk>"]}}})");
  TokenizerPtr tok = load(serialize(json));
  ASSERT_TRUE(tok);
  size_t count;
  const uint32_t *prefix = afm_tokenizer_prefix_ids(tok.get(), &count);
  ASSERT_EQ(count, 1u);
  EXPECT_EQ(prefix[0], 0u);
  afm_tokenizer_suffix_ids(tok.get(), &count);
  EXPECT_EQ(count, 1u);
  EXPECT_EQ(encode(tok.get(), "a"), (std::vector<int32_t>{260}));
}

TEST(TokenizerTest, BadArguments) {
  TokenizerPtr tok = load(serialize(byteLevelJson()));
  ASSERT_TRUE(tok);
  int32_t *ids = nullptr;
  size_t count = 0;
  EXPECT_EQ(afm_tokenizer_encode(tok.get(), "a\xff", 2, &ids, &count),
            AFM_ERR_ARGUMENT);
  EXPECT_STREQ(afm_last_error(),
               "afm_tokenizer_encode: the text is not valid UTF-8 at byte 1");
  char *text = nullptr;
  size_t length = 0;
  int32_t bad[] = {1, 264};
  EXPECT_EQ(afm_tokenizer_decode(tok.get(), bad, 2, 0, &text, &length),
            AFM_ERR_ARGUMENT);
  EXPECT_STREQ(afm_last_error(),
               "afm_tokenizer_decode: id 264 at 1 is outside [0, 264)");
}

/// The status and message of loading `bytes`.
std::pair<afm_status, std::string> tryLoad(const std::string &bytes) {
  afm_tokenizer *tokenizer = nullptr;
  afm_status status =
      afm_tokenizer_load(bytes.data(), bytes.size(), &tokenizer);
  afm_tokenizer_free(tokenizer);
  return {status, status == AFM_OK ? "" : afm_last_error()};
}

/// `bytes` parsed, changed by `edit` and written again.
template <typename Edit>
std::string mutate(const std::string &bytes, Edit edit) {
  ::afm::tokenizer::Tokenizer message;
  EXPECT_TRUE(message.ParseFromString(bytes));
  edit(message);
  return message.SerializeAsString();
}

TEST(TokenizerTest, HostileSerializedInput) {
  std::string bytes = serialize(byteLevelJson());
  ASSERT_EQ(tryLoad(bytes).first, AFM_OK);

  // Every truncation loads or fails cleanly; cut inside the vocabulary it
  // fails as a format error with a message.
  for (size_t size = 0; size < bytes.size(); size += 7) {
    auto [status, message] = tryLoad(bytes.substr(0, size));
    if (status != AFM_OK) {
      EXPECT_TRUE(status == AFM_ERR_FORMAT || status == AFM_ERR_VERSION)
          << size;
      EXPECT_FALSE(message.empty()) << size;
    }
  }
  auto truncated = tryLoad(bytes.substr(0, bytes.size() / 2));
  EXPECT_EQ(truncated.first, AFM_ERR_FORMAT);
  EXPECT_NE(truncated.second.find("not a tokenizer message"), std::string::npos)
      << truncated.second;

  using Message = ::afm::tokenizer::Tokenizer;
  struct Case {
    const char *name;
    std::function<void(Message &)> edit;
    afm_status status;
    const char *message;
  };
  const Case cases[] = {
      {"version", [](Message &m) { m.set_format_version(2); }, AFM_ERR_VERSION,
       "tokenizer: format version 2, this runtime reads 1"},
      {"merge id", [](Message &m) { m.mutable_model()->set_merges(1, 999999); },
       AFM_ERR_FORMAT,
       "tokenizer: merge 0 names id 999999, which is not a model token"},
      {"merge result",
       [](Message &m) { m.mutable_model()->set_merges(2, 257); },
       AFM_ERR_FORMAT,
       "tokenizer: merge 0: token 257 is not tokens 104 and 101 joined"},
      {"token end",
       [](Message &m) { m.mutable_model()->set_token_ends(3, 1u << 30); },
       AFM_ERR_FORMAT, "tokenizer: model token 3 ends at 1073741824"},
      {"token id",
       [](Message &m) { m.mutable_model()->set_token_ids(0, 1u << 25); },
       AFM_ERR_FORMAT,
       "tokenizer: model token 0 has id 33554432, not below 16777216"},
      {"ends and ids",
       [](Message &m) { m.mutable_model()->mutable_token_ids()->RemoveLast(); },
       AFM_ERR_FORMAT, "tokenizer: model has 262 token ends but 261 token ids"},
      {"unk",
       [](Message &m) {
         m.mutable_model()->set_has_unk(true);
         m.mutable_model()->set_unk_id(5000);
       },
       AFM_ERR_FORMAT, "tokenizer: unk_id 5000 is not a token"},
      {"regex",
       [](Message &m) { m.mutable_pre_tokenizers(0)->set_regex("(a|b"); },
       AFM_ERR_FORMAT,
       "tokenizer: pre_tokenizers[0]: the regex '(a|b' does not compile: "
       "missing closing parenthesis (at offset 4)"},
      {"behavior",
       [](Message &m) {
         m.mutable_pre_tokenizers(0)->set_behavior(
             static_cast<::afm::tokenizer::PreTokenizer::Behavior>(9));
       },
       AFM_ERR_FORMAT, "tokenizer: pre_tokenizers[0] has unknown behavior 9"},
      {"added id",
       [](Message &m) { m.mutable_added_tokens(0)->set_id(1u << 24); },
       AFM_ERR_FORMAT,
       "tokenizer: added token 0 has id 16777216, not below 16777216"},
      {"added twice",
       [](Message &m) { m.mutable_added_tokens(1)->set_id(262); },
       AFM_ERR_FORMAT, "tokenizer: id 262 is given to two added tokens"},
      {"added utf8",
       [](Message &m) { m.mutable_added_tokens(0)->set_content("\xc3"); },
       AFM_ERR_FORMAT, "tokenizer: added token 0 (id 262) is not valid UTF-8"},
      {"prefix id", [](Message &m) { m.add_prefix_ids(70000); }, AFM_ERR_FORMAT,
       "tokenizer: prefix_ids[0] = 70000 is not a token"},
      {"decoder kind",
       [](Message &m) {
         m.mutable_decoders(0)->set_kind(
             static_cast<::afm::tokenizer::Decoder::Kind>(42));
       },
       AFM_ERR_FORMAT, "tokenizer: decoders[0] has unknown kind 42"},
  };
  for (const Case &c : cases) {
    auto [status, message] = tryLoad(mutate(bytes, c.edit));
    EXPECT_EQ(status, c.status) << c.name;
    EXPECT_EQ(message.rfind(c.message, 0), 0u) << c.name << ": " << message;
  }
}

// Every byte of a serialized tokenizer replaced by three other values: each
// variant loads or fails with a format or version error and a message, and
// one that loads encodes and decodes without crashing (ASan and UBSan in
// make sanitize).
TEST(TokenizerTest, MutatedBytesNeverCrash) {
  std::string bytes = serialize(byteLevelJson());
  ASSERT_FALSE(bytes.empty());
  size_t loaded = 0, refused = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (unsigned char value : {0x00, 0x7f, 0xff}) {
      std::string mutated = bytes;
      if (static_cast<unsigned char>(mutated[i]) == value)
        continue;
      mutated[i] = static_cast<char>(value);
      afm_tokenizer *tok = nullptr;
      afm_status status =
          afm_tokenizer_load(mutated.data(), mutated.size(), &tok);
      if (status != AFM_OK) {
        ASSERT_TRUE(status == AFM_ERR_FORMAT || status == AFM_ERR_VERSION)
            << i << " " << afm_status_name(status);
        ASSERT_NE(afm_last_error()[0], '\0');
        ++refused;
        continue;
      }
      ++loaded;
      TokenizerPtr owner(tok);
      std::vector<int32_t> ids = encode(tok, "hello wo<|a|>b lll é");
      decode(tok, ids);
    }
  }
  // Both outcomes occur: the campaign reaches the checks and past them.
  EXPECT_GT(loaded, 0u);
  EXPECT_GT(refused, 0u);
}

TEST(TokenizerTest, ImportRefusesWhatItDoesNotModel) {
  auto refused = [](const std::string &json) {
    auto description = importTokenizerJson(json, "t.json");
    if (description)
      return std::string("accepted");
    return llvm::toString(description.takeError());
  };
  const std::string model =
      R"("model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": []})";
  EXPECT_EQ(refused("{" + model + R"(, "decoder": {"type": "CTC"}})"),
            "t.json: decoder: decoder 'CTC' is not supported");
  EXPECT_EQ(refused("{" + model +
                    R"(, "decoder": {"type": "Fuse"},
                     "pre_tokenizer": {"type": "UnicodeScripts"}})"),
            "t.json: pre_tokenizer: pre-tokenizer 'UnicodeScripts' is not "
            "supported");
  EXPECT_EQ(refused("{" + model +
                    R"(, "decoder": {"type": "Fuse"},
                     "post_processor": {"type": "BertProcessing"}})"),
            "t.json: post_processor: post-processor 'BertProcessing' is not "
            "supported");
  EXPECT_EQ(refused("{" + model +
                    R"(, "decoder": {"type": "Fuse"},
                     "truncation": {"max_length": 5}})"),
            "t.json: truncation: is not supported (only null)");
  EXPECT_EQ(refused("{" + model + R"(, "decoder": null})"),
            "t.json: decoder: null (tokens joined by spaces) is not "
            "supported");
  // Ids tokenizers would renumber are refused, not silently changed.
  EXPECT_EQ(refused("{" + model + R"(, "decoder": {"type": "Fuse"},
      "added_tokens": [{"id": 7, "content": "<x>", "special": true}]})"),
            "t.json: added_tokens[0]: '<x>' has id 7, but tokenizers would "
            "give it 2");
}

} // namespace
