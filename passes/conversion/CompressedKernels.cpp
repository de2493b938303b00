//===- CompressedKernels.cpp - linalg kernels over packed weights ---------===//

#include "passes/conversion/CompressedKernels.h"

#include "dialects/afm/IR/AFMOps.h"
#include "passes/conversion/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::afm;

using utils::IteratorType;

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

static Value indexConst(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

/// The leading `sizes` corner of the 2-D tensor `x`.
static Value leadingSlice(OpBuilder &b, Location loc, Value x,
                          ArrayRef<OpFoldResult> sizes) {
  SmallVector<OpFoldResult> offsets(2, b.getIndexAttr(0));
  SmallVector<OpFoldResult> strides(2, b.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(b, loc, x, offsets, sizes, strides);
}

/// The first `n` columns of `x [T, cols]`.
static Value firstColumns(OpBuilder &b, Location loc, Value x, int64_t n) {
  if (cast<RankedTensorType>(x.getType()).getDimSize(1) == n)
    return x;
  return leadingSlice(b, loc, x, {getSizes(b, loc, x)[0], b.getIndexAttr(n)});
}

/// `y [T, A, B]` as `[T, A*B]`, then its first `n` columns.
static Value mergeColumns(OpBuilder &b, Location loc, Value y, int64_t n) {
  auto type = cast<RankedTensorType>(y.getType());
  int64_t cols = type.getDimSize(1) * type.getDimSize(2);
  Value merged = tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get({type.getDimSize(0), cols},
                                    type.getElementType()),
      y, SmallVector<ReassociationIndices>{{0}, {1, 2}});
  return firstColumns(b, loc, merged, n);
}

/// The code of `bits` bits at bit `shift` (i8) of the byte `byte`, as f32:
/// unsigned, or sign-extended two's complement.
static Value codeAtShift(OpBuilder &b, Location loc, Value byte, Value shift,
                         unsigned bits, bool isSigned) {
  Type i8 = b.getI8Type();
  Type f32 = b.getF32Type();
  if (!isSigned) {
    Value shifted = arith::ShRUIOp::create(b, loc, byte, shift);
    Value code = arith::AndIOp::create(
        b, loc, shifted,
        arith::ConstantIntOp::create(b, loc, i8, (1 << bits) - 1));
    return arith::UIToFPOp::create(b, loc, f32, code);
  }
  // Move the code to the top bits, then shift it down arithmetically.
  Value up = arith::SubIOp::create(
      b, loc, arith::ConstantIntOp::create(b, loc, i8, 8 - bits), shift);
  Value top = arith::ShLIOp::create(b, loc, byte, up);
  Value code = arith::ShRSIOp::create(
      b, loc, top, arith::ConstantIntOp::create(b, loc, i8, 8 - bits));
  return arith::SIToFPOp::create(b, loc, f32, code);
}

/// Code number `slot` (an index) of `bits` bits from the byte `byte`,
/// lowest bits first.
static Value extractCode(OpBuilder &b, Location loc, Value byte, Value slot,
                         unsigned bits, bool isSigned) {
  Type i8 = b.getI8Type();
  Value index = arith::IndexCastOp::create(b, loc, i8, slot);
  Value shift = arith::MulIOp::create(
      b, loc, index, arith::ConstantIntOp::create(b, loc, i8, bits));
  return codeAtShift(b, loc, byte, shift, bits, isSigned);
}

/// `out + x * w` in f32.
static Value multiplyAdd(OpBuilder &b, Location loc, Value x, Value w,
                         Value out) {
  Value product =
      arith::MulFOp::create(b, loc, castFloat(b, loc, x, b.getF32Type()), w);
  return arith::AddFOp::create(b, loc, out, product);
}

/// `[T, A, B] -> [T, A]`, summed over B in f32.
static Value sumInnermost(OpBuilder &b, Location loc, Value x) {
  MLIRContext *ctx = b.getContext();
  auto type = cast<RankedTensorType>(x.getType());
  AffineExpr t, a, i;
  bindDims(ctx, t, a, i);
  return buildGeneric(
      b, loc, ValueRange{x}, zerosLike(b, loc, x, {type.getDimSize(1)}),
      mapsOf(3, {{t, a, i}, {t, a}}, ctx),
      {IteratorType::parallel, IteratorType::parallel, IteratorType::reduction},
      [&](OpBuilder &nb, Location l, ValueRange args) {
        return arith::AddFOp::create(
            nb, l, args[1], castFloat(nb, l, args[0], nb.getF32Type()));
      });
}

//===----------------------------------------------------------------------===//
// 2-bit: y = acc + s * sum_k x[k] * level(q[n, k])
//===----------------------------------------------------------------------===//

static Value q2Matmul(OpBuilder &b, Location loc, Value x, Q2WeightType type,
                      ValueRange parts, Type elementType, Value acc) {
  MLIRContext *ctx = b.getContext();
  int64_t n = type.getRows(), kBytes = ceilDiv(type.getCols(), 4);
  // Split-K: each output keeps `lanes` partial sums, one per byte column
  // of a group of `lanes` consecutive code bytes, so the inner loop is
  // element-wise over contiguous bytes and the horizontal sum happens once
  // per output instead of once per tile.
  // 64 bytes: four independent 16-wide f32 accumulators per output.
  int64_t lanes = lanesDividing(kBytes, 64);
  int64_t groups = kBytes / lanes;
  Value xs = splitColumns(b, loc, padColumns(b, loc, x, kBytes * 4),
                          {groups, lanes, 4});
  Value codes = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({n, groups, lanes}, b.getI8Type()),
      parts[0], SmallVector<ReassociationIndices>{{0}, {1, 2}});
  // x as [T, 4, groups, lanes]: code plane j of the bytes of a group is
  // one contiguous vector of activations, in the order the kernel reads.
  SmallVector<OpFoldResult> xtShape = {getSizes(b, loc, x)[0],
                                       b.getIndexAttr(4),
                                       b.getIndexAttr(groups),
                                       b.getIndexAttr(lanes)};
  AffineExpr d0, d1, d2, d3;
  bindDims(ctx, d0, d1, d2, d3);
  Value xt = buildGeneric(
      b, loc, ValueRange{xs},
      tensor::EmptyOp::create(b, loc, xtShape, b.getF32Type()),
      mapsOf(4, {{d0, d2, d3, d1}, {d0, d1, d2, d3}}, ctx),
      SmallVector<IteratorType>(4, IteratorType::parallel),
      [&](OpBuilder &nb, Location l, ValueRange args) {
        return castFloat(nb, l, args[0], nb.getF32Type());
      });
  // The code-in-byte loop comes before the byte loop, so that tiling
  // takes one code plane at a time: a uniform shift per vector op.
  AffineExpr t, o, j, g, lane;
  bindDims(ctx, t, o, j, g, lane);
  Value partial = buildGeneric(
      b, loc, ValueRange{xt, codes, codeShifts(b, loc, 2)},
      zerosLike(b, loc, x, {n, lanes}),
      mapsOf(5, {{t, j, g, lane}, {o, g, lane}, {j}, {t, o, lane}}, ctx),
      {IteratorType::parallel, IteratorType::parallel, IteratorType::reduction,
       IteratorType::reduction, IteratorType::parallel},
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value code = codeAtShift(nb, l, args[1], args[2], 2, false);
        Value level = arith::SubFOp::create(
            nb, l, code,
            arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(1.5)));
        return multiplyAdd(nb, l, args[0], level, args[3]);
      });
  Value sums = sumInnermost(b, loc, partial);
  // The scale multiplies the sums once per output, not once per weight.
  AffineExpr r, c;
  bindDims(ctx, r, c);
  AffineExpr scaleIndex =
      type.getGranularity() == ScaleGranularity::PerTensor
          ? getAffineConstantExpr(0, ctx)
          : c;
  SmallVector<Value> inputs = {sums, parts[1]};
  SmallVector<SmallVector<AffineExpr>> indexing = {{r, c}, {scaleIndex}};
  if (acc) {
    inputs.push_back(acc);
    indexing.push_back({r, c});
  }
  indexing.push_back({r, c});
  Value init = tensor::EmptyOp::create(
      b, loc, SmallVector<OpFoldResult>{getSizes(b, loc, x)[0],
                                        b.getIndexAttr(n)},
      elementType);
  return buildGeneric(
      b, loc, inputs, init, mapsOf(2, indexing, ctx),
      {IteratorType::parallel, IteratorType::parallel},
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value y = arith::MulFOp::create(nb, l, args[0], args[1]);
        if (acc)
          y = arith::AddFOp::create(
              nb, l, castFloat(nb, l, args[2], nb.getF32Type()), y);
        return castFloat(nb, l, y, elementType);
      });
}

