//===- RuntimeTestSupport.h - fixtures of AFMRuntimeTests -------*- C++ -*-===//
//
// Writes fake-model .afmb files (test/runtime/TestBinary.h) into a fresh
// directory per test and loads them through the public C API.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_TEST_UNIT_RUNTIMETESTSUPPORT_H
#define AFM_TEST_UNIT_RUNTIMETESTSUPPORT_H

#include "test/runtime/TestBinary.h"

#include "afm/runtime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace afm::test {

/// A model and a session on it, freed in the right order.
struct Loaded {
  afm_model *model = nullptr;
  afm_session *session = nullptr;
  Loaded() = default;
  Loaded(const Loaded &) = delete;
  Loaded &operator=(const Loaded &) = delete;
  ~Loaded() {
    afm_session_free(session);
    afm_model_free(model);
  }
};

class RuntimeTest : public ::testing::Test {
protected:
  void SetUp() override;
  void TearDown() override;

  /// The fake model's shared library (the code section).
  static const std::vector<uint8_t> &fakeCode();

  /// A packed fake model, the manifest edited by `edit` before writing,
  /// with a tokenizer section of the serialized `tokenizer` if not empty.
  std::vector<uint8_t>
  pack(const FakeModelOptions &options = {},
       const std::function<void(manifest::Manifest &)> &edit = {},
       const std::string &tokenizer = {});

  /// Writes `bytes` to a file of this test's directory; returns its path.
  std::string write(const std::string &name, const std::vector<uint8_t> &bytes);

  /// Loads `bytes` (written as `name`); returns the status. The model, if
  /// any, lands in `loaded` (or is freed when `loaded` is null).
  afm_status load(const std::vector<uint8_t> &bytes, Loaded *loaded = nullptr,
                  uint32_t flags = 0, const std::string &name = "model.afmb");

  /// Loads `bytes` (written as `name`) and opens a session with
  /// `threads`; asserts success. Models loaded at the same time need
  /// different names: a loaded file is mapped, not copied.
  void open(const std::vector<uint8_t> &bytes, Loaded &loaded,
            int32_t threads = 1, const std::string &name = "model.afmb");

  std::string dir;
};

/// The fake model's rule over a whole sequence (test/runtime/fake_model.c):
/// after a call, the logits are 1 at hot = (sum of the recorded tokens +
/// last position + salt) % vocab (salt 0 for prefill, 1 for decode) and at
/// (hot + vocab / 2) % vocab, 0 elsewhere. Greedy takes the lower of the
/// two that is below `limit` (the ids a sampler may pick).
struct Predictor {
  explicit Predictor(uint32_t vocab, uint32_t limit = 0)
      : vocab(vocab), limit(limit ? limit : vocab) {}
  int32_t prefill(const std::vector<int32_t> &tokens) {
    history.insert(history.end(), tokens.begin(), tokens.end());
    return hot(0);
  }
  int32_t decode(int32_t token) {
    history.push_back(token);
    return hot(1);
  }
  int32_t hot(int64_t salt) const {
    int64_t sum = 0;
    for (int32_t t : history)
      sum += t;
    int64_t hot = (sum + int64_t(history.size()) - 1 + salt) % vocab;
    int64_t twin = (hot + vocab / 2) % vocab;
    if (hot >= limit && twin >= limit)
      return 0; // every candidate's logit is 0
    if (hot >= limit)
      return int32_t(twin);
    if (twin >= limit)
      return int32_t(hot);
    return int32_t(std::min(hot, twin));
  }
  uint32_t vocab;
  int64_t limit;
  std::vector<int32_t> history;
};

/// Expects `status` to be `expected` with `phrase` in afm_last_error().
#define EXPECT_AFM_ERROR(call, expected, phrase)                               \
  do {                                                                         \
    afm_status status_ = (call);                                               \
    EXPECT_EQ(afm_status_name(status_),                                        \
              std::string(afm_status_name(expected)))                          \
        << afm_last_error();                                                   \
    EXPECT_NE(std::string(afm_last_error()).find(phrase), std::string::npos)   \
        << "message: " << afm_last_error();                                    \
  } while (0)

} // namespace afm::test

#endif // AFM_TEST_UNIT_RUNTIMETESTSUPPORT_H
