//===- CompressedKernels.cpp - linalg kernels over packed weights ---------===//

#include "passes/Conversion/CompressedKernels.h"
#include "passes/Conversion/LinearKernelChoice.h"

#include "afm/Layout/PackedWeights.h"
#include "dialects/afm/IR/AFMOps.h"
#include "dialects/afm_cpu/IR/AFMCPUDialect.h"
#include "passes/Conversion/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

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

/// `out + x * w` in f32, both ops carrying `flags`.
static Value
multiplyAdd(OpBuilder &b, Location loc, Value x, Value w, Value out,
            arith::FastMathFlags flags = arith::FastMathFlags::none) {
  Value product = arith::MulFOp::create(
      b, loc, castFloat(b, loc, x, b.getF32Type()), w, flags);
  return arith::AddFOp::create(b, loc, out, product, flags);
}

/// Activations split as [T, groups, lanes, planes] (splitColumns) moved to
/// f32 [T, planes, groups, lanes]: code plane j (the j-th code of each
/// byte) of a group of `lanes` code bytes is one contiguous vector of
/// activations, in the order the split-K kernels read them. With
/// `planeBits`, plane j is multiplied by 2^-planeBits[j] (exact: a power of
/// two), for kernels that mask a code in place, 2^planeBits[j] times its
/// value, instead of shifting it down.
static Value activationPlanes(OpBuilder &b, Location loc, Value xs,
                              ArrayRef<int64_t> planeBits = {}) {
  MLIRContext *ctx = b.getContext();
  ArrayRef<int64_t> shape = cast<RankedTensorType>(xs.getType()).getShape();
  int64_t groups = shape[1], lanes = shape[2], planes = shape[3];
  assert((planeBits.empty() || int64_t(planeBits.size()) == planes) &&
         "one exponent per plane");
  AffineExpr d0, d1, d2, d3;
  bindDims(ctx, d0, d1, d2, d3);
  SmallVector<Value> inputs = {xs};
  SmallVector<SmallVector<AffineExpr>> maps = {{d0, d2, d3, d1}};
  if (!planeBits.empty()) {
    SmallVector<float> factors;
    for (int64_t bits : planeBits)
      factors.push_back(std::ldexp(1.0f, -static_cast<int>(bits)));
    auto type = RankedTensorType::get({planes}, b.getF32Type());
    inputs.push_back(arith::ConstantOp::create(
        b, loc, type, DenseElementsAttr::get(type, ArrayRef<float>(factors))));
    maps.push_back({d1});
  }
  maps.push_back({d0, d1, d2, d3});
  return buildGeneric(
      b, loc, inputs,
      tensor::EmptyOp::create(
          b, loc,
          SmallVector<OpFoldResult>{getSizes(b, loc, xs)[0],
                                    b.getIndexAttr(planes),
                                    b.getIndexAttr(groups),
                                    b.getIndexAttr(lanes)},
          b.getF32Type()),
      mapsOf(4, maps, ctx),
      SmallVector<IteratorType>(4, IteratorType::parallel),
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value x = castFloat(nb, l, args[0], nb.getF32Type());
        if (planeBits.empty())
          return x;
        return arith::MulFOp::create(nb, l, x, args[1]).getResult();
      });
}

/// Plane `p` of `planes` ([T, planes, groups, lanes]): [T, groups, lanes],
/// contiguous.
static Value activationPlane(OpBuilder &b, Location loc, Value planes,
                             int64_t p) {
  return sliceAt(b, loc, planes, {{1, p}});
}

/// `factor` times the sum over the innermost dimension of `xs` (`x`'s
/// columns split, [T, ..., planes], or `x` itself): [T, ...] f32. The
/// kernels whose codes are unsigned stand-ins for offset levels (code - c)
/// add -c sum_k x[k], the same for every output row and computed once per
/// call: per (t, group, lane) of the planes where a group's scale must
/// multiply it, per t where one scale multiplies the whole row.
static Value planeOffsets(OpBuilder &b, Location loc, Value xs, Value x,
                          float factor) {
  MLIRContext *ctx = b.getContext();
  ArrayRef<int64_t> shape = cast<RankedTensorType>(xs.getType()).getShape();
  unsigned rank = shape.size();
  SmallVector<IteratorType> iterators(rank, IteratorType::parallel);
  iterators.back() = IteratorType::reduction;
  AffineMap all = AffineMap::getMultiDimIdentityMap(rank, ctx);
  return buildGeneric(
      b, loc, ValueRange{xs},
      zerosLike(b, loc, x, shape.slice(1, rank - 2)),
      {all, all.dropResult(rank - 1)}, iterators,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        return math::FmaOp::create(
            nb, l, castFloat(nb, l, args[0], nb.getF32Type()),
            arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(factor)),
            args[1]);
      });
}

/// `sum` plus, for each code p of `bits` bits in the byte `word` (widened
/// to i32), the code masked in place (word & (2^bits - 1) << bits * p:
/// 2^(bits * p) times the code) times `activations[p]`, which the caller
/// divided by 2^(bits * p): an fma chain, no shifts, each fma with `flags`.
static Value sumMaskedCodes(OpBuilder &b, Location loc, Value word,
                            int64_t bits, ValueRange activations, Value sum,
                            arith::FastMathFlags flags =
                                arith::FastMathFlags::none) {
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  auto flagsAttr = arith::FastMathFlagsAttr::get(b.getContext(), flags);
  for (auto [p, x] : llvm::enumerate(activations)) {
    Value code = arith::AndIOp::create(
        b, loc, word,
        arith::ConstantIntOp::create(b, loc, i32,
                                     ((1 << bits) - 1) << (bits * p)));
    // Below 256: the signed conversion is exact and one instruction.
    Value level = arith::SIToFPOp::create(b, loc, f32, code);
    sum = math::FmaOp::create(b, loc, x, level, sum, flagsAttr);
  }
  return sum;
}

//===----------------------------------------------------------------------===//
// 2-bit: y = acc + s * sum_k x[k] * level(q[n, k])
//===----------------------------------------------------------------------===//

