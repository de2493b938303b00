//===- Q4Matmul.cpp - rows times a 4-bit table with interleaved codes -----===//
//
// The LM head of a tied 4-bit table: y[t, v] = sum_k x[t, k] * s[v, g(k)] *
// q[v, k], with the codes interleaved 16 groups at a time
// (afm/Layout/PackedWeights.h). Word w of sixteen consecutive groups is one
// 64-byte vector, one i32 lane per group, so a group's whole sum stays in
// one lane and its scale (from a contiguous vector of sixteen) multiplies
// once per group and row:
//
//   y[t, v] = sum_lane sum_gq s[v, 16 gq + lane] * G[t, v, gq, lane]
//   G = sum over the group's columns of x * q    (one lane)
//
// The lanes are a reduction that the register tile spans whole
// (afm.whole_tile_dims): the loop over gq carries them as one vector and
// they are summed once per output, after it (liftLaneSumsOutOfLoop). An
// output of 16 lanes per row summed by a second op had the tile read,
// add to and write back 64 bytes per row of a zero-filled buffer (9.6 MB
// for the paper's head, written by a third op): 8.3-8.7 -> 7.6-8.1 ms on
// 1 thread with int8 activations, 14.6-14.9 -> 13.7-14.3 with f32
// (afm-bench, AMD EPYC Zen 5); the 3B preset decodes 10% faster.
//
// With int8 activations (x[t] ~ a[t] * xq[t], a = max|x[t]| / 127, as the
// 2-bit and ASTC kernels round them), G is exact in i32: for each word,
// two afm_cpu.dot_bytes (the low nibbles with the even columns, the high ones
// with the odd), on codes made unsigned by flipping each nibble's sign bit
// (u = q + 8), and the lane starts at -8 * (the group's sum of xq), so
// sum u * xq - 8 sum xq = sum q * xq. Two vpdpbusd per 64 code bytes on
// AVX-512 VNNI; a[t] multiplies once per output.
//
// With f32 activations each of the 8 codes of a word is multiply-added
// with its activation into the group's f32 sum (math.fma: one rounding per
// code; a multiply and an add took 14.4 ms for the paper's head on 1
// thread, the fused form 12.3, and 7.6 -> 6.4 on 2, afm-bench on AMD EPYC
// Zen 5). A code takes an and and a conversion, not a shift pair and a
// conversion: with u = q + 8 (the word's sign bits flipped once), nibble n
// masked in place converts exactly to u * 16^n, its activation is x *
// 16^-n (exact: a power of two, applied once a step), the top nibble is
// shifted down instead (u), and the group's sum starts at -8 * its sum of
// activations. 25 instructions per 8 codes and 8 lanes instead of 31: the
// paper's head 26.9-27.8 -> 23.7-25.0 ms on 1 thread, 13.8-14.2 -> 11.9-
// 13.1 on 2 (afm-bench on a Zen 3 VM, 3 rounds alternated;
// docs/bench/q4-head-f32-masked-codes-zen3-2026-12-07.txt). The group's
// codes alternate between two such sums, added at the end: one chain of 32
// fmas was 1.13-1.3x slower on 1 thread of a Zen 3 VM (the paper's head,
// 27-31 ms against 34-35;
// docs/bench/q4-head-f32-two-chains-zen3-2026-12-07.txt), and four, with
// the masks, spill on AVX2 and gained nothing (the masked-codes file). In
// every such kernel the yielded value must be a plain add into the output
// (the vectorizer's reduction combiner): with the output first used by an
// fma, the 2-bit f32 GEMV was left scalar and ran 10x slower.
//
// Rows go one at a time (register tiles of one row, afm.whole_tile_dims),
// so the codes stream in address order. Tiles of four rows shared each
// activation vector, but read four streams 1.5 KB apart in step, which the
// hardware prefetcher follows badly: the paper's head (150000x3072, int8
// activations) took 25.8 ms on 1 thread and 14.0 ms on 2 (afm-bench, AMD
// EPYC, AVX-512 VNNI), against 18.1 and 9.8 ms one row at a time; the
// activations are re-read from L1 instead.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/CompressedKernels.h"

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

namespace {
/// The shape of an interleaved table as the kernel iterates it.
struct Q4Tiling {
  int64_t rows, blocks, tile;
  /// Sets of 16 groups per row, and 4-byte words per group (per nibble
  /// plane: a word holds 8 columns).
  int64_t sets, words;
};
} // namespace

