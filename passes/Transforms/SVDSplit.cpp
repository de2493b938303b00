//===- SVDSplit.cpp - LoRA adapters from a weight's top singular vectors --===//
//
// Compression error concentrates where the weight's energy is; moving the
// top-r singular directions into a float adapter before compressing keeps
// them exact. The pass only changes the IR (adapter weights, afm.lora, and
// annotations); the packager computes the split from the float weights.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/Transforms/DecomposeSwiGLU.h"

#include "dialects/afm/IR/AFMOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/Debug.h"

namespace mlir::afm {
#define GEN_PASS_DEF_AFMSVDSPLITPASS
#include "passes/Passes.h.inc"
} // namespace mlir::afm

#define DEBUG_TYPE "afm-svd-split"

using namespace mlir;
using namespace mlir::afm;

namespace {
struct AFMSVDSplitPass : afm::impl::AFMSVDSplitPassBase<AFMSVDSplitPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    int64_t r = rank;
    double a = alpha;
    if (r < 0) {
      ModelAttr model = contracts(module).getModelAttrHelper().getAttr(module);
      r = model ? model.getLoraRank() : 0;
      if (a == 0.0 && model && model.getLoraAlpha())
        a = model.getLoraAlpha().getValueAsDouble();
    }
    if (r == 0)
      return;
    if (a == 0.0)
      a = double(r);
    LLVM_DEBUG(llvm::dbgs() << "adapter rank " << r << ", alpha " << a << "\n");
    // A fused FFN has no adapter slot: one over compressed weights becomes
    // its three linear layers first.
    SmallVector<SwiGLUOp> ffns;
    module.walk([&](SwiGLUOp op) {
      if (llvm::any_of(op->getOperands().drop_front(),
                       [](Value w) { return isCompressedWeight(w.getType()); }))
        ffns.push_back(op);
    });
    for (SwiGLUOp op : ffns)
      decomposeSwiGLU(op);
    SmallVector<LinearOp> linears;
    module.walk([&](LinearOp op) { linears.push_back(op); });
    for (LinearOp op : linears)
      if (failed(addAdapter(op, r, a)))
        return signalPassFailure();
  }

  LogicalResult addAdapter(LinearOp op, int64_t r, double a) {
    auto weight = op.getWeight().getDefiningOp<WeightOp>();
    if (!weight || weight.getValueAttr() ||
        !isCompressedWeight(weight.getType()))
      return success();
    // Already split (a run-time adapter's afm.lora reads afm.adapter_weight
    // factors and does not count).
    if (llvm::any_of(op->getUsers(), [](Operation *u) {
          auto lora = dyn_cast<LoRAOp>(u);
          return lora && lora.getA().getDefiningOp<WeightOp>();
        }))
      return success();
    auto [n, k] = *getWeightMatrixShape(weight.getType());
    if (r > std::min(n, k))
      return op.emitOpError("adapter rank ")
             << r << " is larger than the " << n << "x" << k << " weight allows";
    OpBuilder b(op->getContext());
    b.setInsertionPointAfter(op);
    Location loc = op.getLoc();
    StringRef name = weight.getName();
    LLVM_DEBUG(llvm::dbgs() << "splitting " << name << " (" << n << "x" << k
                            << ") into a residual and a rank-" << r
                            << " adapter\n");
    auto f32 = b.getF32Type();
    auto factor = [&](StringRef which, ArrayRef<int64_t> shape) {
      auto w = WeightOp::create(b, loc, RankedTensorType::get(shape, f32),
                                b.getStringAttr(name + ".svd_" + which),
                                Attribute());
      contracts(w).getSvdFactorAttrHelper().setAttr(
          w, SVDFactorAttr::get(b.getContext(), name, which, r,
                                b.getF32FloatAttr(float(a)), n, k));
      return w.getResult();
    };
    Value adapterA = factor("a", {r, k});
    Value adapterB = factor("b", {n, r});
    auto lora = LoRAOp::create(b, loc, op.getType(), op.getResult(),
                               op.getInput(), adapterA, adapterB,
                               b.getF32FloatAttr(float(a)));
    op.getResult().replaceAllUsesExcept(lora.getResult(), lora);
    contracts(weight).getSvdResidualAttrHelper().setAttr(
        weight, SVDResidualAttr::get(b.getContext(), r));
    return success();
  }
};
} // namespace
