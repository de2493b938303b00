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

#include "passes/Conversion/CompressedKernels.h"

#include "dialects/afm/IR/AFMOps.h"
#include "dialects/afm_cpu/IR/AFMCPUDialect.h"
#include "passes/Conversion/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

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
  Type codeType = b.getI8Type();
  if (auto vector = dyn_cast<VectorType>(value.getType())) {
    inverse = vector::BroadcastOp::create(b, loc, vector, inverse);
    codeType = vector.clone(codeType);
  } else {
    value = castFloat(b, loc, value, b.getF32Type());
  }
  Value scaled = arith::MulFOp::create(b, loc, value, inverse);
  Value rounded = math::RoundEvenOp::create(b, loc, scaled);
  return arith::FPToSIOp::create(b, loc, codeType, rounded);
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
  return q2RowBytes(type.getCols()) % 4 == 0;
}

namespace {
/// A 2-bit layer's activations as its int8 kernels read them.
struct Q2Activations {
  int64_t kBytes, lanes, groups, words;
  /// [T] f32: the rows' largest magnitudes (scale amax / 127).
  Value amax;
  /// [T, 4, groups, lanes] i8: code plane j of a group's bytes is one
  /// contiguous vector of activations, in the order the kernels read.
  Value xq;
  /// [T] i32: each row's sum of codes.
  Value rowSum;
};
} // namespace

static Q2Activations q2Activations(OpBuilder &b, Location loc, Value x,
                                   Q2WeightType type) {
  MLIRContext *ctx = b.getContext();
  Type i8 = b.getI8Type(), i32 = b.getI32Type();
  Q2Activations a;
  a.kBytes = (type.getCols() + 3) / 4;
  // As in the f32 kernel: each output keeps partial sums per byte column of
  // a group of `lanes` code bytes (64: one 512-bit vector), here grouped
  // four bytes to an i32 lane, so the inner loop is element-wise over
  // contiguous bytes.
  a.lanes = lanesDividing(a.kBytes, 64);
  a.groups = a.kBytes / a.lanes;
  a.words = a.lanes / 4;
  OpFoldResult rows = getSizes(b, loc, x)[0];
  a.amax = buildRowAbsMax(b, loc, x);
  Value xs = splitColumns(b, loc, padColumns(b, loc, x, a.kBytes * 4),
                          {a.groups, a.lanes, 4});
  AffineExpr d0, d1, d2, d3;
  bindDims(ctx, d0, d1, d2, d3);
  a.xq = buildGeneric(
      b, loc, ValueRange{xs, a.amax},
      tensor::EmptyOp::create(
          b, loc,
          SmallVector<OpFoldResult>{rows, b.getIndexAttr(4),
                                    b.getIndexAttr(a.groups),
                                    b.getIndexAttr(a.lanes)},
          i8),
      mapsOf(4, {{d0, d2, d3, d1}, {d0}, {d0, d1, d2, d3}}, ctx),
      SmallVector<IteratorType>(4, IteratorType::parallel),
      [&](OpBuilder &nb, Location l, ValueRange args) {
        return buildInt8Code(nb, l, args[0], args[1]);
      });
  a.rowSum = buildGeneric(
      b, loc, ValueRange{a.xq},
      createFilled(b, loc, {rows}, b.getI32IntegerAttr(0)),
      mapsOf(4, {{d0, d1, d2, d3}, {d0}}, ctx),
      {IteratorType::parallel, IteratorType::reduction,
       IteratorType::reduction, IteratorType::reduction},
      [&](OpBuilder &nb, Location l, ValueRange args) {
        return arith::AddIOp::create(
            nb, l, args[1], arith::ExtSIOp::create(nb, l, i32, args[0]));
      });
  return a;
}