static Value i32Const(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIntOp::create(b, loc, b.getI32Type(), value);
}

/// `[blocks, tile, sets, 16]`: word `w` of every group, rows in register
/// tiles.
static Value wordSlice(OpBuilder &b, Location loc, Value words, int64_t w,
                       const Q4Tiling &q) {
  Type i32 = b.getI32Type();
  Value slice = tensor::ExtractSliceOp::create(
      b, loc,
      RankedTensorType::get({q.rows, q.sets, kQ4InterleavedGroups}, i32),
      words,
      ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0),
                             b.getIndexAttr(w), b.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(q.rows), b.getIndexAttr(q.sets),
                             b.getIndexAttr(1),
                             b.getIndexAttr(kQ4InterleavedGroups)},
      ArrayRef<OpFoldResult>(SmallVector<OpFoldResult>(4, b.getIndexAttr(1))));
  return tensor::ExpandShapeOp::create(
      b, loc,
      RankedTensorType::get(
          {q.blocks, q.tile, q.sets, kQ4InterleavedGroups}, i32),
      slice, SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}});
}

/// `x [T, D]` as `[T, sets, 16, words, 4, 2]`: column
/// (16 set + lane) G + 8 w + 2 m + j, the activation of nibble j of byte m
/// of word w of group 16 set + lane.
static Value groupColumns(OpBuilder &b, Location loc, Value x,
                          const Q4Tiling &q) {
  return splitColumns(b, loc, x,
                      {q.sets, kQ4InterleavedGroups, q.words, 4, 2});
}

/// `[T, words, 2, sets, 16]` of element type `type`: for each word w and
/// nibble plane j, one element per group (lane) from the activations of
/// bytes `bytes` of that word and plane (one operand each, in order),
/// followed by `perRow` (one value per row t), combined by `body`.
static Value planeOperands(
    OpBuilder &b, Location loc, Value xs, ArrayRef<int64_t> bytes,
    ArrayRef<Value> perRow, Type type, const Q4Tiling &q,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  MLIRContext *ctx = b.getContext();
  AffineExpr t, w, j, set, lane;
  bindDims(ctx, t, w, j, set, lane);
  SmallVector<Value> inputs;
  SmallVector<SmallVector<AffineExpr>> maps;
  for (int64_t m : bytes) {
    // Byte m of every word: [T, sets, 16, words, 2].
    inputs.push_back(sliceAt(b, loc, xs, {{4, m}}));
    maps.push_back({t, set, lane, w, j});
  }
  for (Value v : perRow) {
    inputs.push_back(v);
    maps.push_back({t});
  }
  maps.push_back({t, w, j, set, lane});
  Value init = tensor::EmptyOp::create(
      b, loc,
      SmallVector<OpFoldResult>{getSizes(b, loc, xs)[0],
                                b.getIndexAttr(q.words), b.getIndexAttr(2),
                                b.getIndexAttr(q.sets),
                                b.getIndexAttr(kQ4InterleavedGroups)},
      type);
  return buildGeneric(b, loc, inputs, init, mapsOf(5, maps, ctx),
                      SmallVector<IteratorType>(5, IteratorType::parallel),
                      body);
}

/// `[T, sets, 16]`: each group's sum over its activations (`xs`, as
/// groupColumns gives them), starting from `zero`; `accumulate(x,
/// perRow..., sum)` adds one activation's term. The group kernels start
/// from it: with the codes read as u = q + 8, each group's sum is offset
/// by -8 times a sum of its activations.
static Value groupSums(
    OpBuilder &b, Location loc, Value xs, ArrayRef<Value> perRow,
    TypedAttr zero, const Q4Tiling &q,
    function_ref<Value(OpBuilder &, Location, ValueRange)> accumulate) {
  MLIRContext *ctx = b.getContext();
  AffineExpr t, set, lane, w, m, j;
  bindDims(ctx, t, set, lane, w, m, j);
  SmallVector<Value> inputs = {xs};
  SmallVector<SmallVector<AffineExpr>> maps = {{t, set, lane, w, m, j}};
  for (Value v : perRow) {
    inputs.push_back(v);
    maps.push_back({t});
  }
  maps.push_back({t, set, lane});
  SmallVector<IteratorType> iterators(3, IteratorType::parallel);
  iterators.append(3, IteratorType::reduction);
  return buildGeneric(
      b, loc, inputs,
      createFilled(b, loc,
                   {getSizes(b, loc, xs)[0], b.getIndexAttr(q.sets),
                    b.getIndexAttr(kQ4InterleavedGroups)},
                   zero),
      mapsOf(6, maps, ctx), iterators, accumulate);
}

