//===- ONNXAttention.cpp - causal grouped-query attention in TOSA ---------===//
//
// Shared by com.microsoft GroupQueryAttention, MultiHeadAttention and
// Attention and afm SharedKVAttention: a shared-KV layer is the same
// attention over another layer's keys and values.
//
//===----------------------------------------------------------------------===//

#include "TOSABuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::afm::onnx_import;

FailureOr<std::pair<int64_t, int64_t>>
mlir::afm::onnx_import::getAttentionHeads(ONNXNode &node) {
  int64_t numHeads = node.getIntAttribute("num_heads", 0);
  int64_t kvHeads = node.getIntAttribute("kv_num_heads", 0);
  if (numHeads <= 0 || kvHeads <= 0 || numHeads % kvHeads != 0)
    return node.emitError() << "num_heads (" << numHeads
                            << ") must be a positive multiple of kv_num_heads ("
                            << kvHeads << ")";
  return std::make_pair(numHeads, kvHeads);
}

Value mlir::afm::onnx_import::splitHeads(TOSABuilder &t, Value x,
                                         int64_t heads, int64_t headDim) {
  llvm::ArrayRef<int64_t> shape = TOSABuilder::shapeOf(x);
  return t.transpose(t.reshape(x, {shape[0], shape[1], heads, headDim}),
                     {0, 2, 1, 3});
}

/// softmax(scores) [B * N, S, L] applied to the values [B * N, L, H], as
/// [B, S, N * H].
static Value attendAll(TOSABuilder &t, Value scores, Value values,
                       int64_t batch, int64_t numHeads, int64_t seq,
                       int64_t headDim) {
  Value context = t.matmul(t.softmax(scores), values);
  return t.reshape(
      t.transpose(t.reshape(context, {batch, numHeads, seq, headDim}),
                  {0, 2, 1, 3}),
      {batch, seq, numHeads * headDim});
}

Value mlir::afm::onnx_import::buildCausalAttention(
    TOSABuilder &t, Value queries, Value keys, Value values,
    const CausalAttention &options) {
  llvm::ArrayRef<int64_t> shape = TOSABuilder::shapeOf(queries);
  int64_t batch = shape[0], numHeads = options.numHeads, seq = shape[2],
          headDim = shape[3], kvHeads = options.kvHeads,
          length = TOSABuilder::shapeOf(keys)[2];
  Type elementType = TOSABuilder::typeOf(queries).getElementType();
  // Query head h reads key/value head h / group.
  int64_t group = numHeads / kvHeads, rows = batch * numHeads;
  auto expand = [&](Value kv) {
    Value grouped = t.reshape(kv, {batch, kvHeads, 1, length, headDim});
    return t.reshape(t.tile(grouped, {1, 1, group, 1, 1}),
                     {rows, length, headDim});
  };
  Value keysT = t.transpose(expand(keys), {0, 2, 1});
  Value scores = t.matmul(t.reshape(queries, {rows, seq, headDim}), keysT);
  scores = t.scale(scores, options.scale == 0 ? 1.0 / std::sqrt(headDim)
                                              : options.scale);
  if (options.softcap > 0) {
    Value squashed =
        tosa::TanhOp::create(t.b, t.loc, TOSABuilder::typeOf(scores),
                             t.scale(scores, 1.0 / options.softcap));
    scores = t.scale(squashed, options.softcap);
  }

  if (!options.causal)
    return attendAll(t, scores, expand(values), batch, numHeads, seq, headDim);

  // The causal (and sliding-window) mask is added, not selected: a large
  // negative bias where query i must not see key j.
  int64_t window = options.window;
  auto maskType = RankedTensorType::get({1, seq, length}, elementType);
  float lowest = std::numeric_limits<float>::lowest();
  Value mask;
  if (!options.queryOffset) {
    llvm::SmallVector<float> bias(seq * length);
    for (int64_t i = 0; i < seq; ++i)
      for (int64_t j = 0; j < length; ++j)
        bias[i * length + j] =
            j <= i && (window <= 0 || j > i - window) ? 0.0f : lowest;
    mask = tosa::ConstOp::create(
        t.b, t.loc, maskType,
        DenseElementsAttr::get(maskType, llvm::ArrayRef(bias)));
  } else {
    Value offset = options.queryOffset;
    mask = generateTensor(
        t.node, maskType, [&](OpBuilder &b, Location loc, ValueRange at) {
          Value query = arith::AddIOp::create(b, loc, offset, at[1]);
          Value visible = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::sle, at[2], query);
          if (window > 0) {
            Value first = arith::SubIOp::create(
                b, loc, query, arith::ConstantIndexOp::create(b, loc, window));
            visible = arith::AndIOp::create(
                b, loc, visible,
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                      at[2], first));
          }
          return arith::SelectOp::create(
              b, loc, visible,
              arith::ConstantOp::create(b, loc, b.getFloatAttr(elementType, 0)),
              arith::ConstantOp::create(b, loc,
                                        b.getFloatAttr(elementType, lowest)));
        });
  }
  return attendAll(t, t.add(scores, mask), expand(values), batch, numHeads, seq,
                   headDim);
}
