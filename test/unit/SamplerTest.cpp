//===- SamplerTest.cpp - the runtime's sampler against a plain reference --===//
//
// The distribution afm_sampler_sample draws from, checked against an
// independent reference written here the plain way (every token sorted,
// Hugging Face transformers' rules applied one after the other, in double):
// the tokens a filter removes are never drawn, and the frequencies of 200,000
// draws pass a chi-square test against the reference probabilities. The
// seed is fixed, so the test is deterministic; a wrong rule or a biased draw
// moves the statistic far past the bound.
//
//===----------------------------------------------------------------------===//

#include "CompressTestSupport.h"

#include "afm/generate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <vector>

namespace {

struct SamplerDeleter {
  void operator()(afm_sampler *s) const { afm_sampler_free(s); }
};
using SamplerPtr = std::unique_ptr<afm_sampler, SamplerDeleter>;

SamplerPtr makeSampler(const afm_sampling_options &o, int32_t vocab,
                       int32_t limit) {
  afm_sampler *s = nullptr;
  EXPECT_EQ(afm_sampler_create(&o, vocab, limit, &s), AFM_OK)
      << afm_last_error();
  return SamplerPtr(s);
}

afm_sampling_options options(float temperature, int32_t topK = 0,
                             float topP = 1, float minP = 0) {
  afm_sampling_options o;
  afm_sampling_options_init(&o);
  o.temperature = temperature;
  o.top_k = topK;
  o.top_p = topP;
  o.min_p = minP;
  return o;
}

/// The reference: the probability of each token under `o` after the
/// context `history`, by the rules of transformers' logits processors.
std::vector<double> referenceDistribution(const std::vector<float> &logits,
                                          const afm_sampling_options &o,
                                          const std::vector<int32_t> &history,
                                          int32_t limit) {
  const double ninf = -std::numeric_limits<double>::infinity();
  std::vector<double> scores(logits.size(), ninf);
  for (int32_t id = 0; id < limit; ++id)
    scores[id] = logits[id];
  // RepetitionPenaltyLogitsProcessor, then the presence penalty.
  std::vector<bool> seen(logits.size(), false);
  for (int32_t id : history)
    seen[id] = true;
  for (int32_t id = 0; id < limit; ++id)
    if (seen[id]) {
      double r = o.repetition_penalty;
      scores[id] = scores[id] > 0 ? scores[id] / r : scores[id] * r;
      scores[id] -= o.presence_penalty;
    }
  // TemperatureLogitsWarper.
  for (double &s : scores)
    s /= o.temperature;
  // Every token in order: most likely first, lower id on ties.
  std::vector<int32_t> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return scores[a] > scores[b]; });
  // TopKLogitsWarper.
  if (o.top_k > 0)
    for (size_t i = o.top_k; i < order.size(); ++i)
      scores[order[i]] = ninf;
  auto softmax = [&] {
    double top = scores[order[0]], sum = 0;
    std::vector<double> p(scores.size());
    for (size_t id = 0; id < scores.size(); ++id)
      sum += p[id] = std::exp(scores[id] - top);
    for (double &x : p)
      x /= sum;
    return p;
  };
  // TopPLogitsWarper: drop a token when the mass strictly before it
  // reaches top_p (ascending cumulative <= 1 - top_p), keeping one.
  if (o.top_p < 1) {
    std::vector<double> p = softmax();
    double before = 0;
    for (size_t i = 0; i < order.size(); ++i) {
      if (i > 0 && before >= o.top_p)
        scores[order[i]] = ninf;
      before += p[order[i]];
    }
  }
  // MinPLogitsWarper.
  if (o.min_p > 0) {
    std::vector<double> p = softmax();
    double cutoff = o.min_p * p[order[0]];
    for (size_t id = 0; id < p.size(); ++id)
      if (p[id] < cutoff)
        scores[id] = ninf;
  }
  return softmax();
}

/// Draws `draws` tokens and checks them against `expected`: no token of
/// probability 0, and a chi-square statistic over the tokens of expected
/// count >= 5 (the rest pooled) below df + 6 sqrt(2 df).
void expectDistribution(afm_sampler *sampler, const std::vector<float> &logits,
                        const std::vector<double> &expected, int draws) {
  std::vector<int> counts(expected.size(), 0);
  for (int i = 0; i < draws; ++i) {
    int32_t token = -1;
    ASSERT_EQ(afm_sampler_sample(sampler, logits.data(), &token), AFM_OK)
        << afm_last_error();
    ASSERT_GE(token, 0);
    ASSERT_LT(token, (int32_t)expected.size());
    ASSERT_GT(expected[token], 0) << "token " << token << " was filtered out";
    ++counts[token];
  }
  double chi2 = 0, pooledExpected = 0, pooledCount = 0;
  int bins = 0;
  for (size_t id = 0; id < expected.size(); ++id) {
    double e = expected[id] * draws;
    if (e >= 5) {
      chi2 += (counts[id] - e) * (counts[id] - e) / e;
      ++bins;
    } else {
      pooledExpected += e;
      pooledCount += counts[id];
    }
  }
  if (pooledExpected >= 5) {
    chi2 += (pooledCount - pooledExpected) * (pooledCount - pooledExpected) /
            pooledExpected;
    ++bins;
  }
  double df = std::max(1, bins - 1);
  EXPECT_LT(chi2, df + 6 * std::sqrt(2 * df))
      << "chi-square " << chi2 << " over " << bins << " bins";
}

