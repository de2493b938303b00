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

  /// A packed fake model, the manifest edited by `edit` before writing.
  std::vector<uint8_t>
  pack(const FakeModelOptions &options = {},
       const std::function<void(manifest::Manifest &)> &edit = {});

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
