//===- Accumulators.cpp - keep vector accumulators in registers -----------===//

#include "passes/CodeGen/Accumulators.h"

#include "dialects/afm_cpu/IR/AFMCPUDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::afm;

/// The carried accumulators of a lifted loop added together, in order, once
/// after the loop (integer or float lanes alike).
static Value sumAccumulators(OpBuilder &b, Location loc, ValueRange sums) {
  Value total = sums.front();
  for (Value sum : llvm::drop_begin(sums))
    total = vector::makeArithReduction(b, loc, vector::CombiningKind::ADD,
                                       total, sum);
  return total;
}

scf::ForOp afm::hoistAccumulators(RewriterBase &rewriter, scf::ForOp loop) {
  Block *body = loop.getBody();
  for (auto write : llvm::make_early_inc_range(
           body->getOps<vector::TransferWriteOp>())) {
    vector::TransferReadOp read;
    for (auto candidate : body->getOps<vector::TransferReadOp>())
      if (candidate.getBase() == write.getBase() &&
          llvm::equal(candidate.getIndices(), write.getIndices(),
                      [](Value a, Value b) {
                        return isEqualConstantIntOrValue(a, b);
                      }) &&
          candidate.getVectorType() == write.getVectorType() &&
          candidate.getPermutationMap() == write.getPermutationMap())
        read = candidate;
    if (!read || !loop.isDefinedOutsideOfLoop(write.getBase()) ||
        !llvm::all_of(write.getIndices(), [&](Value index) {
          return loop.isDefinedOutsideOfLoop(index);
        }))
      continue;
    bool otherAccess = llvm::any_of(write.getBase().getUsers(), [&](
                                        Operation *user) {
      return user != read && user != write && loop->isAncestor(user);
    });
    if (otherAccess || !read->isBeforeInBlock(write))
      continue;
    rewriter.moveOpBefore(read, loop);
    FailureOr<LoopLikeOpInterface> grown =
        cast<LoopLikeOpInterface>(loop.getOperation())
            .replaceWithAdditionalYields(
                rewriter, read.getResult(), /*replaceInitOperandUsesInLoop=*/
                true, [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
                  return SmallVector<Value>{write.getVector()};
                });
    if (failed(grown))
      return loop;
    loop = cast<scf::ForOp>(grown->getOperation());
    rewriter.setInsertionPointAfter(loop);
    rewriter.moveOpAfter(write, loop);
    write.getValueToStoreMutable().assign(loop.getResults().back());
    return loop;
  }
  return loop;
}

/// The summands X of `value` = `start` + broadcast(reduce_add(X1)) + ...,
/// in any association order, or nothing when it is not of that form.
static bool collectReducedSummands(Value value, Value start,
                                   SmallVectorImpl<Value> &summands) {
  if (value == start)
    return true;
  auto add = value.getDefiningOp<arith::AddIOp>();
  if (!add)
    return false;
  for (auto [chain, other] : {std::pair(add.getLhs(), add.getRhs()),
                              std::pair(add.getRhs(), add.getLhs())}) {
    auto broadcast = other.getDefiningOp<vector::BroadcastOp>();
    auto reduce = broadcast ? broadcast.getSource()
                                  .getDefiningOp<vector::ReductionOp>()
                            : nullptr;
    if (!reduce || reduce.getKind() != vector::CombiningKind::ADD ||
        reduce.getAcc())
      continue;
    size_t size = summands.size();
    if (collectReducedSummands(chain, start, summands)) {
      summands.push_back(reduce.getVector());
      return true;
    }
    summands.resize(size);
  }
  return false;
}

/// Independent vector accumulators a lifted reduction spreads its
/// summands over.
static constexpr size_t kAccumulators = 4;

/// `sum + summand`; a summand that is an int8 dot product from zero
/// accumulates into `sum` itself (one vpdpbusd or sdot, no add).
static Value accumulate(OpBuilder &b, Location loc, Value sum, Value summand) {
  if (auto dot = summand.getDefiningOp<afm_cpu::DotBytesOp>())
    if (matchPattern(dot.getAcc(), m_Zero()))
      return afm_cpu::DotBytesOp::create(b, loc, sum.getType(), sum,
                                         dot.getLhs(), dot.getRhs());
  return arith::AddIOp::create(b, loc, sum, summand);
}

