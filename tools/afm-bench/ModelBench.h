//===- ModelBench.h - TTFT and decode speed of compiled models --*- C++ -*-===//

#ifndef AFM_TOOLS_AFM_BENCH_MODELBENCH_H
#define AFM_TOOLS_AFM_BENCH_MODELBENCH_H

#include "llvm/Support/Error.h"

#include <string>

namespace afm_bench {

struct ModelResult {
  std::string path, target;
  int threads = 1;
  int promptTokens = 0, decodeTokens = 0;
  /// Best of the runs: prefill of the prompt (time to first token) and
  /// decode steps per second.
  double ttftSeconds = 0, decodeTokensPerSecond = 0;
};

/// Loads the .afmb at `path` through the C runtime and runs a
/// `promptTokens`-token prompt then `decodeTokens` greedy steps on
/// `threads` threads, `repeats` times.
llvm::Expected<ModelResult> runModel(const std::string &path, int threads,
                                     int promptTokens, int decodeTokens,
                                     int repeats);

} // namespace afm_bench

#endif // AFM_TOOLS_AFM_BENCH_MODELBENCH_H
