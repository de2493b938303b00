//===- MoEToGroupedGEMM.cpp - top-k routing and grouped expert GEMMs ------===//
//
// Routing is scalar work (tokens x experts); the expert FFNs are GEMMs over
// the tokens each expert received, in tiles of static shape so that they
// tile and vectorize like any dense layer. Loops over tokens and tiles have
// run-time trip counts: any routing works, no token is dropped.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialects/afm/IR/AFMOps.h"
#include "passes/Conversion/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/Support/Debug.h"

#include <limits>

namespace mlir::afm {
#define GEN_PASS_DEF_AFMLOWERMOEPASS
#include "passes/Passes.h.inc"
} // namespace mlir::afm

#define DEBUG_TYPE "afm-lower-moe"

using namespace mlir;
using namespace mlir::afm;

namespace {
/// Small helpers that keep the loop nests below readable.
struct Emitter {
  OpBuilder &b;
  Location loc;

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value f32(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value extract(Value t, ValueRange at) {
    return tensor::ExtractOp::create(b, loc, t, at);
  }
  Value insert(Value v, Value t, ValueRange at) {
    return tensor::InsertOp::create(b, loc, v, t, at);
  }
  Value toIndex(Value i32) {
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), i32);
  }
  Value toI32(Value index) {
    return arith::IndexCastOp::create(b, loc, b.getI32Type(), index);
  }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  Value filled(ArrayRef<int64_t> shape, TypedAttr value) {
    return createFilled(b, loc, getAsIndexOpFoldResult(b.getContext(), shape),
                        value);
  }
  /// for (iv = lb; iv < ub; iv += step) with loop-carried `inits`.
  scf::ForOp loop(Value lb, Value ub, Value step, ValueRange inits,
                  function_ref<SmallVector<Value>(Value, ValueRange)> body) {
    return scf::ForOp::create(
        b, loc, lb, ub, step, inits,
        [&](OpBuilder &nb, Location, Value iv, ValueRange args) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          SmallVector<Value> results = body(iv, args);
          scf::YieldOp::create(b, loc, results);
        });
  }
};
} // namespace

/// experts [T, k] (i32) and gates [T, k] (f32) of afm.topk_router.
static std::pair<Value, Value> lowerRouting(OpBuilder &b, Location loc,
                                            Value input, Value router,
                                            int64_t topK) {
  Emitter e{b, loc};
  auto inputType = cast<RankedTensorType>(input.getType());
  int64_t tokens = inputType.getDimSize(0);
  int64_t experts = cast<RankedTensorType>(router.getType()).getDimSize(0);
  Type f32 = b.getF32Type();
  Value logits = matmulTransposeB(b, loc, input, router, f32);

  // For each token and slot j: the best expert not taken by slots < j.
  // Scanning experts upwards with a strict > keeps the lower index on ties.
  Value chosen = e.filled({tokens, topK}, b.getI32IntegerAttr(0));
  Value chosenLogits = e.filled({tokens, topK}, b.getF32FloatAttr(0));
  auto perToken = e.loop(
      e.idx(0), e.idx(tokens), e.idx(1), {chosen, chosenLogits},
      [&](Value t, ValueRange tokenState) -> SmallVector<Value> {
        auto perSlot = e.loop(
            e.idx(0), e.idx(topK), e.idx(1), tokenState,
            [&](Value j, ValueRange slotState) -> SmallVector<Value> {
              Value none = e.idx(experts);
              auto scan = e.loop(
                  e.idx(0), e.idx(experts), e.idx(1),
                  {none, e.f32(-std::numeric_limits<double>::infinity())},
                  [&](Value x, ValueRange best) -> SmallVector<Value> {
                    Value logit = e.extract(logits, {t, x});
                    auto taken = e.loop(
                        e.idx(0), j, e.idx(1),
                        {arith::ConstantIntOp::create(b, loc, 0, 1)},
                        [&](Value jp, ValueRange acc) -> SmallVector<Value> {
                          Value prev = e.toIndex(e.extract(slotState[0], {t, jp}));
                          Value same = e.cmp(arith::CmpIPredicate::eq, prev, x);
                          return {arith::OrIOp::create(b, loc, acc[0], same)};
                        });
                    Value free = arith::XOrIOp::create(
                        b, loc, taken.getResult(0),
                        arith::ConstantIntOp::create(b, loc, 1, 1));
                    Value first = e.cmp(arith::CmpIPredicate::eq, best[0], none);
                    Value larger = arith::CmpFOp::create(
                        b, loc, arith::CmpFPredicate::OGT, logit, best[1]);
                    Value better = arith::AndIOp::create(
                        b, loc, free,
                        arith::OrIOp::create(b, loc, first, larger));
                    return {e.select(better, x, best[0]),
                            e.select(better, logit, best[1])};
                  });
              return {e.insert(e.toI32(scan.getResult(0)), slotState[0], {t, j}),
                      e.insert(scan.getResult(1), slotState[1], {t, j})};
            });
        return {perSlot.getResult(0), perSlot.getResult(1)};
      });
  chosen = perToken.getResult(0);
  chosenLogits = perToken.getResult(1);

  // gates = softmax over the selected logits of each token.
  MLIRContext *ctx = b.getContext();
  AffineMap id = b.getMultiDimIdentityMap(2);
  AffineMap row = AffineMap::get(2, 0, {getAffineDimExpr(0, ctx)}, ctx);
  SmallVector<utils::IteratorType> reduce = {utils::IteratorType::parallel,
                                             utils::IteratorType::reduction};
  Value rowMax = buildGeneric(
      b, loc, ValueRange{chosenLogits},
      e.filled({tokens}, b.getF32FloatAttr(-std::numeric_limits<float>::infinity())),
      {id, row}, reduce, [](OpBuilder &nb, Location l, ValueRange a) {
        return arith::MaximumFOp::create(nb, l, a[0], a[1]).getResult();
      });
  Value exps = buildGeneric(
      b, loc, ValueRange{chosenLogits, rowMax},
      tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{tokens, topK}, f32),
      {id, row, id},
      {utils::IteratorType::parallel, utils::IteratorType::parallel},
      [](OpBuilder &nb, Location l, ValueRange a) -> Value {
        return math::ExpOp::create(nb, l,
                                   arith::SubFOp::create(nb, l, a[0], a[1]));
      });
  Value sums = buildGeneric(
      b, loc, ValueRange{exps},
      e.filled({tokens}, b.getF32FloatAttr(0)), {id, row}, reduce,
      [](OpBuilder &nb, Location l, ValueRange a) {
        return arith::AddFOp::create(nb, l, a[0], a[1]).getResult();
      });
  Value gates = buildGeneric(
      b, loc, ValueRange{exps, sums},
      tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{tokens, topK}, f32),
      {id, row, id},
      {utils::IteratorType::parallel, utils::IteratorType::parallel},
      [](OpBuilder &nb, Location l, ValueRange a) -> Value {
        return arith::DivFOp::create(nb, l, a[0], a[1]);
      });
  return {chosen, gates};
}

