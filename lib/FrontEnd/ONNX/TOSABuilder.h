//===- TOSABuilder.h - TOSA ops at one ONNX node ----------------*- C++ -*-===//
//
// A small builder for lowerings that chain many TOSA ops (attention,
// normalizations, rotary embeddings): result shapes follow from the
// operands, so each step is one call.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_LIB_ONNXIMPORT_TOSABUILDER_H
#define AFM_LIB_ONNXIMPORT_TOSABUILDER_H

#include "ONNXBuilders.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Tosa/Utils/ConversionUtils.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::afm::onnx_import {

/// TOSA ops at one node: shapes of results follow from the operands
/// (elementwise ops broadcast size-1 dimensions of equal ranks).
class TOSABuilder {
public:
  explicit TOSABuilder(ONNXNode &node)
      : node(node), b(node.builder), loc(node.loc) {}

  static RankedTensorType typeOf(Value value) {
    return mlir::cast<RankedTensorType>(value.getType());
  }
  static llvm::ArrayRef<int64_t> shapeOf(Value value) {
    return typeOf(value).getShape();
  }

  /// A !tosa.shape operand.
  Value constShape(llvm::ArrayRef<int64_t> values) {
    ImplicitLocOpBuilder builder(loc, b);
    return tosa::getTosaConstShape(builder, values);
  }
  Value reshape(Value value, llvm::ArrayRef<int64_t> shape) {
    return mlir::afm::onnx_import::reshape(node, value, shape);
  }
  Value transpose(Value value, llvm::ArrayRef<int32_t> perm) {
    llvm::SmallVector<int64_t> shape;
    for (int32_t dim : perm)
      shape.push_back(shapeOf(value)[dim]);
    return tosa::TransposeOp::create(b, loc, typeOf(value).clone(shape), value,
                                     b.getDenseI32ArrayAttr(perm));
  }
  /// The elements [start, start + size) along `axis`.
  Value slice(Value value, int64_t axis, int64_t start, int64_t size) {
    llvm::SmallVector<int64_t> starts(shapeOf(value).size(), 0);
    llvm::SmallVector<int64_t> sizes(shapeOf(value));
    if (start == 0 && size == sizes[axis])
      return value;
    starts[axis] = start;
    sizes[axis] = size;
    return tosa::SliceOp::create(b, loc, typeOf(value).clone(sizes), value,
                                 constShape(starts), constShape(sizes));
  }
  Value concat(llvm::ArrayRef<Value> values, int64_t axis) {
    if (values.size() == 1)
      return values.front();
    llvm::SmallVector<int64_t> shape(shapeOf(values.front()));
    shape[axis] = 0;
    for (Value value : values)
      shape[axis] += shapeOf(value)[axis];
    return tosa::ConcatOp::create(b, loc, typeOf(values.front()).clone(shape),
                                  values, static_cast<int32_t>(axis));
  }
  Value tile(Value value, llvm::ArrayRef<int64_t> multiples) {
    llvm::SmallVector<int64_t> shape;
    for (auto [dim, multiple] : llvm::zip(shapeOf(value), multiples))
      shape.push_back(dim * multiple);
    return tosa::TileOp::create(b, loc, typeOf(value).clone(shape), value,
                                constShape(multiples));
  }
  Value cast(Value value, Type elementType) {
    return tosa::CastOp::create(b, loc, typeOf(value).clone(elementType),
                                value);
  }

  /// The type of an elementwise op over `lhs` and `rhs` (equal ranks).
  static RankedTensorType broadcastType(Value lhs, Value rhs) {
    llvm::SmallVector<int64_t> shape;
    for (auto [l, r] : llvm::zip_equal(shapeOf(lhs), shapeOf(rhs)))
      shape.push_back(l == 1 ? r : l);
    return typeOf(lhs).clone(shape);
  }
  template <typename OpTy> Value binary(Value lhs, Value rhs) {
    return OpTy::create(b, loc, broadcastType(lhs, rhs), lhs, rhs);
  }
  Value add(Value lhs, Value rhs) { return binary<tosa::AddOp>(lhs, rhs); }
  Value sub(Value lhs, Value rhs) { return binary<tosa::SubOp>(lhs, rhs); }
  Value mul(Value lhs, Value rhs) {
    return multiply(node, broadcastType(lhs, rhs), lhs, rhs);
  }
  /// `value` times the scalar `factor`.
  Value scale(Value value, double factor) {
    return mul(value, splat(node, typeOf(value).getElementType(), factor,
                            typeOf(value).getRank()));
  }
  template <typename OpTy> Value reduce(Value value, int64_t axis) {
    llvm::SmallVector<int64_t> shape(shapeOf(value));
    shape[axis] = 1;
    return OpTy::create(b, loc, typeOf(value).clone(shape), value,
                        b.getI32IntegerAttr(static_cast<int32_t>(axis)));
  }
  /// Batched [B, M, K] x [B, K, N].
  Value matmul(Value lhs, Value rhs) {
    Type elementType = typeOf(lhs).getElementType();
    Value zero = splat(node, elementType, 0.0, 1);
    auto type = RankedTensorType::get(
        {shapeOf(lhs)[0], shapeOf(lhs)[1], shapeOf(rhs)[2]}, elementType);
    return tosa::MatMulOp::create(b, loc, type, lhs, rhs, zero, zero);
  }
  /// Softmax over the last axis, stabilized by its maximum.
  Value softmax(Value value) {
    int64_t axis = typeOf(value).getRank() - 1;
    Value max = reduce<tosa::ReduceMaxOp>(value, axis);
    Value exp = tosa::ExpOp::create(b, loc, typeOf(value), sub(value, max));
    Value sum = reduce<tosa::ReduceSumOp>(exp, axis);
    return mul(exp, tosa::ReciprocalOp::create(b, loc, typeOf(sum), sum));
  }

  ONNXNode &node;
  OpBuilder &b;
  Location loc;
};

/// The num_heads and kv_num_heads attributes of an attention node, which
/// must be positive with the first a multiple of the second.
FailureOr<std::pair<int64_t, int64_t>> getAttentionHeads(ONNXNode &node);

/// [B, S, N * H] as [B, N, S, H].
Value splitHeads(TOSABuilder &t, Value x, int64_t heads, int64_t headDim);

/// Causal (or, with causal = false, full) grouped-query attention: query heads
/// [B, N, S, H] over key and value heads [B, N_kv, S, H] (query head h reads
/// key/value head h / (N / N_kv)), softmax(scale * q k^T [softcapped]) v.
struct CausalAttention {
  int64_t numHeads, kvHeads;
  /// 0 means 1 / sqrt(H).
  double scale = 0;
  /// > 0: scores become softcap * tanh(scores / softcap).
  double softcap = 0;
  /// > 0: query i sees only its `window` most recent keys, itself
  /// included (j > i - window), as ONNX Runtime 1.30 computes it.
  int64_t window = -1;
  /// The key index of query row 0, an index value computed at run time
  /// (a past's length); null: keys and queries have the same length and
  /// start together (offset 0). Query i sees key j <= offset + i.
  Value queryOffset = nullptr;
  /// false: every query sees every key (no mask; window and queryOffset
  /// unused).
  bool causal = true;
};

/// The attention output as [B, S, N * H]; queries [B, N, S, H], keys and
/// values [B, N_kv, L, H].
Value buildCausalAttention(TOSABuilder &t, Value queries, Value keys,
                           Value values, const CausalAttention &options);

} // namespace mlir::afm::onnx_import

#endif // AFM_LIB_ONNXIMPORT_TOSABUILDER_H