/// `[T, sets, 16]` slice (w, j) of `[T, words, 2, sets, 16]`.
static Value planeSlice(OpBuilder &b, Location loc, Value planes, int64_t w,
                        int64_t j) {
  return sliceAt(b, loc, planes, {{1, w}, {2, j}});
}

/// Appends the `[T, sets, 16]` slices of `planes` (`[T, words, 2, sets,
/// 16]`) to `operands`, word-major, plane-minor.
static void appendPlanes(OpBuilder &b, Location loc, Value planes,
                         const Q4Tiling &q, SmallVectorImpl<Value> &operands) {
  for (int64_t w = 0; w < q.words; ++w)
    for (int64_t j = 0; j < 2; ++j)
      operands.push_back(planeSlice(b, loc, planes, w, j));
}

/// The split-K kernel: `y[t, v] = sum_set sum_lane scale * group(...)`
/// with `group` computing one group's sum (f32) from the code words of
/// its row and the activation operands of its lane.
static Value groupKernel(
    OpBuilder &b, Location loc, Value x, Value words, Value scales,
    ArrayRef<Value> activations, const Q4Tiling &q,
    function_ref<Value(OpBuilder &, Location, ValueRange, ValueRange)>
        group) {
  MLIRContext *ctx = b.getContext();
  int64_t tokens = cast<RankedTensorType>(x.getType()).getDimSize(0);
  SmallVector<Value> inputs;
  SmallVector<SmallVector<AffineExpr>> maps;
  AffineExpr t, ob, oi, set, lane;
  bindDims(ctx, t, ob, oi, set, lane);
  for (int64_t w = 0; w < q.words; ++w) {
    inputs.push_back(wordSlice(b, loc, words, w, q));
    maps.push_back({ob, oi, set, lane});
  }
  for (Value a : activations) {
    inputs.push_back(a);
    maps.push_back({t, set, lane});
  }
  inputs.push_back(tensor::ExpandShapeOp::create(
      b, loc,
      RankedTensorType::get({q.blocks, q.tile, q.sets, kQ4InterleavedGroups},
                            b.getF32Type()),
      scales, SmallVector<ReassociationIndices>{{0, 1}, {2, 3}}));
  maps.push_back({ob, oi, set, lane});
  maps.push_back({t, ob, oi});
  auto kernel = linalg::GenericOp::create(
      b, loc,
      TypeRange{RankedTensorType::get({tokens, q.blocks, q.tile},
                                      b.getF32Type())},
      inputs,
      ValueRange{createFilled(b, loc,
                              {b.getIndexAttr(tokens), b.getIndexAttr(q.blocks),
                               b.getIndexAttr(q.tile)},
                              b.getF32Type(), 0.0)},
      mapsOf(5, maps, ctx),
      SmallVector<IteratorType>{IteratorType::parallel, IteratorType::parallel,
                                IteratorType::parallel, IteratorType::reduction,
                                IteratorType::reduction},
      [&](OpBuilder &nb, Location l, ValueRange args) {
        ValueRange codes = args.take_front(q.words);
        ValueRange xs = args.slice(q.words, activations.size());
        Value scale = args[args.size() - 2], out = args.back();
        Value sum = group(nb, l, codes, xs);
        Value scaled = arith::MulFOp::create(nb, l, sum, scale);
        linalg::YieldOp::create(nb, l,
                                arith::AddFOp::create(nb, l, out, scaled)
                                    .getResult());
      });
  // The rows of a register tile share every activation vector, and the
  // tile sums a row's 16 lanes itself (no partial sums in memory).
  contracts(kernel).getWholeTileDimsAttrHelper().setAttr(
      kernel, b.getDenseI64ArrayAttr({2, 4}));
  return tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get({tokens, q.rows}, b.getF32Type()),
      kernel.getResult(0), SmallVector<ReassociationIndices>{{0}, {1, 2}});
}

