//===- GenerateTest.cpp - the generate loop on the fake model -------------===//
//
// afm_generate and afm_generate_text over the fake model
// (test/runtime/fake_model.c), whose greedy tokens the Predictor computes on
// its own, packed with a byte-level tokenizer (format 1.1's tokenizer
// section) and end-of-sequence ids: the tokens, the streamed text against a
// whole decode of them, each stop reason, and the load-time checks of the
// tokenizer section and the ids.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"
#include "TokenizerTestSupport.h"

#include "afm/Tokenizer/JsonImport.h"
#include "afm/Tokenizer/Serialize.h"
#include "afm/afmb_format.h"
#include "afm/generate.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

using namespace afm::test;

namespace {

/// Ids 0-255 are the bytes, 256 is the special "<eos>", 257 "<bos>": the
/// tokenizer's id limit is 258, below the fake model's vocabulary of 300,
/// so the sampler must leave ids 258-299 out.
std::string byteTokenizer() {
  std::string vocab;
  for (unsigned b = 0; b < 256; ++b)
    vocab += (b ? ", " : "") + jsonString(byteLevelChar(b)) + ": " +
             std::to_string(b);
  std::string json =
      R"({"model": {"type": "BPE", "vocab": {)" + vocab + R"(}, "merges": []},
  "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false,
                    "use_regex": false},
  "decoder": {"type": "ByteLevel"},
  "post_processor": {"type": "TemplateProcessing",
    "single": [{"SpecialToken": {"id": "<bos>", "type_id": 0}},
               {"Sequence": {"id": "A", "type_id": 0}}],
    "pair": [], "special_tokens": {"<bos>": {"id": "<bos>", "ids": [257],
                                              "tokens": ["<bos>"]}}},
  "added_tokens": [
    {"id": 256, "content": "<eos>", "special": true, "lstrip": false,
     "rstrip": false, "single_word": false, "normalized": false},
    {"id": 257, "content": "<bos>", "special": true, "lstrip": false,
     "rstrip": false, "single_word": false, "normalized": false}]})";
  auto description =
      mlir::afm::tokenizer::importTokenizerJson(json, "bytes.json");
  if (!description) {
    ADD_FAILURE() << llvm::toString(description.takeError());
    return {};
  }
  return mlir::afm::tokenizer::serializeTokenizer(*description);
}

constexpr uint32_t kVocab = 300;
constexpr uint32_t kIdLimit = 258;

FakeModelOptions fakeOptions() {
  FakeModelOptions options;
  options.vocab = kVocab;
  options.context = 64;
  return options;
}

/// What the callback saw.
struct Stream {
  std::vector<int32_t> tokens;
  std::string text;
  int stopAfter = 0; // ask to stop after this many tokens; 0 never
};

int collect(void *user, int32_t token, const char *text, size_t length) {
  auto *s = static_cast<Stream *>(user);
  if (token >= 0)
    s->tokens.push_back(token);
  s->text.append(text ? text : "", length);
  return s->stopAfter && int(s->tokens.size()) >= s->stopAfter;
}

std::string decode(const afm_tokenizer *tokenizer,
                   const std::vector<int32_t> &ids) {
  char *text = nullptr;
  size_t length = 0;
  EXPECT_EQ(afm_tokenizer_decode(tokenizer, ids.data(), ids.size(),
                                 /*skip_special=*/1, &text, &length),
            AFM_OK)
      << afm_last_error();
  std::string out(text ? text : "", length);
  std::free(text);
  return out;
}

/// afm_generate of `prompt` on `loaded`'s session into `stream`.
::testing::AssertionResult generate(Loaded &loaded,
                                    const std::vector<int32_t> &prompt,
                                    const afm_generate_options *options,
                                    Stream &stream,
                                    afm_generate_result *result) {
  afm_status status =
      afm_generate(loaded.session, prompt.data(), prompt.size(), options,
                   collect, &stream, result);
  if (status == AFM_OK)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << afm_last_error();
}

