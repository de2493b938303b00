//===- Q2Int8Matmul.cpp - 2-bit linear layers on int8 activations ---------===//
//
// With `int8-activations`, each row of x is quantized symmetrically to int8
// (scale max|x| / 127, round half to even) and multiplied with the 2-bit
// codes in integers:
//
//   y[t, n] = s[n] * sum_k x[t, k] * (q[n, k] - 1.5)
//          ~= s[n] * (amax[t] / 127) * (dot[t, n] - 1.5 * rowsum[t])
//   dot[t, n] = sum_k xq[t, k] * q[n, k],  rowsum[t] = sum_k xq[t, k]
//
// so the balanced offset and both scales leave the inner loop, which is
// u8 (code) x s8 (activation) products summed four at a time into i32
// lanes: one `vpdpbusd` (AVX-512 VNNI), `vpmaddubsw` + `vpmaddwd` (AVX2) or
// `sdot` (Arm dotprod) per vector of codes (TileForTarget forms them).
//
//===----------------------------------------------------------------------===//

#include "passes/conversion/CompressedKernels.h"

#include "dialects/afm/IR/AFMOps.h"
#include "passes/conversion/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::afm;

using utils::IteratorType;

static Value f32Const(OpBuilder &b, Location loc, double value) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
}

/// `amax[t] = max_k |x[t, k]|` in f32.
/// Split-K: `lanes` running maxima per row first, element-wise over
/// contiguous columns, then the maximum of those. (A plain reduction over
/// K vectorizes into one sequential chain of NaN-propagating scalar
/// maxima, which cost more than the whole 2-bit GEMV of a 64-row layer.)
Value afm::buildRowAbsMax(OpBuilder &b, Location loc, Value x) {
  MLIRContext *ctx = b.getContext();
  int64_t k = cast<RankedTensorType>(x.getType()).getDimSize(1);
  int64_t lanes = lanesDividing(k, 16);
  OpFoldResult rows = getSizes(b, loc, x)[0];
  auto maxOfMagnitude = [](OpBuilder &nb, Location l, ValueRange args) {
    Value magnitude = math::AbsFOp::create(
        nb, l, castFloat(nb, l, args[0], nb.getF32Type()));
    return arith::MaximumFOp::create(nb, l, args[1], magnitude).getResult();
  };
  AffineExpr t, c, lane;
  bindDims(ctx, t, c, lane);
  Value partial = buildGeneric(
      b, loc, ValueRange{splitColumns(b, loc, x, {k / lanes, lanes})},
      createFilled(b, loc, {rows, b.getIndexAttr(lanes)}, b.getF32Type(),
                   0.0),
      mapsOf(3, {{t, c, lane}, {t, lane}}, ctx),
      {IteratorType::parallel, IteratorType::reduction,
       IteratorType::parallel},
      maxOfMagnitude);
  AffineExpr r, i;
  bindDims(ctx, r, i);
  return buildGeneric(
      b, loc, ValueRange{partial},
      createFilled(b, loc, {rows}, b.getF32Type(), 0.0),
      mapsOf(2, {{r, i}, {r}}, ctx),
      {IteratorType::parallel, IteratorType::reduction},
      [](OpBuilder &nb, Location l, ValueRange args) {
        return arith::MaximumFOp::create(nb, l, args[1], args[0]).getResult();
      });
}

/// The int8 code of `value` in a row whose largest magnitude is `amax`:
/// round-half-even(value * (127 / amax)), 0 for an all-zero row. The
/// reference evaluator (`quantizeActivationsInt8`) computes the same.
Value afm::buildInt8Code(OpBuilder &b, Location loc, Value value,
                         Value amax) {
  Value zero = f32Const(b, loc, 0.0);
  Value positive =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, amax, zero);
  Value inverse = arith::SelectOp::create(
      b, loc, positive,
      arith::DivFOp::create(b, loc, f32Const(b, loc, 127.0), amax), zero);
  Value scaled = arith::MulFOp::create(
      b, loc, castFloat(b, loc, value, b.getF32Type()), inverse);
  Value rounded = math::RoundEvenOp::create(b, loc, scaled);
  return arith::FPToSIOp::create(b, loc, b.getI8Type(), rounded);
}

