//===- RuntimeTestSupport.cpp - fixtures of AFMRuntimeTests ---------------===//

#include "RuntimeTestSupport.h"

#include "llvm/Support/FileSystem.h"

namespace afm::test {

void RuntimeTest::SetUp() {
  llvm::SmallString<128> path;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("afm-runtime-test", path));
  dir = std::string(path);
}

void RuntimeTest::TearDown() { llvm::sys::fs::remove_directories(dir); }

const std::vector<uint8_t> &RuntimeTest::fakeCode() {
  static const std::vector<uint8_t> code =
      llvm::cantFail(readFile(AFM_FAKE_MODEL_PATH));
  return code;
}

std::vector<uint8_t>
RuntimeTest::pack(const FakeModelOptions &options,
                  const std::function<void(manifest::Manifest &)> &edit,
                  const std::string &tokenizer) {
  manifest::Manifest m = makeFakeManifest(options);
  if (edit)
    edit(m);
  return packAFMB(
      m, makeFakeWeights(options), withFacts(fakeCode(), makeFakeFacts(options)),
      llvm::ArrayRef(reinterpret_cast<const uint8_t *>(tokenizer.data()),
                     tokenizer.size()));
}

std::string RuntimeTest::write(const std::string &name,
                               const std::vector<uint8_t> &bytes) {
  std::string path = dir + "/" + name;
  llvm::cantFail(writeFile(path, bytes));
  return path;
}

afm_status RuntimeTest::load(const std::vector<uint8_t> &bytes, Loaded *loaded,
                             uint32_t flags, const std::string &name) {
  afm_model *model = nullptr;
  afm_status status = afm_model_load(write(name, bytes).c_str(), flags, &model);
  if (status != AFM_OK)
    EXPECT_EQ(model, nullptr);
  if (loaded)
    loaded->model = model;
  else
    afm_model_free(model);
  return status;
}

void RuntimeTest::open(const std::vector<uint8_t> &bytes, Loaded &loaded,
                       int32_t threads, const std::string &name) {
  ASSERT_EQ(load(bytes, &loaded, 0, name), AFM_OK) << afm_last_error();
  afm_session_options options = {};
  options.num_threads = threads;
  ASSERT_EQ(afm_session_create(loaded.model, &options, &loaded.session), AFM_OK)
      << afm_last_error();
}

} // namespace afm::test