class GenerateTest : public RuntimeTest {
protected:
  /// A fake model with the byte tokenizer and `eos` as its end ids.
  void openWithText(Loaded &loaded, const std::vector<uint32_t> &eos = {}) {
    std::string tokenizer = byteTokenizer();
    open(pack(
             fakeOptions(),
             [&](afm::manifest::Manifest &m) {
               for (uint32_t id : eos)
                 m.mutable_generation()->add_eos_ids(id);
             },
             tokenizer),
         loaded);
  }

  /// The fake model's greedy tokens after `prompt` (ids below the
  /// tokenizer's limit), `count` of them.
  static std::vector<int32_t> predict(const std::vector<int32_t> &prompt,
                                      size_t count) {
    Predictor predictor(kVocab, kIdLimit);
    std::vector<int32_t> out = {predictor.prefill(prompt)};
    while (out.size() < count)
      out.push_back(predictor.decode(out.back()));
    return out;
  }
};

TEST_F(GenerateTest, GreedyTokensAndStreamedText) {
  Loaded loaded;
  openWithText(loaded);
  const afm_tokenizer *tokenizer = afm_model_tokenizer(loaded.model);
  ASSERT_NE(tokenizer, nullptr);
  EXPECT_EQ(afm_tokenizer_id_limit(tokenizer), kIdLimit);

  std::vector<int32_t> prompt = {72, 105, 33};
  afm_generate_options o;
  afm_generate_options_init(&o);
  o.max_tokens = 20;
  Stream stream;
  afm_generate_result result;
  ASSERT_TRUE(generate(loaded, prompt, &o, stream, &result));
  EXPECT_EQ(stream.tokens, predict(prompt, 20));
  EXPECT_EQ(result.stop_reason, AFM_STOP_LENGTH);
  EXPECT_EQ(result.prompt_tokens, 3u);
  EXPECT_EQ(result.generated_tokens, 20u);
  // The last token is not decoded: its logits are never needed.
  EXPECT_EQ(afm_session_position(loaded.session), 3 + 20 - 1);
  EXPECT_EQ(stream.text, decode(tokenizer, stream.tokens));
}

TEST_F(GenerateTest, TextPromptGetsThePrefixIds) {
  Loaded loaded;
  openWithText(loaded);
  afm_generate_options o;
  afm_generate_options_init(&o);
  o.max_tokens = 6;
  Stream stream;
  std::string text = "Hi!";
  ASSERT_EQ(afm_generate_text(loaded.session, text.data(), text.size(),
                              /*add_special=*/1, &o, collect, &stream,
                              nullptr),
            AFM_OK)
      << afm_last_error();
  EXPECT_EQ(stream.tokens, predict({257, 'H', 'i', '!'}, 6));

  Loaded raw;
  openWithText(raw);
  Stream rawStream;
  ASSERT_EQ(afm_generate_text(raw.session, text.data(), text.size(),
                              /*add_special=*/0, &o, collect, &rawStream,
                              nullptr),
            AFM_OK)
      << afm_last_error();
  EXPECT_EQ(rawStream.tokens, predict({'H', 'i', '!'}, 6));
}

TEST_F(GenerateTest, StopsAtTheModelsEndOfSequenceId) {
  std::vector<int32_t> prompt = {10, 20, 30};
  std::vector<int32_t> expected = predict(prompt, 12);
  // The fifth token ends generation: the four before it are delivered.
  Loaded loaded;
  openWithText(loaded, {uint32_t(expected[4])});
  size_t count = 0;
  const int32_t *eos = afm_model_eos_ids(loaded.model, &count);
  ASSERT_EQ(count, 1u);
  EXPECT_EQ(eos[0], expected[4]);
  // Unless an earlier token is the same id.
  size_t first = std::find(expected.begin(), expected.end(), expected[4]) -
                 expected.begin();

  afm_generate_options o;
  afm_generate_options_init(&o);
  o.max_tokens = 12;
  Stream stream;
  afm_generate_result result;
  ASSERT_TRUE(generate(loaded, prompt, &o, stream, &result));
  EXPECT_EQ(result.stop_reason, AFM_STOP_EOS);
  EXPECT_EQ(stream.tokens,
            std::vector<int32_t>(expected.begin(), expected.begin() + first));

  // stop_at_eos = 0 goes on; an explicit stop id ends it instead.
  Loaded again;
  openWithText(again, {uint32_t(expected[4])});
  o.stop_at_eos = 0;
  int32_t stopId = expected[7];
  o.stop_ids = &stopId;
  o.stop_id_count = 1;
  Stream more;
  ASSERT_TRUE(generate(again, prompt, &o, more, &result));
  size_t firstStop = std::find(expected.begin(), expected.end(), stopId) -
                     expected.begin();
  EXPECT_EQ(more.tokens, std::vector<int32_t>(expected.begin(),
                                              expected.begin() + firstStop));
}