/// y = s * (amax / 127) * (dot - 1.5 rowsum) (+ acc), from the exact
/// integer 2 dot - 3 rowsum, once per output of `dot` [T, N] i32.
static Value q2Int8Output(OpBuilder &b, Location loc, Value x, Value dot,
                          const Q2Activations &a, Q2WeightType type,
                          Value scales, Value acc, Type elementType) {
  MLIRContext *ctx = b.getContext();
  Type i32 = b.getI32Type();
  AffineExpr r, c;
  bindDims(ctx, r, c);
  AffineExpr scaleIndex = type.getGranularity() == ScaleGranularity::PerTensor
                              ? getAffineConstantExpr(0, ctx)
                              : c;
  return buildOutputStep(
      b, loc, getSizes(b, loc, x)[0], type.getRows(),
      {dot, a.rowSum, a.amax, scales}, {{r, c}, {r}, {r}, {scaleIndex}}, acc,
      elementType, [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
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

Value afm::buildQ2Int8Matmul(OpBuilder &b, Location loc, Value x,
                             Q2WeightType type, ValueRange parts,
                             Type elementType, Value acc) {
  MLIRContext *ctx = b.getContext();
  Type i8 = b.getI8Type(), i32 = b.getI32Type();
  int64_t n = type.getRows();
  Q2Activations a = q2Activations(b, loc, x, type);
  OpFoldResult rows = getSizes(b, loc, x)[0];

  // dot[t, o] = sum_{g, j, i, m} q(codes[o, g, 4i + m], plane j) *
  //                              xq[t, j, g, 4i + m]
  // The four bytes m of lane i are the innermost reduction: vectorized, a
  // tile is [lanes, 4] bytes whose rows sum into i32 lanes, which stay
  // lanes in a register until the output's last tile (Int8DotProducts.h).
  Value xq5 = tensor::ExpandShapeOp::create(
      b, loc,
      RankedTensorType::get({cast<ShapedType>(x.getType()).getDimSize(0), 4,
                             a.groups, a.words, 4},
                            i8),
      a.xq, SmallVector<ReassociationIndices>{{0}, {1}, {2}, {3, 4}},
      SmallVector<OpFoldResult>{rows, b.getIndexAttr(4),
                                b.getIndexAttr(a.groups),
                                b.getIndexAttr(a.words), b.getIndexAttr(4)});
  Value codes = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({n, a.groups, a.words, 4}, i8), parts[0],
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
  return q2Int8Output(b, loc, x, dot, a, type, parts[1], acc, elementType);
}

/// Rows of x (activations) and of W (outputs) in one register tile.
static constexpr int64_t kGemmTileRows = 4, kGemmTileOutputs = 2;

bool afm::canBuildQ2Int8Gemm(RankedTensorType x, Q2WeightType type) {
  return x.hasStaticShape() && supportsQ2Int8Matmul(type) &&
         x.getDimSize(0) % kGemmTileRows == 0;
}

Value afm::buildQ2Int8Gemm(OpBuilder &b, Location loc, Value x,
                           Q2WeightType type, ValueRange parts,
                           Type elementType, Value acc) {
  auto xType = cast<RankedTensorType>(x.getType());
  int64_t tokens = xType.getDimSize(0), n = type.getRows();
  if (!canBuildQ2Int8Gemm(xType, type))
    return {};
  MLIRContext *ctx = b.getContext();
  Type i32 = b.getI32Type();
  Q2Activations a = q2Activations(b, loc, x, type);
  int64_t rt = kGemmTileRows, ro = n % kGemmTileOutputs == 0
                                        ? kGemmTileOutputs
                                        : 1;
  // Both sides as i32 words of four code bytes (four activation bytes of
  // one plane): word i of group g.
  Value xq = buildBytesAsWords(b, loc, a.xq, {tokens, 4, a.groups, a.words});
  Value codes = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({n / ro, ro, a.groups, a.words}, i32),
      buildBytesAsWords(b, loc, parts[0], {n, a.groups, a.words}),
      SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}});
  SmallVector<Value> inputs = {codes};
  AffineExpr tb, ob, ti, oi, g, i;
  bindDims(ctx, tb, ob, ti, oi, g, i);
  SmallVector<SmallVector<AffineExpr>> maps = {{ob, oi, g, i}};
  for (int64_t j = 0; j < 4; ++j) {
    Value plane = tensor::ExtractSliceOp::create(
        b, loc, RankedTensorType::get({tokens, a.groups, a.words}, i32), xq,
        ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(j),
                               b.getIndexAttr(0), b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(tokens), b.getIndexAttr(1),
                               b.getIndexAttr(a.groups),
                               b.getIndexAttr(a.words)},
        ArrayRef<OpFoldResult>(SmallVector<OpFoldResult>(4, b.getIndexAttr(1))));
    inputs.push_back(tensor::ExpandShapeOp::create(
        b, loc,
        RankedTensorType::get({tokens / rt, rt, a.groups, a.words}, i32),
        plane, SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}}));
    maps.push_back({tb, ti, g, i});
  }
  maps.push_back({tb, ti, ob, oi, i});
  // partial[t, o, i] = sum_g sum_j dot(plane j of codes[o, g, i],
  // xq[t, j, g, i]): the tile's rt x ro outputs stay in registers over
  // the groups, each code word is loaded once for rt rows and each
  // activation word once for ro outputs.
  auto kernel = linalg::GenericOp::create(
      b, loc,
      TypeRange{RankedTensorType::get({tokens / rt, rt, n / ro, ro, a.words},
                                      i32)},
      inputs,
      ValueRange{createFilled(b, loc,
                              {b.getIndexAttr(tokens / rt), b.getIndexAttr(rt),
                               b.getIndexAttr(n / ro), b.getIndexAttr(ro),
                               b.getIndexAttr(a.words)},
                              b.getI32IntegerAttr(0))},
      mapsOf(6, maps, ctx),
      SmallVector<IteratorType>{IteratorType::parallel, IteratorType::parallel,
                                IteratorType::parallel, IteratorType::parallel,
                                IteratorType::reduction,
                                IteratorType::parallel},
      [&](OpBuilder &nb, Location l, ValueRange args) {
        // The tile's dot products from zero, then one add into the output:
        // the vectorizer knows an add as the reduction's combiner.
        Value sum = arith::ConstantIntOp::create(nb, l, i32, 0);
        for (int64_t j = 0; j < 4; ++j) {
          Value shifted =
              j ? arith::ShRUIOp::create(
                      nb, l, args[0],
                      arith::ConstantIntOp::create(nb, l, i32, 2 * j))
                      .getResult()
                : args[0];
          Value plane = arith::AndIOp::create(
              nb, l, shifted,
              arith::ConstantIntOp::create(nb, l, i32, 0x03030303));
          sum = afm_cpu::DotBytesOp::create(nb, l, i32, sum, plane, args[1 + j]);
        }
        linalg::YieldOp::create(
            nb, l, arith::AddIOp::create(nb, l, args.back(), sum).getResult());
      });
  contracts(kernel).getWholeTileDimsAttrHelper().setAttr(
      kernel, b.getDenseI64ArrayAttr({2, 3}));
  Value partial = tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get({tokens, n, a.words}, i32),
      kernel.getResult(0),
      SmallVector<ReassociationIndices>{{0, 1}, {2, 3}, {4}});
  // The lanes of each output, summed once (in i32: exact).
  Value dot = sumInnermost(b, loc, partial);
  return q2Int8Output(b, loc, x, dot, a, type, parts[1], acc, elementType);
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
