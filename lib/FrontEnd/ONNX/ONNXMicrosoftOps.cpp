//===- ONNXMicrosoftOps.cpp - com.microsoft contrib ops -------------------===//
//
// The contrib ops ONNX Runtime's LLM exporters emit (SimplifiedLayer-
// Normalization, RotaryEmbedding, GroupQueryAttention, MatMulNBits, ...),
// with their semantics as ONNX Runtime's CPU kernels define them
// (onnxruntime/contrib_ops/cpu/...). Everything lowers to TOSA; forms
// those kernels accept but this file does not implement are rejected at
// the node, naming the attribute or input.
//
//===----------------------------------------------------------------------===//

#include "TOSABuilder.h"

#include "dialects/afm/IR/AFMOps.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Tosa/Utils/ConversionUtils.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::afm::onnx_import;


namespace {

/// `value` with rank-1 `vector` (size of its last dimensions) reshaped to
/// broadcast against it.
Value broadcastTrailing(TOSABuilder &t, Value vector, int64_t rank) {
  llvm::SmallVector<int64_t> shape(rank - TOSABuilder::typeOf(vector).getRank(),
                                   1);
  llvm::append_range(shape, TOSABuilder::shapeOf(vector));
  return t.reshape(vector, shape);
}

/// Adds the optional bias input `index` (a vector the size of the last
/// dimension of `value`, called `what` in errors) to `value`.
LogicalResult addBias(TOSABuilder &t, Value &value, unsigned index,
                      llvm::StringRef what = "bias") {
  if (!t.node.hasInput(index))
    return success();
  auto bias = t.node.getFloatInput(index);
  if (failed(bias))
    return failure();
  llvm::ArrayRef<int64_t> shape = TOSABuilder::shapeOf(value);
  if (bias->getType().getShape() != shape.take_back())
    return t.node.emitError() << what << " " << bias->getType() << " is not ["
                              << shape.back() << "]";
  value = t.add(value, broadcastTrailing(t, *bias, shape.size()));
  return success();
}

/// RMS normalization of `x` over its dimensions from `axis` on:
/// x * rsqrt(mean(x^2) + epsilon) * gamma. Returns the result and the
/// inverse RMS (the normalized dimensions kept as 1s).
std::pair<Value, Value> rmsNorm(TOSABuilder &t, Value x, Value gamma,
                                int64_t axis, double epsilon) {
  RankedTensorType type = TOSABuilder::typeOf(x);
  Value sum = t.mul(x, x);
  int64_t count = 1;
  for (int64_t dim = axis; dim < type.getRank(); ++dim) {
    sum = t.reduce<tosa::ReduceSumOp>(sum, dim);
    count *= type.getDimSize(dim);
  }
  Value meanSquare = t.scale(sum, 1.0 / static_cast<double>(count));
  Value shifted = t.add(meanSquare, splat(t.node, type.getElementType(),
                                          epsilon, type.getRank()));
  Value inverse =
      tosa::RsqrtOp::create(t.b, t.loc, TOSABuilder::typeOf(shifted), shifted);
  Value normalized = t.mul(x, inverse);
  return {t.mul(normalized, broadcastTrailing(t, gamma, type.getRank())),
          inverse};
}

float getFloatAttribute(const ONNXNode &node, llvm::StringRef name,
                        float defaultValue) {
  const onnx::AttributeProto *attr = node.getAttribute(name);
  return attr ? attr->f() : defaultValue;
}

} // namespace

LogicalResult mlir::afm::onnx_import::rejectOutput(ONNXNode &node, int index,
                                                   llvm::StringRef what) {
  if (node.proto.output_size() > index && !node.proto.output(index).empty())
    return node.emitError()
           << "output " << index << " (" << what << ") is not supported";
  return success();
}

LogicalResult mlir::afm::onnx_import::rejectInput(ONNXNode &node,
                                                  unsigned index,
                                                  llvm::StringRef what) {
  if (node.hasInput(index))
    return node.emitError()
           << "input " << index << " (" << what << ") is not supported";
  return success();
}

/// afm.rms_norm of `x` over its last dimension: the raised form of the
/// RMS normalizations, which afm-lower-to-linalg fuses into one kernel.
static Value raiseRMSNorm(ONNXNode &node, Value x, Value gamma,
                          float epsilon) {
  return afm::RMSNormOp::create(node.builder, node.loc, x.getType(), x, gamma,
                                node.builder.getF32FloatAttr(epsilon),
                                FloatAttr());
}

/// SimplifiedLayerNormalization (ONNX Runtime's RMSNorm, in the default
/// domain): Y = X / sqrt(mean(X^2 over axis..) + epsilon) * scale, and
/// the optional inv_std_var.
static Results lowerSimplifiedLayerNorm(ONNXNode &node) {
  auto x = node.getFloatInput(0);
  auto gamma = node.getFloatInput(1);
  if (failed(x) || failed(gamma))
    return failure();
  if (node.hasInput(2))
    return node.emitError() << "a bias input is not supported";
  int64_t rank = x->getType().getRank();
  int64_t axis = node.getIntAttribute("axis", -1);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return node.emitError() << "axis " << node.getIntAttribute("axis", -1)
                            << " is out of range for rank " << rank;
  if (gamma->getType().getShape() != x->getType().getShape().drop_front(axis))
    return node.emitError()
           << "scale " << gamma->getType()
           << " does not match the normalized dimensions of " << x->getType();
  float epsilon = getFloatAttribute(node, "epsilon", 1e-5f);
  if (node.raiseToAFM && axis == rank - 1 && !node.hasOutput(1))
    return llvm::SmallVector<Value>{raiseRMSNorm(node, *x, *gamma, epsilon)};
  TOSABuilder t(node);
  auto [y, inverse] = rmsNorm(t, *x, *gamma, axis, epsilon);
  return llvm::SmallVector<Value>{y, inverse};
}