/// Logits of N(0, scale^2), reproducible from `seed`.
std::vector<float> randomLogits(int32_t vocab, uint32_t seed, float scale) {
  return mlir::afm::test::gaussian(size_t(vocab), scale, seed);
}

TEST(SamplerTest, GreedyIsTheLowestArgmax) {
  std::vector<float> logits = {0.5f, 2.0f, -1.0f, 2.0f, 1.0f};
  SamplerPtr s = makeSampler(options(0), 5, 5);
  int32_t token = -1;
  ASSERT_EQ(afm_sampler_sample(s.get(), logits.data(), &token), AFM_OK);
  EXPECT_EQ(token, 1);
  // Only ids below the limit are candidates.
  SamplerPtr limited = makeSampler(options(0), 5, 1);
  ASSERT_EQ(afm_sampler_sample(limited.get(), logits.data(), &token), AFM_OK);
  EXPECT_EQ(token, 0);
  // top_k 1 is greedy at any temperature.
  SamplerPtr topOne = makeSampler(options(5.0f, 1), 5, 5);
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ(afm_sampler_sample(topOne.get(), logits.data(), &token), AFM_OK);
    EXPECT_EQ(token, 1);
  }
}

TEST(SamplerTest, GreedyAtAVocabularyOf150000) {
  // Greedy without penalties reads the logits once (no copy): it must
  // still pick the lowest of tied maxima, ignore ids at or past the limit,
  // and name a NaN, however far into the vocabulary.
  const int32_t vocab = 150000, limit = 149000;
  std::vector<float> logits = randomLogits(vocab, 21, 3.0f);
  float top = *std::max_element(logits.begin(), logits.begin() + limit);
  logits[120000] = logits[70001] = top + 1.0f;
  logits[149500] = top + 2.0f; // past the limit
  int32_t token = -1;
  for (afm_sampling_options o : {options(0), options(0.7f, 1)}) {
    SamplerPtr s = makeSampler(o, vocab, limit);
    ASSERT_EQ(afm_sampler_sample(s.get(), logits.data(), &token), AFM_OK);
    EXPECT_EQ(token, 70001);
  }
  logits[148999] = std::numeric_limits<float>::quiet_NaN();
  SamplerPtr s = makeSampler(options(0), vocab, limit);
  EXPECT_EQ(afm_sampler_sample(s.get(), logits.data(), &token),
            AFM_ERR_ARGUMENT);
  EXPECT_NE(std::string(afm_last_error()).find("token 148999 is NaN"),
            std::string::npos)
      << afm_last_error();
}

TEST(SamplerTest, RepetitionPenaltyAppliesToGreedy) {
  std::vector<float> logits = {1.0f, 1.9f, -0.5f, 1.8f};
  afm_sampling_options o = options(0);
  o.repetition_penalty = 1.2f; // 1.9 / 1.2 = 1.58 < 1.8
  SamplerPtr s = makeSampler(o, 4, 4);
  ASSERT_EQ(afm_sampler_accept(s.get(), 1), AFM_OK);
  int32_t token = -1;
  ASSERT_EQ(afm_sampler_sample(s.get(), logits.data(), &token), AFM_OK);
  EXPECT_EQ(token, 3);
  afm_sampler_reset(s.get());
  ASSERT_EQ(afm_sampler_sample(s.get(), logits.data(), &token), AFM_OK);
  EXPECT_EQ(token, 1);
}

TEST(SamplerTest, NaNLogitIsAnError) {
  std::vector<float> logits = {0.0f, std::numeric_limits<float>::quiet_NaN()};
  SamplerPtr s = makeSampler(options(0.8f), 2, 2);
  int32_t token = -1;
  EXPECT_EQ(afm_sampler_sample(s.get(), logits.data(), &token),
            AFM_ERR_ARGUMENT);
  EXPECT_NE(std::string(afm_last_error()).find("token 1 is NaN"),
            std::string::npos)
      << afm_last_error();
}