/// The tokens routed to each expert, in token order: `ids [E, T]` (i32)
/// and their gate weights `weights [E, T]`, the first `counts[e]` entries
/// of row e valid (`counts [E]`, i32). One pass over the routing for all
/// experts.
struct Compacted {
  Value ids, weights, counts;
};

static Compacted compactRouting(Emitter &e, Value chosen, Value gates,
                                int64_t tokens, int64_t experts, int64_t topK) {
  OpBuilder &b = e.b;
  Value ids = e.filled({experts, tokens}, b.getI32IntegerAttr(0));
  Value weights = e.filled({experts, tokens}, b.getF32FloatAttr(0));
  Value counts = e.filled({experts}, b.getI32IntegerAttr(0));
  auto perToken = e.loop(
      e.idx(0), e.idx(tokens), e.idx(1), {ids, weights, counts},
      [&](Value t, ValueRange acc) -> SmallVector<Value> {
        auto perSlot = e.loop(
            e.idx(0), e.idx(topK), e.idx(1), acc,
            [&](Value j, ValueRange s) -> SmallVector<Value> {
              Value expert = e.toIndex(e.extract(chosen, {t, j}));
              Value slot = e.toIndex(e.extract(s[2], {expert}));
              Value next =
                  e.toI32(arith::AddIOp::create(b, e.loc, slot, e.idx(1)));
              return {e.insert(e.toI32(t), s[0], {expert, slot}),
                      e.insert(e.extract(gates, {t, j}), s[1], {expert, slot}),
                      e.insert(next, s[2], {expert})};
            });
        return SmallVector<Value>(perSlot.getResults());
      });
  return {perToken.getResult(0), perToken.getResult(1), perToken.getResult(2)};
}

