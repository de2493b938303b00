//===- PrefillBypass.cpp - compute trailing row-wise layers for one row ---===//
//
// slice(f(x)) == f(slice(x)) for every f that works row by row. Starting
// from the entry point's final "last real row" slice, the pass pushes the
// slice up through such ops until it meets one that mixes rows (an
// attention that appends to its cache) or whose result has other uses.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialects/afm/IR/AFMOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Debug.h"

namespace mlir::afm {
#define GEN_PASS_DEF_AFMPREFILLBYPASSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::afm

#define DEBUG_TYPE "afm-prefill-bypass"

using namespace mlir;
using namespace mlir::afm;

/// The row a slice takes, if it takes exactly one whole row of dim 0.
static std::optional<OpFoldResult> singleRow(tensor::ExtractSliceOp slice) {
  auto source = slice.getSourceType();
  auto result = slice.getResultType();
  if (result.getRank() != source.getRank() || result.getDimSize(0) != 1 ||
      !slice.hasUnitStride())
    return std::nullopt;
  for (int64_t d = 1; d < source.getRank(); ++d)
    if (!isZeroInteger(slice.getMixedOffsets()[d]) ||
        source.getDimSize(d) != result.getDimSize(d) ||
        ShapedType::isDynamic(source.getDimSize(d)))
      return std::nullopt;
  return slice.getMixedOffsets()[0];
}

/// `value`'s row `row`, as a [1, ...] tensor.
static Value takeRow(OpBuilder &b, Location loc, Value value,
                     OpFoldResult row) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
  offsets[0] = row;
  SmallVector<OpFoldResult> sizes;
  sizes.push_back(b.getIndexAttr(1));
  for (int64_t d = 1; d < type.getRank(); ++d)
    sizes.push_back(b.getIndexAttr(type.getDimSize(d)));
  SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
  SmallVector<int64_t> shape(type.getShape());
  shape[0] = 1;
  return tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), value,
      offsets, sizes, strides);
}

static RankedTensorType oneRow(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(tensor.getShape());
  shape[0] = 1;
  return RankedTensorType::get(shape, tensor.getElementType());
}

/// True if `row` is `count - 1`: the last real row of a chunk.
static bool isLastRealRow(OpFoldResult row, Value count, int64_t rows) {
  if (!count)
    return isConstantIntValue(row, rows - 1);
  auto sub = dyn_cast_or_null<arith::SubIOp>(
      dyn_cast<Value>(row) ? dyn_cast<Value>(row).getDefiningOp() : nullptr);
  return sub && sub.getLhs() == count && matchPattern(sub.getRhs(), m_One());
}

/// `op` rebuilt on row `row` of its row-indexed operands, or null if `op`
/// does not work row by row.
static Value rebuildOnRow(OpBuilder &b, Operation *op, OpFoldResult row) {
  Location loc = op->getLoc();
  auto take = [&](Value v) { return takeRow(b, loc, v, row); };
  if (op->getNumResults() != 1 ||
      !isa<RankedTensorType>(op->getResult(0).getType()))
    return {};
  Type rowType = oneRow(op->getResult(0).getType());
  return llvm::TypeSwitch<Operation *, Value>(op)
      .Case([&](RMSNormOp o) -> Value {
        if (o.getInput().getType().getRank() < 2)
          return {};
        return RMSNormOp::create(b, loc, rowType, take(o.getInput()),
                                 o.getWeight(), o.getEpsilonAttr(),
                                 o.getWeightOffsetAttr());
      })
      .Case([&](LinearOp o) -> Value {
        Value acc = o.getAcc() ? take(o.getAcc()) : Value();
        return LinearOp::create(b, loc, rowType, take(o.getInput()),
                                o.getWeight(), acc);
      })
      .Case([&](MinShiftOp o) -> Value {
        return MinShiftOp::create(b, loc, rowType, take(o.getInput()),
                                  o.getOffsets(), o.getBlockAttr());
      })
      .Case([&](SwiGLUOp o) -> Value {
        return SwiGLUOp::create(b, loc, rowType, take(o.getInput()),
                                o.getGate(), o.getUp(), o.getDown(),
                                o.getActivationAttr());
      })
      .Case([&](MoEOp o) -> Value {
        return MoEOp::create(b, loc, rowType, take(o.getInput()),
                             o.getRouter(), o.getGate(), o.getUp(),
                             o.getDown(), o.getTopKAttr());
      })
      .Case([&](LoRAOp o) -> Value {
        return LoRAOp::create(b, loc, rowType, take(o.getBase()),
                              take(o.getInput()), o.getA(), o.getB(),
                              o.getAlphaAttr());
      })
      .Case<arith::AddFOp, arith::SubFOp, arith::MulFOp>([&](auto o) -> Value {
        if (o.getLhs().getType() != o.getRhs().getType())
          return {};
        return decltype(o)::create(b, loc, take(o.getLhs()), take(o.getRhs()));
      })
      .Case([&](tensor::CollapseShapeOp o) -> Value {
        if (o.getReassociationIndices().front().size() != 1)
          return {};
        return tensor::CollapseShapeOp::create(b, loc, rowType,
                                               take(o.getSrc()),
                                               o.getReassociationIndices());
      })
      .Case([&](tensor::ExpandShapeOp o) -> Value {
        if (o.getReassociationIndices().front().size() != 1)
          return {};
        return tensor::ExpandShapeOp::create(b, loc, rowType,
                                             take(o.getSrc()),
                                             o.getReassociationIndices());
      })
      .Case([&](RoPEOp o) -> Value {
        // Row r sits at position + r.
        Value position = arith::AddIOp::create(b, loc, o.getPosition(),
                                               getValueOrCreateConstantIndexOp(b, loc, row));
        return RoPEOp::create(b, loc, rowType, take(o.getInput()), position,
                              o.getThetaAttr(), o.getInvFreqAttr());
      })
      .Case([&](SharedKVAttentionOp o) -> Value {
        // Only the last real row keeps an exact view of a ring buffer: its
        // query position + 1 is where the owner's appends ended.
        int64_t rows = o.getQuery().getType().getDimSize(0);
        if (!isLastRealRow(row, o.getCount(), rows))
          return {};
        Value position = arith::AddIOp::create(b, loc, o.getPosition(),
                                               getValueOrCreateConstantIndexOp(b, loc, row));
        Value one = arith::ConstantIndexOp::create(b, loc, 1);
        return SharedKVAttentionOp::create(
            b, loc, rowType, o.getKindAttr(), take(o.getQuery()), o.getCache(),
            o.getScales(), position, one, o.getWindowAttr(),
            o.getScaleAttr(), o.getInt8QueryAttr());
      })
      .Default([](Operation *) { return Value(); });
}

