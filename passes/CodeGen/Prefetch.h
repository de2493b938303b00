//===- Prefetch.h - software prefetch of streamed weights -------*- C++ -*-===//
//
// A GEMV reads each weight once, in order, with a dozen or so instructions
// per cache line: the reorder window alone keeps too few lines in flight
// to cover the DRAM latency at full bandwidth, so the kernels prefetch
// the weight rows ahead of the tile they read.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_PASSES_PREFETCH_H
#define AFM_PASSES_PREFETCH_H

#include "mlir/IR/Builders.h"

namespace mlir::scf {
class ForOp;
} // namespace mlir::scf

namespace mlir::afm {

constexpr int64_t kCacheLineBytes = 64;
/// A tile spanning more lines than this prefetches only its first.
constexpr int64_t kMaxPrefetchesPerTile = 8;

/// Prefetches the bytes `bytesAhead` beyond the tile `view` (a
/// memref.subview) reads, in its source's leading dimension (the weight
/// rows, a row being the leading stride), clamped to the last row: each
/// cache line the tile spans. Nothing when `view` is not a subview of a
/// static memref with a static leading stride.
/// Nothing either when `bytesAhead` is 0. The distance is the target's
/// (TargetDescription::prefetchBytes): 8 KiB where it was measured best on
/// the 2-bit GEMV (2 KiB: 23 GB/s, 8 KiB: 27 GB/s on 1 thread), 2 KiB on
/// Granite Rapids, where rows of 2 KiB read faster 1 row ahead; divided
/// among the distinct arrays a kernel streams (TileForTarget.cpp). The
/// `localityHint` is its streamPrefetchLocality: into L1 (3) by default,
/// into L2 (1) on Zen 4, where prefetches into L1 were a loss. Unrolled
/// copies that fall within one cache line keep one prefetch
/// (finishInt8DotLoops). When one of `loops` (around the tile) steps the
/// view along a dimension by less than a cache line (8 f32 lanes of a
/// 64-byte group on AVX2), only its iterations at a multiple of a line's
/// worth prefetch: each step prefetched its own 32 bytes, two prefetches a
/// line (LLVM unrolls an innermost such loop, so MLIR cannot dedupe them
/// later). The iterations that prefetch are a line apart, so every line is
/// still touched, whatever the alignment.
void prefetchAhead(OpBuilder &b, Location loc, Value view, int64_t bytesAhead,
                   unsigned localityHint, ArrayRef<scf::ForOp> loops = {});

} // namespace mlir::afm

#endif // AFM_PASSES_PREFETCH_H
