//===- AttentionToLinalg.cpp - attention over bound KV caches -------------===//
//
// Attention is flash attention over the filled part of the cache: a loop
// over blocks of 256 slots (as many as the cache holds positions, so a
// decode step costs O(position), not O(capacity)) keeps the running row
// maximum, sum of exponentials and weighted values (online softmax), then
// folds in the chunk's own key rows (masked causally). Each block is
// static-shaped linalg: every query row against the block's slots, masked
// by the position each slot holds. Grouped-query heads are expressed by
// viewing the queries as [T, G, H/G, D], so each contraction has plain
// permutation maps and vectorizes.
//
// An i8 cache (docs/semantics.md section 5) stores codes and one f32 scale per token
// per head. The chunk's new rows are quantized once, up front; attention
// reads every key and value, the chunk's own included, dequantized, so that
// a token sees the same numbers whether it came in a prefill chunk or a
// decode step. With few query rows the cache is dequantized inside the
// contractions that read it (scale * code, the same product as a separate
// dequantization), so a step reads its i8 codes once and writes no f32 copy
// of the cache. A prefill chunk's rows would each convert every key and
// value again (and the split-K scores wrote 16 partial sums per score to
// memory): from kRowsForBlockCopies rows, each block is converted once into
// f32 copies, the keys transposed so that the scores are a GEMM along
// contiguous slots.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "afm/Target/TargetDescription.h"
#include "dialects/afm/IR/AFMOps.h"
#include "passes/CodeGen/GEMMTiles.h"
#include "passes/CodeGen/Int8DotProducts.h"
#include "passes/Conversion/AttentionSpec.h"
#include "passes/Conversion/CompressedKernels.h"
#include "passes/Conversion/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Debug.h"

#include <cmath>
#include <limits>

namespace mlir::afm {
#define GEN_PASS_DEF_AFMLOWERATTENTIONPASS
#include "passes/Passes.h.inc"
} // namespace mlir::afm

#define DEBUG_TYPE "afm-lower-attention"

using namespace mlir;
using namespace mlir::afm;

namespace {

using utils::IteratorType;
constexpr IteratorType kPar = IteratorType::parallel;
constexpr IteratorType kRed = IteratorType::reduction;

/// Builds the attention computation at the current insertion point and
/// returns the [T, H, D] result.
class AttentionBuilder {
public:
  AttentionBuilder(OpBuilder &b, Location loc, const AttentionSpec &spec)
      : b(b), loc(loc), spec(spec), ctx(b.getContext()) {
    AttentionShape shape = spec.shape();
    tokens = shape.tokens;
    heads = shape.heads;
    headDim = shape.headDim;
    kvHeads = shape.kvHeads;
    capacity = shape.capacity;
    group = shape.group;
    tiledKeys = hasTiledKeys(spec);
    f32 = b.getF32Type();
    cacheElement = getKVCacheShape(spec.cache.getType())->elementType;
  }

