//===- KernelBench.h - time afm kernels compiled for this machine -*- C++ -*-===//
//
// Each kernel (KernelSources.h) is compiled once by the real pipeline
// (afm-graph-codegen) for the host's threads and called through
// HostLibrary, then timed on each given HostThreads: the same code on 1 and
// on N threads. Weights rotate through copies whose total exceeds the
// last-level cache, so a decode step reads its weights from DRAM.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_TOOLS_AFM_BENCH_KERNELBENCH_H
#define AFM_TOOLS_AFM_BENCH_KERNELBENCH_H

#include "KernelSources.h"
#include "MachineLimits.h"

#include "afm/Target/TargetDescription.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace afm_bench {

class HostThreads;

struct KernelResult {
  KernelSpec spec;
  int threads = 1;
  double secondsPerCall = 0;
  double flops = 0;     // per call, 0 when the kernel does no arithmetic
  double fmaFlops = 0;  // of which f32 multiply-adds (KernelSource)
  double bytesRead = 0; // weight or KV bytes read per call
  int copies = 1;       // weight copies rotated through
  /// host->parallel_for calls per kernel call: 0 means it ran on the
  /// calling thread only, whatever the pool.
  double parallelCallsPerCall = 0;
  /// The read bandwidth on the same threads right before and right after
  /// the timing (the better of the two; AdjacentReadProbe), 0 if not
  /// measured.
  double adjacentReadBytesPerSecond = 0;
  std::string adjacentReadPattern; // the pattern that reached it
  /// The cores' round trip measured with each of those (before, after;
  /// coreRoundTripSeconds), 0 with one thread.
  double adjacentCoreRoundTripBefore = 0, adjacentCoreRoundTripAfter = 0;
};

/// Compiles `spec` and times it on each of `hosts` in turn; weights rotate
/// through copies totalling at least `footprintBytes`; each timing runs
/// for at least `minSeconds`, between two measurements of `probe`. One
/// result per host, in order.
llvm::Expected<std::vector<KernelResult>>
runKernel(mlir::MLIRContext &context, const KernelSpec &spec,
          const mlir::afm::TargetDescription &target, size_t footprintBytes,
          double minSeconds, llvm::ArrayRef<HostThreads *> hosts,
          const AdjacentReadProbe &probe);

} // namespace afm_bench

#endif // AFM_TOOLS_AFM_BENCH_KERNELBENCH_H