//===----------------------------------------------------------------------===//
// 4-bit tables: y = sum_k x[k] * scale[v, k / G] * q[v, k]
//===----------------------------------------------------------------------===//

static Value q4Matmul(OpBuilder &b, Location loc, Value x, Q4WeightType type,
                      ValueRange parts, Type elementType) {
  MLIRContext *ctx = b.getContext();
  int64_t v = type.getRows(), d = type.getCols(), g = type.getGroup();
  Value xs = splitColumns(b, loc, x, {d / g, g / 2, 2});
  Value codes = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({v, d / g, g / 2}, b.getI8Type()),
      parts[0], SmallVector<ReassociationIndices>{{0}, {1, 2}});
  AffineExpr t, o, gi, jj, h;
  bindDims(ctx, t, o, gi, jj, h);
  Value init = zerosLike(b, loc, x, {v});
  Value y = buildGeneric(
      b, loc, ValueRange{xs, codes, parts[1], codeShifts(b, loc, 4)}, init,
      mapsOf(5, {{t, gi, jj, h}, {o, gi, jj}, {o, gi}, {h}, {t, o}}, ctx),
      {IteratorType::parallel, IteratorType::parallel, IteratorType::reduction,
       IteratorType::reduction, IteratorType::reduction},
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value q = codeAtShift(nb, l, args[1], args[3], 4, true);
        Value w = arith::MulFOp::create(nb, l, q, args[2]);
        return multiplyAdd(nb, l, args[0], w, args[4]);
      });
  if (elementType != b.getF32Type())
    y = mapElementwise(b, loc, ValueRange{y}, elementType,
                       [&](OpBuilder &nb, Location l, ValueRange args) {
                         return castFloat(nb, l, args[0], elementType);
                       });
  return y;
}

