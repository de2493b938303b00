//===- RuntimeSessionTest.cpp - sessions on the fake model ----------------===//
//
// Runs the fake model (test/runtime/fake_model.c) through the public C API
// and checks the tokens against the model's rule, computed here on its own:
// after a call, the logits are 1 at hot = (sum of the recorded tokens + last
// position + salt) % vocab (salt 0 for prefill, 1 for decode) and at
// (hot + vocab / 2) % vocab, 0 elsewhere; argmax takes the lower of the two.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"

#include "afm/afmb_format.h"

#include <cstdio>
#include <numeric>
#include <thread>

using namespace afm::test;

namespace {

int32_t argmax(afm_session *session) {
  int32_t token = -1;
  EXPECT_EQ(afm_session_argmax(session, &token), AFM_OK) << afm_last_error();
  return token;
}

/// Greedy generation as afm-run does it: the prompt's token, then `steps`
/// decoded ones.
std::vector<int32_t> greedy(afm_session *session,
                            const std::vector<int32_t> &prompt, int steps) {
  std::vector<int32_t> out;
  EXPECT_EQ(afm_session_prefill(session, prompt.data(), prompt.size()), AFM_OK)
      << afm_last_error();
  out.push_back(argmax(session));
  for (int k = 0; k < steps; ++k) {
    EXPECT_EQ(afm_session_decode(session, out.back()), AFM_OK)
        << afm_last_error();
    out.push_back(argmax(session));
  }
  return out;
}

using RuntimeSession = RuntimeTest;

TEST_F(RuntimeSession, ReportsWhatTheManifestSays) {
  FakeModelOptions options;
  options.vocab = 321;
  options.context = 48;
  options.targetName = "fake-target-name";
  Loaded loaded;
  open(pack(options), loaded);
  EXPECT_EQ(afm_model_vocab_size(loaded.model), 321);
  EXPECT_EQ(afm_model_context_length(loaded.model), 48);
  EXPECT_EQ(afm_model_kv_bytes(loaded.model), 48u * 4);
  EXPECT_STREQ(afm_model_target(loaded.model), "fake-target-name");
  EXPECT_EQ(afm_session_position(loaded.session), 0);
  EXPECT_EQ(afm_session_logits(loaded.session), nullptr);
}

TEST_F(RuntimeSession, GreedyTokensMatchTheHandComputedOnes) {
  // vocab 100, prompt 1 2 3: sum 6 + last 2 = 8 (twin 58); then decode 8:
  // 14 + 3 + 1 = 18 (68); 18: 32 + 4 + 1 = 37 (87); 37: 69 + 5 + 1 = 75,
  // twin 25 wins the tie; 25: 94 + 6 + 1 = 101 -> 1 (51).
  Loaded loaded;
  open(pack(), loaded);
  EXPECT_EQ(greedy(loaded.session, {1, 2, 3}, 4),
            (std::vector<int32_t>{8, 18, 37, 25, 1}));
  EXPECT_EQ(afm_session_position(loaded.session), 7);
}

TEST_F(RuntimeSession, LogitsAreTheModelsAndArgmaxTakesTheLowestTie) {
  Loaded loaded;
  open(pack(), loaded);
  // 60 + 9 + last 1 = 70: ones at 70 and its twin 20.
  std::vector<int32_t> prompt = {60, 9};
  ASSERT_EQ(afm_session_prefill(loaded.session, prompt.data(), prompt.size()),
            AFM_OK);
  const float *logits = afm_session_logits(loaded.session);
  ASSERT_NE(logits, nullptr);
  for (int v = 0; v < 100; ++v)
    EXPECT_EQ(logits[v], v == 20 || v == 70 ? 1.0f : 0.0f) << "logit " << v;
  EXPECT_EQ(argmax(loaded.session), 20);
}

TEST_F(RuntimeSession, ChunkedPrefillMatchesTokenByToken) {
  // 11 tokens through max_tokens 4 (chunks 4, 4, 3), against one token per
  // call, against a model whose prefill takes one token at a time.
  std::vector<int32_t> prompt = {7, 1, 99, 0, 42, 13, 5, 8, 21, 34, 55};
  FakeModelOptions chunked, single;
  single.prefillMaxTokens = 1;
  Loaded a, b, c;
  open(pack(chunked), a, 1, "a.afmb");
  open(pack(single), b, 1, "b.afmb");
  open(pack(chunked), c, 1, "c.afmb");

  ASSERT_EQ(afm_session_prefill(a.session, prompt.data(), prompt.size()),
            AFM_OK)
      << afm_last_error();
  ASSERT_EQ(afm_session_prefill(b.session, prompt.data(), prompt.size()),
            AFM_OK)
      << afm_last_error();
  for (int32_t token : prompt)
    ASSERT_EQ(afm_session_prefill(c.session, &token, 1), AFM_OK)
        << afm_last_error();

  Predictor predictor(100);
  int32_t expected = predictor.prefill(prompt);
  EXPECT_EQ(argmax(a.session), expected);
  EXPECT_EQ(argmax(b.session), expected);
  EXPECT_EQ(argmax(c.session), expected);
  for (afm_session *s : {a.session, b.session, c.session})
    EXPECT_EQ(afm_session_position(s), int64_t(prompt.size()));
  // And the sequences go on the same way.
  for (int k = 0; k < 5; ++k) {
    expected = predictor.decode(expected);
    for (afm_session *s : {a.session, b.session, c.session}) {
      ASSERT_EQ(afm_session_decode(s, predictor.history.back()), AFM_OK);
      EXPECT_EQ(argmax(s), expected);
    }
  }
}

TEST_F(RuntimeSession, PrefillExtendsTheContext) {
  Loaded loaded;
  open(pack(), loaded);
  Predictor predictor(100);
  std::vector<int32_t> first = {3, 4, 5, 6, 7}, second = {8, 9};
  ASSERT_EQ(afm_session_prefill(loaded.session, first.data(), first.size()),
            AFM_OK);
  EXPECT_EQ(argmax(loaded.session), predictor.prefill(first));
  ASSERT_EQ(afm_session_prefill(loaded.session, second.data(), second.size()),
            AFM_OK);
  EXPECT_EQ(argmax(loaded.session), predictor.prefill(second));
  EXPECT_EQ(afm_session_position(loaded.session), 7);
}

TEST_F(RuntimeSession, ThreadCountsAgree) {
  FakeModelOptions options;
  options.vocab = 1000;
  options.context = 200;
  options.prefillMaxTokens = 16;
  std::vector<int32_t> prompt(37);
  for (size_t i = 0; i < prompt.size(); ++i)
    prompt[i] = int32_t(i * 31 % 1000);
  Predictor predictor(1000);
  std::vector<int32_t> expected = {predictor.prefill(prompt)};
  for (int k = 0; k < 20; ++k)
    expected.push_back(predictor.decode(expected.back()));

  for (int32_t threads : {1, 2, 3, 0}) {
    Loaded loaded;
    open(pack(options), loaded, threads);
    EXPECT_EQ(greedy(loaded.session, prompt, 20), expected)
        << threads << " threads";
  }
}

TEST_F(RuntimeSession, ContextFullLeavesTheSessionAsItWas) {
  FakeModelOptions options;
  options.context = 8;
  Loaded loaded;
  open(pack(options), loaded);
  std::vector<int32_t> nine(9, 1);
  EXPECT_AFM_ERROR(afm_session_prefill(loaded.session, nine.data(), 9),
                   AFM_ERR_CONTEXT_FULL,
                   "position 0 + 9 tokens exceeds the context length 8");
  EXPECT_EQ(afm_session_position(loaded.session), 0);
  ASSERT_EQ(afm_session_prefill(loaded.session, nine.data(), 8), AFM_OK);
  int32_t before = argmax(loaded.session);
  EXPECT_AFM_ERROR(afm_session_decode(loaded.session, 1), AFM_ERR_CONTEXT_FULL,
                   "position 8 + 1 token exceeds the context length 8");
  EXPECT_EQ(afm_session_position(loaded.session), 8);
  EXPECT_EQ(argmax(loaded.session), before);
}

TEST_F(RuntimeSession, RejectsTokensOutsideTheVocabulary) {
  Loaded loaded;
  open(pack(), loaded);
  std::vector<int32_t> prompt = {1, 2, 100, 3};
  EXPECT_AFM_ERROR(afm_session_prefill(loaded.session, prompt.data(), 4),
                   AFM_ERR_ARGUMENT,
                   "token 2 is 100, outside the vocabulary [0, 100)");
  prompt[2] = -5;
  EXPECT_AFM_ERROR(afm_session_prefill(loaded.session, prompt.data(), 4),
                   AFM_ERR_ARGUMENT, "token 2 is -5");
  EXPECT_EQ(afm_session_position(loaded.session), 0);
  EXPECT_EQ(afm_session_logits(loaded.session), nullptr);

  ASSERT_EQ(afm_session_prefill(loaded.session, prompt.data(), 2), AFM_OK);
  EXPECT_AFM_ERROR(afm_session_decode(loaded.session, 1000), AFM_ERR_ARGUMENT,
                   "token 0 is 1000, outside the vocabulary [0, 100)");
  EXPECT_EQ(afm_session_position(loaded.session), 2);
}

TEST_F(RuntimeSession, DecodeAndArgmaxNeedAPrefillFirst) {
  Loaded loaded;
  open(pack(), loaded);
  EXPECT_AFM_ERROR(afm_session_decode(loaded.session, 1), AFM_ERR_STATE,
                   "prefill a prompt first");
  int32_t token;
  EXPECT_AFM_ERROR(afm_session_argmax(loaded.session, &token), AFM_ERR_STATE,
                   "no logits yet");
  EXPECT_EQ(afm_session_logits(loaded.session), nullptr);
  EXPECT_EQ(afm_session_position(loaded.session), 0);
}

TEST_F(RuntimeSession, ResetForgetsTheContext) {
  Loaded loaded;
  open(pack(), loaded);
  std::vector<int32_t> first = greedy(loaded.session, {11, 12, 13}, 3);
  ASSERT_EQ(afm_session_reset(loaded.session), AFM_OK);
  EXPECT_EQ(afm_session_position(loaded.session), 0);
  EXPECT_EQ(afm_session_logits(loaded.session), nullptr);
  EXPECT_AFM_ERROR(afm_session_decode(loaded.session, 1), AFM_ERR_STATE,
                   "prefill a prompt first");
  // The fake model sums its whole arena: any token left over from before
  // the reset would change these.
  EXPECT_EQ(greedy(loaded.session, {11, 12, 13}, 3), first);
  ASSERT_EQ(afm_session_reset(loaded.session), AFM_OK);
  Predictor predictor(100);
  EXPECT_EQ(greedy(loaded.session, {4}, 0),
            std::vector<int32_t>{predictor.prefill({4})});
}

// The fake model has no verify entry: speculative decoding's calls say so,
// and a rewind may only stay where it is (no ring slack to drop rows into).
TEST_F(RuntimeSession, VerifyAndRewindNeedAVerifyEntry) {
  Loaded loaded;
  open(pack(), loaded);
  EXPECT_EQ(afm_model_verify_tokens(loaded.model), 0);
  greedy(loaded.session, {11, 12, 13}, 2);
  int32_t tokens[2] = {1, 2};
  EXPECT_AFM_ERROR(afm_session_verify(loaded.session, tokens, 2),
                   AFM_ERR_STATE, "--verify-tokens");
  size_t rows = 7;
  EXPECT_EQ(afm_session_verify_logits(loaded.session, &rows), nullptr);
  EXPECT_EQ(rows, 0u);
  int64_t position = afm_session_position(loaded.session);
  EXPECT_AFM_ERROR(afm_session_rewind(loaded.session, position - 1),
                   AFM_ERR_ARGUMENT, "keep only that many spare slots");
  EXPECT_AFM_ERROR(afm_session_rewind(loaded.session, position + 1),
                   AFM_ERR_ARGUMENT, "outside the context");
  EXPECT_AFM_ERROR(afm_session_rewind(nullptr, 0), AFM_ERR_ARGUMENT,
                   "`session` is NULL");
  // Staying put is allowed and keeps the logits.
  ASSERT_EQ(afm_session_rewind(loaded.session, position), AFM_OK);
  EXPECT_NE(afm_session_logits(loaded.session), nullptr);
  EXPECT_EQ(afm_session_position(loaded.session), position);
}

TEST_F(RuntimeSession, RejectsBadArguments) {
  Loaded loaded;
  open(pack(), loaded);
  int32_t token = 1;
  EXPECT_AFM_ERROR(afm_session_prefill(loaded.session, &token, 0),
                   AFM_ERR_ARGUMENT, "count is 0");
  EXPECT_AFM_ERROR(afm_session_prefill(loaded.session, nullptr, 1),
                   AFM_ERR_ARGUMENT, "`tokens` is NULL");
  EXPECT_AFM_ERROR(afm_session_prefill(nullptr, &token, 1), AFM_ERR_ARGUMENT,
                   "`session` is NULL");
  EXPECT_AFM_ERROR(afm_session_decode(nullptr, 1), AFM_ERR_ARGUMENT,
                   "`session` is NULL");
  EXPECT_AFM_ERROR(afm_session_argmax(loaded.session, nullptr),
                   AFM_ERR_ARGUMENT, "`token` is NULL");
  EXPECT_AFM_ERROR(afm_session_reset(nullptr), AFM_ERR_ARGUMENT,
                   "`session` is NULL");

  afm_session *session = nullptr;
  afm_session_options options = {};
  options.num_threads = -1;
  EXPECT_AFM_ERROR(afm_session_create(loaded.model, &options, &session),
                   AFM_ERR_ARGUMENT, "num_threads is -1");
  EXPECT_EQ(session, nullptr);
  EXPECT_AFM_ERROR(afm_session_create(nullptr, nullptr, &session),
                   AFM_ERR_ARGUMENT, "`model` is NULL");
  // (Into its own pointer: a failed load sets *out to NULL, which would
  // lose loaded.model.)
  afm_model *model = nullptr;
  EXPECT_AFM_ERROR(afm_model_load(nullptr, 0, &model), AFM_ERR_ARGUMENT,
                   "`path` is NULL");
  EXPECT_AFM_ERROR(afm_model_load("x.afmb", 1u << 7, &model), AFM_ERR_ARGUMENT,
                   "unknown flags 0x80");
  EXPECT_EQ(model, nullptr);

  // Getters and frees take NULL quietly.
  EXPECT_EQ(afm_model_vocab_size(nullptr), 0);
  EXPECT_EQ(afm_session_position(nullptr), 0);
  EXPECT_EQ(afm_session_logits(nullptr), nullptr);
  EXPECT_STREQ(afm_model_target(nullptr), "");
  afm_session_free(nullptr);
  afm_model_free(nullptr);
}

TEST_F(RuntimeSession, ASessionKeepsItsModelAlive) {
  afm_model *model = nullptr;
  ASSERT_EQ(afm_model_load(write("m.afmb", pack()).c_str(), 0, &model), AFM_OK);
  afm_session *session = nullptr;
  ASSERT_EQ(afm_session_create(model, nullptr, &session), AFM_OK);
  afm_model_free(model);
  EXPECT_EQ(greedy(session, {1, 2, 3}, 1), (std::vector<int32_t>{8, 18}));
  afm_session_free(session);
}

TEST_F(RuntimeSession, ModelsLoadedTogetherStayApart) {
  // Each model's code is its own library, even when loaded, freed and
  // loaded again (descriptor numbers are reused in between).
  FakeModelOptions small, large;
  large.vocab = 1000;
  for (int round = 0; round < 3; ++round) {
    Loaded a, b;
    open(pack(small), a, 1, "small.afmb");
    open(pack(large), b, 1, "large.afmb");
    Predictor pa(100), pb(1000);
    std::vector<int32_t> prompt = {90, 95, 99};
    EXPECT_EQ(greedy(a.session, prompt, 0),
              std::vector<int32_t>{pa.prefill(prompt)});
    EXPECT_EQ(greedy(b.session, prompt, 0),
              std::vector<int32_t>{pb.prefill(prompt)});
  }
}

#ifdef __linux__
/// The process's memory mappings (/proc/self/maps lines).
static int countMappings() {
  FILE *maps = fopen("/proc/self/maps", "r");
  if (!maps)
    return -1;
  int lines = 0;
  for (int c; (c = fgetc(maps)) != EOF;)
    lines += c == '\n';
  fclose(maps);
  return lines;
}

TEST_F(RuntimeSession, FreeingAModelUnmapsItsCode) {
  // A server loads and frees models for as long as it runs: the code's
  // library must leave with its model (the loader fuzzer found each copy
  // of a library linked with -z nodelete staying mapped).
  std::string path = write("m.afmb", pack());
  auto cycle = [&] {
    Loaded loaded;
    ASSERT_EQ(afm_model_load(path.c_str(), 0, &loaded.model), AFM_OK);
    ASSERT_EQ(afm_session_create(loaded.model, nullptr, &loaded.session),
              AFM_OK);
  };
  cycle();
  int before = countMappings();
  for (int i = 0; i < 200; ++i)
    cycle();
  EXPECT_LE(countMappings(), before + 8) << "200 load/free cycles";
}
#endif

TEST_F(RuntimeSession, AcceptsAnyMinorVersion) {
  std::vector<uint8_t> file = pack();
  setVersion(file, 1, 7);
  Loaded loaded;
  EXPECT_EQ(load(file, &loaded), AFM_OK) << afm_last_error();
}

TEST_F(RuntimeSession, WeightsChecksumIsCheckedOnlyOnRequest) {
  std::vector<uint8_t> file = pack();
  uint64_t weights = getSectionField(file, 1, AFMB_SECTION_OFFSET, 8);
  file[weights + 100] ^= 0xff; // past the config the fake model reads
  EXPECT_EQ(load(file), AFM_OK) << afm_last_error();
  EXPECT_AFM_ERROR(load(file, nullptr, AFM_LOAD_VERIFY_WEIGHTS), AFM_ERR_FORMAT,
                   "section 1 (weights) checksum mismatch");
  EXPECT_EQ(load(pack(), nullptr, AFM_LOAD_VERIFY_WEIGHTS), AFM_OK)
      << afm_last_error();
}

TEST_F(RuntimeSession, LastErrorIsPerThread) {
  Loaded loaded;
  open(pack(), loaded);
  EXPECT_AFM_ERROR(afm_session_decode(loaded.session, 1), AFM_ERR_STATE,
                   "prefill a prompt first");
  std::string other;
  std::thread([&] {
    other = afm_last_error();
    afm_session_reset(nullptr);
  }).join();
  EXPECT_EQ(other, "");
  EXPECT_NE(std::string(afm_last_error()).find("prefill a prompt first"),
            std::string::npos);
}

} // namespace
