//===- CompressedKernels.h - linalg kernels over packed weights -*- C++ -*-===//
//
// Builders for the kernels that read compressed weights in their packed
// form (the parts of `afm.bound_weight`, see AFMOps.td). Each packed byte
// holds several codes, so the kernels index it with a split loop: the
// reduction over K becomes (byte, code-in-byte), and the code is cut out of
// the byte with a shift by the inner loop index. No kernel here builds an
// unpacked weight tensor, except the `buildDequantized*` ones, which exist
// for `afm.dequantize` (the unfused reference math).
//
//===----------------------------------------------------------------------===//

#ifndef AFM_PASSES_CONVERSION_COMPRESSEDKERNELS_H
#define AFM_PASSES_CONVERSION_COMPRESSEDKERNELS_H

#include "dialects/afm/IR/AFMDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace mlir::afm {

/// How linear layers over compressed weights compute.
struct LinearLowering {
  /// 2-bit and ASTC layers, and the tied 4-bit head, quantize each row of
  /// their input to int8 (symmetric, max|x| / 127, round half to even) and
  /// multiply in integers (Q2Int8Matmul.cpp, astcInt8BlockMatmul,
  /// Q4Matmul.cpp); over many rows, 2-bit layers run an integer GEMM
  /// (buildQ2Int8Gemm) and the others the f32 GEMM on the rounded
  /// activations, so every row sees the same numerics.
  bool int8Activations = false;
};

/// `acc + x * W^T` for `x [T, K]` with the kernel chooseLinearKernel
/// (LinearKernelChoice.h) picks, for any weight value a linear layer may
/// take: a plain tensor, a bound `!afm.q2`/`!afm.q4` weight, a bound ASTC
/// weight (its min-shift term added to `acc` here, as afm-fuse-min-shift
/// would), or `afm.astc_decode` of a bound ASTC weight whose min-shift is
/// already in `acc`; the blocks are decoded inside the kernel. (The
/// unfused path passes `afm.dequantize`'s tensor: a plain weight.) `acc`
/// may be null (zero). Returns null with a diagnostic on `loc` when the
/// weight is compressed but not bound.
Value buildLinear(OpBuilder &b, Location loc, Value x, Value weight,
                  Type elementType, Value acc,
                  const LinearLowering &how = {});

/// Whether `buildQ2Int8Matmul` takes a 2-bit weight of this type.
bool supportsQ2Int8Matmul(Q2WeightType type);

/// What the kernels below take (LinearKernelChoice.cpp asks before it
/// chooses them): the split-K GEMV of a plain weight, the same for plain-
/// order 4-bit codes, the 2-bit integer GEMM, the interleaved 4-bit kernel.
bool canBuildGemvSplitK(RankedTensorType x, RankedTensorType weight);
bool canBuildQ4GemvSplitK(RankedTensorType x, Q4WeightType type);
bool canBuildQ2Int8Gemm(RankedTensorType x, Q2WeightType type);
bool canBuildQ4InterleavedMatmul(RankedTensorType x, Q4WeightType type);

/// `acc + x * W^T` for a bound 2-bit weight (`parts`: codes, scales) with
/// the rows of `x` quantized to int8 and integer products.
Value buildQ2Int8Matmul(OpBuilder &b, Location loc, Value x, Q2WeightType type,
                        ValueRange parts, Type elementType, Value acc);

/// The same product over many rows of x (a prompt chunk) as a register-
/// tiled integer GEMM: 4 rows of x by 2 rows of W per tile, every code
/// word used for 4 rows and every activation word for 2 outputs. Null when
/// x's rows are not a static multiple of 4 or the type is not supported.
Value buildQ2Int8Gemm(OpBuilder &b, Location loc, Value x, Q2WeightType type,
                      ValueRange parts, Type elementType, Value acc);

/// `amax[t] = max_k |x[t, k]|` (f32 `[T]`), the scale of row t's int8
/// activations is amax / 127.
Value buildRowAbsMax(OpBuilder &b, Location loc, Value x);

/// The int8 code of `value` in a row whose largest magnitude is the f32
/// scalar `amax`: round-half-even(value * 127 / amax), 0 for an all-zero
/// row. `value` is a float scalar, or a vector of f32 (a vector of codes:
/// the decode attention kernel rounds its query with the same operations).
Value buildInt8Code(OpBuilder &b, Location loc, Value value, Value amax);

/// The last step of an int8 kernel, once per output `[rows, n]`: `body`
/// computes y (f32) from `inputs` (indexed over (row, col) by `indexing`),
/// then `acc` (when not null) is added and y cast to `elementType`.
Value buildOutputStep(
    OpBuilder &b, Location loc, OpFoldResult rows, int64_t n,
    SmallVector<Value> inputs, SmallVector<SmallVector<AffineExpr>> indexing,
    Value acc, Type elementType,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body);

/// `acc + sums * amax[row] / 127` as `elementType` (`acc` may be null):
/// an int8 kernel's integer-exact sums `[rows, n]` scaled back by the
/// rows' activation scales, once per output.
Value buildRowScaledOutput(OpBuilder &b, Location loc, OpFoldResult rows,
                           int64_t n, Value sums, Value amax, Value acc,
                           Type elementType);

/// `x [T, K]` with each row quantized to int8 as `buildQ2Int8Matmul` does
/// and scaled back: the activations the integer kernel multiplies.
Value buildInt8RoundTrip(OpBuilder &b, Location loc, Value x);

/// `x * W^T` for a bound 4-bit table whose codes are interleaved
/// (afm/Layout/PackedWeights.h), on int8-rounded or f32 activations; null
/// when the codes are in the plain order or x's shape is not static.
Value buildQ4InterleavedMatmul(OpBuilder &b, Location loc, Value x,
                               Q4WeightType type, ValueRange parts,
                               Type elementType, bool int8Activations);

/// `table[tokens[t], :]` for a bound `!afm.q4` table, dequantized per row.
Value buildQ4Gather(OpBuilder &b, Location loc, Value tokens, Value weight,
                    Type elementType);

/// The float value `[N, K]` of a bound compressed weight, materialized.
/// `withOffsets` false gives the ASTC block values only (`astc_decode`).
Value buildDequantized(OpBuilder &b, Location loc, Value weight,
                       bool withOffsets);

/// The per-block offsets `[Nb, Kb]` (f32) of a bound ASTC weight.
Value buildASTCOffsets(OpBuilder &b, Location loc, Value weight);

/// `result[t, n] = sum_kb offsets[n / R, kb] * sum_{j<C} x[t, kb*C + j]`,
/// `[T, N]` (see `afm.min_shift`).
Value buildMinShift(OpBuilder &b, Location loc, Value x, Value offsets,
                    int64_t n, int64_t blockRows, int64_t blockCols);

} // namespace mlir::afm

#endif // AFM_PASSES_CONVERSION_COMPRESSEDKERNELS_H