/// `acc + sums` element-wise as `elementType` (`acc` may be null): the
/// last step of the split-K kernels, once per output.
static Value addAccumulator(OpBuilder &b, Location loc, Value sums, Value acc,
                            Type elementType) {
  SmallVector<Value> inputs = {sums};
  if (acc)
    inputs.push_back(acc);
  return mapElementwise(b, loc, inputs, elementType,
                        [&](OpBuilder &nb, Location l, ValueRange args) {
                          Value y = args[0];
                          if (acc)
                            y = arith::AddFOp::create(
                                nb, l,
                                castFloat(nb, l, args[1], nb.getF32Type()), y);
                          return castFloat(nb, l, y, elementType);
                        });
}

//===----------------------------------------------------------------------===//
// ASTC, CPU form: y = acc + sum_k x[k] * scale[b] * q[n, k] (offsets apart)
//===----------------------------------------------------------------------===//

static Value astcBlockMatmul(OpBuilder &b, Location loc, Value x,
                             ASTCWeightType type, ValueRange parts,
                             Type elementType, Value acc) {
  MLIRContext *ctx = b.getContext();
  int64_t r = type.getBlockRows(), c = type.getBlockCols();
  int64_t nb = ceilDiv(type.getRows(), r);
  // Block columns as stored: padded to kASTCBlockColumnAlign (zero scales).
  int64_t kb = cast<RankedTensorType>(parts[1].getType()).getDimSize(1);
  // Split-K as in q2Matmul: each output keeps `lanes` partial sums, one per
  // block column of a group of `lanes` consecutive blocks. The codes are
  // plane-interleaved ([Nb, R, C/2, Kb]), so one column pair of a group is
  // `lanes` contiguous bytes, read with a uniform shift per nibble, and the
  // per-block scale is one contiguous vector too.
  int64_t lanes = lanesDividing(kb, 64);
  int64_t groups = kb / lanes, pairs = c / 2;
  Value xs = splitColumns(b, loc, padColumns(b, loc, x, kb * c),
                          {groups, lanes, pairs, 2});
  // x as [T, C/2, 2, groups, lanes], in the order the kernel reads.
  SmallVector<OpFoldResult> xtShape = {
      getSizes(b, loc, x)[0], b.getIndexAttr(pairs), b.getIndexAttr(2),
      b.getIndexAttr(groups), b.getIndexAttr(lanes)};
  AffineExpr d0, d1, d2, d3, d4;
  bindDims(ctx, d0, d1, d2, d3, d4);
  Value xt = buildGeneric(
      b, loc, ValueRange{xs},
      tensor::EmptyOp::create(b, loc, xtShape, b.getF32Type()),
      mapsOf(5, {{d0, d3, d4, d1, d2}, {d0, d1, d2, d3, d4}}, ctx),
      SmallVector<IteratorType>(5, IteratorType::parallel),
      [&](OpBuilder &nbld, Location l, ValueRange args) {
        return castFloat(nbld, l, args[0], nbld.getF32Type());
      });
  Value codes = tensor::ExpandShapeOp::create(
      b, loc,
      RankedTensorType::get({nb, r, pairs, groups, lanes}, b.getI8Type()),
      parts[0], SmallVector<ReassociationIndices>{{0}, {1}, {2}, {3, 4}});
  Value scales = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({nb, groups, lanes}, b.getF16Type()),
      parts[1], SmallVector<ReassociationIndices>{{0}, {1, 2}});
  // The column pair and nibble loops come before the group loop: one
  // uniform shift per vector op, as in q2Matmul.
  AffineExpr t, bn, br, p, h, g, lane;
  bindDims(ctx, t, bn, br, p, h, g, lane);
  Value partial = buildGeneric(
      b, loc, ValueRange{xt, codes, scales, codeShifts(b, loc, 4)},
      zerosLike(b, loc, x, {nb, r, lanes}),
      mapsOf(7,
             {{t, p, h, g, lane},
              {bn, br, p, g, lane},
              {bn, g, lane},
              {h},
              {t, bn, br, lane}},
             ctx),
      {IteratorType::parallel, IteratorType::parallel, IteratorType::parallel,
       IteratorType::reduction, IteratorType::reduction,
       IteratorType::reduction, IteratorType::parallel},
      [&](OpBuilder &nbld, Location l, ValueRange args) {
        Value q = codeAtShift(nbld, l, args[1], args[3], 4, false);
        Value scale = castFloat(nbld, l, args[2], nbld.getF32Type());
        Value w = arith::MulFOp::create(nbld, l, q, scale);
        return multiplyAdd(nbld, l, args[0], w, args[4]);
      });
  // [T, Nb * R, lanes] -> [T, Nb * R]: the horizontal sum once per output.
  auto partialType = cast<RankedTensorType>(partial.getType());
  Value rows = tensor::CollapseShapeOp::create(
      b, loc,
      RankedTensorType::get({partialType.getDimSize(0), nb * r, lanes},
                            b.getF32Type()),
      partial, SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}});
  int64_t n = type.getRows();
  Value sums = firstColumns(b, loc, sumInnermost(b, loc, rows), n);
  // The accumulator (the min-shift term) is added once per output.
  return addAccumulator(b, loc, sums, acc, elementType);
}

