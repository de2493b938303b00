//===- AttentionToLinalg.cpp - attention over bound KV caches -------------===//
//
// Attention is computed with static shapes only: every query row of the
// chunk against every cache slot (masked by the position each slot holds)
// and against the chunk's own key rows (masked causally). Grouped-query
// heads are expressed by viewing the queries as [T, G, H/G, D], so each
// contraction has plain permutation maps and vectorizes.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialects/afm/IR/AFMOps.h"
#include "passes/conversion/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>
#include <limits>

namespace mlir::afm {
#define GEN_PASS_DEF_AFMLOWERATTENTIONPASS
#include "passes/Passes.h.inc"
} // namespace mlir::afm

using namespace mlir;
using namespace mlir::afm;

namespace {

using utils::IteratorType;
constexpr IteratorType kPar = IteratorType::parallel;
constexpr IteratorType kRed = IteratorType::reduction;

/// What both attention ops lower from.
struct AttentionSpec {
  Value query;          // [T, H, D]
  Value key, value;     // [T, G, D], null for shared-KV attention
  Value cache;          // memref<2 x G x C x D>
  Value position;       // index of query row 0
  Value count;          // real rows (index)
  AttentionKind kind;
  std::optional<int64_t> window;
  double scale;
};

/// Builds the attention computation at the current insertion point and
/// returns the [T, H, D] result.
class AttentionBuilder {
public:
  AttentionBuilder(OpBuilder &b, Location loc, const AttentionSpec &spec)
      : b(b), loc(loc), spec(spec), ctx(b.getContext()) {
    auto queryType = cast<RankedTensorType>(spec.query.getType());
    tokens = queryType.getDimSize(0);
    heads = queryType.getDimSize(1);
    headDim = queryType.getDimSize(2);
    KVCacheShape shape = *getKVCacheShape(spec.cache.getType());
    kvHeads = shape.kvHeads;
    capacity = shape.capacity;
    group = heads / kvHeads;
    f32 = b.getF32Type();
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
  /// Keys (half 0) or values (half 1) of the cache as a [G, C, D] tensor.
  Value cacheHalf(int64_t half);
  /// out[t, g, r, n] += sum_k lhs[t, g, r, k] * rhs(rhsMap(t, g, r, n, k)).
  Value contract(Value lhs, Value rhs, Value init, AffineMap rhsMap);
  /// scores[t, g, r, j] = sum_d q[t, g, r, d] * keys(g, j, d) where keys is
  /// [G, J, D] (cache) or [J, G, D] (new rows).
  Value scores(Value q4, Value keys, int64_t numKeys, bool newRows);
  /// Masks and scales scores; `newRows` selects the causal mask of the
  /// chunk's own keys, otherwise the slot mask of the cache.
  Value mask(Value scores, bool newRows);
  Value weightedValues(Value probs, Value values, Value init, bool newRows);
  void appendRows();

  OpBuilder &b;
  Location loc;
  const AttentionSpec &spec;
  MLIRContext *ctx;
  int64_t tokens, heads, headDim, kvHeads, capacity, group;
  Type f32;
};

Value AttentionBuilder::cacheHalf(int64_t half) {
  auto cacheType = cast<MemRefType>(spec.cache.getType());
  SmallVector<OpFoldResult> offsets = {b.getIndexAttr(half), b.getIndexAttr(0),
                                       b.getIndexAttr(0), b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {
      b.getIndexAttr(1), b.getIndexAttr(kvHeads), b.getIndexAttr(capacity),
      b.getIndexAttr(headDim)};
  SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
  auto viewType = memref::SubViewOp::inferRankReducedResultType(
      {kvHeads, capacity, headDim}, cacheType, offsets, sizes, strides);
  Value view = memref::SubViewOp::create(b, loc, cast<MemRefType>(viewType),
                                         spec.cache, offsets, sizes, strides);
  auto tensorType =
      RankedTensorType::get({kvHeads, capacity, headDim}, f32);
  return bufferization::ToTensorOp::create(b, loc, tensorType, view,
                                           /*restrict=*/true,
                                           /*writable=*/false);
}

Value AttentionBuilder::contract(Value lhs, Value rhs, Value init,
                                 AffineMap rhsMap) {
  // dims: t, g, r, n, k; out[t, g, r, n] += lhs[t, g, r, k] * rhs(...)
  return buildGeneric(
      b, loc, ValueRange{lhs, rhs}, init,
      {map(5, {0, 1, 2, 4}), rhsMap, map(5, {0, 1, 2, 3})},
      {kPar, kPar, kPar, kPar, kRed},
      [](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value prod = arith::MulFOp::create(nb, l, a[0], a[1]);
        return arith::AddFOp::create(nb, l, a[2], prod);
      });
}

Value AttentionBuilder::scores(Value q4, Value keys, int64_t numKeys,
                               bool newRows) {
  // n = key j, k = d; keys are [G, J, D] (cache) or [J, G, D] (new rows).
  Value init = filled({tokens, kvHeads, group, numKeys}, 0.0);
  return contract(q4, keys, init,
                  newRows ? map(5, {3, 1, 4}) : map(5, {1, 3, 4}));
}

Value AttentionBuilder::mask(Value scoreTensor, bool newRows) {
  bool local = spec.kind == AttentionKind::Local;
  int64_t window = spec.window.value_or(0);
  // The cache holds positions < filled: before the append for attention
  // that owns its cache, after the owner's append for shared-KV attention.
  Value filledPositions =
      spec.key ? spec.position
               : arith::AddIOp::create(b, loc, spec.position, spec.count)
                     .getResult();
  return mapElementwise(
      b, loc, ValueRange{scoreTensor}, f32,
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        auto idx = [&](int64_t v) {
          return arith::ConstantIndexOp::create(nb, l, v).getResult();
        };
        auto cmp = [&](arith::CmpIPredicate p, Value x, Value y) {
          return arith::CmpIOp::create(nb, l, p, x, y).getResult();
        };
        auto andI = [&](Value x, Value y) {
          return arith::AndIOp::create(nb, l, x, y).getResult();
        };
        Value t = linalg::IndexOp::create(nb, l, 0);
        Value j = linalg::IndexOp::create(nb, l, 3);
        // The query's position p and the key's position.
        Value p = arith::AddIOp::create(nb, l, spec.position, t);
        Value valid, keyPos;
        if (newRows) {
          keyPos = arith::AddIOp::create(nb, l, spec.position, j);
          valid = cmp(arith::CmpIPredicate::ule, j, t);
        } else {
          Value last = arith::SubIOp::create(nb, l, filledPositions, idx(1));
          Value back = arith::RemUIOp::create(
              nb, l, arith::SubIOp::create(nb, l, last, j), idx(capacity));
          keyPos = arith::SubIOp::create(nb, l, last, back);
          valid = andI(cmp(arith::CmpIPredicate::ult, j, filledPositions),
                       cmp(arith::CmpIPredicate::ule, keyPos, p));
        }
        if (local) {
          // keyPos >= p - window + 1, written as keyPos + window > p.
          Value reach = arith::AddIOp::create(nb, l, keyPos, idx(window));
          valid = andI(valid, cmp(arith::CmpIPredicate::ugt, reach, p));
        }
        Value scaled =
            arith::MulFOp::create(nb, l, a[0], constantF32(spec.scale));
        Value minusInf =
            constantF32(-std::numeric_limits<double>::infinity());
        return arith::SelectOp::create(nb, l, valid, scaled, minusInf);
      });
}

Value AttentionBuilder::weightedValues(Value probs, Value values, Value init,
                                       bool newRows) {
  // n = d, k = key j; values are [G, J, D] (cache) or [J, G, D] (new rows).
  return contract(probs, values, init,
                  newRows ? map(5, {4, 1, 3}) : map(5, {1, 4, 3}));
}

void AttentionBuilder::appendRows() {
  auto cacheType = cast<MemRefType>(spec.cache.getType());
  Value zero = constantIndex(0), one = constantIndex(1);
  auto loop = scf::ForOp::create(b, loc, zero, spec.count, one);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value row = loop.getInductionVar();
  Value slot = arith::RemUIOp::create(
      b, loc, arith::AddIOp::create(b, loc, spec.position, row),
      constantIndex(capacity));
  SmallVector<Value, 2> halves = {spec.key, spec.value};
  for (auto [half, rows] : llvm::enumerate(halves)) {
    SmallVector<OpFoldResult> offsets = {b.getIndexAttr(half),
                                         b.getIndexAttr(0), slot,
                                         b.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1),
                                       b.getIndexAttr(kvHeads),
                                       b.getIndexAttr(1),
                                       b.getIndexAttr(headDim)};
    SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
    auto viewType = memref::SubViewOp::inferRankReducedResultType(
        {kvHeads, headDim}, cacheType, offsets, sizes, strides);
    Value dest = memref::SubViewOp::create(
        b, loc, cast<MemRefType>(viewType), spec.cache, offsets, sizes,
        strides);
    auto sliceType = RankedTensorType::get({kvHeads, headDim}, f32);
    Value source = tensor::ExtractSliceOp::create(
        b, loc, sliceType, rows,
        SmallVector<OpFoldResult>{row, b.getIndexAttr(0), b.getIndexAttr(0)},
        SmallVector<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(kvHeads),
                                  b.getIndexAttr(headDim)},
        SmallVector<OpFoldResult>(3, b.getIndexAttr(1)));
    auto store = bufferization::MaterializeInDestinationOp::create(
        b, loc, TypeRange{}, source, dest);
    store.setRestrict(true);
    store.setWritable(true);
  }
}

