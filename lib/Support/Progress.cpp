//===- Progress.cpp - progress of long work on a terminal ------------------===//

#include "afm/Support/Progress.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

using namespace afm;

TerminalProgress::TerminalProgress(llvm::StringRef tool, uint64_t total,
                                   llvm::StringRef unit)
    : tool(tool.str()), unit(unit.str()), total(total),
      enabled(llvm::sys::Process::StandardErrIsDisplayed()),
      start(std::chrono::steady_clock::now()) {}

void TerminalProgress::update(llvm::StringRef what, uint64_t done) {
  if (!enabled)
    return;
  std::lock_guard<std::mutex> lock(mutex);
  auto now = std::chrono::steady_clock::now();
  if (done < total && now - lastDraw < std::chrono::milliseconds(100))
    return;
  lastDraw = now;
  double elapsed = std::chrono::duration<double>(now - start).count();
  double left = done ? elapsed * double(total - done) / double(done) : 0.0;
  double scale = unit == "GB" ? 1e-9 : 1.0;
  llvm::errs() << llvm::formatv(
      "\r\x1b[K{0}: {1,5:f1}% of {2:f2}{3}{4}, {5:f0} s elapsed, ~{6:f0} s "
      "left: {7}",
      tool, total ? 100.0 * double(done) / double(total) : 100.0,
      double(total) * scale, unit.empty() ? "" : " ", unit, elapsed, left,
      what);
}

void TerminalProgress::finish() {
  if (!enabled)
    return;
  std::lock_guard<std::mutex> lock(mutex);
  llvm::errs() << "\r\x1b[K";
  enabled = false;
}