TEST_F(GenerateTest, StopStringEndsTheTextBeforeIt) {
  std::vector<int32_t> prompt = {65, 66, 67};
  afm_generate_options o;
  afm_generate_options_init(&o);
  o.max_tokens = 16;
  // The whole text first, then a stop string from its middle, which the
  // tokens deliver a piece at a time.
  Loaded plain;
  openWithText(plain);
  Stream whole;
  ASSERT_TRUE(generate(plain, prompt, &o, whole, nullptr));
  ASSERT_GE(whole.text.size(), 8u);
  std::string stop = whole.text.substr(whole.text.size() / 2, 4);
  size_t at = whole.text.find(stop);

  Loaded loaded;
  openWithText(loaded);
  const char *stops[] = {"never appears \x01", stop.c_str()};
  o.stop_strings = stops;
  o.stop_string_count = 2;
  Stream stream;
  afm_generate_result result;
  ASSERT_TRUE(generate(loaded, prompt, &o, stream, &result));
  EXPECT_EQ(result.stop_reason, AFM_STOP_STRING);
  EXPECT_EQ(stream.text, whole.text.substr(0, at));
  EXPECT_LT(stream.tokens.size(), whole.tokens.size());
  EXPECT_EQ(stream.tokens, std::vector<int32_t>(whole.tokens.begin(),
                                                whole.tokens.begin() +
                                                    stream.tokens.size()));
}

TEST_F(GenerateTest, CallbackAndContextEndGeneration) {
  std::vector<int32_t> prompt = {1, 2, 3};
  Loaded loaded;
  openWithText(loaded);
  Stream stream;
  stream.stopAfter = 5;
  afm_generate_result result;
  ASSERT_TRUE(generate(loaded, prompt, nullptr, stream, &result));
  EXPECT_EQ(result.stop_reason, AFM_STOP_CALLBACK);
  EXPECT_EQ(stream.tokens.size(), 5u);

  // max_tokens 0: until the context (64) is full; the token sampled from
  // the logits of position 63 is the last one.
  Loaded full;
  openWithText(full);
  std::vector<int32_t> longPrompt(60, 7);
  Stream all;
  ASSERT_TRUE(generate(full, longPrompt, nullptr, all, &result));
  EXPECT_EQ(result.stop_reason, AFM_STOP_CONTEXT);
  EXPECT_EQ(all.tokens, predict(longPrompt, 5));
}

TEST_F(GenerateTest, WithoutATokenizer) {
  Loaded loaded;
  open(pack(fakeOptions()), loaded);
  EXPECT_EQ(afm_model_tokenizer(loaded.model), nullptr);
  std::string text = "hello";
  EXPECT_AFM_ERROR(afm_generate_text(loaded.session, text.data(), text.size(),
                                     1, nullptr, nullptr, nullptr, nullptr),
                   AFM_ERR_STATE, "has no tokenizer");
  std::vector<int32_t> prompt = {1, 2};
  afm_generate_options o;
  afm_generate_options_init(&o);
  const char *stops[] = {"x"};
  o.stop_strings = stops;
  o.stop_string_count = 1;
  EXPECT_AFM_ERROR(afm_generate(loaded.session, prompt.data(), prompt.size(),
                                &o, nullptr, nullptr, nullptr),
                   AFM_ERR_ARGUMENT, "no tokenizer");
  // Ids alone work, over the whole vocabulary.
  o.stop_string_count = 0;
  o.max_tokens = 4;
  Stream stream;
  ASSERT_TRUE(generate(loaded, prompt, &o, stream, nullptr));
  Predictor predictor(kVocab);
  std::vector<int32_t> expected = {predictor.prefill(prompt)};
  while (expected.size() < 4)
    expected.push_back(predictor.decode(expected.back()));
  EXPECT_EQ(stream.tokens, expected);
  EXPECT_EQ(stream.text, "");
}

