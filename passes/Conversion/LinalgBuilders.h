//===- LinalgBuilders.h - small builders for linalg on tensors --*- C++ -*-===//
//
// The handful of constructions every afm lowering needs: zero-filled
// accumulators, `x * w^T` contractions, element-wise maps, float casts.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_PASSES_CONVERSION_LINALGBUILDERS_H
#define AFM_PASSES_CONVERSION_LINALGBUILDERS_H

#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace mlir::afm {

/// The sizes of each dimension of `tensor`, static where known.
SmallVector<OpFoldResult> getSizes(OpBuilder &b, Location loc, Value tensor);

/// A tensor of `sizes` filled with `value` (its type is the element type).
Value createFilled(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
                   TypedAttr value);

/// A tensor of `sizes` filled with `value` of float type `elementType`.
Value createFilled(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
                   Type elementType, double value);

/// Converts a float scalar to `type` (extf / truncf / nothing).
Value castFloat(OpBuilder &b, Location loc, Value value, Type type);

/// `init + x * w^T` for `x [M, K]`, `w [N, K]`, `init [M, N]`, as a
/// `linalg.matmul` with a transposed-B indexing map.
Value matmulTransposeB(OpBuilder &b, Location loc, Value x, Value w,
                       Value init);

/// `x * w^T` into a fresh zero accumulator of element type `elementType`.
Value matmulTransposeB(OpBuilder &b, Location loc, Value x, Value w,
                       Type elementType);

/// An element-wise `linalg.generic` over same-shaped `inputs`, producing a
/// tensor of their shape with element type `elementType`. `body` gets the
/// scalar inputs and returns the scalar result.
Value mapElementwise(
    OpBuilder &b, Location loc, ValueRange inputs, Type elementType,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body);

/// A `linalg.generic` with one result initialized by `init`. `body` gets
/// the scalar inputs followed by the scalar accumulator and returns the new
/// accumulator value.
Value buildGeneric(
    OpBuilder &b, Location loc, ValueRange inputs, Value init,
    ArrayRef<AffineMap> maps, ArrayRef<utils::IteratorType> iterators,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body);

/// The affine maps over `dims` loops with the given results, in order.
SmallVector<AffineMap> mapsOf(unsigned dims,
                              ArrayRef<SmallVector<AffineExpr>> results,
                              MLIRContext *ctx);

/// The largest power of two up to `most` that divides `n`: the lanes of a
/// split-K kernel over `n` contiguous columns.
int64_t lanesDividing(int64_t n, int64_t most);

/// `x [T, K]` with zero columns appended up to `cols`.
Value padColumns(OpBuilder &b, Location loc, Value x, int64_t cols);

/// `x [T, prod(inner)]` viewed as `[T, inner...]`.
Value splitColumns(OpBuilder &b, Location loc, Value x,
                   ArrayRef<int64_t> inner);

/// `value` at index `at[i].second` of its dimension `at[i].first`, for each
/// pair, with those dimensions dropped (a rank-reducing
/// tensor.extract_slice): a code plane or a block column of activations.
Value sliceAt(OpBuilder &b, Location loc, Value value,
              ArrayRef<std::pair<int64_t, int64_t>> at);

/// A zero-filled f32 `[T, cols...]` for accumulating over the rows of `x`.
Value zerosLike(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> cols);

/// `[T, A, B] -> [T, A]`, summed over B in f32 (integers in their own
/// type, exactly): the one horizontal sum of a split-K kernel's partial
/// sums, once per output.
Value sumInnermost(OpBuilder &b, Location loc, Value x);

/// The bytes of a static i8 tensor (packed weight codes) read as i32 words
/// of `shape` (little-endian: byte 4i + m is bits 8m.. of word i), through
/// a view of the same buffer: nothing is copied. `shape` must hold a
/// quarter as many elements.
Value buildBytesAsWords(OpBuilder &b, Location loc, Value bytes,
                        ArrayRef<int64_t> shape);

/// `[0, bits, 2 * bits, ...]`: the shift of each code in a byte, as an i8
/// tensor the kernels index by the code-in-byte loop. Vectorized, it is a
/// small constant vector, where `linalg.index` arithmetic would be a wide
/// index vector.
Value codeShifts(OpBuilder &b, Location loc, unsigned bits);

} // namespace mlir::afm

#endif // AFM_PASSES_CONVERSION_LINALGBUILDERS_H
