//===- Accumulators.h - keep vector accumulators in registers ---*- C++ -*-===//
//
// Loop rewrites for vectorized reductions after tiling: an accumulator
// read and written in a loop becomes the loop's iter_arg, and a scalar
// sum of horizontal reductions per iteration becomes a vector sum with one
// horizontal reduction after the loop.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_PASSES_ACCUMULATORS_H
#define AFM_PASSES_ACCUMULATORS_H

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::afm {

/// Keeps a reduction loop's accumulators in registers: a transfer_read
/// and a transfer_write of the same loop-invariant place, with no other
/// access to that buffer in the loop, become an iter_arg. (Upstream's
/// hoistRedundantVectorTransfers refuses any buffer that also has views
/// elsewhere in the function, as packed buffers do.) Hoists one pair;
/// returns the loop, a new one when it hoisted.
scf::ForOp hoistAccumulators(RewriterBase &rewriter, scf::ForOp loop);

/// For an integer iter_arg `a : vector<1xiN>` that each iteration updates
/// as `a + broadcast(reduce_add(X1)) + ... + broadcast(reduce_add(Xn))`
/// (Xk : vector<L x iN>), carries up to four vector sums `Vk` instead,
/// each of every fourth X, and adds `reduce_add(V1 + ... + V4)` to `a`'s
/// init after the loop: one horizontal reduction per loop instead of n per
/// iteration, and independent chains. An X that is `afm_cpu.dot_bytes`
/// from zero accumulates into its Vk in the instruction (vpdpbusd into
/// the sum, not into a zeroed register and then added). Integer sums are
/// associative, so the result is the same. Rewrites one such iter_arg;
/// returns the loop, a new one when it rewrote.
scf::ForOp liftReductionsOutOfLoop(RewriterBase &rewriter, scf::ForOp loop);

/// For a float iter_arg `a` that each iteration updates as
/// `vector.multi_reduction <add>, X, a` (X not depending on `a`: one
/// split-K step's lanes summed into an output without them), carries the
/// vector sum of the X instead and reduces it once after the loop: one
/// horizontal sum per output instead of one per step. Float sums change
/// their association, as split-K partial sums already do. When X is a
/// chain fma(a_n, b_n, ... fma(a_1, b_1, 0)) whose fmas are all marked
/// `reassoc`, the products go straight into two carried sums, alternately
/// (no add a step, chains half as long). Rewrites one such iter_arg;
/// returns the loop, a new one when it rewrote. A reduction over unit
/// dimensions only (an add of one product a step, as the ASTC kernels'
/// block scales leave it) stays in the loop, as an add that keeps the
/// product's `contract` flag, so LLVM makes the pair one fma: upstream
/// lowers such a reduction to an add without flags.
scf::ForOp liftLaneSumsOutOfLoop(RewriterBase &rewriter, scf::ForOp loop);

} // namespace mlir::afm

#endif // AFM_PASSES_ACCUMULATORS_H