/// The residual sum of the skip layer normalizations: input + skip (+ the
/// optional bias, input 4 or 3), checked against gamma [H]. The skip may
/// be [S, H] or [1, S, H] for a [B, S, H] input, as ONNX Runtime
/// broadcasts it.
static FailureOr<Value> buildSkipSum(TOSABuilder &t, unsigned biasIndex) {
  ONNXNode &node = t.node;
  auto input = node.getFloatInput(0);
  auto skip = node.getFloatInput(1);
  auto gamma = node.getFloatInput(2);
  if (failed(input) || failed(skip) || failed(gamma))
    return failure();
  RankedTensorType type = input->getType();
  int64_t rank = type.getRank();
  if (rank != 2 && rank != 3)
    return node.emitError() << "input " << type << " is not 2-D or 3-D";
  int64_t hidden = type.getShape().back();
  llvm::ArrayRef<int64_t> skipShape = skip->getType().getShape();
  if (skipShape.size() > static_cast<size_t>(rank) ||
      skipShape != type.getShape().take_back(skipShape.size()) ||
      (skipShape.size() < 2 && rank == 3))
    return node.emitError() << "skip " << skip->getType()
                            << " does not broadcast to the input " << type;
  if (gamma->getType().getShape() != llvm::ArrayRef<int64_t>{hidden})
    return node.emitError()
           << "gamma " << gamma->getType() << " is not [" << hidden << "]";
  Value sum = t.add(*input, broadcastTrailing(t, *skip, rank));
  if (failed(addBias(t, sum, biasIndex)))
    return failure();
  return sum;
}

/// SkipSimplifiedLayerNormalization: s = input + skip (+ bias); the RMS
/// normalization of s over the last axis; outputs (output, mean,
/// inv_std_var, s).
static Results lowerSkipSimplifiedLayerNorm(ONNXNode &node) {
  TOSABuilder t(node);
  auto sum = buildSkipSum(t, 3);
  if (failed(sum))
    return failure();
  Value gamma = *node.getFloatInput(2);
  int64_t rank = TOSABuilder::typeOf(*sum).getRank();
  int64_t hidden = TOSABuilder::shapeOf(*sum).back();
  float epsilon = getFloatAttribute(node, "epsilon", 1e-5f);
  if (node.raiseToAFM && !node.hasOutput(1) && !node.hasOutput(2)) {
    Value y = raiseRMSNorm(node, *sum, gamma, epsilon);
    return llvm::SmallVector<Value>{y, nullptr, nullptr, *sum};
  }
  auto [y, inverse] = rmsNorm(t, *sum, gamma, rank - 1, epsilon);
  Value mean = t.scale(t.reduce<tosa::ReduceSumOp>(*sum, rank - 1),
                       1.0 / static_cast<double>(hidden));
  return llvm::SmallVector<Value>{y, mean, inverse, *sum};
}

/// SkipLayerNormalization: s = input + skip (+ bias, input 4); the layer
/// normalization of s over the last axis, (s - mean) * rsqrt(var +
/// epsilon) * gamma (+ beta, input 3); outputs (output, mean, inv_std_var,
/// s). ONNX Runtime's CPU kernel leaves mean and inv_std_var unwritten,
/// so they are rejected rather than given values nothing checks.
static Results lowerSkipLayerNorm(ONNXNode &node) {
  if (failed(rejectOutput(node, 1, "mean")) ||
      failed(rejectOutput(node, 2, "inv_std_var")))
    return failure();
  TOSABuilder t(node);
  auto sum = buildSkipSum(t, 4);
  if (failed(sum))
    return failure();
  Value gamma = *node.getFloatInput(2);
  RankedTensorType type = TOSABuilder::typeOf(*sum);
  int64_t rank = type.getRank();
  Value mean = meanKeepDims(node, *sum, {rank - 1});
  Value centered = t.sub(*sum, mean);
  Value variance = meanKeepDims(node, t.mul(centered, centered), {rank - 1});
  Value shifted =
      t.add(variance, splat(node, type.getElementType(),
                            getFloatAttribute(node, "epsilon", 1e-12f), rank));
  Value inverse =
      tosa::RsqrtOp::create(t.b, t.loc, TOSABuilder::typeOf(shifted), shifted);
  Value y = t.mul(t.mul(centered, inverse), broadcastTrailing(t, gamma, rank));
  if (failed(addBias(t, y, 3, "beta")))
    return failure();
  return llvm::SmallVector<Value>{y, nullptr, nullptr, *sum};
}