  Value build();

private:
  Value constantF32(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value constantIndex(int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  AffineMap map(unsigned numDims, ArrayRef<unsigned> dims) {
    SmallVector<AffineExpr> exprs;
    for (unsigned d : dims)
      exprs.push_back(getAffineDimExpr(d, ctx));
    return AffineMap::get(numDims, 0, exprs, ctx);
  }
  Value filled(ArrayRef<int64_t> shape, double value) {
    SmallVector<OpFoldResult> sizes;
    for (int64_t s : shape)
      sizes.push_back(b.getIndexAttr(s));
    return createFilled(b, loc, sizes, f32, value);
  }
  /// Keys (half 0) or values (half 1) of `memory` (the cache, [2, G, C, D],
  /// or its scales, [2, G, C]) as a read-only tensor.
  Value readHalf(Value memory, int64_t half);
  /// Half `half` of `memory` as a rank-reduced memref view.
  Value halfMemory(Value memory, int64_t half);
  /// A memref as a read-only tensor.
  Value readOnly(Value view);
  /// Keys (half 0) or values (half 1) of the cache: a [G, C, D] tensor (f32,
  /// or i8 codes; tiled keys as [G, C / 16, D / 4, 16, 4]) and, for an i8
  /// cache, its [G, C] scales (else null).
  std::pair<Value, Value> cacheHalf(int64_t half);
  /// The key half of a cache with tiled keys (hasTiledKeys) as the
  /// memref [G, C / 16, D / 4, 16, 4] its bytes are.
  Value keyTileMemory();
  /// Tiled keys [G, n, D / 4, 16, 4] as rows [G, 16 n, D].
  Value untiledKeys(Value tiles);
  /// Symmetric int8 codes [A, B, D] and scales [A, B] of `rows` [A, B, D]:
  /// scale = absmax / 127, code = clamp(round(x / scale), -127, 127) with
  /// ties away from zero, all codes 0 when the scale is 0.
  std::pair<Value, Value> quantize(Value rows);
  /// codes * scales as an [A, B, D] f32 tensor.
  Value dequantize(Value codes, Value scales);
  /// `x` (f32 or f16) with its elements converted to `type` (f16 or f32):
  /// rounded to nearest even, or widened exactly.
  Value convertElements(Value x, Type type);
  /// The query with each head vector rounded to int8 and scaled back, as
  /// int8 linear activations are (`int8_query`).
  Value roundedQuery();
  /// out[t, g, r, n] += sum_k lhs[t, g, r, k] * rhs(rhsMap(t, g, r, n, k)),
  /// where rhs is f32, or i8 codes times `scales(scalesMap(...))`.
  Value contract(Value lhs, Value rhs, Value init, AffineMap rhsMap,
                 Value scales = {}, AffineMap scalesMap = {});
  /// scores[t, g, r, j] = sum_d q[t, g, r, d] * keys(g, j, d) where keys is
  /// [G, J, D] (cache, with its scales for an i8 cache) or [J, G, D] (new
  /// rows).
  Value scores(Value q4, Value keys, Value keyScales, int64_t numKeys,
               bool newRows);
  /// scores against `numKeys` cache slots ([G, J, D] keys), with D split
  /// into vectors.
  Value cacheScores(Value q4, Value keys, Value keyScales, int64_t numKeys);
  /// Partial sums per score in cacheScores: one vector of f32 lanes.
  static constexpr int64_t kScoreLanes = 16;
  /// Masks and scales scores; `newRows` selects the causal mask of the
  /// chunk's own keys, otherwise the slot mask of the cache, whose score j
  /// is that of slot `firstSlot + j`.
  Value mask(Value scores, bool newRows, Value firstSlot = {});
  /// How many positions the cache holds when attention reads it: before
  /// the append for attention that owns its cache, after the owner's
  /// append for shared-KV attention.
  Value filledPositions();
  /// The running state of online softmax over key blocks.
  struct Running {
    Value rowMax, rowSum, acc; // [T, G, R], [T, G, R], [T, G, R, D]
  };
  /// Folds one block of masked scores [T, G, R, J] and its values into
  /// `state` (flash attention's online softmax).
  Running fold(Running state, Value scores, Value values, Value valueScales,
               bool newRows);
  /// Cache slots per block of the loop over the filled part of the cache.
  static constexpr int64_t kBlockSlots = 256;
  /// Query rows (a prefill chunk's) from which each block's keys and values
  /// are converted to f32 once, before the contractions read them.
  static constexpr int64_t kRowsForBlockCopies = 8;
  /// keys [G, J, D] (f32, or i8 codes with [G, J] scales) as f32 [G, D, J].
  Value transposedKeys(Value keys, Value scales);
  Value weightedValues(Value probs, Value values, Value valueScales,
                       Value init, bool newRows);
  /// Stores row r of each `rows[i]` ([T, G(, D)]) at slot
  /// (position + r) mod C of half i % 2 of `memories[i]` ([2, G, C(, D)]).
  void appendRows(ArrayRef<Value> rows, ArrayRef<Value> memories);
  /// Stores row `row` of the key codes [T, G, D] at `slot` of the tiled
  /// keys (hasTiledKeys).
  void appendTiledKey(Value codes, Value row, Value slot);

  OpBuilder &b;
  Location loc;
  const AttentionSpec &spec;
  MLIRContext *ctx;
  int64_t tokens, heads, headDim, kvHeads, capacity, group;
  bool tiledKeys;
  Type f32;
  /// The cache's element type: f32, f16 or i8.
  Type cacheElement;
};

Value AttentionBuilder::halfMemory(Value memory, int64_t half) {
  auto memoryType = cast<MemRefType>(memory.getType());
  ArrayRef<int64_t> shape = memoryType.getShape().drop_front();
  SmallVector<OpFoldResult> offsets(memoryType.getRank(), b.getIndexAttr(0));
  offsets[0] = b.getIndexAttr(half);
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1)};
  for (int64_t size : shape)
    sizes.push_back(b.getIndexAttr(size));
  SmallVector<OpFoldResult> strides(memoryType.getRank(), b.getIndexAttr(1));
  auto viewType = memref::SubViewOp::inferRankReducedResultType(
      shape, memoryType, offsets, sizes, strides);
  return memref::SubViewOp::create(b, loc, cast<MemRefType>(viewType), memory,
                                   offsets, sizes, strides);
}

Value AttentionBuilder::readOnly(Value view) {
  auto viewType = cast<MemRefType>(view.getType());
  auto tensorType =
      RankedTensorType::get(viewType.getShape(), viewType.getElementType());
  return bufferization::ToTensorOp::create(b, loc, tensorType, view,
                                           /*restrict=*/true,
                                           /*writable=*/false);
}

Value AttentionBuilder::readHalf(Value memory, int64_t half) {
  return readOnly(halfMemory(memory, half));
}

Value AttentionBuilder::keyTileMemory() {
  // [G, C, D] -> [G, C * D] -> [G, C / 16, D / 4, 16, 4]: the same bytes.
  Value flat = memref::CollapseShapeOp::create(
      b, loc, halfMemory(spec.cache, 0),
      SmallVector<ReassociationIndices>{{0}, {1, 2}});
  return memref::ExpandShapeOp::create(
      b, loc,
      ArrayRef<int64_t>{kvHeads, capacity / kKeyTileSlots,
                        headDim / kKeyTileBytes, kKeyTileSlots,
                        kKeyTileBytes},
      flat, SmallVector<ReassociationIndices>{{0}, {1, 2, 3, 4}});
}

Value AttentionBuilder::untiledKeys(Value tiles) {
  auto type = cast<RankedTensorType>(tiles.getType());
  ArrayRef<int64_t> shape = type.getShape();
  Value rows = linalg::TransposeOp::create(
                   b, loc, tiles,
                   tensor::EmptyOp::create(
                       b, loc,
                       ArrayRef<int64_t>{shape[0], shape[1], shape[3],
                                         shape[2], shape[4]},
                       type.getElementType()),
                   ArrayRef<int64_t>{0, 1, 3, 2, 4})
                   .getResult()
                   .front();
  return tensor::CollapseShapeOp::create(
      b, loc, rows, SmallVector<ReassociationIndices>{{0}, {1, 2}, {3, 4}});
}

std::pair<Value, Value> AttentionBuilder::cacheHalf(int64_t half) {
  Value stored = half == 0 && tiledKeys ? readOnly(keyTileMemory())
                                        : readHalf(spec.cache, half);
  if (!spec.scales)
    return {stored, Value()};
  return {stored, readHalf(spec.scales, half)};
}

std::pair<Value, Value> AttentionBuilder::quantize(Value rows) {
  ArrayRef<int64_t> shape = cast<RankedTensorType>(rows.getType()).getShape();
  AffineMap id3 = b.getMultiDimIdentityMap(3);
  AffineMap outer = map(3, {0, 1});
  Value absMax = buildGeneric(
      b, loc, ValueRange{rows}, filled(shape.drop_back(), 0.0), {id3, outer},
      {kPar, kPar, kRed}, [](OpBuilder &nb, Location l, ValueRange a) {
        Value abs = math::AbsFOp::create(nb, l, a[0]);
        return arith::MaximumFOp::create(nb, l, a[1], abs).getResult();
      });
  Value scales = mapElementwise(
      b, loc, ValueRange{absMax}, f32,
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        return arith::DivFOp::create(nb, l, a[0], constantF32(127.0));
      });
  Type i8 = b.getIntegerType(8), i32 = b.getI32Type();
  Value codes = buildGeneric(
      b, loc, ValueRange{rows, scales},
      tensor::EmptyOp::create(b, loc, shape, i8), {id3, outer, id3},
      {kPar, kPar, kPar},
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        auto f = [&](double v) {
          return arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(v))
              .getResult();
        };
        auto cmp = [&](arith::CmpFPredicate p, Value x, Value y) {
          return arith::CmpFOp::create(nb, l, p, x, y).getResult();
        };
        // Clamping before rounding is the same as after (the bounds are
        // integers) and keeps the value in range of the i32 conversion.
        Value zero = f(0.0);
        Value ratio = arith::SelectOp::create(
            nb, l, cmp(arith::CmpFPredicate::OEQ, a[1], zero), zero,
            arith::DivFOp::create(nb, l, a[0], a[1]));
        Value clamped = arith::MinimumFOp::create(
            nb, l, arith::MaximumFOp::create(nb, l, ratio, f(-127.0)),
            f(127.0));
        // Round half away from zero without a libm call (the model library
        // links against nothing): truncate, then step away from zero when
        // the exact remainder reaches one half.
        Value truncated = arith::FPToSIOp::create(nb, l, i32, clamped);
        Value remainder = arith::SubFOp::create(
            nb, l, clamped, arith::SIToFPOp::create(nb, l, f32, truncated));
        auto i32Constant = [&](int64_t v) {
          return arith::ConstantIntOp::create(nb, l, i32, v).getResult();
        };
        Value step = arith::SelectOp::create(
            nb, l, cmp(arith::CmpFPredicate::OGE, remainder, f(0.5)),
            i32Constant(1),
            arith::SelectOp::create(
                nb, l, cmp(arith::CmpFPredicate::OLE, remainder, f(-0.5)),
                i32Constant(-1), i32Constant(0)));
        Value rounded = arith::AddIOp::create(nb, l, truncated, step);
        return arith::TruncIOp::create(nb, l, i8, rounded);
      });
  return {codes, scales};
}

