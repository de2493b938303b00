//===- Progress.h - progress of long work on a terminal ---------*- C++ -*-===//
//
// One status line on stderr, redrawn in place, for work that takes minutes
// (writing or compiling a model of billions of parameters): what is being
// done, how far along, and an estimate of the time left. Silent when stderr
// is not a terminal, so logs and tests see nothing.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_PROGRESS_H
#define AFM_PROGRESS_H

#include "llvm/ADT/StringRef.h"

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace afm {

class TerminalProgress {
public:
  /// `tool` prefixes the line; `total` is the amount of work (bytes, say)
  /// and `unit` its name in the line ("GB" divides by 1e9, "" shows counts).
  TerminalProgress(llvm::StringRef tool, uint64_t total, llvm::StringRef unit);
  ~TerminalProgress() { finish(); }

  /// Records that `done` of the total is complete, now working on `what`.
  /// Thread-safe; redraws at most every 100 ms.
  void update(llvm::StringRef what, uint64_t done);

  /// Sets the total when it is known only once the work has started.
  void setTotal(uint64_t newTotal) { total = newTotal; }

  /// Clears the line (idempotent).
  void finish();

private:
  std::string tool, unit;
  uint64_t total;
  bool enabled;
  std::mutex mutex;
  std::chrono::steady_clock::time_point start, lastDraw;
};

} // namespace afm

#endif // AFM_PROGRESS_H
