//===- Int8DotProducts.h - int8 dot-product kernels to instructions -*- C++ -*-===//
//
// The int8-activation kernels (Q2Int8Matmul.cpp) end in a linalg.generic
//
//   out[..., i] += zext(a[..., i, m]) * sext(b[..., i, m])   (i32, m < 4)
//
// whose innermost loop m sums the four byte products of one i32 lane. The
// upstream vectorizer turns a tile of it into 2-D [lanes, 4] byte vectors
// and a multi-reduction, which LLVM scalarizes. These helpers instead
// vectorize the tile into 1-D byte vectors and the target's dot-product
// instruction (TargetDescription::int8Dot): vpdpbusd, vpmaddubsw + vpmaddwd
// or sdot.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_PASSES_INT8DOTPRODUCTS_H
#define AFM_PASSES_INT8DOTPRODUCTS_H

#include "afm/Target/TargetDescription.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

namespace mlir::afm {

/// The byte-product sum of an int8 dot-product kernel's body: the values
/// multiplied (`unsignedBytes` zero-extended, `signedBytes` sign-extended)
/// and whether the unsigned ones are known to be below 128 (a mask of at
/// most 127), which the instructions with i16 or signed products need.
struct Int8DotBody {
  Value unsignedBytes, signedBytes;
  bool unsignedBelow128 = false;
  /// The lanes loop is a reduction: each output sums its lanes.
  bool lanesReduced = false;
  Operation *product = nullptr, *sum = nullptr;
};

/// The dot-product body of `op` when `op` is an int8 dot-product kernel:
/// one i32 output, innermost loop a reduction of extent 4 (the bytes of a
/// lane) right after the lanes loop, which is either the output's
/// innermost (parallel) dimension or a reduction the output does not
/// index (then the lanes are summed too); body `out + zext(u8) * sext(s8)`.
std::optional<Int8DotBody> matchInt8DotProduct(linalg::LinalgOp op);

/// Vectorizes one tile of an int8 dot-product kernel (every loop of extent
/// 1 except the output's innermost, of `lanes`, and the 4 bytes) into 1-D
/// vectors and the target's dot-product instruction, and erases it. Fails,
/// leaving the tile alone, when the target has no instruction for these
/// lanes or the tile's operands are not contiguous.
LogicalResult vectorizeInt8DotTile(RewriterBase &rewriter,
                                   linalg::GenericOp tile,
                                   const TargetDescription &target);

/// Finishes the tile loops (`loops`, outermost first) around a vectorized
/// int8 dot tile: loops of one iteration go, views move out of the loops
/// they do not depend on, the accumulator becomes an iter_arg of the
/// reduction loops, short innermost loops (the code planes) are unrolled
/// so their shifts become constants, and a per-tile horizontal sum (an
/// output without the lanes) becomes one per output.
void finishInt8DotLoops(RewriterBase &rewriter,
                        ArrayRef<LoopLikeOpInterface> loops);

/// Whether every byte of the integer (i8 or packed i32) `value` is known
/// to be below 128: it is masked by a constant without a byte's top bit.
/// vpmaddubsw (saturating i16 pair sums) and sdot (signed bytes) are exact
/// only then.
bool bytesMaskedBelow128(Value value);

/// The largest value any byte of the integer (i8 or packed i32) `value`
/// can hold, when it is masked by a constant (the mask's largest byte).
std::optional<uint64_t> maskedByteMax(Value value);

/// How many dot products of `lanes` i32 lanes, with unsigned bytes of at
/// most `unsignedMax`, buildTargetInt8DotSum sums in one: 0 when the
/// target's instruction does not go through i16 pair sums (only
/// vpmaddubsw does) or the bytes reach 128.
int64_t maxInt8DotsSummedInI16(const TargetDescription &target,
                               int64_t lanes, uint64_t unsignedMax);

/// `acc + dot(u1, s1) + ... + dot(un, sn)` with one widening for all n
/// (vpmaddubsw per product, their i16 pair sums added, one vpmaddwd),
/// where each dot product widens its own; exact while n is at most
/// maxInt8DotsSummedInI16. Null when the target has no such form or n is
/// larger.
Value buildTargetInt8DotSum(OpBuilder &b, Location loc,
                            const TargetDescription &target, Value acc,
                            ArrayRef<std::pair<Value, Value>> products,
                            uint64_t unsignedMax);

/// Whether the target has a dot-product instruction for `lanes` i32 lanes
/// (with unsigned bytes below 128 when `unsignedBelow128`).
bool hasTargetInt8Dot(const TargetDescription &target, int64_t lanes,
                      bool unsignedBelow128);

/// `acc + dot(u, s)` per i32 lane of the vectors `acc`, `u` and `s` (u8
/// and s8 bytes packed four to a lane) with the target's dot-product
/// instruction (accumulating into `acc` itself where it can), or null when it has none for this many lanes (or needs
/// `u` below 128 and `unsignedBelow128` is false).
Value buildTargetInt8Dot(OpBuilder &b, Location loc,
                         const TargetDescription &target, Value acc, Value u,
                         Value s, bool unsignedBelow128);

} // namespace mlir::afm

#endif // AFM_PASSES_INT8DOTPRODUCTS_H