/// cos or sin rows for the positions: `cache` [M, R/2] gathered at
/// `positions` ([B, S] int64, or one int64 start p0 for p0..p0+S-1),
/// as [B * S, R/2].
static FailureOr<Value> gatherRows(TOSABuilder &t, Value cache, Value positions,
                                   int64_t batch, int64_t seq) {
  auto shape = TOSABuilder::shapeOf(cache);
  Type i32 = t.b.getI32Type();
  Value indices = t.cast(positions, i32);
  if (TOSABuilder::typeOf(indices).getNumElements() == 1) {
    // One start position: p0 + [0, S) for every sequence of the batch.
    auto rangeType = RankedTensorType::get({1, seq}, i32);
    llvm::SmallVector<int32_t> range(seq);
    for (int64_t i = 0; i < seq; ++i)
      range[i] = static_cast<int32_t>(i);
    Value offsets = tosa::ConstOp::create(
        t.b, t.loc, rangeType,
        DenseElementsAttr::get(rangeType, llvm::ArrayRef(range)));
    indices = t.add(t.reshape(indices, {1, 1}), offsets);
    indices = t.tile(indices, {batch, 1});
  }
  indices = t.reshape(indices, {1, batch * seq});
  // Positions known only at run time (position_ids inputs) stay inside the
  // tables: a gather past them would read outside the constant. Rows the
  // caller uses are checked against the tables where the context is known
  // (afm-compile --onnx: the context must not exceed them).
  indices = t.binary<tosa::MaximumOp>(
      t.binary<tosa::MinimumOp>(indices,
                                splat(t.node, i32, double(shape[0] - 1), 2)),
      splat(t.node, i32, 0.0, 2));
  Value values = t.reshape(cache, {1, shape[0], shape[1]});
  auto type = RankedTensorType::get(
      {1, batch * seq, shape[1]}, TOSABuilder::typeOf(cache).getElementType());
  Value rows = tosa::GatherOp::create(t.b, t.loc, type, values, indices);
  return t.reshape(rows, {batch * seq, shape[1]});
}

/// Rotates the first `rotaryDim` entries of the last axis of `x` by the
/// angles whose `cos` and `sin` broadcast against x's [.., rotaryDim / 2]
/// halves; the rest of the axis passes through. Half-split pairs
/// (i, i + R/2), or interleaved pairs (2i, 2i + 1).
static Value rotate(TOSABuilder &t, Value x, Value cos, Value sin,
                    int64_t rotaryDim, bool interleaved) {
  llvm::SmallVector<int64_t> shape(TOSABuilder::shapeOf(x));
  int64_t rank = shape.size(), last = rank - 1, headDim = shape.back();
  Value rotary = t.slice(x, last, 0, rotaryDim);
  int64_t half = rotaryDim / 2;
  Value x1, x2;
  if (interleaved) {
    // [.., R] as [.., R/2, 2]: pairs on the new last axis.
    llvm::SmallVector<int64_t> pairs(shape);
    pairs.back() = half;
    pairs.push_back(2);
    rotary = t.reshape(rotary, pairs);
    x1 = t.slice(rotary, rank, 0, 1);
    x2 = t.slice(rotary, rank, 1, 1);
    llvm::SmallVector<int64_t> angleShape(TOSABuilder::shapeOf(cos));
    angleShape.push_back(1);
    cos = t.reshape(cos, angleShape);
    sin = t.reshape(sin, angleShape);
  } else {
    x1 = t.slice(rotary, last, 0, half);
    x2 = t.slice(rotary, last, half, half);
  }
  Value out1 = t.sub(t.mul(x1, cos), t.mul(x2, sin));
  Value out2 = t.add(t.mul(x2, cos), t.mul(x1, sin));
  Value rotated;
  if (interleaved) {
    rotated = t.concat({out1, out2}, rank);
    llvm::SmallVector<int64_t> flat(shape);
    flat.back() = rotaryDim;
    rotated = t.reshape(rotated, flat);
  } else {
    rotated = t.concat({out1, out2}, last);
  }
  if (rotaryDim == headDim)
    return rotated;
  return t.concat({rotated, t.slice(x, last, rotaryDim, headDim - rotaryDim)},
                  last);
}