/// The ASTC kernel on int8 activations: with x[t] ~ a[t] * xq[t] (a =
/// max|x[t]| / 127),
///
///   y[t, n] = a[t] * sum_kb scale[b] * D[t, n, kb] + acc[t, n]
///   D[t, n, kb] = sum_{c < C} q[n, kb * C + c] * xq[t, kb * C + c]
///
/// D is exact in i16 (|D| <= 6 * 15 * 127), so each block's scale
/// multiplies once per block and row instead of once per weight, and the
/// row's scale once per output. The layout is astcBlockMatmul's: `lanes`
/// consecutive blocks are the vector lanes, so one step reads the three
/// column-pair bytes of `lanes` blocks, multiplies their six nibbles with
/// six activation vectors in i16 and adds the block sums, converted once,
/// times the block scales into `lanes` f32 partial sums.
static Value astcInt8BlockMatmul(OpBuilder &b, Location loc, Value x,
                                 ASTCWeightType type, ValueRange parts,
                                 Type elementType, Value acc) {
  MLIRContext *ctx = b.getContext();
  Type i8 = b.getI8Type(), i16 = b.getIntegerType(16);
  int64_t r = type.getBlockRows(), c = type.getBlockCols();
  int64_t nb = ceilDiv(type.getRows(), r);
  int64_t kb = cast<RankedTensorType>(parts[1].getType()).getDimSize(1);
  int64_t lanes = lanesDividing(kb, 64);
  int64_t groups = kb / lanes, pairs = c / 2;
  OpFoldResult rows = getSizes(b, loc, x)[0];

  // xq as [T, C/2, 2, groups, lanes], in the order the kernel reads, held
  // as i16: the products are i16, and a load is cheaper than a widening
  // load in the inner loop.
  Value amax = buildRowAbsMax(b, loc, x);
  Value xs = splitColumns(b, loc, padColumns(b, loc, x, kb * c),
                          {groups, lanes, pairs, 2});
  AffineExpr d0, d1, d2, d3, d4;
  bindDims(ctx, d0, d1, d2, d3, d4);
  Value xq = buildGeneric(
      b, loc, ValueRange{xs, amax},
      tensor::EmptyOp::create(
          b, loc,
          SmallVector<OpFoldResult>{rows, b.getIndexAttr(pairs),
                                    b.getIndexAttr(2), b.getIndexAttr(groups),
                                    b.getIndexAttr(lanes)},
          i16),
      mapsOf(5, {{d0, d3, d4, d1, d2}, {d0}, {d0, d1, d2, d3, d4}}, ctx),
      SmallVector<IteratorType>(5, IteratorType::parallel),
      [&](OpBuilder &nbld, Location l, ValueRange args) {
        return arith::ExtSIOp::create(
            nbld, l, i16, buildInt8Code(nbld, l, args[0], args[1]));
      });
  Value codes = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({nb, r, pairs, groups, lanes}, i8),
      parts[0], SmallVector<ReassociationIndices>{{0}, {1}, {2}, {3, 4}});
  Value scales = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({nb, groups, lanes}, b.getF16Type()),
      parts[1], SmallVector<ReassociationIndices>{{0}, {1, 2}});

  // One iteration per (row, group of blocks); the column pairs and
  // nibbles are unrolled in the body: codes and activations come in as one
  // operand (a slice) per pair and nibble.
  auto slice = [&](Value source, ArrayRef<int64_t> fixed) {
    auto type = cast<RankedTensorType>(source.getType());
    SmallVector<OpFoldResult> offsets, sizes = getSizes(b, loc, source),
                                       strides(type.getRank(),
                                               b.getIndexAttr(1));
    SmallVector<int64_t> shape;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      bool isFixed = d >= 1 && d <= static_cast<int64_t>(fixed.size()) &&
                     fixed[d - 1] >= 0;
      offsets.push_back(b.getIndexAttr(isFixed ? fixed[d - 1] : 0));
      if (isFixed)
        sizes[d] = b.getIndexAttr(1);
      else
        shape.push_back(type.getDimSize(d));
    }
    return tensor::ExtractSliceOp::create(
        b, loc, RankedTensorType::get(shape, type.getElementType()), source,
        offsets, sizes, strides);
  };
  AffineExpr t, bn, br, g, lane;
  bindDims(ctx, t, bn, br, g, lane);
  SmallVector<Value> inputs;
  SmallVector<SmallVector<AffineExpr>> indexing;
  for (int64_t p = 0; p < pairs; ++p) {
    // codes[:, :, p] and xq[:, p, h].
    inputs.push_back(slice(codes, {-1, p}));
    indexing.push_back({bn, br, g, lane});
  }
  for (int64_t p = 0; p < pairs; ++p)
    for (int64_t h = 0; h < 2; ++h) {
      inputs.push_back(slice(xq, {p, h}));
      indexing.push_back({t, g, lane});
    }
  inputs.push_back(scales);
  indexing.push_back({bn, g, lane});
  indexing.push_back({t, bn, br, lane});
  Value partial = buildGeneric(
      b, loc, inputs, zerosLike(b, loc, x, {nb, r, lanes}),
      mapsOf(5, indexing, ctx),
      {IteratorType::parallel, IteratorType::parallel, IteratorType::parallel,
       IteratorType::reduction, IteratorType::parallel},
      [&](OpBuilder &nbld, Location l, ValueRange args) {
        auto constant = [&](Type type, int64_t value) {
          return arith::ConstantIntOp::create(nbld, l, type, value);
        };
        Value dot;
        for (int64_t p = 0; p < pairs; ++p) {
          Value byte = args[p];
          Value nibbles[2] = {
              arith::AndIOp::create(nbld, l, byte, constant(i8, 15)),
              arith::ShRUIOp::create(nbld, l, byte, constant(i8, 4))};
          for (int64_t h = 0; h < 2; ++h) {
            Value product = arith::MulIOp::create(
                nbld, l, arith::ExtUIOp::create(nbld, l, i16, nibbles[h]),
                args[pairs + 2 * p + h]);
            dot = dot ? arith::AddIOp::create(nbld, l, dot, product)
                            .getResult()
                      : product;
          }
        }
        Value scale = castFloat(nbld, l, args[3 * pairs], nbld.getF32Type());
        Value blockSum =
            arith::SIToFPOp::create(nbld, l, nbld.getF32Type(), dot);
        return multiplyAdd(nbld, l, blockSum, scale, args.back());
      });
  auto partialType = cast<RankedTensorType>(partial.getType());
  Value merged = tensor::CollapseShapeOp::create(
      b, loc,
      RankedTensorType::get({partialType.getDimSize(0), nb * r, lanes},
                            b.getF32Type()),
      partial, SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}});
  Value sums = firstColumns(b, loc, sumInnermost(b, loc, merged),
                            type.getRows());
  // y = sums * amax / 127 (+ acc), once per output.
  AffineExpr row, col;
  bindDims(ctx, row, col);
  return buildOutputStep(
      b, loc, rows, type.getRows(), {sums, amax}, {{row, col}, {row}}, acc,
      elementType, [&](OpBuilder &nbld, Location l, ValueRange args) -> Value {
        Value step = arith::DivFOp::create(
            nbld, l, args[1],
            arith::ConstantOp::create(nbld, l, nbld.getF32FloatAttr(127.0)));
        return arith::MulFOp::create(nbld, l, args[0], step);
      });
}