TEST_F(GenerateTest, BadOptionsAreErrors) {
  Loaded loaded;
  openWithText(loaded);
  std::vector<int32_t> prompt = {1};
  afm_generate_options o;
  afm_generate_options_init(&o);
  o.max_tokens = -1;
  EXPECT_AFM_ERROR(afm_generate(loaded.session, prompt.data(), 1, &o, nullptr,
                                nullptr, nullptr),
                   AFM_ERR_ARGUMENT, "max_tokens");
  afm_generate_options_init(&o);
  const char *stops[] = {""};
  o.stop_strings = stops;
  o.stop_string_count = 1;
  EXPECT_AFM_ERROR(afm_generate(loaded.session, prompt.data(), 1, &o, nullptr,
                                nullptr, nullptr),
                   AFM_ERR_ARGUMENT, "stop string 0 is empty");
  afm_generate_options_init(&o);
  o.sampling.top_p = 2;
  EXPECT_AFM_ERROR(afm_generate(loaded.session, prompt.data(), 1, &o, nullptr,
                                nullptr, nullptr),
                   AFM_ERR_ARGUMENT, "top_p");
  EXPECT_EQ(afm_session_position(loaded.session), 0);
}

TEST_F(GenerateTest, HostileTextSectionsAreRefused) {
  // An end id past the vocabulary.
  std::vector<uint8_t> bytes =
      pack(fakeOptions(), [](afm::manifest::Manifest &m) {
        m.mutable_generation()->add_eos_ids(kVocab);
      });
  EXPECT_AFM_ERROR(load(bytes), AFM_ERR_FORMAT,
                   "eos_ids[0] is 300, not below vocab_size 300");

  // A tokenizer with more ids than the logits have rows.
  FakeModelOptions small = fakeOptions();
  small.vocab = 200;
  EXPECT_AFM_ERROR(load(pack(small, {}, byteTokenizer())), AFM_ERR_FORMAT,
                   "tokenizer has ids up to 257, past the model's vocab_size "
                   "200");

  // A tokenizer section that is not a tokenizer, its checksum recomputed.
  std::vector<uint8_t> garbage =
      pack(fakeOptions(), {}, std::string(64, '\xff'));
  EXPECT_AFM_ERROR(load(garbage), AFM_ERR_FORMAT, "tokenizer section");

  // A flipped byte without a new checksum.
  std::vector<uint8_t> flipped = pack(fakeOptions(), {}, byteTokenizer());
  unsigned index = 3;
  ASSERT_EQ(getSectionField(flipped, index, AFMB_SECTION_KIND, 4),
            uint64_t(AFMB_SECTION_KIND_TOKENIZER));
  flipped[getSectionField(flipped, index, AFMB_SECTION_OFFSET, 8) + 10] ^= 1;
  EXPECT_AFM_ERROR(load(flipped), AFM_ERR_FORMAT,
                   "section 3 (tokenizer) checksum mismatch");

  // Two tokenizer sections.
  std::vector<uint8_t> twice = pack(fakeOptions(), {}, byteTokenizer());
  setSectionField(twice, 2, AFMB_SECTION_KIND, 4, AFMB_SECTION_KIND_TOKENIZER);
  EXPECT_AFM_ERROR(load(twice), AFM_ERR_FORMAT,
                   "are both of kind 4 (tokenizer)");
}

} // namespace