/// RotaryEmbedding: input [B, S, N * H] or [B, N, S, H], position_ids
/// [B, S] or one start position, cos/sin caches [M, R/2], where R is
/// rotary_embedding_dim (default: the head size, 2 * cache width).
static Results lowerRotaryEmbedding(ONNXNode &node) {
  auto input = node.getFloatInput(0);
  auto positions = node.getInput(1);
  auto cosCache = node.getFloatInput(2);
  auto sinCache = node.getFloatInput(3);
  if (failed(input) || failed(positions) || failed(cosCache) ||
      failed(sinCache))
    return failure();
  RankedTensorType type = input->getType();
  llvm::ArrayRef<int64_t> shape = type.getShape();
  if (type.getRank() != 3 && type.getRank() != 4)
    return node.emitError() << "input " << type << " is not 3-D or 4-D";
  RankedTensorType cacheType = cosCache->getType();
  if (cacheType.getRank() != 2 || cacheType != sinCache->getType())
    return node.emitError()
           << "cos_cache " << cacheType << " and sin_cache "
           << sinCache->getType() << " must be 2-D of one shape";
  if (!positions->getType().getElementType().isInteger(64))
    return node.emitError() << "position_ids must be int64";
  bool transposed = type.getRank() == 4;
  int64_t batch = shape[0], seq = transposed ? shape[2] : shape[1];
  int64_t rotaryDim = node.getIntAttribute("rotary_embedding_dim", 0);
  int64_t numHeads = node.getIntAttribute("num_heads", 0);
  int64_t headDim;
  if (transposed)
    headDim = shape[3];
  else if (rotaryDim > 0 && numHeads > 0)
    headDim = shape[2] / numHeads;
  else if (rotaryDim > 0)
    return node.emitError() << "rotary_embedding_dim needs num_heads";
  else
    headDim = cacheType.getDimSize(1) * 2;
  if (rotaryDim == 0)
    rotaryDim = headDim;
  if (headDim == 0 || (!transposed && shape[2] % headDim != 0) ||
      rotaryDim > headDim || rotaryDim % 2 != 0 ||
      cacheType.getDimSize(1) * 2 != rotaryDim)
    return node.emitError()
           << "head size " << headDim << ", rotary dimension " << rotaryDim
           << " and cache " << cacheType << " do not fit the input " << type;
  int64_t heads = transposed ? shape[1] : shape[2] / headDim;
  int64_t positionCount = positions->getType().getNumElements();
  if (positionCount != 1 &&
      positions->getType().getShape() != llvm::ArrayRef<int64_t>{batch, seq})
    return node.emitError()
           << "position_ids " << positions->getType()
           << " is neither one start nor [" << batch << ", " << seq << "]";
  if (DenseElementsAttr constant = node.getConstantInput(1))
    for (int64_t position : constant.getValues<int64_t>())
      if (position < 0 ||
          position + (positionCount == 1 ? seq : 1) > cacheType.getDimSize(0))
        return node.emitError()
               << "position " << position << " is outside the caches";

  TOSABuilder t(node);
  auto cos = gatherRows(t, *cosCache, *positions, batch, seq);
  auto sin = gatherRows(t, *sinCache, *positions, batch, seq);
  if (failed(cos) || failed(sin))
    return failure();
  // [B, S, N, H] with angles [B, S, 1, R/2], or [B, N, S, H] with
  // angles [B, 1, S, R/2].
  llvm::SmallVector<int64_t> angleShape =
      transposed ? llvm::SmallVector<int64_t>{batch, 1, seq, rotaryDim / 2}
                 : llvm::SmallVector<int64_t>{batch, seq, 1, rotaryDim / 2};
  Value x = transposed ? Value(*input)
                       : t.reshape(*input, {batch, seq, heads, headDim});
  Value rotated =
      rotate(t, x, t.reshape(*cos, angleShape), t.reshape(*sin, angleShape),
             rotaryDim, node.getIntAttribute("interleaved", 0) != 0);
  return llvm::SmallVector<Value>{t.reshape(rotated, shape)};
}

/// GroupQueryAttention's present keys and values [B, N_kv, T', H], and
/// where this call's rows start in them.
struct GQACache {
  Value key, value;
  /// The past's length (seqlens_k + 1 - S) as an index at run time; null
  /// for a first prompt (0).
  Value pastLength;
};

