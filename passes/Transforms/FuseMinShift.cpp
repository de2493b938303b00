//===- FuseMinShift.cpp - ASTC offsets into the accumulator init ----------===//
//
// x (D + broadcast(m))^T = x D^T + sum_b m_b S_b(x): the second term is a
// small product of block sums and offsets, so the reconstructed weight
// D + broadcast(m) never has to exist.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/Transforms/DecomposeSwiGLU.h"

#include "dialects/afm/IR/AFMOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/Debug.h"

namespace mlir::afm {
#define GEN_PASS_DEF_AFMFUSEMINSHIFTPASS
#include "passes/Passes.h.inc"
} // namespace mlir::afm

#define DEBUG_TYPE "afm-fuse-min-shift"

using namespace mlir;
using namespace mlir::afm;

/// The ASTC weight `weight` stands for, directly or through dequantize.
static TypedValue<ASTCWeightType> astcSource(Value weight) {
  if (auto astc = dyn_cast<TypedValue<ASTCWeightType>>(weight))
    return astc;
  if (auto dequantize = weight.getDefiningOp<DequantizeOp>())
    return dyn_cast<TypedValue<ASTCWeightType>>(dequantize.getWeight());
  return {};
}

/// Fuses `op`, an `afm.linear` or an `afm.lm_head` (the same product
/// without an accumulator: it becomes an `afm.linear` at the head's
/// location, whose name the profile reads).
static void fuse(Operation *op, Value input, Value weight, Value acc) {
  TypedValue<ASTCWeightType> w = astcSource(weight);
  if (!w) {
    LLVM_DEBUG(llvm::dbgs() << "not fused (weight is not ASTC): " << *op
                            << "\n");
    return;
  }
  OpBuilder b(op);
  Location loc = op->getLoc();
  ASTCWeightType type = w.getType();
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  int64_t r = type.getBlockRows(), c = type.getBlockCols();
  LLVM_DEBUG(llvm::dbgs() << "fusing the " << r << "x" << c
                          << " block offsets of " << *op << "\n");
  auto f32 = b.getF32Type();
  Value d = ASTCDecodeOp::create(
      b, loc, RankedTensorType::get({type.getRows(), type.getCols()}, f32), w);
  Value m = ASTCOffsetsOp::create(
      b, loc,
      RankedTensorType::get({(type.getRows() + r - 1) / r,
                             (type.getCols() + c - 1) / c},
                            f32),
      w);
  auto minShift = MinShiftOp::create(b, loc, resultType, input, m,
                                     b.getDenseI64ArrayAttr({r, c}));
  Value shift = minShift;
  if (acc)
    shift = arith::AddFOp::create(b, loc, acc, shift);
  auto fused = LinearOp::create(b, loc, resultType, input, d, shift);
  // A layer asking for int8 activations asks it of both parts.
  auto int8 = contracts(op).getInt8ActivationsAttrHelper();
  if (UnitAttr unit = int8.getAttr(op)) {
    int8.setAttr(fused, unit);
    int8.setAttr(minShift, unit);
  }
  op->replaceAllUsesWith(ValueRange{fused.getResult()});
  op->erase();
}

/// The materialized `D + m` of an ASTC weight.
static Value dequantized(OpBuilder &b, Location loc,
                         TypedValue<ASTCWeightType> w) {
  ASTCWeightType type = w.getType();
  return DequantizeOp::create(
      b, loc,
      RankedTensorType::get({type.getRows(), type.getCols()}, b.getF32Type()),
      w);
}

static void unfuse(Operation *op) {
  OpBuilder b(op);
  for (OpOperand &operand : op->getOpOperands())
    if (auto w = dyn_cast<TypedValue<ASTCWeightType>>(operand.get()))
      operand.set(dequantized(b, op->getLoc(), w));
}

namespace {
struct AFMFuseMinShiftPass
    : afm::impl::AFMFuseMinShiftPassBase<AFMFuseMinShiftPass> {
  using Base::Base;

  void runOnOperation() override {
    if (dequantize) {
      getOperation().walk([](Operation *op) {
        if (isa<LinearOp, SwiGLUOp, MoEOp, LMHeadOp>(op))
          unfuse(op);
      });
      return;
    }
    // A fused FFN has no accumulator: one over ASTC weights becomes its
    // three linear layers, fused below. Left whole, each decode step
    // materialized its weights, one element at a time (2.8 s a step for
    // 8 of the 3B preset's layers on a Zen 3 VM).
    SmallVector<SwiGLUOp> ffns;
    getOperation().walk([&](SwiGLUOp op) {
      if (llvm::any_of(op->getOperands().drop_front(),
                       [](Value w) { return bool(astcSource(w)); }))
        ffns.push_back(op);
    });
    for (SwiGLUOp op : ffns)
      decomposeSwiGLU(op);
    SmallVector<Operation *> products;
    getOperation().walk([&](Operation *op) {
      if (isa<LinearOp, LMHeadOp>(op))
        products.push_back(op);
    });
    for (Operation *op : products) {
      if (auto linear = dyn_cast<LinearOp>(op))
        fuse(op, linear.getInput(), linear.getWeight(), linear.getAcc());
      else if (auto head = dyn_cast<LMHeadOp>(op))
        fuse(op, head.getHidden(), head.getWeight(), Value());
    }
  }
};
} // namespace