/// Makes `value` (an index computed from arguments and constants, like
/// `count - 1`) available before `op`, moving its computation up if needed.
static bool makeAvailableBefore(Value value, Operation *op) {
  if (auto arg = dyn_cast<BlockArgument>(value))
    return arg.getOwner() == op->getBlock() ||
           arg.getOwner()->getParentOp()->isProperAncestor(op);
  Operation *def = value.getDefiningOp();
  if (def->getBlock() == op->getBlock() && def->isBeforeInBlock(op))
    return true;
  if (def->getBlock() != op->getBlock() ||
      !isa<arith::ConstantOp, arith::AddIOp, arith::SubIOp, arith::MulIOp>(def))
    return false;
  for (Value operand : def->getOperands())
    if (!makeAvailableBefore(operand, op))
      return false;
  def->moveBefore(op);
  return true;
}

/// Moves the slices of one op's result above it; true if it changed the IR.
static bool hoistAbove(Operation *op) {
  if (op->getNumResults() != 1 || op->use_empty())
    return false;
  SmallVector<tensor::ExtractSliceOp> slices;
  std::optional<OpFoldResult> row;
  for (Operation *user : op->getResult(0).getUsers()) {
    auto slice = dyn_cast<tensor::ExtractSliceOp>(user);
    std::optional<OpFoldResult> taken = slice ? singleRow(slice) : std::nullopt;
    if (!taken || (row && *taken != *row))
      return false;
    row = taken;
    slices.push_back(slice);
  }
  // The row index must be available where the op is.
  if (auto v = dyn_cast<Value>(*row); v && !makeAvailableBefore(v, op))
    return false;
  OpBuilder b(op);
  Value rebuilt = rebuildOnRow(b, op, *row);
  if (!rebuilt) {
    LLVM_DEBUG(llvm::dbgs() << "bypass stops at " << op->getName()
                            << ": it does not work row by row here\n");
    return false;
  }
  LLVM_DEBUG(llvm::dbgs() << "computing one row (" << *row << ") of "
                          << op->getName() << "\n");
  for (tensor::ExtractSliceOp slice : slices) {
    slice.replaceAllUsesWith(rebuilt);
    slice.erase();
  }
  op->erase();
  return true;
}

namespace {
struct AFMPrefillBypassPass
    : afm::impl::AFMPrefillBypassPassBase<AFMPrefillBypassPass> {
  void runOnOperation() override {
    getOperation().walk([](func::FuncOp func) {
      if (getEntryKind(func) != EntryKind::Prefill || func.isExternal())
        return;
      // Walk backwards repeatedly: each hoist exposes the next producer.
      bool changed = true;
      while (changed) {
        changed = false;
        SmallVector<Operation *> ops;
        func.walk([&](Operation *op) { ops.push_back(op); });
        for (Operation *op : llvm::reverse(ops))
          if (hoistAbove(op)) {
            changed = true;
            break;
          }
      }
    });
  }
};
} // namespace