static Value q2Matmul(OpBuilder &b, Location loc, Value x, Q2WeightType type,
                      ValueRange parts, Type elementType, Value acc) {
  MLIRContext *ctx = b.getContext();
  int64_t n = type.getRows(), kBytes = int64_t(q2RowBytes(type.getCols()));
  // Split-K: each output keeps `lanes` partial sums, one per byte column
  // of a group of `lanes` consecutive code bytes, so the inner loop is
  // element-wise over contiguous bytes. The lanes are a reduction that the
  // register tile spans whole (afm.whole_tile_dims, as the 4-bit head's):
  // the loop over the groups carries a row's lane sums in registers and
  // sums them once, after it. As a parallel output dimension ([T, N,
  // lanes] summed by a second op) they were read, added to and stored
  // every step, 38 MB to memory and back for the untied 150000-row head.
  // 32 lanes: four 8-wide accumulators on AVX2 (64 spilled there), two
  // 16-wide on AVX-512.
  int64_t lanes = lanesDividing(kBytes, 32);
  int64_t groups = kBytes / lanes;
  Value xs = splitColumns(b, loc, padColumns(b, loc, x, kBytes * 4),
                          {groups, lanes, 4});
  Value codes = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({n, 1, groups, lanes}, b.getI8Type()),
      parts[0], SmallVector<ReassociationIndices>{{0, 1}, {2, 3}});
  // Plane p's activations divided by 4^p, to meet code p masked in place.
  Value xt = activationPlanes(b, loc, xs, /*planeBits=*/{0, 2, 4, 6});
  auto xtType = cast<RankedTensorType>(xt.getType());
  Type f32 = b.getF32Type();
  // Each step reads a code byte once and takes its four codes (planes):
  // the byte widened to i32 once, code p masked in place (byte & (3 <<
  // 2p), which is 4^p times the code), converted and multiplied by plane
  // p's activation / 4^p: both scalings are powers of two, so the product
  // is x * code exactly (while x / 64 is not subnormal). No shifts: with a
  // shift and a mask per code, LLVM narrowed them to byte vectors and
  // widened each plane again (28 shuffles per 32 code bytes on AVX2, 1.4
  // ms for 1x4096x4096 against 0.83 now on a Zen 3 VM; docs/bench/
  // q2-f32-gemv-lane-sums-zen3-2026-12-06.txt). The level's offset,
  // sum_k x[k] * (code - 1.5) = sum_k x[k] * code - 1.5 * sum_k x[k],
  // is added once per output: -1.5 times the row of activations, the same
  // for every output row, computed once per call ([T]). A step is then
  // only products, in no particular order (`reassoc`), which the lanes
  // accumulate directly over two accumulators (liftLaneSumsOutOfLoop): as
  // an fma chain from the offset added into the lanes, the loop waited on
  // the chain's latency.
  Value levelOffsets = planeOffsets(b, loc, x, x, -1.5f);
  SmallVector<Value> planes;
  for (int64_t plane = 0; plane < 4; ++plane)
    planes.push_back(activationPlane(b, loc, xt, plane));
  planes.push_back(codes);
  // Register tiles of one row (row = o, tileRow = 0), whose code bytes
  // stream in address order, as the 4-bit head's.
  AffineExpr t, o, tileRow, g, lane;
  bindDims(ctx, t, o, tileRow, g, lane);
  SmallVector<AffineExpr> activation = {t, g, lane};
  auto kernel = linalg::GenericOp::create(
      b, loc, TypeRange{RankedTensorType::get(
                  {xtType.getDimSize(0), n, 1}, f32)},
      planes, ValueRange{zerosLike(b, loc, x, {n, 1})},
      mapsOf(5,
             {activation, activation, activation, activation,
              {o, tileRow, g, lane}, {t, o, tileRow}},
             ctx),
      {IteratorType::parallel, IteratorType::parallel, IteratorType::parallel,
       IteratorType::reduction, IteratorType::reduction},
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Type i32 = nb.getI32Type();
        Value word = arith::ExtUIOp::create(nb, l, i32, args[4]);
        // The step's own sum from zero, then one add into the output: the
        // vectorizer takes that add as the reduction's combiner (with the
        // output first used elsewhere it does not vectorize), and once the
        // lanes are carried the products go into them directly.
        Value zero = arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(0));
        Value sum = sumMaskedCodes(nb, l, word, /*bits=*/2, args.take_front(4),
                                   zero, arith::FastMathFlags::reassoc);
        linalg::YieldOp::create(
            nb, l, arith::AddFOp::create(nb, l, args[5], sum).getResult());
      });
  contracts(kernel).getWholeTileDimsAttrHelper().setAttr(
      kernel, b.getDenseI64ArrayAttr({2, 4}));
  Value sums = tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get({xtType.getDimSize(0), n}, f32),
      kernel.getResult(0), SmallVector<ReassociationIndices>{{0}, {1, 2}});
  // The offset is added and the scale multiplied once per output, not
  // once per weight.
  AffineExpr r, c;
  bindDims(ctx, r, c);
  AffineExpr scaleIndex =
      type.getGranularity() == ScaleGranularity::PerTensor
          ? getAffineConstantExpr(0, ctx)
          : c;
  SmallVector<Value> inputs = {sums, levelOffsets, parts[1]};
  SmallVector<SmallVector<AffineExpr>> indexing = {{r, c}, {r}, {scaleIndex}};
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
        Value sum = arith::AddFOp::create(nb, l, args[0], args[1]);
        Value y = arith::MulFOp::create(nb, l, sum, args[2]);
        if (acc)
          y = arith::AddFOp::create(
              nb, l, castFloat(nb, l, args[3], nb.getF32Type()), y);
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

