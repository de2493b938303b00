//===- LowerDotBytes.cpp - afm_cpu.dot_bytes to the target's instructions -----===//
//
// A vector of afm_cpu.dot_bytes becomes the target's int8 dot-product
// instruction (Int8DotProducts.cpp: vpdpbusd, vpmaddubsw + vpmaddwd, sdot)
// on each register-wide piece; what no instruction covers (a scalar from an
// unvectorized tile, a target without one) becomes integer arithmetic
// with the same wrapping result.
//
//===----------------------------------------------------------------------===//

#include "passes/CodeGen/Int8DotProducts.h"
#include "passes/Passes.h"

#include "dialects/afm/IR/AFMOps.h"
#include "dialects/afm_cpu/IR/AFMCPUDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/Debug.h"

namespace mlir::afm {
#define GEN_PASS_DEF_AFMLOWERDOTBYTESPASS
#include "passes/Passes.h.inc"
} // namespace mlir::afm

#define DEBUG_TYPE "afm-lower-dot-bytes"

using namespace mlir;
using namespace mlir::afm;

/// A constant of `type` (i32 or a vector of it) with every lane `value`.
static Value splatI32(OpBuilder &b, Location loc, Type type, int64_t value) {
  if (auto vector = dyn_cast<VectorType>(type))
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(vector, b.getI32IntegerAttr(value)));
  return arith::ConstantIntOp::create(b, loc, type, value);
}

/// The definition, in integer arithmetic (for any shape).
static Value expandDot(OpBuilder &b, Location loc, Value acc, Value u,
                       Value s) {
  Type type = acc.getType();
  Value sum = acc;
  for (int64_t m = 0; m < 4; ++m) {
    Value byte = arith::AndIOp::create(
        b, loc,
        arith::ShRUIOp::create(b, loc, u, splatI32(b, loc, type, 8 * m)),
        splatI32(b, loc, type, 0xff));
    Value signedByte = arith::ShRSIOp::create(
        b, loc,
        arith::ShLIOp::create(b, loc, s, splatI32(b, loc, type, 24 - 8 * m)),
        splatI32(b, loc, type, 24));
    sum = arith::AddIOp::create(
        b, loc, sum, arith::MulIOp::create(b, loc, byte, signedByte));
  }
  return sum;
}

/// `acc + dot(u, s)` with the target's instruction where one covers 1-D
/// pieces of the vectors, else expanded.
static Value lowerDot(OpBuilder &b, Location loc,
                      const TargetDescription &target, Value acc, Value u,
                      Value s, bool below128) {
  auto type = dyn_cast<VectorType>(acc.getType());
  if (!type || type.isScalable() || type.getRank() == 0)
    return expandDot(b, loc, acc, u, s);
  if (type.getRank() > 1) {
    // Row by row along the leading dimension.
    Value result = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(type, b.getI32IntegerAttr(0)));
    for (int64_t i = 0; i < type.getDimSize(0); ++i) {
      auto row = [&](Value v) {
        return vector::ExtractOp::create(b, loc, v, i).getResult();
      };
      Value dot = lowerDot(b, loc, target, row(acc), row(u), row(s), below128);
      result = vector::InsertOp::create(b, loc, dot, result, i);
    }
    return result;
  }
  int64_t lanes = type.getNumElements();
  if (Value dot = buildTargetInt8Dot(b, loc, target, acc, u, s, below128))
    return dot;
  // Register-wide pieces, when the instruction takes fewer lanes.
  for (int64_t piece : {16, 8, 4, 2}) {
    if (piece >= lanes || lanes % piece != 0)
      continue;
    if (!hasTargetInt8Dot(target, piece, below128))
      continue;
    LLVM_DEBUG(llvm::dbgs() << "dot over " << type << " in pieces of "
                            << piece << " lanes\n");
    Value result = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(type, b.getI32IntegerAttr(0)));
    for (int64_t offset = 0; offset < lanes; offset += piece) {
      auto slice = [&](Value v) {
        return vector::ExtractStridedSliceOp::create(b, loc, v, {offset},
                                                     {piece}, {1})
            .getResult();
      };
      Value dot = buildTargetInt8Dot(b, loc, target, slice(acc), slice(u),
                                     slice(s), below128);
      result = vector::InsertStridedSliceOp::create(b, loc, dot, result,
                                                    {offset}, {1});
    }
    return result;
  }
  LLVM_DEBUG(llvm::dbgs() << "no int8 dot instruction covers " << type
                          << (below128 ? " (bytes below 128)" : "")
                          << ": expanded to integer arithmetic\n");
  return expandDot(b, loc, acc, u, s);
}

namespace {
struct LowerDotBytes : OpRewritePattern<afm_cpu::DotBytesOp> {
  LowerDotBytes(MLIRContext *ctx, const TargetDescription &target)
      : OpRewritePattern(ctx), target(target) {}

  LogicalResult matchAndRewrite(afm_cpu::DotBytesOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, lowerDot(rewriter, op.getLoc(), target,
                                    op.getAcc(), op.getLhs(), op.getRhs(),
                                    bytesMaskedBelow128(op.getLhs())));
    return success();
  }

  const TargetDescription &target;
};

struct AFMLowerDotBytesPass
    : afm::impl::AFMLowerDotBytesPassBase<AFMLowerDotBytesPass> {
  using Base::Base;

  void runOnOperation() override {
    FailureOr<TargetDescription> target = getTargetDescription(getOperation());
    if (failed(target))
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    patterns.add<LowerDotBytes>(&getContext(), *target);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