/// `acc + x W^T` for one row of x and a float W [N, K] in split-K form:
/// each output keeps 16 partial sums over contiguous columns, so the inner
/// loop streams W's rows as whole vectors (and prefetches them, as a
/// split-K tile), and the horizontal sum happens once per output. Null
/// when x has more rows (a contraction reuses W across them) or K does
/// not split into 16-wide groups.
/// `partial[t, o, lane] = sum_g xs[t, g, lane] * ws[o, g, lane]` in f32
/// (`ws` of any float type), the rows of `xs` being those of `x`: split-K
/// partial sums over contiguous columns, `lanes` per output.
static Value splitKPartialSums(OpBuilder &b, Location loc, Value x, Value xs,
                               Value ws) {
  MLIRContext *ctx = b.getContext();
  auto wsType = cast<RankedTensorType>(ws.getType());
  AffineExpr t, o, g, lane;
  bindDims(ctx, t, o, g, lane);
  return buildGeneric(
      b, loc, ValueRange{xs, ws},
      zerosLike(b, loc, x, {wsType.getDimSize(0), wsType.getDimSize(2)}),
      mapsOf(4, {{t, g, lane}, {o, g, lane}, {t, o, lane}}, ctx),
      {IteratorType::parallel, IteratorType::parallel, IteratorType::reduction,
       IteratorType::parallel},
      [&](OpBuilder &nb, Location l, ValueRange args) {
        return multiplyAdd(nb, l, args[0],
                           castFloat(nb, l, args[1], nb.getF32Type()),
                           args[2]);
      });
}