/// `loop` with `inits.size()` more iter_args, updated by `update` from
/// them, and its iter_arg `i` only passed through (canonicalization drops
/// it): the caller computes that result from the new ones after the loop.
static FailureOr<scf::ForOp> carryInstead(
    RewriterBase &rewriter, scf::ForOp loop, unsigned i, ValueRange inits,
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)>
        update) {
  FailureOr<LoopLikeOpInterface> grown =
      cast<LoopLikeOpInterface>(loop.getOperation())
          .replaceWithAdditionalYields(
              rewriter, inits, /*replaceInitOperandUsesInLoop=*/false,
              [&](OpBuilder &b, Location l, ArrayRef<BlockArgument> args) {
                return update(b, l, ValueRange(args));
              });
  if (failed(grown))
    return failure();
  auto lifted = cast<scf::ForOp>(grown->getOperation());
  Operation *yield = lifted.getBody()->getTerminator();
  rewriter.modifyOpInPlace(yield, [&] {
    yield->setOperand(i, lifted.getRegionIterArgs()[i]);
  });
  return lifted;
}

scf::ForOp afm::liftReductionsOutOfLoop(RewriterBase &rewriter,
                                        scf::ForOp loop) {
  for (unsigned i = 0; i < loop.getNumRegionIterArgs(); ++i) {
    BlockArgument carried = loop.getRegionIterArgs()[i];
    auto type = dyn_cast<VectorType>(carried.getType());
    if (!type || type.getNumElements() != 1 ||
        !isa<IntegerType>(type.getElementType()))
      continue;
    Value yielded = loop.getYieldedValues()[i];
    SmallVector<Value> summands;
    if (!collectReducedSummands(yielded, carried, summands) ||
        summands.empty())
      continue;
    auto lanes = cast<VectorType>(summands.front().getType());
    if (llvm::any_of(summands,
                     [&](Value v) { return v.getType() != lanes; }))
      continue;
    Location loc = loop.getLoc();
    rewriter.setInsertionPoint(loop);
    Value zeros = arith::ConstantOp::create(
        rewriter, loc, DenseElementsAttr::get(lanes, rewriter.getZeroAttr(
                                                         lanes.getElementType())));
    Value init = loop.getInitArgs()[i];
    // Summand k goes to accumulator k mod kAccumulators: independent
    // chains, so the dot products of one iteration do not wait for each
    // other through one register.
    size_t accumulators = std::min(summands.size(), kAccumulators);
    FailureOr<scf::ForOp> grown = carryInstead(
        rewriter, loop, i, SmallVector<Value>(accumulators, zeros),
        [&](OpBuilder &b, Location l, ValueRange args) {
          SmallVector<Value> sums(args.begin(), args.end());
          for (auto [k, summand] : llvm::enumerate(summands))
            sums[k % accumulators] =
                accumulate(b, l, sums[k % accumulators], summand);
          return sums;
        });
    if (failed(grown))
      return loop;
    // The old accumulator's result is the init plus one reduction of the
    // lanes.
    scf::ForOp lifted = *grown;
    // The per-iteration horizontal sums are dead now.
    SmallVector<Operation *> body;
    for (Operation &op : lifted.getBody()->without_terminator())
      body.push_back(&op);
    for (Operation *op : llvm::reverse(body))
      if (isOpTriviallyDead(op))
        rewriter.eraseOp(op);
    rewriter.setInsertionPointAfter(lifted);
    Value lanesSum = sumAccumulators(
        rewriter, loc, lifted.getResults().take_back(accumulators));
    Value reduced = vector::ReductionOp::create(
        rewriter, loc, vector::CombiningKind::ADD, lanesSum);
    Value total = arith::AddIOp::create(
        rewriter, loc, init,
        vector::BroadcastOp::create(rewriter, loc, type, reduced));
    rewriter.replaceAllUsesWith(lifted.getResult(i), total);
    return lifted;
  }
  return loop;
}

/// The fmas of `lanes` = fma(a_n, b_n, ... fma(a_1, b_1, 0)), innermost
/// first, when there are at least two, each is marked `reassoc` and each
/// but the last is used only by the next: a sum of products in no
/// particular order. Empty otherwise.
static SmallVector<math::FmaOp> reassociableProducts(Value lanes) {
  SmallVector<math::FmaOp> chain;
  Value addend = lanes;
  while (auto fma = addend.getDefiningOp<math::FmaOp>()) {
    if (!arith::bitEnumContainsAll(fma.getFastmath(),
                                   arith::FastMathFlags::reassoc) ||
        (!chain.empty() && !fma->hasOneUse()))
      return {};
    chain.push_back(fma);
    addend = fma.getC();
  }
  if (chain.size() < 2 || !matchPattern(addend, m_AnyZeroFloat()))
    return {};
  std::reverse(chain.begin(), chain.end());
  return chain;
}