Value AttentionBuilder::dequantize(Value codes, Value scales) {
  ArrayRef<int64_t> shape = cast<RankedTensorType>(codes.getType()).getShape();
  AffineMap id3 = b.getMultiDimIdentityMap(3);
  return buildGeneric(
      b, loc, ValueRange{codes, scales},
      tensor::EmptyOp::create(b, loc, shape, f32), {id3, map(3, {0, 1}), id3},
      {kPar, kPar, kPar},
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value code = arith::SIToFPOp::create(nb, l, f32, a[0]);
        return arith::MulFOp::create(nb, l, a[1], code);
      });
}

Value AttentionBuilder::convertElements(Value x, Type type) {
  return mapElementwise(b, loc, ValueRange{x}, type,
                        [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                          if (type.isF16())
                            return arith::TruncFOp::create(nb, l, type, a[0]);
                          return widenHalf(nb, l, a[0]);
                        });
}

Value AttentionBuilder::transposedKeys(Value keys, Value scales) {
  ArrayRef<int64_t> shape = cast<RankedTensorType>(keys.getType()).getShape();
  // dims: g, d, j
  SmallVector<Value> inputs = {keys};
  SmallVector<AffineMap> maps = {map(3, {0, 2, 1})};
  if (scales) {
    inputs.push_back(scales);
    maps.push_back(map(3, {0, 2}));
  }
  maps.push_back(b.getMultiDimIdentityMap(3));
  return buildGeneric(
      b, loc, inputs,
      tensor::EmptyOp::create(
          b, loc, ArrayRef<int64_t>{shape[0], shape[2], shape[1]}, f32),
      maps, {kPar, kPar, kPar},
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        if (a.size() == 2)
          return widenHalf(nb, l, a[0]);
        Value code = arith::SIToFPOp::create(nb, l, f32, a[0]);
        return arith::MulFOp::create(nb, l, a[1], code);
      });
}