/// ONNX Runtime's GroupQueryAttention with a past: past_key/past_value
/// [B, N_kv, P, H] hold the past's `past = seqlens_k + 1 - S` rows
/// (seqlens_k: each sequence's total length - 1) from index 0; the present
/// is T' = max(P, total_sequence_length) rows: the past's rows, this
/// call's S rows from index `past`, zeros after. Without a past (or a past
/// of length 0) and with constant lengths, a first prompt: the present is
/// the new rows. seqlens_k may be computed at run time (from the
/// attention mask) when the batch is 1; total_sequence_length must be a
/// constant, as it sizes the present.
static FailureOr<GQACache> buildGQACache(ONNXNode &node, TOSABuilder &t,
                                         Value newKey, Value newValue,
                                         int64_t batch, int64_t seq) {
  TypedValue<RankedTensorType> pasts[2];
  int64_t pastRows = 0;
  for (unsigned index : {3u, 4u}) {
    if (!node.hasInput(index))
      continue;
    auto past = node.getFloatInput(index);
    if (failed(past))
      return failure();
    RankedTensorType type = past->getType();
    auto expected = cast<RankedTensorType>(newKey.getType());
    if (type.getRank() != 4 || type.getDimSize(0) != batch ||
        type.getDimSize(1) != expected.getDimSize(1) ||
        type.getDimSize(3) != expected.getDimSize(3) ||
        (pasts[0] && type != pasts[0].getType()))
      return node.emitError()
             << (index == 3 ? "past_key " : "past_value ") << type
             << " is not [" << batch << ", " << expected.getDimSize(1)
             << ", past, " << expected.getDimSize(3)
             << "] like the other past";
    pasts[index - 3] = *past;
    pastRows = type.getDimSize(2);
  }
  if (node.hasInput(3) != node.hasInput(4))
    return node.emitError()
           << "past_key and past_value must be both present or both absent";
  DenseElementsAttr total = node.getConstantInput(6);
  if (!total || !total.getElementType().isInteger(32) ||
      total.getNumElements() != 1)
    return node.emitError() << "total_sequence_length must be an int32 "
                               "constant (it sizes the present)";
  int64_t totalLength = *total.getValues<int32_t>().begin();
  auto seqlensInput = node.getInput(5);
  if (failed(seqlensInput))
    return failure();
  if (!seqlensInput->getType().getElementType().isInteger(32) ||
      seqlensInput->getType().getNumElements() != batch)
    return node.emitError() << "seqlens_k " << seqlensInput->getType()
                            << " is not int32 [" << batch << "]";
  DenseElementsAttr seqlens = node.getConstantInput(5);
  if (pastRows == 0) {
    // A first prompt filling the sequence.
    if (!seqlens)
      return node.emitError() << "without a past, seqlens_k must be a "
                                 "constant";
    if (totalLength != seq ||
        llvm::any_of(seqlens.getValues<int32_t>(),
                     [&](int32_t length) { return length != seq - 1; }))
      return node.emitError()
             << "without a past, only a first prompt filling the sequence "
                "is supported (total_sequence_length = "
             << seq << ", seqlens_k = " << seq - 1 << ")";
    return GQACache{newKey, newValue, Value()};
  }
  if (batch != 1)
    return node.emitError() << "a past is supported with batch 1, not "
                            << batch;
  if (totalLength < seq)
    return node.emitError() << "total_sequence_length " << totalLength
                            << " is shorter than the query's " << seq
                            << " rows";
  if (seqlens) {
    int64_t length = *seqlens.getValues<int32_t>().begin();
    if (length + 1 < seq || length + 1 > totalLength)
      return node.emitError()
             << "seqlens_k " << length << " does not fit " << seq
             << " rows in a total of " << totalLength;
  }

  // past = seqlens_k[0] + 1 - S, kept in [0, min(P, T' - S)] so that no
  // index leaves the tensors whatever the lengths say at run time.
  OpBuilder &b = t.b;
  Location loc = t.loc;
  int64_t presentRows = std::max(pastRows, totalLength);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value length = tensor::ExtractOp::create(b, loc, *seqlensInput,
                                           ValueRange{zero});
  Value past = arith::SubIOp::create(
      b, loc, arith::IndexCastOp::create(b, loc, b.getIndexType(), length),
      arith::ConstantIndexOp::create(b, loc, seq - 1));
  past = arith::MaxSIOp::create(b, loc, past, zero);
  past = arith::MinSIOp::create(
      b, loc, past,
      arith::ConstantIndexOp::create(
          b, loc, std::min(pastRows, presentRows - seq)));

  auto present = [&](Value pastTensor, Value rows) {
    auto rowsType = cast<RankedTensorType>(rows.getType());
    auto type = rowsType.clone({batch, rowsType.getDimSize(1), presentRows,
                                rowsType.getDimSize(3)});
    return generateTensor(
        node, type, [&](OpBuilder &nb, Location nloc, ValueRange at) {
          auto index = [&](int64_t value) {
            return arith::ConstantIndexOp::create(nb, nloc, value);
          };
          Value row = at[2];
          Value fromNew = arith::SubIOp::create(nb, nloc, row, past);
          Value isPast = arith::CmpIOp::create(
              nb, nloc, arith::CmpIPredicate::slt, row, past);
          Value isNew = arith::AndIOp::create(
              nb, nloc, arith::XOrIOp::create(
                            nb, nloc, isPast,
                            arith::ConstantIntOp::create(nb, nloc, 1, 1)),
              arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::slt,
                                    fromNew, index(seq)));
          // Both reads stay in bounds; the selects pick the one that
          // applies.
          Value pastRow = arith::MinSIOp::create(nb, nloc, row,
                                                 index(pastRows - 1));
          Value newRow = arith::MinSIOp::create(
              nb, nloc, arith::MaxSIOp::create(nb, nloc, fromNew, index(0)),
              index(seq - 1));
          Value fromPast = tensor::ExtractOp::create(
              nb, nloc, pastTensor, ValueRange{at[0], at[1], pastRow, at[3]});
          Value fromRows = tensor::ExtractOp::create(
              nb, nloc, rows, ValueRange{at[0], at[1], newRow, at[3]});
          Value zeroValue = arith::ConstantOp::create(
              nb, nloc, nb.getFloatAttr(type.getElementType(), 0));
          return arith::SelectOp::create(
              nb, nloc, isPast, fromPast,
              arith::SelectOp::create(nb, nloc, isNew, fromRows, zeroValue));
        });
  };
  return GQACache{present(pasts[0], newKey), present(pasts[1], newValue),
                  past};
}

