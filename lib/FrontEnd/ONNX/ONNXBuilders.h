//===- ONNXBuilders.h - IR building blocks of the ONNX lowerings -*- C++ -*-===//
//
// What several lowerings share: TOSA reshapes and constants, numpy
// broadcasting, and element-wise or index-computing linalg.generic ops for
// what TOSA cannot say (integer powers, ONNX's truncating casts, gathers
// with negative indices, ...).
//
//===----------------------------------------------------------------------===//

#ifndef AFM_LIB_ONNXIMPORT_ONNXBUILDERS_H
#define AFM_LIB_ONNXIMPORT_ONNXBUILDERS_H

#include "ONNXImporter.h"

#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir::afm::onnx_import {

using Results = FailureOr<llvm::SmallVector<Value>>;

/// `input` as `shape` (a no-op when it already is; a constant input gives
/// a reshaped constant, so shape computations fold at import).
Value reshape(ONNXNode &node, Value input, llvm::ArrayRef<int64_t> shape);

/// A tensor<1x..x1xT> of `rank` holding `value` (float or integer T).
Value splat(ONNXNode &node, Type elementType, double value, int64_t rank);

/// tosa.mul with the zero shift floats take.
Value multiply(ONNXNode &node, Type type, Value lhs, Value rhs);

/// The numpy broadcast of `shapes`, or failure (with an error) when they
/// do not broadcast.
FailureOr<llvm::SmallVector<int64_t>>
broadcastShapes(ONNXNode &node, llvm::ArrayRef<llvm::ArrayRef<int64_t>> shapes);

/// ONNX multidirectional broadcasting of inputs 0 and 1 for TOSA: both
/// reshaped to the larger rank, and the broadcast result type.
FailureOr<std::tuple<Value, Value, RankedTensorType>>
broadcastOperands(ONNXNode &node);

/// Builds the scalar body of an element-wise op: block arguments in,
/// result out.
using ElementwiseBody =
    llvm::function_ref<Value(OpBuilder &, Location, ValueRange)>;

/// An element-wise linalg.generic over `operands` with numpy broadcasting
/// (lower ranks are padded with leading 1s; size-1 dimensions repeat),
/// producing `resultElementType`; `alsoBroadcastTo` joins the broadcast
/// as one more operand shape (Expand's target).
FailureOr<Value>
broadcastElementwise(ONNXNode &node, ValueRange operands,
                     Type resultElementType, ElementwiseBody body,
                     llvm::ArrayRef<int64_t> alsoBroadcastTo = {});

/// Folds an element-wise op over constants (at most `maxElements` in the
/// result): `fn` maps the operands' elements at each broadcast position
/// to the result's. Null when an operand is not a small constant.
DenseElementsAttr
foldElementwise(ONNXNode &node, ValueRange operands, Type resultElementType,
                llvm::function_ref<Attribute(llvm::ArrayRef<Attribute>)> fn,
                int64_t maxElements = 1 << 16);

/// `body` (as broadcastElementwise takes it) evaluated on constant
/// operands by its ops' own folders (arith, math): a Loop's trip count or a
/// Range's length computed from bound inputs becomes a constant.
/// broadcastElementwise folds this way by itself. Null when an operand is
/// not a small constant or an op does not fold.
DenseElementsAttr foldBody(ONNXNode &node, ValueRange operands,
                           Type resultElementType, ElementwiseBody body);

/// Converts a scalar between element types with ONNX Cast semantics:
/// float to integer truncates toward zero, integers extend by the
/// signedness of their ONNX type; to a bool (a byte) is `!= 0`.
Value castScalar(OpBuilder &b, Location loc, Value value, Type to,
                 bool fromUnsigned, bool toBool = false);

/// `value` cast element-wise to `elementType` (see castScalar).
Value castTensor(ONNXNode &node, Value value, Type elementType,
                 bool fromUnsigned, bool toBool = false);

/// Cast or CastLike involving STRING tensors (ONNXStrings.cpp): parses
/// strings into `elementType` floats, prints FLOAT as strings, or passes
/// strings through; marks a STRING result as one.
Results castStrings(ONNXNode &node, TypedValue<RankedTensorType> input,
                    bool fromString, bool toString, Type elementType);

/// Builds the element at the output position `indices` (one index per
/// output dimension) of an index-computing op.
using IndexBody = llvm::function_ref<Value(OpBuilder &, Location, ValueRange)>;

/// A tensor of `type` whose elements `body` computes from their indices
/// (linalg.generic over linalg.index; bodies read other tensors with
/// tensor.extract).
Value generateTensor(ONNXNode &node, RankedTensorType type, IndexBody body);

/// Builds the next accumulator of a reduction from the result position
/// `at` (one index per result dimension), the position `over` in the
/// reduced space and the accumulator so far.
using ReductionBody = llvm::function_ref<Value(
    OpBuilder &, Location, ValueRange at, ValueRange over, Value acc)>;

/// A tensor of `type` each of whose elements folds `body` over every
/// position of `reducedShape`, starting from `init`: one linalg.generic
/// with the reduced dimensions as reduction loops (a pooling window, the
/// axis of an ArgMax). Bodies read other tensors with tensor.extract.
Value reduceIndexed(ONNXNode &node, RankedTensorType type,
                    llvm::ArrayRef<int64_t> reducedShape, TypedAttr init,
                    ReductionBody body);

/// The same fold starting from the elements of `init` (a tensor of the
/// result's type) instead of one value: scatters, whose untouched
/// elements keep the data's.
Value reduceIndexedInto(ONNXNode &node, Value init,
                        llvm::ArrayRef<int64_t> reducedShape,
                        ReductionBody body);

/// The ONNX index `raw` (any integer type, negative counting back from
/// `extent`) as an index value, inside an index or reduction body.
Value wrapIndex(OpBuilder &b, Location loc, Value raw, int64_t extent);

/// The inputs of a gather-like op (Gather, GatherElements) and its
/// `axis` attribute as a dimension of the data.
struct GatherOperands {
  TypedValue<RankedTensorType> data, indices;
  int64_t axis;
};
/// Fails with an error when an input is missing, the indices are not
/// integers or the axis is out of range.
FailureOr<GatherOperands> getGatherOperands(ONNXNode &node);

/// Softmax (or with `isLog` log-softmax) of `input` over `dims`, shifted
/// by the maximum so exp cannot overflow (ONNXReductionOps.cpp).
Value buildSoftmax(ONNXNode &node, Value input, llvm::ArrayRef<int64_t> dims,
                   bool isLog);

/// The mean of `input` over `axes` (sorted, distinct), dimensions kept
/// (ONNXReductionOps.cpp).
Value meanKeepDims(ONNXNode &node, Value input, llvm::ArrayRef<int64_t> axes);

/// `axis` in [-rank, rank) as a dimension, or failure with an error.
FailureOr<int64_t> normalizeAxis(ONNXNode &node, int64_t axis, int64_t rank);

/// `value` as an attribute of the float or integer `elementType`.
TypedAttr scalarAttr(OpBuilder &b, Type elementType, double value);

} // namespace mlir::afm::onnx_import

#endif // AFM_LIB_ONNXIMPORT_ONNXBUILDERS_H