static Value gemvSplitK(OpBuilder &b, Location loc, Value x, Value weight,
                        Type elementType, Value acc) {
  constexpr int64_t kLanes = 16;
  auto xType = cast<RankedTensorType>(x.getType());
  auto wType = cast<RankedTensorType>(weight.getType());
  if (xType.getDimSize(0) != 1 || !wType.hasStaticShape() ||
      wType.getDimSize(1) % kLanes != 0 || wType.getDimSize(1) < 4 * kLanes)
    return {};
  int64_t n = wType.getDimSize(0), k = wType.getDimSize(1);
  int64_t groups = k / kLanes;
  Value xs = splitColumns(b, loc, x, {groups, kLanes});
  Value ws = tensor::ExpandShapeOp::create(
      b, loc,
      RankedTensorType::get({n, groups, kLanes}, wType.getElementType()),
      weight, SmallVector<ReassociationIndices>{{0}, {1, 2}});
  Value partial = splitKPartialSums(b, loc, x, xs, ws);
  return addAccumulator(b, loc, sumInnermost(b, loc, partial), acc,
                        elementType);
}

static BoundWeightOp getBound(Value weight) {
  return weight.getDefiningOp<BoundWeightOp>();
}

/// The bound parts of compressed `weight`, or null after a diagnostic at
/// `loc`: kernels read the buffers, so an unbound weight cannot be lowered.
static BoundWeightOp requireBound(Value weight, Location loc) {
  BoundWeightOp bound = getBound(weight);
  if (!bound)
    emitError(loc) << "compressed weight of type " << weight.getType()
                   << " must be bound to its buffers (afm-bind-entry-abi) "
                      "before lowering";
  return bound;
}

/// Rows from which a compressed weight is decoded to f32 once per call and
/// multiplied by the blocked f32 GEMM instead of the fused kernel.
static constexpr int64_t kMinRowsForDecodedGEMM = 32;

Value afm::buildLinear(OpBuilder &b, Location loc, Value x, Value weight,
                       Type elementType, Value acc,
                       const LinearLowering &how) {
  // Many rows (a prompt): decoding each weight once into f32 and running
  // the blocked f32 GEMM (afm-pack-gemm) beats decoding it per row tile.
  int64_t rows = cast<ShapedType>(x.getType()).getDimSize(0);
  bool decodeOnce =
      !ShapedType::isDynamic(rows) && rows >= kMinRowsForDecodedGEMM;
  if (auto decode = weight.getDefiningOp<ASTCDecodeOp>()) {
    if (how.int8Activations && !decodeOnce)
      if (BoundWeightOp bound = getBound(decode.getWeight()))
        return astcInt8BlockMatmul(b, loc, x, decode.getWeight().getType(),
                                   bound.getParts(), elementType, acc);
    if (how.int8Activations)
      x = buildInt8RoundTrip(b, loc, x);
    if (decodeOnce) {
      // astc_decode is the block values without the offsets (which the
      // accumulator carries).
      Value dense = buildDequantized(b, loc, decode.getWeight(),
                                     /*withOffsets=*/false);
      return dense ? buildLinear(b, loc, x, dense, elementType, acc) : dense;
    }
    if (BoundWeightOp bound = getBound(decode.getWeight()))
      return astcBlockMatmul(b, loc, x, decode.getWeight().getType(),
                             bound.getParts(), elementType, acc);
  }
  if (isa<RankedTensorType>(weight.getType())) {
    if (Value y = gemvSplitK(b, loc, x, weight, elementType, acc))
      return y;
    Value init = acc;
    if (!init) {
      OpFoldResult rows = getSizes(b, loc, x)[0];
      OpFoldResult cols = getSizes(b, loc, weight)[0];
      init = createFilled(b, loc, {rows, cols}, elementType, 0.0);
    }
    return matmulTransposeB(b, loc, x, weight, init);
  }
  BoundWeightOp bound = requireBound(weight, loc);
  if (!bound)
    return {};
  if (auto q2 = dyn_cast<Q2WeightType>(weight.getType())) {
    if (how.int8Activations && !decodeOnce && supportsQ2Int8Matmul(q2))
      return buildQ2Int8Matmul(b, loc, x, q2, bound.getParts(), elementType,
                               acc);
    if (how.int8Activations)
      x = buildInt8RoundTrip(b, loc, x);
    else if (!decodeOnce)
      return q2Matmul(b, loc, x, q2, bound.getParts(), elementType, acc);
  }
  if (how.int8Activations && isa<ASTCWeightType>(weight.getType()))
    x = buildInt8RoundTrip(b, loc, x);
  if (auto q4 = dyn_cast<Q4WeightType>(weight.getType());
      q4 && q4.getGroup() % 2 == 0 && !acc)
    return q4Matmul(b, loc, x, q4, bound.getParts(), elementType);
  // 2-bit over many rows, ASTC without the min-shift fusion, odd 4-bit
  // groups: the reconstructed weight is materialized, then multiplied.
  Value dense = buildDequantized(b, loc, weight, /*withOffsets=*/true);
  return buildLinear(b, loc, x, dense, elementType, acc);
}