TEST(SamplerTest, BadOptionsNameTheField) {
  struct Case {
    afm_sampling_options o;
    const char *field;
  };
  afm_sampling_options base = options(1.0f);
  std::vector<Case> cases;
  auto add = [&](auto edit, const char *field) {
    afm_sampling_options o = base;
    edit(o);
    cases.push_back({o, field});
  };
  add([](afm_sampling_options &o) { o.top_k = -1; }, "top_k");
  add([](afm_sampling_options &o) { o.top_p = 0; }, "top_p");
  add([](afm_sampling_options &o) { o.top_p = 1.5f; }, "top_p");
  add([](afm_sampling_options &o) { o.min_p = -0.1f; }, "min_p");
  add([](afm_sampling_options &o) { o.repetition_penalty = 0; },
      "repetition_penalty");
  add([](afm_sampling_options &o) { o.presence_penalty = INFINITY; },
      "presence_penalty");
  add([](afm_sampling_options &o) { o.temperature = NAN; }, "temperature");
  for (const Case &c : cases) {
    afm_sampler *s = nullptr;
    EXPECT_EQ(afm_sampler_create(&c.o, 10, 10, &s), AFM_ERR_ARGUMENT)
        << c.field;
    EXPECT_EQ(s, nullptr);
    EXPECT_NE(std::string(afm_last_error()).find(c.field), std::string::npos)
        << afm_last_error();
  }
  afm_sampler *s = nullptr;
  EXPECT_EQ(afm_sampler_create(&base, 10, 11, &s), AFM_ERR_ARGUMENT);
  EXPECT_EQ(afm_sampler_create(&base, 10, 0, &s), AFM_ERR_ARGUMENT);
  SamplerPtr ok = makeSampler(base, 10, 10);
  EXPECT_EQ(afm_sampler_accept(ok.get(), 10), AFM_ERR_ARGUMENT);
  EXPECT_EQ(afm_sampler_accept(ok.get(), -1), AFM_ERR_ARGUMENT);
}

TEST(SamplerTest, SameSeedSameTokens) {
  std::vector<float> logits = randomLogits(1000, 7, 2.0f);
  auto run = [&](uint64_t seed) {
    afm_sampling_options o = options(1.0f, 0, 0.95f);
    o.seed = seed;
    SamplerPtr s = makeSampler(o, 1000, 1000);
    std::vector<int32_t> tokens(64);
    for (int32_t &t : tokens)
      EXPECT_EQ(afm_sampler_sample(s.get(), logits.data(), &t), AFM_OK);
    return tokens;
  };
  EXPECT_EQ(run(42), run(42));
  EXPECT_NE(run(42), run(43));
}

struct DistributionCase {
  const char *name;
  afm_sampling_options o;
  std::vector<int32_t> history;
};

class SamplerDistributionTest
    : public ::testing::TestWithParam<DistributionCase> {};

TEST_P(SamplerDistributionTest, MatchesTheReference) {
  const DistributionCase &c = GetParam();
  const int32_t vocab = 64;
  std::vector<float> logits = randomLogits(vocab, 3, 1.5f);
  // Two exact ties, so the order among equals matters at the filter edges.
  logits[10] = logits[11];
  SamplerPtr s = makeSampler(c.o, vocab, vocab);
  for (int32_t id : c.history)
    ASSERT_EQ(afm_sampler_accept(s.get(), id), AFM_OK);
  std::vector<double> expected =
      referenceDistribution(logits, c.o, c.history, vocab);
  expectDistribution(s.get(), logits, expected, 200000);
}

afm_sampling_options withSeed(afm_sampling_options o, uint64_t seed) {
  o.seed = seed;
  return o;
}

afm_sampling_options penalized(afm_sampling_options o) {
  o.repetition_penalty = 1.3f;
  o.presence_penalty = 0.4f;
  return o;
}

INSTANTIATE_TEST_SUITE_P(
    Filters, SamplerDistributionTest,
    ::testing::Values(
        DistributionCase{"temperature", withSeed(options(0.7f), 1), {}},
        DistributionCase{"hot", withSeed(options(2.5f), 2), {}},
        DistributionCase{"top_k", withSeed(options(1.0f, 8), 3), {}},
        DistributionCase{"top_p", withSeed(options(1.0f, 0, 0.6f), 4), {}},
        DistributionCase{"min_p", withSeed(options(1.0f, 0, 1, 0.2f), 5), {}},
        DistributionCase{"all", withSeed(options(0.8f, 20, 0.9f, 0.05f), 6),
                         {}},
        DistributionCase{"penalties",
                         withSeed(penalized(options(1.0f)), 7),
                         {1, 5, 5, 9, 20, 33}},
        DistributionCase{"penalties_top_p",
                         withSeed(penalized(options(0.9f, 0, 0.7f)), 8),
                         {0, 2, 4, 6, 8, 10}}),
    [](const ::testing::TestParamInfo<DistributionCase> &info) {
      return std::string(info.param.name);
    });

TEST(SamplerTest, NucleusAtAVocabularyOf150000) {
  // The threshold search of top-p alone: the support drawn must be the
  // reference nucleus, which takes a few thousand of the 150,000 tokens.
  const int32_t vocab = 150000, limit = 149000;
  std::vector<float> logits = randomLogits(vocab, 11, 3.0f);
  afm_sampling_options o = withSeed(options(1.0f, 0, 0.9f), 12);
  SamplerPtr s = makeSampler(o, vocab, limit);
  std::vector<double> expected = referenceDistribution(logits, o, {}, limit);
  int32_t support = 0;
  for (int32_t id = 0; id < vocab; ++id)
    support += expected[id] > 0;
  EXPECT_GT(support, 100);
  EXPECT_LT(support, vocab / 2);
  expectDistribution(s.get(), logits, expected, 5000);
}

} // namespace