/// One row of x times a 4-bit table in plain code order (the LM head of a
/// decode step whose width is not a multiple of 16 groups) in split-K
/// form, as the 2-bit kernel: each output keeps one partial sum per byte
/// position of a group (group / 2 lanes: 16 for the usual group of 32),
/// so the inner loop is element-wise over a group's code bytes, with the
/// group's scale a scalar, and the lanes are summed once per output. Null
/// for more rows or odd groups.
bool afm::canBuildQ4GemvSplitK(RankedTensorType x, Q4WeightType type) {
  int64_t d = type.getCols(), g = type.getGroup();
  return x.getDimSize(0) == 1 && g % 2 == 0 && d % g == 0;
}

static Value q4GemvSplitK(OpBuilder &b, Location loc, Value x,
                          Q4WeightType type, ValueRange parts,
                          Type elementType) {
  MLIRContext *ctx = b.getContext();
  auto xType = cast<RankedTensorType>(x.getType());
  int64_t v = type.getRows(), d = type.getCols(), g = type.getGroup();
  if (!canBuildQ4GemvSplitK(xType, type))
    return {};
  int64_t groups = d / g, half = g / 2;
  // A byte holds two signed nibbles, columns G * g + 2 * lane (low) and
  // + 1 (high). Each step reads a code byte once: flipping the nibbles'
  // sign bits (byte ^ 0x88) makes each code + 8 unsigned, so that
  // (byte ^ 0x88) & 0x0f is the low code + 8 and & 0xf0 16 times the high
  // code + 8, masked in place (no shift, as the 2-bit kernel: a shift per
  // code made LLVM narrow and widen them again), against the high
  // nibbles' activations / 16 (exact: a power of two). The +8 comes back
  // as -8 times both nibbles' activations at (group, lane), which starts
  // the step's sum.
  Value xs = splitColumns(b, loc, x, {groups, half, 2});
  Value xt = activationPlanes(b, loc, xs, /*planeBits=*/{0, 4});
  Value offsets = planeOffsets(b, loc, xs, x, -8.0f);
  // Rows in register tiles of `tile` (their lanes held in registers for
  // the whole loop over the groups, afm.whole_tile_dims; one activation
  // vector serves them all): outputs o = ob * tile + oi. Two: with four,
  // AVX2's 16 registers spilled the masks and step sums, no faster.
  int64_t tile = v % 2 == 0 ? 2 : 1, blocks = v / tile;
  Value codes = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({blocks, tile, groups, half}, b.getI8Type()),
      parts[0], SmallVector<ReassociationIndices>{{0, 1}, {2, 3}});
  Value scales = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({blocks, tile, groups}, b.getF32Type()),
      parts[1], SmallVector<ReassociationIndices>{{0, 1}, {2}});
  AffineExpr t, ob, oi, gi, lane;
  bindDims(ctx, t, ob, oi, gi, lane);
  SmallVector<AffineExpr> activation = {t, gi, lane};
  Type f32 = b.getF32Type();
  auto kernel = linalg::GenericOp::create(
      b, loc, TypeRange{RankedTensorType::get({1, blocks, tile}, f32)},
      ValueRange{activationPlane(b, loc, xt, 0),
                 activationPlane(b, loc, xt, 1), codes, scales, offsets},
      ValueRange{createFilled(b, loc,
                              {b.getIndexAttr(1), b.getIndexAttr(blocks),
                               b.getIndexAttr(tile)},
                              f32, 0.0)},
      mapsOf(5,
             {activation, activation, {ob, oi, gi, lane}, {ob, oi, gi},
              activation, {t, ob, oi}},
             ctx),
      SmallVector<IteratorType>{IteratorType::parallel, IteratorType::parallel,
                                IteratorType::parallel, IteratorType::reduction,
                                IteratorType::reduction},
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Type i8 = nb.getI8Type(), i32 = nb.getI32Type();
        Value flipped = arith::XOrIOp::create(
            nb, l, args[2], arith::ConstantIntOp::create(nb, l, i8, 0x88));
        Value word = arith::ExtUIOp::create(nb, l, i32, flipped);
        Value sum =
            sumMaskedCodes(nb, l, word, /*bits=*/4, args.take_front(2), args[4]);
        // The group's scale, then one add into the output (the
        // vectorizer's combiner; as an fma it does not vectorize), both
        // contractable: the add that carries the lanes keeps the flag
        // (liftLaneSumsOutOfLoop), and LLVM makes the pair one fma.
        linalg::YieldOp::create(
            nb, l,
            multiplyAdd(nb, l, args[3], sum, args[5],
                        arith::FastMathFlags::contract));
      });
  contracts(kernel).getWholeTileDimsAttrHelper().setAttr(
      kernel, b.getDenseI64ArrayAttr({2, 4}));
  Value sums = tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get({1, v}, f32), kernel.getResult(0),
      SmallVector<ReassociationIndices>{{0}, {1, 2}});
  return addAccumulator(b, loc, sums, Value(), elementType);
}

//===----------------------------------------------------------------------===//
// ASTC, CPU form: y = acc + sum_k x[k] * scale[b] * q[n, k] (offsets apart)
//
// Both kernels read the codes by row pairs (getBoundWeightParts): a lane
// of `codes` holds columns 0..3 of rows 2i (low nibbles) and 2i + 1 of a
// block, a lane of `tail_codes` columns 4 and 5. Their iteration space is
// (t, block row, row pair i, row h of the pair, group g, lane): `lanes`
// consecutive blocks are the vector lanes (split-K partial sums, one per
// block of a group, summed once per output), and the six rows of a block
// row are one register tile (`afm.whole_tile_dims`), so they share the
// activation and scale vectors, and each code vector is loaded once for
// the two rows whose nibbles it holds.
//===----------------------------------------------------------------------===//

namespace {
/// The bound parts of a 6x6 ASTC weight as the kernels index them.
struct ASTCRowPairs {
  int64_t blockRows, storedBlockCols, groups, lanes;
  /// [Nb, 3, groups, lanes] i32 and i16.
  Value codes, tailCodes;
  /// [Nb, groups, lanes] f16.
  Value scales;
};
} // namespace