Value afm::buildInt8RoundTrip(OpBuilder &b, Location loc, Value x) {
  MLIRContext *ctx = b.getContext();
  AffineExpr t, k;
  bindDims(ctx, t, k);
  Type elementType = cast<RankedTensorType>(x.getType()).getElementType();
  Value amax = buildRowAbsMax(b, loc, x);
  Value init = tensor::EmptyOp::create(b, loc, getSizes(b, loc, x),
                                       elementType);
  return buildGeneric(
      b, loc, ValueRange{x, amax}, init,
      mapsOf(2, {{t, k}, {t}, {t, k}}, ctx),
      {IteratorType::parallel, IteratorType::parallel},
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value code = buildInt8Code(nb, l, args[0], args[1]);
        Value step = arith::DivFOp::create(nb, l, args[1],
                                           f32Const(nb, l, 127.0));
        Value value = arith::MulFOp::create(
            nb, l, arith::SIToFPOp::create(nb, l, nb.getF32Type(), code),
            step);
        return castFloat(nb, l, value, elementType);
      });
}

bool afm::supportsQ2Int8Matmul(Q2WeightType type) {
  // Whole i32 lanes of four code bytes per row.
  return ((type.getCols() + 3) / 4) % 4 == 0;
}

Value afm::buildQ2Int8Matmul(OpBuilder &b, Location loc, Value x,
                             Q2WeightType type, ValueRange parts,
                             Type elementType, Value acc) {
  MLIRContext *ctx = b.getContext();
  Type i8 = b.getI8Type(), i32 = b.getI32Type();
  int64_t n = type.getRows(), kBytes = (type.getCols() + 3) / 4;
  // As in the f32 kernel: each output keeps partial sums per byte column of
  // a group of `lanes` code bytes (64: one 512-bit vector), here grouped
  // four bytes to an i32 lane, so the inner loop is element-wise over
  // contiguous bytes.
  int64_t lanes = lanesDividing(kBytes, 64);
  int64_t groups = kBytes / lanes, words = lanes / 4;
  OpFoldResult rows = getSizes(b, loc, x)[0];

  Value amax = buildRowAbsMax(b, loc, x);
  // xq as [T, 4, groups, lanes]: code plane j of a group's bytes is one
  // contiguous vector of activations, in the order the kernel reads.
  Value xs = splitColumns(b, loc, padColumns(b, loc, x, kBytes * 4),
                          {groups, lanes, 4});
  AffineExpr d0, d1, d2, d3;
  bindDims(ctx, d0, d1, d2, d3);
  Value xq = buildGeneric(
      b, loc, ValueRange{xs, amax},
      tensor::EmptyOp::create(
          b, loc,
          SmallVector<OpFoldResult>{rows, b.getIndexAttr(4),
                                    b.getIndexAttr(groups),
                                    b.getIndexAttr(lanes)},
          i8),
      mapsOf(4, {{d0, d2, d3, d1}, {d0}, {d0, d1, d2, d3}}, ctx),
      SmallVector<IteratorType>(4, IteratorType::parallel),
      [&](OpBuilder &nb, Location l, ValueRange args) {
        return buildInt8Code(nb, l, args[0], args[1]);
      });
  Value rowSum = buildGeneric(
      b, loc, ValueRange{xq},
      createFilled(b, loc, {rows}, b.getI32IntegerAttr(0)),
      mapsOf(4, {{d0, d1, d2, d3}, {d0}}, ctx),
      {IteratorType::parallel, IteratorType::reduction,
       IteratorType::reduction, IteratorType::reduction},
      [&](OpBuilder &nb, Location l, ValueRange args) {
        return arith::AddIOp::create(
            nb, l, args[1], arith::ExtSIOp::create(nb, l, i32, args[0]));
      });

  // dot[t, o] = sum_{g, j, i, m} q(codes[o, g, 4i + m], plane j) *
  //                              xq[t, j, g, 4i + m]
  // The four bytes m of lane i are the innermost reduction: vectorized, a
  // tile is [lanes, 4] bytes whose rows sum into i32 lanes, which stay
  // lanes in a register until the output's last tile (Int8DotProducts.h).
  Value xq5 = tensor::ExpandShapeOp::create(
      b, loc,
      RankedTensorType::get({cast<ShapedType>(x.getType()).getDimSize(0), 4,
                             groups, words, 4},
                            i8),
      xq, SmallVector<ReassociationIndices>{{0}, {1}, {2}, {3, 4}},
      SmallVector<OpFoldResult>{rows, b.getIndexAttr(4),
                                b.getIndexAttr(groups), b.getIndexAttr(words),
                                b.getIndexAttr(4)});
  Value codes = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({n, groups, words, 4}, i8), parts[0],
      SmallVector<ReassociationIndices>{{0}, {1, 2, 3}});
  // The plane loop j inside the group loop g: a group's code bytes are
  // loaded once and shifted four ways.
  AffineExpr t, o, g, j, i, m;
  bindDims(ctx, t, o, g, j, i, m);
  // The plane's shift comes from the loop index: a scalar per tile, a
  // constant once the plane loop is unrolled.
  Value dot = buildGeneric(
      b, loc, ValueRange{xq5, codes},
      createFilled(b, loc, {rows, b.getIndexAttr(n)}, b.getI32IntegerAttr(0)),
      mapsOf(6, {{t, j, g, i, m}, {o, g, i, m}, {t, o}}, ctx),
      {IteratorType::parallel, IteratorType::parallel, IteratorType::reduction,
       IteratorType::reduction, IteratorType::reduction,
       IteratorType::reduction},
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value plane = arith::IndexCastOp::create(
            nb, l, i8, linalg::IndexOp::create(nb, l, 3));
        Value shift = arith::ShLIOp::create(
            nb, l, plane, arith::ConstantIntOp::create(nb, l, i8, 1));
        Value shifted = arith::ShRUIOp::create(nb, l, args[1], shift);
        Value code = arith::AndIOp::create(
            nb, l, shifted, arith::ConstantIntOp::create(nb, l, i8, 3));
        Value product = arith::MulIOp::create(
            nb, l, arith::ExtUIOp::create(nb, l, i32, code),
            arith::ExtSIOp::create(nb, l, i32, args[0]));
        return arith::AddIOp::create(nb, l, args[2], product);
      });

  // y = s * (amax / 127) * (dot - 1.5 rowsum), from the exact integer
  // 2 dot - 3 rowsum.
  AffineExpr r, c;
  bindDims(ctx, r, c);
  AffineExpr scaleIndex = type.getGranularity() == ScaleGranularity::PerTensor
                              ? getAffineConstantExpr(0, ctx)
                              : c;
  return buildOutputStep(
      b, loc, rows, n, {dot, rowSum, amax, parts[1]},
      {{r, c}, {r}, {r}, {scaleIndex}}, acc, elementType,
      [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
        Value twice = arith::ShLIOp::create(
            nb, l, args[0], arith::ConstantIntOp::create(nb, l, i32, 1));
        Value offset = arith::MulIOp::create(
            nb, l, args[1], arith::ConstantIntOp::create(nb, l, i32, 3));
        Value exact = arith::SIToFPOp::create(
            nb, l, nb.getF32Type(),
            arith::SubIOp::create(nb, l, twice, offset));
        Value step = arith::MulFOp::create(nb, l, args[2],
                                           f32Const(nb, l, 0.5 / 127.0));
        return arith::MulFOp::create(
            nb, l, exact, arith::MulFOp::create(nb, l, step, args[3]));
      });
}