/// Lane accumulators a reassociable chain of products is dealt over.
static constexpr size_t kProductAccumulators = 2;

scf::ForOp afm::liftLaneSumsOutOfLoop(RewriterBase &rewriter,
                                      scf::ForOp loop) {
  for (unsigned i = 0; i < loop.getNumRegionIterArgs(); ++i) {
    BlockArgument carried = loop.getRegionIterArgs()[i];
    auto reduction = loop.getYieldedValues()[i]
                         .getDefiningOp<vector::MultiDimReductionOp>();
    if (!reduction || reduction.getAcc() != carried ||
        reduction.getKind() != vector::CombiningKind::ADD ||
        !isa<FloatType>(reduction.getSourceVectorType().getElementType()) ||
        !carried.hasOneUse())
      continue;
    // X cannot depend on the carried value: its one use is the reduction.
    Value lanes = reduction.getSource();
    VectorType lanesType = reduction.getSourceVectorType();
    // A product the kernel marked contractable (fastmath<contract>) stays
    // so with the add that accumulates it, and LLVM fuses the two into an
    // fma: the reduction's own combiner carries no flags.
    arith::FastMathFlags flags = arith::FastMathFlags::none;
    if (auto product = lanes.getDefiningOp<arith::MulFOp>())
      flags = product.getFastmath() & arith::FastMathFlags::contract;
    // A reduction over unit dimensions only is already one add a step
    // (the lanes are blocks, as the ASTC kernels' are, each with its
    // scale): nothing to carry, but the add keeps the product's flag.
    if (llvm::none_of(llvm::seq<int64_t>(0, lanesType.getRank()),
                      [&](int64_t d) {
                        return reduction.isReducedDim(d) &&
                               lanesType.getDimSize(d) > 1;
                      })) {
      if (flags != arith::FastMathFlags::none) {
        rewriter.setInsertionPoint(reduction);
        Value flat = vector::ShapeCastOp::create(
            rewriter, reduction.getLoc(), reduction.getDestType(), lanes);
        rewriter.replaceOpWithNewOp<arith::AddFOp>(reduction, carried, flat,
                                                   flags);
      }
      continue;
    }
    Location loc = loop.getLoc();
    rewriter.setInsertionPoint(loop);
    Value zeros = arith::ConstantOp::create(
        rewriter, loc, rewriter.getZeroAttr(lanesType));
    Value init = loop.getInitArgs()[i];
    // A step that is a sum of products the kernel let reassociate
    // (fma(a_n, b_n, ... fma(a_1, b_1, 0)), each fma `reassoc`: the 2-bit
    // kernel's planes) accumulates them straight into the carried lanes,
    // dealt over two accumulators: no add a step, and each accumulator's
    // chain is half the products (as one chain from an offset and an add
    // into the lanes, the 2-bit GEMV with f32 activations was 1.15-1.4x
    // slower on 1 thread of a Zen 3 VM; docs/bench/
    // q2-f32-two-accumulators-zen3-2026-12-07.txt).
    SmallVector<math::FmaOp> products = reassociableProducts(lanes);
    size_t accumulators = products.empty() ? 1 : kProductAccumulators;
    FailureOr<scf::ForOp> grown = carryInstead(
        rewriter, loop, i, SmallVector<Value>(accumulators, zeros),
        [&](OpBuilder &b, Location l, ValueRange args) {
          if (products.empty())
            return SmallVector<Value>{
                arith::AddFOp::create(b, l, args.front(), lanes, flags)};
          SmallVector<Value> sums(args.begin(), args.end());
          for (auto [k, fma] : llvm::enumerate(products))
            sums[k % accumulators] = math::FmaOp::create(
                b, l, fma.getA(), fma.getB(), sums[k % accumulators],
                fma.getFastmathAttr());
          return sums;
        });
    if (failed(grown))
      return loop;
    scf::ForOp lifted = *grown;
    rewriter.setInsertionPointAfter(lifted);
    Value lanesSum = sumAccumulators(
        rewriter, loc, lifted.getResults().take_back(accumulators));
    Value total = vector::MultiDimReductionOp::create(
        rewriter, loc, lanesSum, init, reduction.getReductionMask(),
        vector::CombiningKind::ADD);
    rewriter.replaceAllUsesWith(lifted.getResult(i), total);
    if (isOpTriviallyDead(reduction))
      rewriter.eraseOp(reduction);
    // The chain the accumulators replaced, outermost first.
    for (math::FmaOp fma : llvm::reverse(products))
      if (isOpTriviallyDead(fma))
        rewriter.eraseOp(fma);
    return lifted;
  }
  return loop;
}