static ASTCRowPairs rowPairsOf(OpBuilder &b, Location loc, ValueRange parts) {
  ASTCRowPairs v;
  auto codesType = cast<RankedTensorType>(parts[kASTCCodesPart].getType());
  v.blockRows = codesType.getDimSize(0);
  v.storedBlockCols = codesType.getDimSize(2);
  // Stored block columns are a multiple of kASTCBlockColumnAlign (16).
  v.lanes = lanesDividing(v.storedBlockCols, 16);
  v.groups = v.storedBlockCols / v.lanes;
  auto grouped = [&](Value part) {
    auto partType = cast<RankedTensorType>(part.getType());
    SmallVector<int64_t> shape(partType.getShape().drop_back());
    shape.append({v.groups, v.lanes});
    ReassociationIndices last = {partType.getRank() - 1, partType.getRank()};
    SmallVector<ReassociationIndices> groups;
    for (int64_t d = 0; d + 1 < partType.getRank(); ++d)
      groups.push_back({d});
    groups.push_back(last);
    return tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(shape, partType.getElementType()), part,
        groups);
  };
  v.codes = grouped(parts[kASTCCodesPart]);
  v.tailCodes = grouped(parts[kASTCTailCodesPart]);
  v.scales = grouped(parts[kASTCScalesPart]);
  return v;
}

/// The kernels' loops: (t, block row, row pair, row of the pair, group,
/// lane), and the maps of the codes (both), the scales and the output.
static SmallVector<AffineMap> rowPairMaps(MLIRContext *ctx,
                                          ArrayRef<AffineMap> activations) {
  AffineExpr t, bn, i, h, g, lane;
  bindDims(ctx, t, bn, i, h, g, lane);
  SmallVector<SmallVector<AffineExpr>> exprs = {{bn, i, g, lane},
                                                {bn, i, g, lane}};
  SmallVector<AffineMap> maps = mapsOf(6, exprs, ctx);
  maps.append(activations.begin(), activations.end());
  maps.append(mapsOf(6, {{bn, g, lane}, {t, bn, i, h, lane}}, ctx));
  return maps;
}

/// The row-pair kernel over `activations` (each [T, groups, lanes]):
/// `body(codes, tail codes, activations, shift)` gives one block's sum for
/// one row (shift 0 or 4 selects the row's nibbles), which the kernel
/// multiplies by the block's scale into the row's partial sums; then
/// `[T, N]`, the partial sums of each output added.
static Value rowPairKernel(
    OpBuilder &b, Location loc, Value x, ASTCWeightType type,
    const ASTCRowPairs &v, ValueRange activations,
    function_ref<Value(OpBuilder &, Location, Value, Value, ValueRange,
                       Value)>
        body) {
  MLIRContext *ctx = b.getContext();
  constexpr int64_t pairs = kASTCBlockDim / 2;
  AffineExpr t, g, lane;
  t = getAffineDimExpr(0, ctx);
  g = getAffineDimExpr(4, ctx);
  lane = getAffineDimExpr(5, ctx);
  SmallVector<AffineMap> activationMaps(
      activations.size(), AffineMap::get(6, 0, {t, g, lane}, ctx));
  SmallVector<Value> inputs = {v.codes, v.tailCodes};
  inputs.append(activations.begin(), activations.end());
  inputs.push_back(v.scales);
  int64_t count = activations.size();
  Value init = zerosLike(b, loc, x, {v.blockRows, pairs, 2, v.lanes});
  auto kernel = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, inputs, ValueRange{init},
      rowPairMaps(ctx, activationMaps),
      {IteratorType::parallel, IteratorType::parallel, IteratorType::parallel,
       IteratorType::parallel, IteratorType::reduction,
       IteratorType::parallel},
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Type i32 = nb.getI32Type();
        Value row = arith::IndexCastOp::create(
            nb, l, i32, linalg::IndexOp::create(nb, l, 3));
        Value shift = arith::ShLIOp::create(
            nb, l, row, arith::ConstantIntOp::create(nb, l, i32, 2));
        Value sum = body(nb, l, args[0], args[1],
                         args.slice(2, count), shift);
        Value scale =
            castFloat(nb, l, args[2 + count], nb.getF32Type());
        // Contractable, so LLVM makes the scale and the add one fma
        // (as an fma here the kernel does not vectorize).
        linalg::YieldOp::create(
            nb, l,
            multiplyAdd(nb, l, sum, scale, args.back(),
                        arith::FastMathFlags::contract));
      });
  contracts(kernel).getWholeTileDimsAttrHelper().setAttr(
      kernel, b.getDenseI64ArrayAttr({2, 3}));
  Value partial = kernel.getResult(0);
  // [T, Nb, 3, 2, lanes] -> [T, Nb * 6, lanes] -> [T, N].
  auto partialType = cast<RankedTensorType>(partial.getType());
  Value rows = tensor::CollapseShapeOp::create(
      b, loc,
      RankedTensorType::get({partialType.getDimSize(0),
                             v.blockRows * kASTCBlockDim, v.lanes},
                            b.getF32Type()),
      partial, SmallVector<ReassociationIndices>{{0}, {1, 2, 3}, {4}});
  return firstColumns(b, loc, sumInnermost(b, loc, rows), type.getRows());
}

/// `(word >> shift) & mask` in i32, `word` zero-extended first.
static Value nibbles(OpBuilder &b, Location loc, Value word, Value shift,
                     int64_t mask) {
  Type i32 = b.getI32Type();
  if (word.getType() != i32)
    word = arith::ExtUIOp::create(b, loc, i32, word);
  return arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, word, shift),
      arith::ConstantIntOp::create(b, loc, i32, mask));
}

