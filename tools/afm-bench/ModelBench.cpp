//===- ModelBench.cpp - TTFT and decode speed of compiled models ----------===//

#include "ModelBench.h"

#include "afm/runtime.h"

#include <algorithm>
#include <chrono>
#include <vector>

using namespace afm_bench;
using Clock = std::chrono::steady_clock;

static llvm::Error runtimeError(const std::string &what) {
  return llvm::createStringError(what + ": " + afm_last_error());
}

llvm::Expected<ModelResult> afm_bench::runModel(const std::string &path,
                                                int threads, int promptTokens,
                                                int decodeTokens,
                                                int repeats) {
  afm_model *model = nullptr;
  if (afm_model_load(path.c_str(), 0, &model) != AFM_OK)
    return runtimeError("cannot load '" + path + "'");
  afm_session_options options = {};
  options.num_threads = threads;
  afm_session *session = nullptr;
  if (afm_session_create(model, &options, &session) != AFM_OK) {
    afm_model_free(model);
    return runtimeError("cannot create a session");
  }
  ModelResult result;
  result.path = path;
  result.target = afm_model_target(model);
  result.threads = threads;
  int32_t vocab = afm_model_vocab_size(model);
  int32_t context = afm_model_context_length(model);
  promptTokens = std::min(promptTokens, context - 1);
  decodeTokens = std::min(decodeTokens, context - promptTokens);
  result.promptTokens = promptTokens;
  result.decodeTokens = decodeTokens;
  std::vector<int32_t> prompt(promptTokens);
  for (int i = 0; i < promptTokens; ++i)
    prompt[i] = (7 * i + 3) % vocab;

  llvm::Error error = llvm::Error::success();
  for (int r = 0; r < repeats && !error; ++r) {
    if (afm_session_reset(session) != AFM_OK) {
      error = runtimeError("reset");
      break;
    }
    auto start = Clock::now();
    if (afm_session_prefill(session, prompt.data(), prompt.size()) != AFM_OK) {
      error = runtimeError("prefill");
      break;
    }
    double ttft = std::chrono::duration<double>(Clock::now() - start).count();
    int32_t token = 0;
    auto decodeStart = Clock::now();
    for (int i = 0; i < decodeTokens; ++i) {
      if (afm_session_argmax(session, &token) != AFM_OK ||
          afm_session_decode(session, token) != AFM_OK) {
        error = runtimeError("decode");
        break;
      }
    }
    double decode =
        std::chrono::duration<double>(Clock::now() - decodeStart).count();
    if (r == 0 || ttft < result.ttftSeconds)
      result.ttftSeconds = ttft;
    result.decodeTokensPerSecond =
        std::max(result.decodeTokensPerSecond, decodeTokens / decode);
  }
  afm_session_free(session);
  afm_model_free(model);
  if (error)
    return std::move(error);
  return result;
}