/// The body of a contraction with a cache operand: `acc + x * w`, where w
/// is an f32 operand (an f16 one widened), or an i8 code times its scale
/// (operands x, code, scale, acc), the same product as a separate
/// dequantization.
static Value multiplyAddBody(OpBuilder &b, Location loc, ValueRange args) {
  Value w = widenHalf(b, loc, args[1]);
  if (args.size() == 4)
    w = arith::MulFOp::create(
        b, loc, args[2], arith::SIToFPOp::create(b, loc, b.getF32Type(), w));
  Value product = arith::MulFOp::create(b, loc, args[0], w);
  return arith::AddFOp::create(b, loc, args.back(), product);
}

Value AttentionBuilder::contract(Value lhs, Value rhs, Value init,
                                 AffineMap rhsMap, Value scales,
                                 AffineMap scalesMap) {
  // dims: t, g, r, n, k; out[t, g, r, n] += lhs[t, g, r, k] * rhs(...)
  SmallVector<Value> inputs = {lhs, rhs};
  SmallVector<AffineMap> maps = {map(5, {0, 1, 2, 4}), rhsMap};
  if (scales) {
    inputs.push_back(scales);
    maps.push_back(scalesMap);
  }
  maps.push_back(map(5, {0, 1, 2, 3}));
  return buildGeneric(b, loc, inputs, init, maps,
                      {kPar, kPar, kPar, kPar, kRed}, multiplyAddBody);
}

Value AttentionBuilder::scores(Value q4, Value keys, Value keyScales,
                               int64_t numKeys, bool newRows) {
  // n = key j, k = d; keys are [G, J, D] (cache) or [J, G, D] (new rows).
  if (!newRows && headDim % kScoreLanes == 0)
    return cacheScores(q4, keys, keyScales, numKeys);
  Value init = filled({tokens, kvHeads, group, numKeys}, 0.0);
  return contract(q4, keys, init,
                  newRows ? map(5, {3, 1, 4}) : map(5, {1, 3, 4}), keyScales,
                  map(5, {1, 3}));
}

Value AttentionBuilder::cacheScores(Value q4, Value keys, Value keyScales,
                                    int64_t numKeys) {
  // A key is a contiguous row of D values: each score keeps kScoreLanes
  // partial sums over D (split-K), so the inner loop reads the row as
  // whole vectors, and sums them once at the end.
  int64_t chunks = headDim / kScoreLanes;
  auto split = [&](Value x, SmallVector<int64_t> shape) {
    auto type = cast<RankedTensorType>(x.getType());
    SmallVector<ReassociationIndices> groups;
    for (int64_t i = 0; i + 1 < type.getRank(); ++i)
      groups.push_back({i});
    groups.push_back({type.getRank() - 1, type.getRank()});
    return tensor::ExpandShapeOp::create(
               b, loc, RankedTensorType::get(shape, type.getElementType()), x,
               groups)
        .getResult();
  };
  Value q5 = split(q4, {tokens, kvHeads, group, chunks, kScoreLanes});
  Value k4 = split(keys, {kvHeads, numKeys, chunks, kScoreLanes});
  // dims: t, g, r, j, c, l
  SmallVector<Value> inputs = {q5, k4};
  SmallVector<AffineMap> maps = {map(6, {0, 1, 2, 4, 5}), map(6, {1, 3, 4, 5})};
  if (keyScales) {
    inputs.push_back(keyScales);
    maps.push_back(map(6, {1, 3}));
  }
  maps.push_back(map(6, {0, 1, 2, 3, 5}));
  Value partial = buildGeneric(
      b, loc, inputs,
      filled({tokens, kvHeads, group, numKeys, kScoreLanes}, 0.0), maps,
      {kPar, kPar, kPar, kPar, kRed, kPar}, multiplyAddBody);
  return buildGeneric(
      b, loc, ValueRange{partial},
      filled({tokens, kvHeads, group, numKeys}, 0.0),
      {b.getMultiDimIdentityMap(5), map(5, {0, 1, 2, 3})},
      {kPar, kPar, kPar, kPar, kRed},
      [](OpBuilder &nb, Location l, ValueRange a) -> Value {
        return arith::AddFOp::create(nb, l, a[1], a[0]);
      });
}

Value AttentionBuilder::filledPositions() {
  return spec.filledPositions(b, loc);
}

Value AttentionBuilder::mask(Value scoreTensor, bool newRows,
                             Value firstSlot) {
  Value filledPositions = this->filledPositions();
  // The newest cached position and its slot, once: the per-slot position
  // below then needs a compare and a select, not a vector division.
  Value last, lastSlot;
  if (!newRows) {
    last = arith::SubIOp::create(b, loc, filledPositions, constantIndex(1));
    lastSlot = arith::RemUIOp::create(b, loc, last, constantIndex(capacity));
  }
  return mapElementwise(
      b, loc, ValueRange{scoreTensor}, f32,
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value t = linalg::IndexOp::create(nb, l, 0);
        Value j = linalg::IndexOp::create(nb, l, 3);
        if (firstSlot)
          j = arith::AddIOp::create(nb, l, firstSlot, j);
        // The query's position p.
        Value p = arith::AddIOp::create(nb, l, spec.position, t);
        Value valid;
        if (newRows) {
          // The chunk's own key j is at position + j: causal by row.
          Value keyPos = arith::AddIOp::create(nb, l, spec.position, j);
          valid = withinWindow(
              nb, l, spec,
              arith::CmpIOp::create(nb, l, arith::CmpIPredicate::ule, j, t),
              keyPos, p);
        } else {
          valid = cachedSlotVisible(nb, l, spec, capacity, j,
                                    filledPositions, last, lastSlot, p);
        }
        Value scaled =
            arith::MulFOp::create(nb, l, a[0], constantF32(spec.scale));
        Value minusInf =
            constantF32(-std::numeric_limits<double>::infinity());
        return arith::SelectOp::create(nb, l, valid, scaled, minusInf);
      });
}

