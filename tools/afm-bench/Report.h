//===- Report.h - afm-bench's table and JSON --------------------*- C++ -*-===//
//
// Every kernel figure is printed next to the limit it is a fraction of, on
// the same number of threads: a 1-thread run against the 1-thread read
// bandwidth and FMA peak, an N-thread run against the N-thread ones.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_TOOLS_AFM_BENCH_REPORT_H
#define AFM_TOOLS_AFM_BENCH_REPORT_H

#include "KernelBench.h"
#include "MachineLimits.h"
#include "ModelBench.h"

#include "llvm/Support/raw_ostream.h"

namespace afm_bench {

/// Read bandwidth and FMA peak on `threads` threads (1 or limits.threads).
double readBytesPerSecond(const MachineLimits &limits, int threads);
double fmaFlopsPerSecond(const MachineLimits &limits, int threads);

/// Writes to stderr every kernel that reads faster than the read limit or
/// computes faster than the FMA peak on its thread count: such a limit is
/// wrong (afm-bench's contract is that no kernel beats it). The read limit
/// is DRAM's: a kernel whose rotated copies (`footprintBytes`, or its own
/// bytes when larger) fit in the last-level cache (`lastLevelCacheBytes`)
/// reads from cache and may beat it, which gets a note rather than the
/// warning.
void warnAboutBeatenLimits(const MachineLimits &limits,
                           llvm::ArrayRef<KernelResult> kernels,
                           size_t footprintBytes, size_t lastLevelCacheBytes);

void printTable(llvm::raw_ostream &os, const MachineLimits &limits,
                llvm::ArrayRef<KernelResult> kernels,
                llvm::ArrayRef<ModelResult> models);

void printJSON(llvm::raw_ostream &os, const MachineLimits &limits,
               llvm::ArrayRef<KernelResult> kernels,
               llvm::ArrayRef<ModelResult> models);

} // namespace afm_bench

#endif // AFM_TOOLS_AFM_BENCH_REPORT_H