/// GroupQueryAttention: causal attention of query heads over key/value
/// heads shared by groups of num_heads / kv_num_heads, softmax(scale *
/// q k^T) v with an optional softcap and sliding window
/// (local_window_size), over the present keys and values (buildGQACache):
/// query i is at key index past + i.
static Results lowerGroupQueryAttention(ONNXNode &node) {
  auto heads = getAttentionHeads(node);
  if (failed(heads))
    return failure();
  auto [numHeads, kvHeads] = *heads;
  if (node.getIntAttribute("do_rotary", 0) != 0)
    return node.emitError()
           << "do_rotary=1 is not supported; apply RotaryEmbedding before it";
  if (node.getIntAttribute("smooth_softmax", 0) != 0)
    return node.emitError() << "smooth_softmax=1 is not supported";
  if (node.getIntAttribute("qk_output", 0) != 0)
    return node.emitError() << "qk_output is not supported";
  if (failed(rejectInput(node, 9, "position_ids")) ||
      failed(rejectInput(node, 10, "attention_bias")) ||
      failed(rejectInput(node, 11, "head_sink")) ||
      failed(rejectOutput(node, 3, "output_qk")))
    return failure();

  auto query = node.getFloatInput(0);
  if (failed(query))
    return failure();
  RankedTensorType queryType = query->getType();
  if (queryType.getRank() != 3)
    return node.emitError() << "query " << queryType << " is not 3-D";
  int64_t batch = queryType.getDimSize(0), seq = queryType.getDimSize(1);
  TOSABuilder t(node);
  Value q, k, v;
  int64_t headDim;
  if (node.hasInput(1) != node.hasInput(2))
    return node.emitError()
           << "key and value must be both present or both absent";
  if (!node.hasInput(1)) {
    // Packed [B, S, (N + 2 N_kv) H].
    int64_t width = queryType.getDimSize(2);
    headDim = width / (numHeads + 2 * kvHeads);
    if (headDim * (numHeads + 2 * kvHeads) != width)
      return node.emitError() << "packed query width " << width
                              << " is not (num_heads + 2 * kv_num_heads) * H";
    q = t.slice(*query, 2, 0, numHeads * headDim);
    k = t.slice(*query, 2, numHeads * headDim, kvHeads * headDim);
    v = t.slice(*query, 2, (numHeads + kvHeads) * headDim, kvHeads * headDim);
  } else {
    auto key = node.getFloatInput(1);
    auto value = node.getFloatInput(2);
    if (failed(key) || failed(value))
      return failure();
    headDim = queryType.getDimSize(2) / numHeads;
    auto kvType = queryType.clone({batch, seq, kvHeads * headDim});
    if (headDim * numHeads != queryType.getDimSize(2) ||
        key->getType() != kvType || value->getType() != kvType)
      return node.emitError()
             << "query " << queryType << ", key " << key->getType()
             << " and value " << value->getType() << " do not fit " << numHeads
             << " query and " << kvHeads << " key/value heads";
    q = *query;
    k = *key;
    v = *value;
  }

  Value q4 = splitHeads(t, q, numHeads, headDim);
  Value newKey = splitHeads(t, k, kvHeads, headDim);
  Value newValue = splitHeads(t, v, kvHeads, headDim);
  auto cache = buildGQACache(node, t, newKey, newValue, batch, seq);
  if (failed(cache))
    return failure();
  CausalAttention options{numHeads, kvHeads};
  options.scale = getFloatAttribute(node, "scale", 0.0f);
  options.softcap = getFloatAttribute(node, "softcap", 0.0f);
  options.window = node.getIntAttribute("local_window_size", -1);
  options.queryOffset = cache->pastLength;
  Value output =
      buildCausalAttention(t, q4, cache->key, cache->value, options);
  return llvm::SmallVector<Value>{output, cache->key, cache->value};
}

/// The `bits`-wide codes of `packed` (i8 bytes [.., n], low bits first)
/// as i32 [.., n * 8 / bits].
static Value unpackCodes(TOSABuilder &t, Value packed, int64_t bits) {
  llvm::SmallVector<int64_t> shape(TOSABuilder::shapeOf(packed));
  int64_t perByte = 8 / bits, rank = shape.size();
  Type i32 = t.b.getI32Type();
  // Sign extension only fills bits that the mask clears again.
  Value bytes = t.cast(packed, i32);
  llvm::SmallVector<int64_t> column(shape);
  column.push_back(1);
  bytes = t.reshape(bytes, column);
  llvm::SmallVector<int64_t> shiftShape(rank, 1);
  shiftShape.push_back(perByte);
  auto shiftType = RankedTensorType::get(shiftShape, i32);
  llvm::SmallVector<int32_t> shifts;
  for (int64_t i = 0; i < perByte; ++i)
    shifts.push_back(static_cast<int32_t>(i * bits));
  Value shiftValues = tosa::ConstOp::create(
      t.b, t.loc, shiftType,
      DenseElementsAttr::get(shiftType, llvm::ArrayRef(shifts)));
  Value shifted = t.binary<tosa::LogicalRightShiftOp>(bytes, shiftValues);
  Value codes = t.binary<tosa::BitwiseAndOp>(
      shifted, splat(t.node, i32, (1 << bits) - 1, rank + 1));
  shape.back() *= perByte;
  return t.reshape(codes, shape);
}