Value AttentionBuilder::weightedValues(Value probs, Value values,
                                       Value valueScales, Value init,
                                       bool newRows) {
  // n = d, k = key j; values are [G, J, D] (cache) or [J, G, D] (new rows).
  return contract(probs, values, init,
                  newRows ? map(5, {4, 1, 3}) : map(5, {1, 4, 3}),
                  valueScales, map(5, {1, 4}));
}

void AttentionBuilder::appendTiledKey(Value codes, Value row, Value slot) {
  // Row `row` of the codes [T, G, D] as [G, D / 4, 4] into slot % 16 of
  // tile slot / 16: [G, 1, D / 4, 1, 4] of the tiles.
  Value tiles = keyTileMemory();
  auto tilesType = cast<MemRefType>(tiles.getType());
  Value tile =
      arith::DivUIOp::create(b, loc, slot, constantIndex(kKeyTileSlots));
  Value within =
      arith::RemUIOp::create(b, loc, slot, constantIndex(kKeyTileSlots));
  SmallVector<OpFoldResult> offsets = {b.getIndexAttr(0), tile,
                                       b.getIndexAttr(0), within,
                                       b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {
      b.getIndexAttr(kvHeads), b.getIndexAttr(1),
      b.getIndexAttr(headDim / kKeyTileBytes), b.getIndexAttr(1),
      b.getIndexAttr(kKeyTileBytes)};
  SmallVector<OpFoldResult> strides(5, b.getIndexAttr(1));
  SmallVector<int64_t> pieceShape = {kvHeads, headDim / kKeyTileBytes,
                                     kKeyTileBytes};
  auto viewType = memref::SubViewOp::inferRankReducedResultType(
      pieceShape, tilesType, offsets, sizes, strides);
  Value dest = memref::SubViewOp::create(b, loc, cast<MemRefType>(viewType),
                                         tiles, offsets, sizes, strides);
  Value rowCodes = tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get({kvHeads, headDim}, b.getI8Type()), codes,
      SmallVector<OpFoldResult>{row, b.getIndexAttr(0), b.getIndexAttr(0)},
      SmallVector<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(kvHeads),
                                b.getIndexAttr(headDim)},
      SmallVector<OpFoldResult>(3, b.getIndexAttr(1)));
  Value pieces = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(pieceShape, b.getI8Type()), rowCodes,
      SmallVector<ReassociationIndices>{{0}, {1, 2}});
  auto store = bufferization::MaterializeInDestinationOp::create(
      b, loc, TypeRange{}, pieces, dest);
  store.setRestrict(true);
  store.setWritable(true);
}

void AttentionBuilder::appendRows(ArrayRef<Value> rows,
                                  ArrayRef<Value> memories) {
  Value zero = constantIndex(0), one = constantIndex(1);
  auto loop = scf::ForOp::create(b, loc, zero, spec.count, one);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value row = loop.getInductionVar();
  Value slot = arith::RemUIOp::create(
      b, loc, arith::AddIOp::create(b, loc, spec.position, row),
      constantIndex(capacity));
  for (auto [i, source] : llvm::enumerate(rows)) {
    // The memory is [2, G, C(, D)] and the source rows [T, G(, D)]; both
    // lose their slot or row dimension.
    Value memory = memories[i];
    auto memoryType = cast<MemRefType>(memory.getType());
    auto sourceType = cast<RankedTensorType>(source.getType());
    if (i == 0 && tiledKeys) {
      appendTiledKey(source, row, slot);
      continue;
    }
    SmallVector<int64_t> rowShape(sourceType.getShape().drop_front());
    SmallVector<OpFoldResult> offsets = {b.getIndexAttr(i % 2),
                                         b.getIndexAttr(0), slot};
    SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1),
                                       b.getIndexAttr(kvHeads),
                                       b.getIndexAttr(1)};
    SmallVector<OpFoldResult> sourceOffsets = {row, b.getIndexAttr(0)};
    SmallVector<OpFoldResult> sourceSizes = {b.getIndexAttr(1),
                                             b.getIndexAttr(kvHeads)};
    if (memoryType.getRank() == 4) {
      offsets.push_back(b.getIndexAttr(0));
      sizes.push_back(b.getIndexAttr(headDim));
      sourceOffsets.push_back(b.getIndexAttr(0));
      sourceSizes.push_back(b.getIndexAttr(headDim));
    }
    SmallVector<OpFoldResult> strides(offsets.size(), b.getIndexAttr(1));
    auto viewType = memref::SubViewOp::inferRankReducedResultType(
        rowShape, memoryType, offsets, sizes, strides);
    Value dest = memref::SubViewOp::create(
        b, loc, cast<MemRefType>(viewType), memory, offsets, sizes, strides);
    auto sliceType =
        RankedTensorType::get(rowShape, sourceType.getElementType());
    Value slice = tensor::ExtractSliceOp::create(
        b, loc, sliceType, source, sourceOffsets, sourceSizes,
        SmallVector<OpFoldResult>(sourceOffsets.size(), b.getIndexAttr(1)));
    auto store = bufferization::MaterializeInDestinationOp::create(
        b, loc, TypeRange{}, slice, dest);
    store.setRestrict(true);
    store.setWritable(true);
  }
}

