//===- Roofline.h - an SVG roofline of the measured kernels ------*- C++ -*-===//

#ifndef AFM_TOOLS_AFM_BENCH_ROOFLINE_H
#define AFM_TOOLS_AFM_BENCH_ROOFLINE_H

#include "KernelBench.h"
#include "MachineLimits.h"

#include "llvm/Support/raw_ostream.h"

namespace afm_bench {

/// Writes a log-log roofline: arithmetic intensity (FLOP per weight byte)
/// against GFLOP/s, the one-thread bandwidth and FMA roofs, and one
/// labelled point per kernel.
void writeRooflineSVG(llvm::raw_ostream &os, const MachineLimits &limits,
                      llvm::ArrayRef<KernelResult> kernels);

} // namespace afm_bench

#endif // AFM_TOOLS_AFM_BENCH_ROOFLINE_H