/// Integer dot products: the i32 code of each activation, four bytes of a
/// word packed the way the code bytes are, and each group's -8 * sum.
static Value int8Group(OpBuilder &b, Location loc, Value x, Value words,
                       Value scales, const Q4Tiling &q, Type elementType) {
  Type i32 = b.getI32Type();
  Value amax = buildRowAbsMax(b, loc, x);
  Value xs = groupColumns(b, loc, x, q);
  Value packed = planeOperands(
      b, loc, xs, {0, 1, 2, 3}, {amax}, i32, q,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value word;
        for (int64_t m = 0; m < 4; ++m) {
          Value byte = arith::ExtUIOp::create(
              nb, l, i32, buildInt8Code(nb, l, args[m], args[4]));
          if (m > 0)
            byte = arith::ShLIOp::create(nb, l, byte, i32Const(nb, l, 8 * m));
          word = word ? arith::OrIOp::create(nb, l, word, byte).getResult()
                      : byte;
        }
        return word;
      });
  // -8 * the group's sum of codes.
  int64_t tokens = cast<RankedTensorType>(x.getType()).getDimSize(0);
  Value offsets = groupSums(
      b, loc, xs, {amax}, b.getI32IntegerAttr(0), q,
      [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
        Value code = arith::ExtSIOp::create(
            nb, l, i32, buildInt8Code(nb, l, args[0], args[1]));
        return arith::SubIOp::create(
            nb, l, args[2],
            arith::ShLIOp::create(nb, l, code, i32Const(nb, l, 3)));
      });
  SmallVector<Value> activations = {offsets};
  appendPlanes(b, loc, packed, q, activations);
  Value sums = groupKernel(
      b, loc, x, words, scales, activations, q,
      [&](OpBuilder &nb, Location l, ValueRange codes, ValueRange xq) {
        Value dot = xq[0];
        for (int64_t w = 0; w < q.words; ++w) {
          // u = q + 8 in each nibble: its sign bit flipped.
          Value u = arith::XOrIOp::create(
              nb, l, codes[w], i32Const(nb, l, int64_t(0x88888888)));
          Value low = arith::AndIOp::create(nb, l, u,
                                            i32Const(nb, l, 0x0f0f0f0f));
          Value high = arith::AndIOp::create(
              nb, l, arith::ShRUIOp::create(nb, l, u, i32Const(nb, l, 4)),
              i32Const(nb, l, 0x0f0f0f0f));
          dot = afm_cpu::DotBytesOp::create(nb, l, i32, dot, low, xq[1 + 2 * w]);
          dot = afm_cpu::DotBytesOp::create(nb, l, i32, dot, high, xq[2 + 2 * w]);
        }
        return arith::SIToFPOp::create(nb, l, nb.getF32Type(), dot)
            .getResult();
      });
  return buildRowScaledOutput(b, loc, b.getIndexAttr(tokens), q.rows, sums,
                              amax, Value(), elementType);
}

/// Independent sums a group's 32 f32 products are dealt over (header).
static constexpr int64_t kQ4F32Chains = 2;

/// Nibble n = 2m + j of a word, masked in place, converts to u * 16^n
/// exactly (at most 4 significant bits), and the top one, shifted down,
/// to u: the factor its activation is multiplied by beforehand (header).
static double nibbleActivationFactor(int64_t n) {
  return n == 7 ? 1.0 : std::ldexp(1.0, -4 * int(n));
}