Value AttentionBuilder::build() {
  auto q4Type = RankedTensorType::get({tokens, kvHeads, group, headDim}, f32);
  Value q4 = tensor::ExpandShapeOp::create(
      b, loc, q4Type, spec.query,
      SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}});
  Value keys = cacheHalf(0), values = cacheHalf(1);

  SmallVector<Value> parts = {mask(scores(q4, keys, capacity, false), false)};
  if (spec.key)
    parts.push_back(mask(scores(q4, spec.key, tokens, true), true));

  // Row maximum and sum of exponentials over both parts, in f32.
  AffineMap rowMap = map(4, {0, 1, 2});
  AffineMap id4 = b.getMultiDimIdentityMap(4);
  Value rowMax = filled({tokens, kvHeads, group},
                        -std::numeric_limits<double>::infinity());
  for (Value part : parts)
    rowMax = buildGeneric(b, loc, ValueRange{part}, rowMax, {id4, rowMap},
                          {kPar, kPar, kPar, kRed},
                          [](OpBuilder &nb, Location l, ValueRange a) {
                            return arith::MaximumFOp::create(nb, l, a[0], a[1])
                                .getResult();
                          });
  Value rowSum = filled({tokens, kvHeads, group}, 0.0);
  SmallVector<Value> exps;
  for (Value part : parts) {
    Value e = buildGeneric(
        b, loc, ValueRange{part, rowMax},
        tensor::EmptyOp::create(b, loc,
                                cast<RankedTensorType>(part.getType()).getShape(),
                                f32),
        {id4, rowMap, id4}, {kPar, kPar, kPar, kPar},
        [](OpBuilder &nb, Location l, ValueRange a) -> Value {
          return math::ExpOp::create(
              nb, l, arith::SubFOp::create(nb, l, a[0], a[1]));
        });
    exps.push_back(e);
    rowSum = buildGeneric(b, loc, ValueRange{e}, rowSum, {id4, rowMap},
                          {kPar, kPar, kPar, kRed},
                          [](OpBuilder &nb, Location l, ValueRange a) {
                            return arith::AddFOp::create(nb, l, a[0], a[1])
                                .getResult();
                          });
  }

  // out = (sum_j e_j v_j) / sum_j e_j
  Value acc = filled({tokens, kvHeads, group, headDim}, 0.0);
  acc = weightedValues(exps[0], values, acc, /*newRows=*/false);
  if (spec.key)
    acc = weightedValues(exps[1], spec.value, acc, /*newRows=*/true);
  Value normalized = buildGeneric(
      b, loc, ValueRange{acc, rowSum},
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
    appendRows();
  return result;
}

/// Checks what the lowering supports and fills the spec.
template <typename OpTy>
static FailureOr<AttentionSpec> getSpec(OpTy op, Value key, Value value,
                                        Value count, OpBuilder &b) {
  if (!isa<MemRefType>(op.getCache().getType()))
    return op.emitOpError("cache is not bound to memory: run "
                          "afm-bind-entry-abi before afm-lower-attention");
  auto queryType = cast<RankedTensorType>(op.getQuery().getType());
  KVCacheShape cache = *getKVCacheShape(op.getCache().getType());
  if (!queryType.hasStaticShape())
    return op.emitOpError("needs static query shapes to lower, got ")
           << queryType;
  if (!queryType.getElementType().isF32() || !cache.elementType.isF32())
    return op.emitOpError("lowering supports f32 activations and caches, "
                          "got ")
           << queryType.getElementType() << " and " << cache.elementType;
  AttentionSpec spec;
  spec.query = op.getQuery();
  spec.key = key;
  spec.value = value;
  spec.cache = op.getCache();
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
      Value result = AttentionBuilder(rewriter, op->getLoc(), *spec).build();
      rewriter.replaceOp(op, result);
    }
  }
};
} // namespace