//===----------------------------------------------------------------------===//
// Gathers and materialized dequantization: one output element per
// iteration, indices computed from linalg.index.
//===----------------------------------------------------------------------===//

/// A `[shape]` tensor whose element at `indices` is `body(indices)`.
static Value generate(OpBuilder &b, Location loc,
                      ArrayRef<OpFoldResult> shape, Type elementType,
                      ValueRange inputs, ArrayRef<AffineMap> inputMaps,
                      function_ref<Value(OpBuilder &, Location, ValueRange,
                                         ValueRange)>
                          body) {
  Value init = tensor::EmptyOp::create(b, loc, shape, elementType);
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(b.getMultiDimIdentityMap(shape.size()));
  SmallVector<IteratorType> iterators(shape.size(), IteratorType::parallel);
  return buildGeneric(b, loc, inputs, init, maps, iterators,
                      [&](OpBuilder &nb, Location l, ValueRange args) {
                        SmallVector<Value> indices;
                        for (unsigned i = 0; i < shape.size(); ++i)
                          indices.push_back(linalg::IndexOp::create(nb, l, i));
                        return body(nb, l, indices,
                                    args.take_front(inputs.size()));
                      });
}

static Value divIndex(OpBuilder &b, Location loc, Value i, int64_t d) {
  return arith::DivUIOp::create(b, loc, i, indexConst(b, loc, d));
}
static Value remIndex(OpBuilder &b, Location loc, Value i, int64_t d) {
  return arith::RemUIOp::create(b, loc, i, indexConst(b, loc, d));
}

/// The 4-bit value at column `col` of row `row` of a bound q4 table.
static Value q4Value(OpBuilder &b, Location loc, ValueRange parts, Value row,
                     Value col, int64_t group) {
  Value byte = tensor::ExtractOp::create(
      b, loc, parts[0], ValueRange{row, divIndex(b, loc, col, 2)});
  Value q = extractCode(b, loc, byte, remIndex(b, loc, col, 2), 4, true);
  Value scale = tensor::ExtractOp::create(
      b, loc, parts[1], ValueRange{row, divIndex(b, loc, col, group)});
  return arith::MulFOp::create(b, loc, q, scale);
}

Value afm::buildQ4Gather(OpBuilder &b, Location loc, Value tokens,
                         Value weight, Type elementType) {
  auto type = cast<Q4WeightType>(weight.getType());
  BoundWeightOp bound = requireBound(weight, loc);
  if (!bound)
    return {};
  MLIRContext *ctx = b.getContext();
  SmallVector<OpFoldResult> shape = {getSizes(b, loc, tokens)[0],
                                     b.getIndexAttr(type.getCols())};
  AffineExpr t, j;
  bindDims(ctx, t, j);
  return generate(
      b, loc, shape, elementType, ValueRange{tokens},
      {AffineMap::get(2, 0, {t}, ctx)},
      [&](OpBuilder &nb, Location l, ValueRange idx, ValueRange args) {
        Value row = arith::IndexCastOp::create(nb, l, nb.getIndexType(),
                                               args[0]);
        return castFloat(nb, l,
                         q4Value(nb, l, bound.getParts(), row, idx[1],
                                 type.getGroup()),
                         elementType);
      });
}

Value afm::buildDequantized(OpBuilder &b, Location loc, Value weight,
                            bool withOffsets) {
  BoundWeightOp bound = requireBound(weight, loc);
  if (!bound)
    return {};
  auto [rows, cols] = *getWeightMatrixShape(weight.getType());
  SmallVector<OpFoldResult> shape = {b.getIndexAttr(rows),
                                     b.getIndexAttr(cols)};
  ValueRange parts = bound.getParts();
  Type f32 = b.getF32Type();
  return generate(
      b, loc, shape, f32, ValueRange{}, {},
      [&](OpBuilder &nb, Location l, ValueRange idx, ValueRange) -> Value {
        Value n = idx[0], k = idx[1];
        if (auto q2 = dyn_cast<Q2WeightType>(weight.getType())) {
          Value byte = tensor::ExtractOp::create(
              nb, l, parts[0], ValueRange{n, divIndex(nb, l, k, 4)});
          Value code =
              extractCode(nb, l, byte, remIndex(nb, l, k, 4), 2, false);
          Value level = arith::SubFOp::create(
              nb, l, code,
              arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(1.5)));
          Value scaleIndex = q2.getGranularity() == ScaleGranularity::PerTensor
                                 ? indexConst(nb, l, 0)
                                 : n;
          Value scale =
              tensor::ExtractOp::create(nb, l, parts[1], ValueRange{scaleIndex});
          return arith::MulFOp::create(nb, l, level, scale);
        }
        if (auto q4 = dyn_cast<Q4WeightType>(weight.getType()))
          return q4Value(nb, l, parts, n, k, q4.getGroup());
        auto astc = cast<ASTCWeightType>(weight.getType());
        int64_t r = astc.getBlockRows(), c = astc.getBlockCols();
        Value bn = divIndex(nb, l, n, r), br = remIndex(nb, l, n, r);
        Value bk = divIndex(nb, l, k, c), j = remIndex(nb, l, k, c);
        Value byte = tensor::ExtractOp::create(
            nb, l, parts[0], ValueRange{bn, br, divIndex(nb, l, j, 2), bk});
        Value q = extractCode(nb, l, byte, remIndex(nb, l, j, 2), 4, false);
        Value scale = castFloat(
            nb, l, tensor::ExtractOp::create(nb, l, parts[1], ValueRange{bn, bk}),
            f32);
        Value value = arith::MulFOp::create(nb, l, q, scale);
        if (!withOffsets)
          return value;
        Value bias = castFloat(
            nb, l, tensor::ExtractOp::create(nb, l, parts[2], ValueRange{bn, bk}),
            f32);
        return arith::AddFOp::create(nb, l, value, bias);
      });
}

