//===- KernelBench.h - time afm kernels compiled for this machine -*- C++ -*-===//
//
// Each kernel is a small afm/TOSA function compiled by the real pipeline
// (afm-graph-codegen) for the host and called through HostLibrary. Its
// weights are arguments, so a run can rotate through copies whose total
// exceeds the last-level cache: a decode step reads its weights from DRAM.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_TOOLS_AFM_BENCH_KERNELBENCH_H
#define AFM_TOOLS_AFM_BENCH_KERNELBENCH_H

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace afm_bench {

/// One kernel at one shape: y[M, N] = x[M, K] @ W^T in a weight format.
struct KernelSpec {
  std::string name;   // "f32 GEMV", "2-bit GEMM", ...
  std::string format; // "f32", "q2", "astc"
  int64_t m, n, k;
};

struct KernelResult {
  KernelSpec spec;
  double secondsPerCall = 0;
  double flops = 0;       // 2 M N K
  double weightBytes = 0; // bytes of W read per call
  int copies = 1;         // weight copies rotated through
};

/// The kernels issue 7 names, at the shapes it names.
std::vector<KernelSpec> defaultKernels();

/// Compiles and times `spec`; weights rotate through copies totalling at
/// least `footprintBytes`; runs for at least `minSeconds`.
llvm::Expected<KernelResult> runKernel(mlir::MLIRContext &context,
                                       const KernelSpec &spec,
                                       size_t footprintBytes,
                                       double minSeconds);

} // namespace afm_bench

#endif // AFM_TOOLS_AFM_BENCH_KERNELBENCH_H