/// MatMulNBits: Y = A @ dequant(B)^T (+ bias), B [N, K/block, block *
/// bits / 8] uint8 codes of W^T, low bits first; per block a scale and a
/// zero point (packed uint8, default 2^(bits-1)). The packed bytes stay
/// constants of the graph and are unpacked by it.
static Results lowerMatMulNBits(ONNXNode &node) {
  int64_t k = node.getIntAttribute("K", 0), n = node.getIntAttribute("N", 0);
  int64_t bits = node.getIntAttribute("bits", 4);
  int64_t blockSize = node.getIntAttribute("block_size", 0);
  if (bits != 2 && bits != 4 && bits != 8)
    return node.emitError() << "bits=" << bits << " is not supported (2, 4, 8)";
  if (k <= 0 || n <= 0 || blockSize <= 0 || blockSize * bits % 8 != 0)
    return node.emitError()
           << "K=" << k << ", N=" << n << " and block_size=" << blockSize
           << " are not valid";
  if (failed(rejectInput(node, 4, "g_idx")))
    return failure();
  auto a = node.getFloatInput(0);
  auto packed = node.getInput(1);
  auto scales = node.getFloatInput(2);
  if (failed(a) || failed(packed) || failed(scales))
    return failure();
  RankedTensorType aType = a->getType();
  Type elementType = aType.getElementType();
  if (aType.getRank() < 1 || aType.getShape().back() != k)
    return node.emitError() << "A " << aType << " does not end in K=" << k;
  int64_t blocks = (k + blockSize - 1) / blockSize;
  int64_t blobBytes = blockSize * bits / 8;
  RankedTensorType packedType = packed->getType();
  if (!packedType.getElementType().isInteger(8) || !node.isUnsignedInput(1) ||
      packedType.getNumElements() != n * blocks * blobBytes ||
      packedType.getDimSize(0) != n)
    return node.emitError() << "B " << packedType << " is not uint8 [" << n
                            << ", " << blocks << ", " << blobBytes << "]";
  if (scales->getType().getNumElements() != n * blocks)
    return node.emitError() << "scales " << scales->getType() << " do not hold "
                            << n << " x " << blocks << " blocks";

  TOSABuilder t(node);
  // Codes as [N, blocks, block] floats.
  Value codes =
      unpackCodes(t, t.reshape(*packed, {n, blocks, blobBytes}), bits);
  codes = t.cast(codes, elementType);
  Value zeroPoint;
  if (node.hasInput(3)) {
    auto zeroPoints = node.getInput(3);
    if (failed(zeroPoints))
      return failure();
    int64_t zpBytes = (blocks * bits + 7) / 8;
    RankedTensorType zpType = zeroPoints->getType();
    if (!zpType.getElementType().isInteger(8) || !node.isUnsignedInput(3))
      return node.emitError() << "zero_points " << zpType
                              << " are not packed uint8 (float zero points "
                                 "are not supported)";
    if (zpType.getNumElements() != n * zpBytes)
      return node.emitError() << "zero_points " << zpType << " do not hold "
                              << n << " x " << zpBytes << " bytes";
    Value unpacked = unpackCodes(t, t.reshape(*zeroPoints, {n, zpBytes}), bits);
    zeroPoint = t.reshape(t.cast(t.slice(unpacked, 1, 0, blocks), elementType),
                          {n, blocks, 1});
  } else {
    zeroPoint = splat(node, elementType, double(int64_t{1} << (bits - 1)), 3);
  }
  Value weights =
      t.mul(t.sub(codes, zeroPoint), t.reshape(*scales, {n, blocks, 1}));
  // W^T [N, K] -> W [1, K, N].
  weights = t.slice(t.reshape(weights, {n, blocks * blockSize}), 1, 0, k);
  weights = t.reshape(t.transpose(weights, {1, 0}), {1, k, n});
  int64_t rows = aType.getNumElements() / k;
  Value product = t.matmul(t.reshape(*a, {1, rows, k}), weights);
  llvm::SmallVector<int64_t> shape(aType.getShape());
  shape.back() = n;
  Value y = t.reshape(product, shape);
  if (failed(addBias(t, y, 5)))
    return failure();
  return llvm::SmallVector<Value>{y};
}

/// GatherBlockQuantized's form with uint8 data: a 2-D table gathered
/// along axis 0 and quantized in blocks along its last axis, as ONNX
/// Runtime GenAI writes quantized embeddings. The other forms (int4/uint4
/// data, other axes) are rejected, naming the attribute.
struct BlockQuantizedTable {
  Value data, scales, zeroPoints;
  int64_t bits, blockSize, rows, width, blocks;
};

static FailureOr<BlockQuantizedTable> getBlockQuantizedTable(ONNXNode &node) {
  BlockQuantizedTable table;
  table.bits = node.getIntAttribute("bits", 4);
  table.blockSize = node.getIntAttribute("block_size", 128);
  if (table.bits != 4 && table.bits != 8)
    return node.emitError()
           << "bits=" << table.bits << " is not supported (4, 8)";
  if (table.blockSize < 16 || (table.blockSize & (table.blockSize - 1)))
    return node.emitError() << "block_size=" << table.blockSize
                            << " is not a power of 2 of at least 16";
  auto data = node.getInput(0);
  auto scales = node.getFloatInput(2);
  if (failed(data) || failed(scales))
    return failure();
  RankedTensorType dataType = data->getType();
  if (!dataType.getElementType().isInteger(8) || !node.isUnsignedInput(0))
    return node.emitError() << "data " << dataType
                            << " is not uint8 (int4/uint4 data is not "
                               "supported)";
  if (dataType.getRank() != 2)
    return node.emitError() << "data " << dataType
                            << " is not 2-D (only 2-D tables are supported)";
  int64_t gatherAxis = node.getIntAttribute("gather_axis", 0);
  int64_t quantizeAxis = node.getIntAttribute("quantize_axis", 1);
  if (gatherAxis != 0 && gatherAxis != -2)
    return node.emitError()
           << "gather_axis=" << gatherAxis << " is not supported (only 0)";
  if (quantizeAxis != 1 && quantizeAxis != -1)
    return node.emitError() << "quantize_axis=" << quantizeAxis
                            << " is not supported (only the last axis, 1)";
  table.rows = dataType.getDimSize(0);
  table.width = dataType.getDimSize(1) * (8 / table.bits);
  table.blocks = (table.width + table.blockSize - 1) / table.blockSize;
  if (scales->getType().getShape() !=
      llvm::ArrayRef<int64_t>{table.rows, table.blocks})
    return node.emitError() << "scales " << scales->getType() << " are not ["
                            << table.rows << ", " << table.blocks << "]";
  table.data = *data;
  table.scales = *scales;
  if (!node.hasInput(3))
    return table;
  auto zeroPoints = node.getInput(3);
  if (failed(zeroPoints))
    return failure();
  int64_t zpBytes = (table.blocks * table.bits + 7) / 8;
  RankedTensorType zpType = zeroPoints->getType();
  if (!zpType.getElementType().isInteger(8) || !node.isUnsignedInput(3) ||
      zpType.getShape() != llvm::ArrayRef<int64_t>{table.rows, zpBytes})
    return node.emitError() << "zero_points " << zpType << " are not uint8 ["
                            << table.rows << ", " << zpBytes << "]";
  table.zeroPoints = *zeroPoints;
  return table;
}