/// `out[token] += gate * swiglu_expert(x[token])` for the tokens routed to
/// expert `index`, in tiles of `rows` tokens.
static Value addExpert(Emitter &e, MoEOp op, int64_t index,
                       const Compacted &routed, int64_t rows, Value out) {
  OpBuilder &b = e.b;
  Location loc = e.loc;
  Value x = op.getInput();
  auto xType = cast<RankedTensorType>(x.getType());
  int64_t dim = xType.getDimSize(1);
  Type elementType = xType.getElementType();
  Value expert = e.idx(index);
  Value routedCount = e.toIndex(e.extract(routed.counts, {expert}));
  // Rows of a tile past the count repeat the last routed token and are
  // not added back.
  Value last = arith::SubIOp::create(b, loc, routedCount, e.idx(1));
  Value gate = op.getGate()[index];
  Value up = op.getUp()[index];
  Value down = op.getDown()[index];
  auto tiles = e.loop(
      e.idx(0), routedCount, e.idx(rows), {out},
      [&](Value first, ValueRange acc) -> SmallVector<Value> {
        // Gather the tile's tokens.
        Value tileInit = tensor::EmptyOp::create(
            b, loc, ArrayRef<int64_t>{rows, dim}, elementType);
        MLIRContext *ctx = b.getContext();
        Value tile = buildGeneric(
            b, loc, ValueRange{}, tileInit,
            {AffineMap::getMultiDimIdentityMap(2, ctx)},
            {utils::IteratorType::parallel, utils::IteratorType::parallel},
            [&](OpBuilder &nb, Location l, ValueRange) -> Value {
              Value r = linalg::IndexOp::create(nb, l, 0);
              Value c = linalg::IndexOp::create(nb, l, 1);
              Value slot = arith::MinUIOp::create(
                  nb, l, arith::AddIOp::create(nb, l, first, r), last);
              Value token = arith::IndexCastOp::create(
                  nb, l, nb.getIndexType(),
                  tensor::ExtractOp::create(nb, l, routed.ids,
                                            ValueRange{expert, slot}));
              return tensor::ExtractOp::create(nb, l, x, ValueRange{token, c});
            });
        Value y =
            SwiGLUOp::create(b, loc, tile.getType(), tile, gate, up, down,
                             GateActivationAttr());
        // out[token] += gate * y[row] for the tile's real rows.
        Value real = arith::MinUIOp::create(
            b, loc, e.idx(rows),
            arith::SubIOp::create(b, loc, routedCount, first));
        auto add = e.loop(
            e.idx(0), real, e.idx(1), acc,
            [&](Value r, ValueRange o) -> SmallVector<Value> {
              Value slot = arith::AddIOp::create(b, loc, first, r);
              Value token = e.toIndex(e.extract(routed.ids, {expert, slot}));
              Value weight = e.extract(routed.weights, {expert, slot});
              auto rowType = RankedTensorType::get({1, dim}, elementType);
              auto offsets = [&](Value row) {
                return SmallVector<OpFoldResult>{row, b.getIndexAttr(0)};
              };
              SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1),
                                                 b.getIndexAttr(dim)};
              SmallVector<OpFoldResult> strides(2, b.getIndexAttr(1));
              Value current = tensor::ExtractSliceOp::create(
                  b, loc, rowType, o[0], offsets(token), sizes, strides);
              Value contribution = tensor::ExtractSliceOp::create(
                  b, loc, rowType, y, offsets(r), sizes, strides);
              Value sum = mapElementwise(
                  b, loc, ValueRange{current, contribution}, elementType,
                  [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                    Value w = castFloat(nb, l, weight, elementType);
                    return arith::AddFOp::create(
                        nb, l, a[0], arith::MulFOp::create(nb, l, w, a[1]));
                  });
              return {tensor::InsertSliceOp::create(
                  b, loc, sum, o[0], offsets(token), sizes, strides)};
            });
        return {add.getResult(0)};
      });
  return tiles.getResult(0);
}

static Value lowerMoE(OpBuilder &b, MoEOp op, int64_t rowTile) {
  Location loc = op.getLoc();
  Emitter e{b, loc};
  Value x = op.getInput();
  auto xType = cast<RankedTensorType>(x.getType());
  int64_t tokens = xType.getDimSize(0), dim = xType.getDimSize(1);
  int64_t experts = op.getRouter().getType().getDimSize(0);
  int64_t topK = op.getTopK();
  int64_t rows = std::min(rowTile, tokens);
  LLVM_DEBUG(llvm::dbgs() << "MoE at " << loc << ": " << tokens << " tokens, "
                          << experts << " experts, top-" << topK
                          << ", grouped GEMMs of " << rows << " rows\n");
  auto [chosen, gates] = lowerRouting(b, loc, x, op.getRouter(), topK);
  Compacted routed = compactRouting(e, chosen, gates, tokens, experts, topK);
  // One tile loop per expert, unrolled: each expert has weights of its own
  // (compressed ones choose their kernels by type). An expert that
  // received no token runs no tile.
  Value out =
      e.filled({tokens, dim}, b.getFloatAttr(xType.getElementType(), 0.0));
  for (int64_t index = 0; index < experts; ++index)
    out = addExpert(e, op, index, routed, rows, out);
  return out;
}

namespace {
struct AFMLowerMoEPass : afm::impl::AFMLowerMoEPassBase<AFMLowerMoEPass> {
  using Base::Base;

  void runOnOperation() override {
    if (rowTile < 1) {
      getOperation().emitError("row-tile must be at least 1");
      return signalPassFailure();
    }
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<MoEOp, TopKRouterOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      auto inputType = cast<RankedTensorType>(op->getOperand(0).getType());
      if (!inputType.hasStaticShape()) {
        op->emitOpError("needs a static token count to lower, got ")
            << inputType;
        return signalPassFailure();
      }
      OpBuilder b(op);
      if (auto moe = dyn_cast<MoEOp>(op)) {
        moe.replaceAllUsesWith(lowerMoE(b, moe, rowTile));
      } else {
        auto router = cast<TopKRouterOp>(op);
        auto [experts, gates] =
            lowerRouting(b, router.getLoc(), router.getInput(),
                         router.getRouter(), router.getTopK());
        router.getExperts().replaceAllUsesWith(experts);
        router.getGates().replaceAllUsesWith(gates);
      }
      op->erase();
    }
  }
};
} // namespace