AttentionBuilder::Running
AttentionBuilder::fold(Running state, Value scores, Value values,
                       Value valueScales, bool newRows) {
  AffineMap rowMap = map(4, {0, 1, 2});
  AffineMap id4 = b.getMultiDimIdentityMap(4);
  AffineMap id3 = b.getMultiDimIdentityMap(3);
  SmallVector<int64_t, 3> rowShape = {tokens, kvHeads, group};
  // Every new state is written in place of the old one (the loop's
  // iteration arguments), after the last read of the old one.
  auto inPlace = [&](Value input, Value state, AffineMap inputMap,
                     function_ref<Value(OpBuilder &, Location, Value, Value)>
                         body) {
    unsigned rank = cast<RankedTensorType>(state.getType()).getRank();
    return buildGeneric(
        b, loc, ValueRange{input}, state,
        {inputMap, b.getMultiDimIdentityMap(rank)},
        SmallVector<IteratorType>(rank, kPar),
        [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
          return body(nb, l, a[0], a[1]);
        });
  };
  // The block's row maximum, then m' = max(m, it).
  Value blockMax = buildGeneric(
      b, loc, ValueRange{scores},
      filled(rowShape, -std::numeric_limits<double>::infinity()),
      {id4, rowMap}, {kPar, kPar, kPar, kRed},
      [](OpBuilder &nb, Location l, ValueRange a) {
        return arith::MaximumFOp::create(nb, l, a[0], a[1]).getResult();
      });
  // Exponents are taken against m', or 0 while every key so far is masked
  // (m' = -inf), so that masked scores give exp(-inf) = 0, never NaN.
  Value minusInf = constantF32(-std::numeric_limits<double>::infinity());
  Value shift = buildGeneric(
      b, loc, ValueRange{state.rowMax, blockMax},
      tensor::EmptyOp::create(b, loc, rowShape, f32), {id3, id3, id3},
      {kPar, kPar, kPar}, [&](OpBuilder &nb, Location l, ValueRange a) {
        Value next = arith::MaximumFOp::create(nb, l, a[0], a[1]);
        Value none = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ,
                                           next, minusInf);
        return arith::SelectOp::create(nb, l, none, constantF32(0.0), next)
            .getResult();
      });
  // The correction of what was summed against m: exp(m - shift).
  Value correction = buildGeneric(
      b, loc, ValueRange{state.rowMax, shift},
      tensor::EmptyOp::create(b, loc, rowShape, f32), {id3, id3, id3},
      {kPar, kPar, kPar}, [](OpBuilder &nb, Location l, ValueRange a) -> Value {
        return math::ExpOp::create(nb, l,
                                   arith::SubFOp::create(nb, l, a[0], a[1]));
      });
  Value exps = buildGeneric(
      b, loc, ValueRange{scores, shift},
      tensor::EmptyOp::create(
          b, loc, cast<RankedTensorType>(scores.getType()).getShape(), f32),
      {id4, rowMap, id4}, {kPar, kPar, kPar, kPar},
      [](OpBuilder &nb, Location l, ValueRange a) -> Value {
        return math::ExpOp::create(nb, l,
                                   arith::SubFOp::create(nb, l, a[0], a[1]));
      });
  auto times = [](OpBuilder &nb, Location l, Value x, Value out) -> Value {
    return arith::MulFOp::create(nb, l, out, x);
  };
  // l' = l * c + sum_j e_j
  Value rowSum = inPlace(correction, state.rowSum, id3, times);
  rowSum = buildGeneric(b, loc, ValueRange{exps}, rowSum, {id4, rowMap},
                        {kPar, kPar, kPar, kRed},
                        [](OpBuilder &nb, Location l, ValueRange a) {
                          return arith::AddFOp::create(nb, l, a[0], a[1])
                              .getResult();
                        });
  // acc' = acc * c + sum_j e_j v_j
  Value acc = inPlace(correction, state.acc, rowMap, times);
  acc = weightedValues(exps, values, valueScales, acc, newRows);
  Value rowMax = inPlace(blockMax, state.rowMax, id3,
                         [](OpBuilder &nb, Location l, Value x, Value out) {
                           return arith::MaximumFOp::create(nb, l, out, x)
                               .getResult();
                         });
  return Running{rowMax, rowSum, acc};
}

Value AttentionBuilder::roundedQuery() {
  // [T, H, D] as T * H rows of D: each head vector rounded on its own.
  auto rowsType = RankedTensorType::get({tokens * heads, headDim}, f32);
  Value rows = tensor::CollapseShapeOp::create(
      b, loc, rowsType, spec.query,
      SmallVector<ReassociationIndices>{{0, 1}, {2}});
  return tensor::ExpandShapeOp::create(
      b, loc, spec.query.getType(), buildInt8RoundTrip(b, loc, rows),
      SmallVector<ReassociationIndices>{{0, 1}, {2}});
}