/// The rows of `table` [R, C] at `indices` (i32 [1, W]) as [W, C].
static Value gatherTableRows(TOSABuilder &t, Value table, Value indices) {
  llvm::ArrayRef<int64_t> shape = TOSABuilder::shapeOf(table);
  int64_t count = TOSABuilder::shapeOf(indices)[1];
  auto type = TOSABuilder::typeOf(table).clone({1, count, shape[1]});
  Value rows = tosa::GatherOp::create(
      t.b, t.loc, type, t.reshape(table, {1, shape[0], shape[1]}), indices);
  return t.reshape(rows, {count, shape[1]});
}

/// Per-block values [W, blocks] repeated over their blocks' elements and
/// cut to the row width: [W, width].
static Value expandBlocks(TOSABuilder &t, Value perBlock, int64_t blockSize,
                          int64_t width) {
  llvm::ArrayRef<int64_t> shape = TOSABuilder::shapeOf(perBlock);
  int64_t count = shape[0], blocks = shape[1];
  Value tiled =
      t.tile(t.reshape(perBlock, {count, blocks, 1}), {1, 1, blockSize});
  return t.slice(t.reshape(tiled, {count, blocks * blockSize}), 1, 0, width);
}

/// GatherBlockQuantized (uint8 data, see getBlockQuantizedTable): the
/// rows at `indices` (negative ones counting back), dequantized as
/// (code - zero point) * scale per block; codes low bits first, zero
/// points packed the same way (default 2^(bits-1)). Only the gathered rows
/// are unpacked.
static Results lowerGatherBlockQuantized(ONNXNode &node) {
  auto table = getBlockQuantizedTable(node);
  auto indices = node.getInput(1);
  if (failed(table) || failed(indices))
    return failure();
  RankedTensorType indicesType = indices->getType();
  if (!isa<IntegerType>(indicesType.getElementType()))
    return node.emitError() << "indices must be integers";
  TOSABuilder t(node);
  Type i32 = t.b.getI32Type();
  int64_t count = indicesType.getNumElements();
  Value index = t.reshape(t.cast(*indices, i32), {1, count});
  Value wrapped = t.add(index, splat(node, i32, table->rows, 2));
  Value negative = tosa::GreaterOp::create(
      t.b, t.loc, TOSABuilder::typeOf(index).clone(t.b.getI1Type()),
      splat(node, i32, 0, 2), index);
  index = tosa::SelectOp::create(t.b, t.loc, TOSABuilder::typeOf(index),
                                 negative, wrapped, index);
  // ONNX Runtime writes zeros for indices out of range; here they are
  // clamped so that no read leaves the table.
  index = t.binary<tosa::MaximumOp>(index, splat(node, i32, 0, 2));
  index =
      t.binary<tosa::MinimumOp>(index, splat(node, i32, table->rows - 1, 2));

  Type elementType = TOSABuilder::typeOf(table->scales).getElementType();
  Value codes =
      unpackCodes(t, gatherTableRows(t, table->data, index), table->bits);
  codes = t.cast(codes, elementType);
  Value zeroPoint;
  if (table->zeroPoints) {
    Value packed = gatherTableRows(t, table->zeroPoints, index);
    Value unpacked =
        t.slice(unpackCodes(t, packed, table->bits), 1, 0, table->blocks);
    zeroPoint = expandBlocks(t, t.cast(unpacked, elementType), table->blockSize,
                             table->width);
  } else {
    zeroPoint =
        splat(node, elementType, double(int64_t{1} << (table->bits - 1)), 2);
  }
  Value scale = expandBlocks(t, gatherTableRows(t, table->scales, index),
                             table->blockSize, table->width);
  Value rows = t.mul(t.sub(codes, zeroPoint), scale);
  llvm::SmallVector<int64_t> shape(indicesType.getShape());
  shape.push_back(table->width);
  return llvm::SmallVector<Value>{t.reshape(rows, shape)};
}

const llvm::StringMap<NodeLowering> &
mlir::afm::onnx_import::getMicrosoftLowerings() {
  static const llvm::StringMap<NodeLowering> lowerings = [] {
    llvm::StringMap<NodeLowering> table = {
        {"SkipSimplifiedLayerNormalization", lowerSkipSimplifiedLayerNorm},
        {"SkipLayerNormalization", lowerSkipLayerNorm},
        {"RotaryEmbedding", lowerRotaryEmbedding},
        {"GroupQueryAttention", lowerGroupQueryAttention},
        {"MatMulNBits", lowerMatMulNBits},
        {"GatherBlockQuantized", lowerGatherBlockQuantized},
    };
    registerMicrosoftActivationLowerings(table);
    registerMicrosoftAttentionLowerings(table);
    return table;
  }();
  return lowerings;
}

const llvm::StringMap<NodeLowering> &
mlir::afm::onnx_import::getOnnxRuntimeDefaultDomainLowerings() {
  static const llvm::StringMap<NodeLowering> lowerings = {
      {"SimplifiedLayerNormalization", lowerSimplifiedLayerNorm},
  };
  return lowerings;
}