/// The 4-bit code of column `column` (in [0, 6)) of an ASTC block row
/// whose nibble starts at bit `rowShift` (i32: 0 or 4 for the first or
/// second row of a pair), as i32 in [0, 15]. Columns 0..3 are bytes of the
/// codes word, 4 and 5 bytes of the tail word: shift 8 * (column % 4) +
/// rowShift. A constant column picks its word and byte at compile time.
static Value astcCode(OpBuilder &b, Location loc, Value codes, Value tail,
                      OpFoldResult column, Value rowShift) {
  Type i32 = b.getI32Type();
  auto constant = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, i32, v);
  };
  if (std::optional<int64_t> m = getConstantIntValue(column))
    return nibbles(b, loc, *m < 4 ? codes : tail,
                   arith::AddIOp::create(b, loc, rowShift,
                                         constant(8 * (*m % 4))),
                   0xf);
  Value col = cast<Value>(column);
  if (tail.getType() != i32)
    tail = arith::ExtUIOp::create(b, loc, i32, tail);
  Value word = arith::SelectOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, col,
                            constant(4)),
      tail, codes);
  Value shift = arith::AddIOp::create(
      b, loc,
      arith::ShLIOp::create(b, loc,
                            arith::AndIOp::create(b, loc, col, constant(3)),
                            constant(3)),
      rowShift);
  return nibbles(b, loc, word, shift, 0xf);
}

/// `x` split into block columns of six, as [T, groups, lanes, 6].
static Value blockColumns(OpBuilder &b, Location loc, Value x,
                          const ASTCRowPairs &v) {
  return splitColumns(
      b, loc, padColumns(b, loc, x, v.storedBlockCols * kASTCBlockDim),
      {v.groups, v.lanes, kASTCBlockDim});
}

/// Column `m` of every block of `xs` ([T, groups, lanes, 6]):
/// [T, groups, lanes].
static Value blockColumn(OpBuilder &b, Location loc, Value xs, int64_t m) {
  return sliceAt(b, loc, xs, {{3, m}});
}

static Value astcBlockMatmul(OpBuilder &b, Location loc, Value x,
                             ASTCWeightType type, ValueRange parts,
                             Type elementType, Value acc) {
  ASTCRowPairs v = rowPairsOf(b, loc, parts);
  // One contiguous f32 vector of activations per block column, copied
  // once per call by a transposing op: a slice of x by block columns is
  // strided by 6, and an element-wise copy of it was folded away (an f32
  // x's conversion is the identity), so the kernel gathered every
  // activation vector with vinsertps (36 a step on AVX2).
  // (Masking the nibbles in place, as the 2-bit kernel does, saved the
  // shifts but held more registers than AVX2 has: the loop spilled 2-3x
  // as much and was no faster.)
  Value xt = activationPlanes(b, loc, blockColumns(b, loc, x, v));
  SmallVector<Value> columns;
  for (int64_t m = 0; m < kASTCBlockDim; ++m)
    columns.push_back(activationPlane(b, loc, xt, m));
  Value sums = rowPairKernel(
      b, loc, x, type, v, columns,
      [&](OpBuilder &nb, Location l, Value codes, Value tail, ValueRange xm,
          Value shift) {
        // sum_m q_m * x_m in f32; the block's scale multiplies it once.
        Value sum;
        for (int64_t m = 0; m < kASTCBlockDim; ++m) {
          // In [0, 15]: the signed conversion is exact and one instruction.
          Value q = arith::SIToFPOp::create(
              nb, l, nb.getF32Type(),
              astcCode(nb, l, codes, tail, nb.getIndexAttr(m), shift));
          sum = sum ? math::FmaOp::create(nb, l, xm[m], q, sum).getResult()
                    : arith::MulFOp::create(nb, l, xm[m], q).getResult();
        }
        return sum;
      });
  // The accumulator (the min-shift term) is added once per output.
  return addAccumulator(b, loc, sums, acc, elementType);
}