Value AttentionBuilder::build() {
  auto q4Type = RankedTensorType::get({tokens, kvHeads, group, headDim}, f32);
  // The decode kernel rounds its query itself, as this does.
  bool decode = isDecodeAttention(spec);
  LLVM_DEBUG(llvm::dbgs() << "attention at " << loc << ": " << tokens
                          << " query rows, " << kvHeads << " KV heads x "
                          << group << ", head dim " << headDim << ", capacity "
                          << capacity << (spec.scales ? ", i8 cache" : "")
                          << (decode ? ": the flash-decoding kernel\n"
                                     : ": online softmax over cache blocks\n"));
  Value q4 = tensor::ExpandShapeOp::create(
      b, loc, q4Type,
      spec.int8Query && !decode ? roundedQuery() : spec.query,
      SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}});
  auto [keys, keyScales] = cacheHalf(0);
  auto [values, valueScales] = cacheHalf(1);

  // The chunk's own rows, as attention reads them, and what gets stored.
  Value newKeys = spec.key, newValues = spec.value;
  SmallVector<Value, 4> stored = {spec.key, spec.value};
  SmallVector<Value, 4> storage = {spec.cache, spec.cache};
  if (spec.key && spec.scales) {
    auto [keyCodes, keyScales] = quantize(spec.key);
    auto [valueCodes, valueScales] = quantize(spec.value);
    newKeys = dequantize(keyCodes, keyScales);
    newValues = dequantize(valueCodes, valueScales);
    stored = {keyCodes, valueCodes, keyScales, valueScales};
    storage = {spec.cache, spec.cache, spec.scales, spec.scales};
  } else if (spec.key && cacheElement.isF16()) {
    // An f16 cache: the rows rounded to f16 are stored, and attention reads
    // them (widened back) for the chunk's own rows too, as it reads the
    // cached ones, so outputs do not depend on how a prompt was chunked.
    stored = {convertElements(spec.key, cacheElement),
              convertElements(spec.value, cacheElement)};
    newKeys = convertElements(stored[0], f32);
    newValues = convertElements(stored[1], f32);
  }

  // One query row: flash-decoding over the filled slots
  // (DecodeAttention.cpp).
  if (decode) {
    Value result = buildDecodeAttention(b, loc, spec, newKeys, newValues);
    if (spec.key)
      appendRows(stored, storage);
    return result;
  }

  // Online softmax over blocks of the filled part of the cache only (a
  // decode step at position p reads about p slots, not the capacity), then
  // over the chunk's own rows.
  Running state{filled({tokens, kvHeads, group},
                       -std::numeric_limits<double>::infinity()),
                filled({tokens, kvHeads, group}, 0.0),
                filled({tokens, kvHeads, group, headDim}, 0.0)};
  // Whole tiles per block when the keys are tiled.
  int64_t block =
      tiledKeys ? kKeyTileSlots * divisorAtMost(capacity / kKeyTileSlots,
                                                kBlockSlots / kKeyTileSlots)
                : divisorAtMost(capacity, kBlockSlots);
  LLVM_DEBUG(llvm::dbgs() << "  blocks of " << block << " slots\n");
  Value filledSlots = arith::MinUIOp::create(b, loc, filledPositions(),
                                             constantIndex(capacity));
  Value blocks = arith::DivUIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, filledSlots, constantIndex(block - 1)),
      constantIndex(block));
  auto loop = scf::ForOp::create(
      b, loc, constantIndex(0), blocks, constantIndex(1),
      ValueRange{state.rowMax, state.rowSum, state.acc});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value first = arith::MulIOp::create(b, loc, loop.getInductionVar(),
                                        constantIndex(block));
    // Slots [first, first + block) of a [G, C(, D)] tensor.
    // (Tiled keys [G, C / 16, ...]: `perIndex` 16 slots per index.)
    auto slots = [&](Value half, int64_t perIndex = 1) -> Value {
      if (!half)
        return half;
      auto type = cast<RankedTensorType>(half.getType());
      SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
      offsets[1] = perIndex == 1
                       ? first
                       : arith::DivUIOp::create(b, loc, first,
                                                constantIndex(perIndex))
                             .getResult();
      SmallVector<OpFoldResult> sizes;
      SmallVector<int64_t> shape(type.getShape());
      shape[1] = block / perIndex;
      for (int64_t size : shape)
        sizes.push_back(b.getIndexAttr(size));
      return tensor::ExtractSliceOp::create(
          b, loc, RankedTensorType::get(shape, type.getElementType()), half,
          offsets, sizes,
          SmallVector<OpFoldResult>(type.getRank(), b.getIndexAttr(1)));
    };
    // A prefill chunk's rows all read every key and value of the block:
    // they are converted once per block (keys transposed to [G, D, J], so
    // that the score contraction runs along contiguous slots like a GEMM)
    // instead of once per row and element inside the contractions. The
    // products scale * code are the same.
    bool copyBlocks = tokens >= kRowsForBlockCopies;
    // Tiled keys: the block's tiles, as rows.
    Value blockKeys = tiledKeys ? untiledKeys(slots(keys, kKeyTileSlots))
                                : slots(keys);
    Value blockKeyScales = slots(keyScales);
    Value rawScores =
        copyBlocks
            ? contract(q4, transposedKeys(blockKeys, blockKeyScales),
                       filled({tokens, kvHeads, group, block}, 0.0),
                       map(5, {1, 4, 3}))
            : scores(q4, blockKeys, blockKeyScales, block, false);
    Value blockScores = mask(rawScores, false, first);
    Value blockValues = slots(values), blockValueScales = slots(valueScales);
    if (copyBlocks && blockValueScales) {
      blockValues = dequantize(blockValues, blockValueScales);
      blockValueScales = {};
    } else if (copyBlocks && cacheElement.isF16()) {
      blockValues = convertElements(blockValues, f32);
    }
    Running next =
        fold(Running{loop.getRegionIterArgs()[0], loop.getRegionIterArgs()[1],
                     loop.getRegionIterArgs()[2]},
             blockScores, blockValues, blockValueScales, false);
    scf::YieldOp::create(b, loc,
                         ValueRange{next.rowMax, next.rowSum, next.acc});
  }
  state = Running{loop.getResult(0), loop.getResult(1), loop.getResult(2)};
  if (spec.key)
    state = fold(state, mask(scores(q4, newKeys, {}, tokens, true), true),
                 newValues, {}, true);

  // out = (sum_j e_j v_j) / sum_j e_j
  AffineMap rowMap = map(4, {0, 1, 2});
  AffineMap id4 = b.getMultiDimIdentityMap(4);
  Value normalized = buildGeneric(
      b, loc, ValueRange{state.acc, state.rowSum},
      tensor::EmptyOp::create(b, loc, q4Type.getShape(), f32),
      {id4, rowMap, id4}, {kPar, kPar, kPar, kPar},
      [](OpBuilder &nb, Location l, ValueRange a) -> Value {
        return arith::DivFOp::create(nb, l, a[0], a[1]);
      });
  Value result = tensor::CollapseShapeOp::create(
      b, loc, spec.query.getType(), normalized,
      SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}});

  // Only now, after every read of the cache, append the new rows.
  if (spec.key)
    appendRows(stored, storage);
  return result;
}