Value afm::buildOutputStep(
    OpBuilder &b, Location loc, OpFoldResult rows, int64_t n,
    SmallVector<Value> inputs, SmallVector<SmallVector<AffineExpr>> indexing,
    Value acc, Type elementType,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  MLIRContext *ctx = b.getContext();
  size_t computed = inputs.size();
  AffineExpr r, c;
  bindDims(ctx, r, c);
  if (acc) {
    inputs.push_back(acc);
    indexing.push_back({r, c});
  }
  indexing.push_back({r, c});
  Value init = tensor::EmptyOp::create(
      b, loc, SmallVector<OpFoldResult>{rows, b.getIndexAttr(n)},
      elementType);
  return buildGeneric(
      b, loc, inputs, init, mapsOf(2, indexing, ctx),
      {IteratorType::parallel, IteratorType::parallel},
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value y = body(nb, l, args.take_front(computed));
        if (acc)
          y = arith::AddFOp::create(
              nb, l, castFloat(nb, l, args[computed], nb.getF32Type()), y);
        return castFloat(nb, l, y, elementType);
      });
}

Value afm::buildRowScaledOutput(OpBuilder &b, Location loc, OpFoldResult rows,
                                int64_t n, Value sums, Value amax, Value acc,
                                Type elementType) {
  AffineExpr r, c;
  bindDims(b.getContext(), r, c);
  return buildOutputStep(
      b, loc, rows, n, {sums, amax}, {{r, c}, {r}}, acc, elementType,
      [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
        Value step = arith::DivFOp::create(nb, l, args[1],
                                           f32Const(nb, l, 127.0));
        return arith::MulFOp::create(nb, l, args[0], step);
      });
}