/// The ASTC kernel on int8 activations: with x[t] ~ a[t] * xq[t] (a =
/// max|x[t]| / 127),
///
///   y[t, n] = a[t] * sum_kb scale[b] * D[t, n, kb] + acc[t, n]
///   D[t, n, kb] = sum_{c < 6} q[n, kb * 6 + c] * xq[t, kb * 6 + c]
///
/// D is exact in i32, two afm_cpu.dot_bytes (four byte products per lane, one
/// vpdpbusd each on AVX-512 VNNI): the row's nibbles of columns 0..3 with
/// xq's four bytes of the block, those of columns 4 and 5 with its last
/// two. So each block's scale multiplies once per block and row instead of
/// once per weight, and the row's scale once per output.
static Value astcInt8BlockMatmul(OpBuilder &b, Location loc, Value x,
                                 ASTCWeightType type, ValueRange parts,
                                 Type elementType, Value acc) {
  MLIRContext *ctx = b.getContext();
  Type i32 = b.getI32Type();
  ASTCRowPairs v = rowPairsOf(b, loc, parts);
  Value amax = buildRowAbsMax(b, loc, x);
  Value xs = blockColumns(b, loc, x, v);
  // xq packed into i32 lanes as the codes are: columns 0..3 of a block in
  // one lane, columns 4 and 5 (and two zero bytes) in another.
  AffineExpr t, g, lane;
  bindDims(ctx, t, g, lane);
  auto packed = [&](int64_t first, int64_t count) {
    SmallVector<Value> inputs;
    for (int64_t m = first; m < first + count; ++m)
      inputs.push_back(blockColumn(b, loc, xs, m));
    inputs.push_back(amax);
    SmallVector<SmallVector<AffineExpr>> maps(count, {t, g, lane});
    maps.push_back({t});
    maps.push_back({t, g, lane});
    return buildGeneric(
        b, loc, inputs,
        tensor::EmptyOp::create(
            b, loc,
            SmallVector<OpFoldResult>{getSizes(b, loc, x)[0],
                                      b.getIndexAttr(v.groups),
                                      b.getIndexAttr(v.lanes)},
            i32),
        mapsOf(3, maps, ctx), SmallVector<IteratorType>(3, IteratorType::parallel),
        [&](OpBuilder &nb, Location l, ValueRange args) {
          Value word;
          for (int64_t m = 0; m < count; ++m) {
            Value byte = arith::ExtUIOp::create(
                nb, l, i32, buildInt8Code(nb, l, args[m], args[count]));
            if (m > 0)
              byte = arith::ShLIOp::create(
                  nb, l, byte, arith::ConstantIntOp::create(nb, l, i32, 8 * m));
            word = word ? arith::OrIOp::create(nb, l, word, byte).getResult()
                        : byte;
          }
          return word;
        });
  };
  Value head = packed(0, 4), tail = packed(4, 2);
  Value sums = rowPairKernel(
      b, loc, x, type, v, ValueRange{head, tail},
      [&](OpBuilder &nb, Location l, Value codes, Value tailCodes,
          ValueRange xq, Value shift) {
        Value zero = arith::ConstantIntOp::create(nb, l, i32, 0);
        Value dot = afm_cpu::DotBytesOp::create(nb, l, i32, zero,
                                       nibbles(nb, l, codes, shift, 0x0f0f0f0f),
                                       xq[0]);
        dot = afm_cpu::DotBytesOp::create(nb, l, i32, dot,
                                 nibbles(nb, l, tailCodes, shift, 0x0f0f),
                                 xq[1]);
        return arith::SIToFPOp::create(nb, l, nb.getF32Type(), dot)
            .getResult();
      });
  // y = sums * amax / 127 (+ acc), once per output.
  return buildRowScaledOutput(b, loc, getSizes(b, loc, x)[0], type.getRows(),
                              sums, amax, acc, elementType);
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

/// Lanes of the split-K GEMV's partial sums.
static constexpr int64_t kSplitKLanes = 16;

bool afm::canBuildGemvSplitK(RankedTensorType x, RankedTensorType w) {
  return x.getDimSize(0) == 1 && w.hasStaticShape() &&
         w.getDimSize(1) % kSplitKLanes == 0 &&
         w.getDimSize(1) >= 4 * kSplitKLanes;
}

static Value gemvSplitK(OpBuilder &b, Location loc, Value x, Value weight,
                        Type elementType, Value acc) {
  constexpr int64_t kLanes = kSplitKLanes;
  auto xType = cast<RankedTensorType>(x.getType());
  auto wType = cast<RankedTensorType>(weight.getType());
  if (!canBuildGemvSplitK(xType, wType))
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

/// `acc + min_shift(x, m)` for bound ASTC weight `type` (its stored f16
/// biases m), in `elementType`: what afm-fuse-min-shift builds before a
/// fused layer, over the activations the block kernel multiplies (rounded
/// to int8 when it rounds them).
static Value addMinShift(OpBuilder &b, Location loc, Value x,
                         ASTCWeightType type, BoundWeightOp bound,
                         Type elementType, Value acc,
                         const LinearLowering &how) {
  Value input = how.int8Activations ? buildInt8RoundTrip(b, loc, x) : x;
  Value shift = buildMinShift(b, loc, input, bound.getParts()[kASTCBiasesPart],
                              type.getRows(), type.getBlockRows(),
                              type.getBlockCols());
  if (!acc && elementType == b.getF32Type())
    return shift;
  return addAccumulator(b, loc, shift, acc, elementType);
}

/// The decoded blocks of a bound ASTC weight (codes times block scales,
/// without the offsets) as f32 [N, 6 * Kb'] with the weight's columns
/// permuted: column j * Kb' + kb holds column 6 * kb + j (Kb' the stored
/// block columns, padding included).
/// Built over the storage's own shape [Nb, 3, 2, 6, Kb'] (block row, row
/// pair, row of the pair, column in the block, block column), so the
/// innermost loop walks contiguous codes and scales and vectorizes with
/// plain loads; over the weight's [N, K] each element divided its indices
/// by 6 and gathered its code (about 3 ns a weight on a Zen 3 VM: as long
/// as a 128-row f32 GEMM over it).
static Value decodeASTCBlocksByColumn(OpBuilder &b, Location loc,
                                      ASTCWeightType type, ValueRange parts) {
  constexpr int64_t dim = kASTCBlockDim, pairs = kASTCBlockDim / 2;
  auto codesType = cast<RankedTensorType>(parts[kASTCCodesPart].getType());
  int64_t blockRows = codesType.getDimSize(0);
  int64_t blockCols = codesType.getDimSize(2);
  MLIRContext *ctx = b.getContext();
  Type f32 = b.getF32Type(), i32 = b.getI32Type();
  AffineExpr bn, rp, r, j, kb;
  bindDims(ctx, bn, rp, r, j, kb);
  Value init = tensor::EmptyOp::create(
      b, loc, ArrayRef<int64_t>{blockRows, pairs, 2, dim, blockCols}, f32);
  Value planes = buildGeneric(
      b, loc,
      ValueRange{parts[kASTCCodesPart], parts[kASTCTailCodesPart],
                 parts[kASTCScalesPart]},
      init,
      mapsOf(5, {{bn, rp, kb}, {bn, rp, kb}, {bn, kb}, {bn, rp, r, j, kb}},
             ctx),
      SmallVector<IteratorType>(5, IteratorType::parallel),
      [&](OpBuilder &nb, Location l, ValueRange args) {
        // Column j of the block, row r of the pair (nibble 4 * r).
        Value row = arith::IndexCastOp::create(
            nb, l, i32, linalg::IndexOp::create(nb, l, 2));
        Value col = arith::IndexCastOp::create(
            nb, l, i32, linalg::IndexOp::create(nb, l, 3));
        Value rowShift = arith::ShLIOp::create(
            nb, l, row, arith::ConstantIntOp::create(nb, l, i32, 2));
        Value q = arith::UIToFPOp::create(
            nb, l, f32, astcCode(nb, l, args[0], args[1], col, rowShift));
        return arith::MulFOp::create(nb, l, q,
                                     castFloat(nb, l, args[2], f32))
            .getResult();
      });
  Value flat = tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get({blockRows * dim, dim * blockCols}, f32),
      planes,
      SmallVector<ReassociationIndices>{{0, 1, 2}, {3, 4}});
  return leadingSlice(b, loc, flat,
                      {b.getIndexAttr(type.getRows()),
                       b.getIndexAttr(dim * blockCols)});
}

/// `x [T, K]`'s columns in the order decodeASTCBlocksByColumn gives a
/// weight's, f32 [T, 6 * Kb'] (zero past K): x split as [T, 1, Kb', 6] is
/// moved to [T, 6, 1, Kb'] by the split-K kernels' own transposing copy.
static Value columnsByBlockColumn(OpBuilder &b, Location loc, Value x,
                                  int64_t blockCols) {
  constexpr int64_t dim = kASTCBlockDim;
  Value planes = activationPlanes(
      b, loc,
      splitColumns(b, loc, padColumns(b, loc, x, dim * blockCols),
                   {1, blockCols, dim}));
  auto type = cast<RankedTensorType>(planes.getType());
  return tensor::CollapseShapeOp::create(
      b, loc,
      RankedTensorType::get({type.getDimSize(0), dim * blockCols},
                            type.getElementType()),
      planes, SmallVector<ReassociationIndices>{{0}, {1, 2, 3}});
}

Value afm::buildLinear(OpBuilder &b, Location loc, Value x, Value weight,
                       Type elementType, Value acc,
                       const LinearLowering &how) {
  auto decode = weight.getDefiningOp<ASTCDecodeOp>();
  Value packed = decode ? decode.getWeight() : weight;
  BoundWeightOp bound = getBound(packed);
  auto astc = dyn_cast<ASTCWeightType>(packed.getType());
  // A bound ASTC weight taken whole (an expert FFN's, which afm-lower-moe
  // creates after afm-fuse-min-shift has run): its offsets become the
  // min-shift term here, and the blocks are multiplied as if decoded.
  // Materialized instead, every call rebuilt D + m element by element.
  if (astc && bound && !decode)
    acc = addMinShift(b, loc, x, astc, bound, elementType, acc, how);
  LinearChoice choice = chooseLinearKernel(
      cast<RankedTensorType>(x.getType()), weight.getType(),
      decode || bound ? astc : ASTCWeightType(), bool(bound),
      bool(acc), how);
  if (choice.roundActivations)
    x = buildInt8RoundTrip(b, loc, x);
  switch (choice.kernel) {
  case LinearKernel::NeedsBinding:
    requireBound(weight, loc); // the diagnostic
    return {};
  case LinearKernel::DenseSplitKGEMV:
    return gemvSplitK(b, loc, x, weight, elementType, acc);
  case LinearKernel::DenseGEMM: {
    Value init = acc;
    if (!init) {
      OpFoldResult rows = getSizes(b, loc, x)[0];
      OpFoldResult cols = getSizes(b, loc, weight)[0];
      init = createFilled(b, loc, {rows, cols}, elementType, 0.0);
    }
    return matmulTransposeB(b, loc, x, weight, init);
  }
  case LinearKernel::ASTCInt8Blocks:
    return astcInt8BlockMatmul(b, loc, x,
                               cast<ASTCWeightType>(packed.getType()),
                               bound.getParts(), elementType, acc);
  case LinearKernel::ASTCBlocks:
    return astcBlockMatmul(b, loc, x, cast<ASTCWeightType>(packed.getType()),
                           bound.getParts(), elementType, acc);
  case LinearKernel::Q2Int8GEMV:
  case LinearKernel::Q2Int8GEMM:
  case LinearKernel::Q2F32GEMV: {
    auto build = choice.kernel == LinearKernel::Q2Int8GEMV ? buildQ2Int8Matmul
                 : choice.kernel == LinearKernel::Q2Int8GEMM
                     ? buildQ2Int8Gemm
                     : q2Matmul;
    return build(b, loc, x, cast<Q2WeightType>(packed.getType()),
                 bound.getParts(), elementType, acc);
  }
  case LinearKernel::Q4Interleaved:
    return buildQ4InterleavedMatmul(b, loc, x,
                                    cast<Q4WeightType>(packed.getType()),
                                    bound.getParts(), elementType,
                                    how.int8Activations);
  case LinearKernel::Q4SplitKGEMV:
    return q4GemvSplitK(b, loc, x, cast<Q4WeightType>(packed.getType()),
                        bound.getParts(), elementType);
  case LinearKernel::Q4Rows:
    return q4Matmul(b, loc, x, cast<Q4WeightType>(packed.getType()),
                    bound.getParts(), elementType);
  case LinearKernel::DecodedBlocks:
    if (astc && bound) {
      // Both operands' columns in the decoded blocks' order: the GEMM sums
      // each output over them in that order (a permutation of K).
      int64_t blockCols = cast<RankedTensorType>(
                              bound.getParts()[kASTCCodesPart].getType())
                              .getDimSize(2);
      return buildLinear(
          b, loc, columnsByBlockColumn(b, loc, x, blockCols),
          decodeASTCBlocksByColumn(b, loc, astc, bound.getParts()),
          elementType, acc);
    }
    [[fallthrough]];
  case LinearKernel::Dequantized: {
    // The weight materialized, then multiplied as a plain tensor (the
    // decoded blocks leave their offsets to the accumulator).
    Value dense = buildDequantized(
        b, loc, packed,
        /*withOffsets=*/choice.kernel == LinearKernel::Dequantized);
    return dense ? buildLinear(b, loc, x, dense, elementType, acc) : dense;
  }
  }
  llvm_unreachable("unknown linear kernel");
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

/// The byte of a q4 row holding column `col`: afm/Layout/PackedWeights.h's
/// q4CodeByteInRow, in index arithmetic.
static Value q4CodeByte(OpBuilder &b, Location loc, Value col,
                        Q4WeightType type) {
  int64_t cols = type.getCols(), group = type.getGroup();
  if (!q4HasInterleavedCodes(cols, group))
    return divIndex(b, loc, col, 2);
  auto mul = [&](Value v, int64_t c) {
    return arith::MulIOp::create(b, loc, v, indexConst(b, loc, c)).getResult();
  };
  auto add = [&](Value u, Value v) {
    return arith::AddIOp::create(b, loc, u, v).getResult();
  };
  Value g = divIndex(b, loc, col, group);
  Value set = divIndex(b, loc, g, kQ4InterleavedGroups);
  Value lane = remIndex(b, loc, g, kQ4InterleavedGroups);
  Value byte = divIndex(b, loc, remIndex(b, loc, col, group), 2);
  Value word = divIndex(b, loc, byte, 4);
  Value inWord = remIndex(b, loc, byte, 4);
  return add(add(mul(set, kQ4InterleavedGroups * (group / 2)),
                 mul(add(mul(word, kQ4InterleavedGroups), lane), 4)),
             inWord);
}

/// The 4-bit value at column `col` of row `row` of a bound q4 table.
static Value q4Value(OpBuilder &b, Location loc, ValueRange parts, Value row,
                     Value col, Q4WeightType type) {
  Value byte = tensor::ExtractOp::create(
      b, loc, parts[0], ValueRange{row, q4CodeByte(b, loc, col, type)});
  Value q = extractCode(b, loc, byte, remIndex(b, loc, col, 2), 4, true);
  Value scale = tensor::ExtractOp::create(
      b, loc, parts[1],
      ValueRange{row, divIndex(b, loc, col, type.getGroup())});
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
                         q4Value(nb, l, bound.getParts(), row, idx[1], type),
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
              nb, l, parts[0],
              ValueRange{n, divIndex(nb, l, k, kQ2CodesPerByte)});
          Value code = extractCode(
              nb, l, byte, remIndex(nb, l, k, kQ2CodesPerByte), 2, false);
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
          return q4Value(nb, l, parts, n, k, q4);
        // Row pair (br / 2), nibble br % 2 of byte j % 4 of the codes
        // (columns 0..3) or the tail codes (4, 5).
        constexpr int64_t dim = kASTCBlockDim;
        Value bn = divIndex(nb, l, n, dim), br = remIndex(nb, l, n, dim);
        Value bk = divIndex(nb, l, k, dim), j = remIndex(nb, l, k, dim);
        SmallVector<Value, 3> lane = {bn, divIndex(nb, l, br, 2), bk};
        Value head = tensor::ExtractOp::create(nb, l, parts[kASTCCodesPart],
                                               lane);
        Value tail =
            tensor::ExtractOp::create(nb, l, parts[kASTCTailCodesPart], lane);
        auto toI32 = [&](Value index) -> Value {
          return arith::IndexCastOp::create(nb, l, nb.getI32Type(), index);
        };
        Value rowShift =
            toI32(arith::MulIOp::create(nb, l, remIndex(nb, l, br, 2),
                                        indexConst(nb, l, 4)));
        Value q = arith::UIToFPOp::create(
            nb, l, f32, astcCode(nb, l, head, tail, toI32(j), rowShift));
        Value scale = castFloat(
            nb, l,
            tensor::ExtractOp::create(nb, l, parts[kASTCScalesPart],
                                      ValueRange{bn, bk}),
            f32);
        Value value = arith::MulFOp::create(nb, l, q, scale);
        if (!withOffsets)
          return value;
        Value bias = castFloat(
            nb, l,
            tensor::ExtractOp::create(nb, l, parts[kASTCBiasesPart],
                                      ValueRange{bn, bk}),
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
  int64_t nb = astcBlocks(type.getRows());
  int64_t kb = astcBlocks(type.getCols());
  Value biases = bound.getParts()[kASTCBiasesPart];
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
  // contiguous columns. Several rows (a prompt) run it as a GEMM (the
  // blocked f32 GEMM of afm-pack-gemm), which still sums each output in
  // column order: with int8 activations a different summation order
  // moves a later layer's input by an ulp, which can flip one rounded
  // activation (by amax / 127) and move the logits by about 1e-2 against
  // the reference evaluator (seen in astc-int8-activations.test's prefill
  // with split-K sums here). As one sum per block row in a generic, the
  // codegen left it a scalar loop storing its sum every step: 0.9 of the
  // 1.27 s of a 512x4096x4096 ASTC GEMM on a Zen 3 VM (afm-bench, perf).
  int64_t lanes =
      cast<RankedTensorType>(x.getType()).getDimSize(0) == 1 ? 16 : 1;
  int64_t cols = ceilDiv(offsetsType.getDimSize(1), lanes) * lanes;
  if (offsetsType.getDimSize(1) != cols)
    offsets = padColumns(b, loc, offsets, cols);
  Value xs = splitColumns(b, loc, padColumns(b, loc, x, cols * blockCols),
                          {cols, blockCols});
  // S[t, kb]: the activations under each block column.
  Value blockSums = sumInnermost(b, loc, xs);
  // M[t, bn] = sum_kb offsets[bn, kb] * S[t, kb], once per block row, as
  // [T, Nb, lanes] partial sums.
  Value partial;
  if (lanes == 1) {
    Type f32 = b.getF32Type();
    Value offsetsF32 = mapElementwise(
        b, loc, ValueRange{offsets}, f32,
        [&](OpBuilder &nbld, Location l, ValueRange args) {
          return castFloat(nbld, l, args[0], f32);
        });
    Value m = matmulTransposeB(b, loc, blockSums, offsetsF32, f32);
    auto mType = cast<RankedTensorType>(m.getType());
    partial = tensor::ExpandShapeOp::create(
        b, loc,
        RankedTensorType::get({mType.getDimSize(0), nb, 1}, f32), m,
        SmallVector<ReassociationIndices>{{0}, {1, 2}},
        SmallVector<OpFoldResult>{getSizes(b, loc, m)[0],
                                  b.getIndexAttr(nb), b.getIndexAttr(1)});
  } else {
    Value grouped = tensor::ExpandShapeOp::create(
        b, loc,
        RankedTensorType::get({nb, cols / lanes, lanes},
                              offsetsType.getElementType()),
        offsets, SmallVector<ReassociationIndices>{{0}, {1, 2}});
    partial = splitKPartialSums(
        b, loc, x, splitColumns(b, loc, blockSums, {cols / lanes, lanes}),
        grouped);
  }
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