/// Checks what the lowering supports and fills the spec.
template <typename OpTy>
static FailureOr<AttentionSpec> getSpec(OpTy op, Value key, Value value,
                                        Value count, OpBuilder &b) {
  if (!isa<MemRefType>(op.getCache().getType()))
    return op.emitOpError("cache is not bound to memory: run "
                          "afm-bind-entry-abi before afm-lower-attention");
  // The cache's bytes are in the KV arena's layout (docs/afmb-format.md:
  // rows, or tiles of keys), which a strided view would not address.
  for (Value memory : {Value(op.getCache()), Value(op.getScales())})
    if (memory && !cast<MemRefType>(memory.getType()).getLayout().isIdentity())
      return op.emitOpError("needs the cache and its scales as contiguous "
                            "memrefs (the identity layout "
                            "afm-bind-entry-abi gives them), got ")
             << memory.getType();
  auto queryType = cast<RankedTensorType>(op.getQuery().getType());
  KVCacheShape cache = *getKVCacheShape(op.getCache().getType());
  if (!queryType.hasStaticShape())
    return op.emitOpError("needs static query shapes to lower, got ")
           << queryType;
  if (!queryType.getElementType().isF32() ||
      !(cache.elementType.isF32() || cache.elementType.isF16() ||
        cache.elementType.isSignlessInteger(8)))
    return op.emitOpError("lowering supports f32 activations and f32, f16 or "
                          "i8 caches, got ")
           << queryType.getElementType() << " and " << cache.elementType;
  AttentionSpec spec;
  spec.query = op.getQuery();
  spec.key = key;
  spec.value = value;
  spec.cache = op.getCache();
  spec.scales = op.getScales();
  spec.position = op.getPosition();
  spec.count = count ? count
                     : arith::ConstantIndexOp::create(
                           b, op.getLoc(), queryType.getDimSize(0))
                           .getResult();
  spec.kind = op.getKind();
  spec.window = op.getWindow();
  spec.scale = op.getScale()
                   ? op.getScale()->convertToDouble()
                   : 1.0 / std::sqrt(double(queryType.getDimSize(2)));
  spec.int8Query = op.getInt8Query();
  return spec;
}

struct AFMLowerAttentionPass
    : afm::impl::AFMLowerAttentionPassBase<AFMLowerAttentionPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<AttentionOp, SharedKVAttentionOp>(op))
        ops.push_back(op);
    });
    // The target's facts when afm-set-target stamped one (the afm-codegen
    // pipelines); the defaults without (afm-opt alone).
    AttentionCodegen codegen;
    ModuleOp module = getOperation();
    if (contracts(module).getTargetAttrHelper().getAttr(module)) {
      FailureOr<TargetDescription> target = getTargetDescription(module);
      if (failed(target))
        return signalPassFailure();
      codegen.readOncePrefetch = target->readOncePrefetch;
      // 8 lanes: a 256-bit register of i32 sums (vpmaddubsw on AVX2).
      codegen.smallUnsignedDots =
          !hasTargetInt8Dot(*target, 8, /*unsignedBelow128=*/false) &&
          hasTargetInt8Dot(*target, 8, /*unsignedBelow128=*/true);
      codegen.vectorRegisters = target->vectorRegisters;
      codegen.vectorBits = target->vectorBits;
      codegen.l1dBytes = target->l1dBytes;
    }
    IRRewriter rewriter(&getContext());
    for (Operation *op : ops) {
      rewriter.setInsertionPoint(op);
      FailureOr<AttentionSpec> spec =
          isa<AttentionOp>(op)
              ? getSpec(cast<AttentionOp>(op), cast<AttentionOp>(op).getKey(),
                        cast<AttentionOp>(op).getValue(),
                        cast<AttentionOp>(op).getCount(), rewriter)
              : getSpec(cast<SharedKVAttentionOp>(op), Value(), Value(),
                        cast<SharedKVAttentionOp>(op).getCount(), rewriter);
      if (failed(spec))
        return signalPassFailure();
      spec->codegen = codegen;
      Value result = AttentionBuilder(rewriter, op->getLoc(), *spec).build();
      rewriter.replaceOp(op, result);
    }
  }
};
} // namespace
