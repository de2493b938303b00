//===- Roofline.h - an SVG roofline of the measured kernels ------*- C++ -*-===//

#ifndef AFM_TOOLS_AFM_BENCH_ROOFLINE_H
#define AFM_TOOLS_AFM_BENCH_ROOFLINE_H

#include "KernelBench.h"
#include "MachineLimits.h"

#include "llvm/Support/raw_ostream.h"

namespace afm_bench {

/// Writes a log-log roofline: arithmetic intensity (FLOP per byte of
/// weights or KV cache read) against GFLOP/s, the 1-thread roof (solid)
/// and the N-thread roof (dashed), and per kernel a labelled 1-thread point
/// joined to its N-thread point. Kernels without arithmetic are listed
/// under the plot instead.
void writeRooflineSVG(llvm::raw_ostream &os, const MachineLimits &limits,
                      llvm::ArrayRef<KernelResult> kernels);

} // namespace afm_bench

#endif // AFM_TOOLS_AFM_BENCH_ROOFLINE_H