Value afm::buildASTCOffsets(OpBuilder &b, Location loc, Value weight) {
  BoundWeightOp bound = requireBound(weight, loc);
  if (!bound)
    return {};
  Type f32 = b.getF32Type();
  // The stored biases are padded to kASTCBlockColumnAlign block columns.
  auto type = cast<ASTCWeightType>(weight.getType());
  int64_t nb = ceilDiv(type.getRows(), type.getBlockRows());
  int64_t kb = ceilDiv(type.getCols(), type.getBlockCols());
  Value biases = bound.getParts()[2];
  if (cast<RankedTensorType>(biases.getType()).getDimSize(1) != kb)
    biases = leadingSlice(b, loc, biases,
                          {b.getIndexAttr(nb), b.getIndexAttr(kb)});
  return mapElementwise(b, loc, ValueRange{biases}, f32,
                        [&](OpBuilder &nb, Location l, ValueRange args) {
                          return castFloat(nb, l, args[0], f32);
                        });
}

Value afm::buildMinShift(OpBuilder &b, Location loc, Value x, Value offsets,
                         int64_t n, int64_t blockRows, int64_t blockCols) {
  MLIRContext *ctx = b.getContext();
  auto offsetsType = cast<RankedTensorType>(offsets.getType());
  int64_t nb = offsetsType.getDimSize(0);
  // M[t, bn] = sum_kb offsets[bn, kb] * S[t, kb] is a GEMV over the
  // offsets (the stored f16 biases, zero in their padding columns; other
  // offsets are padded the same way). For one row (a decode step) it is
  // split-K like the ASTC kernel: 16 partial sums per block row over
  // contiguous columns. Several rows (a prompt, where the weights are
  // reused across rows and this term is cheap) keep one sum per block row
  // in column order: with int8 activations a different summation order
  // moves a later layer's input by an ulp, which can flip one rounded
  // activation (by amax / 127) and move the logits by about 1e-2 against
  // the reference evaluator (seen in astc-int8-activations.test's prefill
  // with split-K sums here).
  int64_t lanes =
      cast<RankedTensorType>(x.getType()).getDimSize(0) == 1 ? 16 : 1;
  int64_t cols = ceilDiv(offsetsType.getDimSize(1), lanes) * lanes;
  if (offsetsType.getDimSize(1) != cols)
    offsets = padColumns(b, loc, offsets, cols);
  Value xs = splitColumns(b, loc, padColumns(b, loc, x, cols * blockCols),
                          {cols, blockCols});
  // S[t, kb]: the activations under each block column.
  Value sums = splitColumns(b, loc, sumInnermost(b, loc, xs),
                            {cols / lanes, lanes});
  Value grouped = tensor::ExpandShapeOp::create(
      b, loc,
      RankedTensorType::get({nb, cols / lanes, lanes},
                            offsetsType.getElementType()),
      offsets, SmallVector<ReassociationIndices>{{0}, {1, 2}});
  // M[t, bn] = sum_kb offsets[bn, kb] * S[t, kb], once per block row.
  Value partial = splitKPartialSums(b, loc, x, sums, grouped);
  // result[t, bn * R + br] = sum over the lanes of partial[t, bn]: the
  // block row's rows share it.
  AffineExpr t3, bn3, br3, lane3;
  bindDims(ctx, t3, bn3, br3, lane3);
  Value shifted = buildGeneric(
      b, loc, ValueRange{partial}, zerosLike(b, loc, x, {nb, blockRows}),
      mapsOf(4, {{t3, bn3, lane3}, {t3, bn3, br3}}, ctx),
      {IteratorType::parallel, IteratorType::parallel, IteratorType::parallel,
       IteratorType::reduction},
      [&](OpBuilder &nbld, Location l, ValueRange args) {
        return arith::AddFOp::create(nbld, l, args[1], args[0]).getResult();
      });
  return mergeColumns(b, loc, shifted, n);
}