/// f32 products: one activation operand per column of a group's word,
/// scaled for its nibble's place, after each group's -8 * its sum.
static Value f32Group(OpBuilder &b, Location loc, Value x, Value words,
                      Value scales, const Q4Tiling &q, Type elementType) {
  Type f32 = b.getF32Type();
  MLIRContext *ctx = b.getContext();
  Value xs = groupColumns(b, loc, x, q);
  AffineExpr t, set, lane, w, m, j;
  bindDims(ctx, t, set, lane, w, m, j);
  // x * 16^-n for the nibble in place, [T, sets, 16, words, 4, 2]: exact
  // (a power of two).
  SmallVector<float> factors;
  for (int64_t n = 0; n < 8; ++n)
    factors.push_back(float(nibbleActivationFactor(n)));
  auto factorType = RankedTensorType::get({4, 2}, f32);
  Value factor = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(factorType, ArrayRef<float>(factors)));
  SmallVector<IteratorType> parallel6(6, IteratorType::parallel);
  Value placed = buildGeneric(
      b, loc, ValueRange{xs, factor},
      tensor::EmptyOp::create(b, loc, getSizes(b, loc, xs), f32),
      mapsOf(6,
             {{t, set, lane, w, m, j}, {m, j}, {t, set, lane, w, m, j}}, ctx),
      parallel6, [&](OpBuilder &nb, Location l, ValueRange args) {
        return arith::MulFOp::create(nb, l, castFloat(nb, l, args[0], f32),
                                     args[1])
            .getResult();
      });
  // -8 * the group's sum of activations.
  Value offsets = groupSums(
      b, loc, xs, {}, b.getF32FloatAttr(0), q,
      [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
        Value minusEight =
            arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(-8));
        return math::FmaOp::create(nb, l, minusEight,
                                   castFloat(nb, l, args[0], f32), args[1]);
      });
  SmallVector<Value> activations = {offsets};
  // [T, words, 2, sets, 16] per byte m: 4 tensors.
  for (int64_t byte = 0; byte < 4; ++byte) {
    Value plane = planeOperands(
        b, loc, placed, {byte}, {}, f32, q,
        [&](OpBuilder &, Location, ValueRange args) { return args[0]; });
    appendPlanes(b, loc, plane, q, activations);
  }
  // activations[1 + (m * words + w) * 2 + j]
  Value sums = groupKernel(
      b, loc, x, words, scales, activations, q,
      [&](OpBuilder &nb, Location l, ValueRange codes, ValueRange xf) {
        // Code c of the group goes to chain c mod kQ4F32Chains (header);
        // the first chain starts at the group's offset.
        SmallVector<Value> chains(kQ4F32Chains);
        chains.front() = xf[0];
        int64_t c = 0;
        for (int64_t w = 0; w < q.words; ++w) {
          // u = q + 8 in each nibble: its sign bit flipped.
          Value u = arith::XOrIOp::create(
              nb, l, codes[w], i32Const(nb, l, int64_t(0x88888888)));
          for (int64_t m = 0; m < 4; ++m)
            for (int64_t j = 0; j < 2; ++j) {
              int64_t n = 2 * m + j;
              Value code =
                  n == 7 ? arith::ShRUIOp::create(nb, l, u,
                                                  i32Const(nb, l, 28))
                               .getResult()
                         : arith::AndIOp::create(
                               nb, l, u,
                               i32Const(nb, l, int64_t(0xf) << (4 * n)))
                               .getResult();
              Value value = arith::SIToFPOp::create(nb, l, f32, code);
              // A multiply-add into the group's running sum (header).
              Value xv = xf[1 + (m * q.words + w) * 2 + j];
              Value &sum = chains[c++ % kQ4F32Chains];
              sum = sum ? math::FmaOp::create(nb, l, value, xv, sum).getResult()
                        : arith::MulFOp::create(nb, l, value, xv).getResult();
            }
        }
        Value sum = chains.front();
        for (Value chain : llvm::drop_begin(chains))
          sum = arith::AddFOp::create(nb, l, sum, chain);
        return sum;
      });
  return mapElementwise(b, loc, ValueRange{sums}, elementType,
                        [&](OpBuilder &nb, Location l, ValueRange args) {
                          return castFloat(nb, l, args[0], elementType);
                        });
}

bool afm::canBuildQ4InterleavedMatmul(RankedTensorType x,
                                      Q4WeightType type) {
  return q4HasInterleavedCodes(type.getCols(), type.getGroup()) &&
         x.hasStaticShape();
}

Value afm::buildQ4InterleavedMatmul(OpBuilder &b, Location loc, Value x,
                                    Q4WeightType type, ValueRange parts,
                                    Type elementType, bool int8Activations) {
  auto xType = cast<RankedTensorType>(x.getType());
  int64_t d = type.getCols(), g = type.getGroup();
  if (!canBuildQ4InterleavedMatmul(xType, type))
    return {};
  Q4Tiling q;
  q.rows = type.getRows();
  q.sets = d / g / kQ4InterleavedGroups;
  q.words = g / 8;
  q.tile = 1; // see the file comment
  q.blocks = q.rows / q.tile;
  // The codes `[V, D/2] i8` read as `[V, sets, words, 16] i32`: word w of
  // group 16 * set + lane at [v, set, w, lane].
  Value words = buildBytesAsWords(
      b, loc, parts[0], {q.rows, q.sets, q.words, kQ4InterleavedGroups});
  return int8Activations
             ? int8Group(b, loc, x, words, parts[1], q, elementType)
             : f32Group(b, loc, x, words, parts[1], q, elementType);
}
