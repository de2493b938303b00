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

/// `acc + x * W^T` for `x [T, K]` and any weight value a linear layer may
/// take: a plain tensor, a bound `!afm.q2`/`!afm.q4` weight, a bound ASTC
/// weight (materialized first: this is the unfused path), or
/// `afm.astc_decode` of a bound ASTC weight (decoded block by block inside
/// the kernel). `acc` may be null (zero). Returns null with a diagnostic on
/// `loc` when the weight is compressed but not bound.
Value buildLinear(OpBuilder &b, Location loc, Value x, Value weight,
                  Type elementType, Value acc);

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
