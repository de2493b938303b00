//===- LowerDotBytes.cpp - afm_cpu.dot_bytes to the target's instructions -----===//
//
// A vector of afm_cpu.dot_bytes becomes the target's int8 dot-product
// instruction (Int8DotProducts.cpp: vpdpbusd, vpmaddubsw + vpmaddwd, sdot)
// on each register-wide piece; what no instruction covers (a scalar from an
// unvectorized tile, a target without one) becomes integer arithmetic
// with the same wrapping result.
//
// Before that, on targets whose unsigned operand takes any byte (vpdpbusd),
// a loop's dot-product chain over one code plane, `(w >> c) & m`, reads
// `w & (m << c)` instead and shifts its sum right by `c` after the loop
// (scaleMaskedPlaneChains): the same integers without a byte shift per
// vector, which x86 has no instruction for (LLVM emits gf2p8affineqb). The
// 2-bit GEMV on int8 activations keeps one chain per plane, so three of
// its twelve instructions per 64 code bytes go.
//
//===----------------------------------------------------------------------===//

#include "passes/CodeGen/Int8DotProducts.h"
#include "passes/Passes.h"

#include "dialects/afm/IR/AFMOps.h"
#include "dialects/afm_cpu/IR/AFMCPUDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
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
/// `bitcast((w >> shift) & mask)` over bytes: one code plane of `w`.
struct MaskedPlane {
  Value bytes; // w
  uint64_t shift, mask;
};
} // namespace

/// The splat integer of constant `value`, if it is one.
static std::optional<uint64_t> splatConstant(Value value) {
  APInt bits;
  if (!matchPattern(value, m_ConstantInt(&bits)))
    return std::nullopt;
  return bits.getZExtValue();
}

static std::optional<MaskedPlane> matchMaskedPlane(Value u) {
  auto cast = u.getDefiningOp<vector::BitCastOp>();
  if (!cast)
    return std::nullopt;
  auto sourceType = dyn_cast<VectorType>(cast.getSource().getType());
  if (!sourceType || !sourceType.getElementType().isInteger(8))
    return std::nullopt;
  auto mask = cast.getSource().getDefiningOp<arith::AndIOp>();
  if (!mask)
    return std::nullopt;
  for (unsigned side : {0u, 1u}) {
    auto shifted = mask->getOperand(side).getDefiningOp<arith::ShRUIOp>();
    std::optional<uint64_t> bits = splatConstant(mask->getOperand(1 - side));
    if (!shifted || !bits)
      continue;
    std::optional<uint64_t> shift = splatConstant(shifted.getRhs());
    if (!shift || *shift == 0 || *shift >= 8)
      continue;
    return MaskedPlane{shifted.getLhs(), *shift, *bits & 0xff};
  }
  return std::nullopt;
}

/// The dot products of iter_arg `carried` in one iteration, first to last:
/// `yielded = dot(... dot(carried, u1, s1) ..., un, sn)`, each used once.
static SmallVector<afm_cpu::DotBytesOp> dotChain(BlockArgument carried,
                                                 Value yielded) {
  SmallVector<afm_cpu::DotBytesOp> chain;
  Value at = yielded;
  while (at != carried) {
    auto dot = at.getDefiningOp<afm_cpu::DotBytesOp>();
    if (!dot || !at.hasOneUse())
      return {};
    chain.push_back(dot);
    at = dot.getAcc();
  }
  if (!carried.hasOneUse())
    return {};
  std::reverse(chain.begin(), chain.end());
  return chain;
}

/// For each iter_arg of `loop` that starts at zero and only accumulates
/// dot products of one shifted, masked code plane `(w >> c) & m` (the same
/// c and m throughout): masks in place, `w & (m << c)`, and shifts the
/// loop's result right by c. Every product is then exactly 2^c times the
/// old one, so the shifted sum is the old sum, as long as it cannot wrap:
/// the loop's trip count bounds it.
static void scaleMaskedPlaneChains(scf::ForOp loop,
                                   const TargetDescription &target) {
  std::optional<APInt> trips = loop.getStaticTripCount();
  if (!trips || trips->getActiveBits() > 32)
    return;
  for (unsigned i = 0; i < loop.getNumRegionIterArgs(); ++i) {
    BlockArgument carried = loop.getRegionIterArgs()[i];
    auto type = dyn_cast<VectorType>(carried.getType());
    if (!type || type.getRank() != 1 || type.isScalable() ||
        !type.getElementType().isInteger(32) ||
        !hasTargetInt8Dot(target, type.getNumElements(),
                          /*unsignedBelow128=*/false))
      continue;
    std::optional<uint64_t> init = splatConstant(loop.getInitArgs()[i]);
    if (!init || *init != 0)
      continue;
    SmallVector<afm_cpu::DotBytesOp> chain =
        dotChain(carried, loop.getYieldedValues()[i]);
    if (chain.empty())
      continue;
    SmallVector<MaskedPlane> planes;
    for (afm_cpu::DotBytesOp dot : chain)
      if (std::optional<MaskedPlane> plane = matchMaskedPlane(dot.getLhs()))
        planes.push_back(*plane);
    if (planes.size() != chain.size() ||
        llvm::any_of(planes, [&](const MaskedPlane &p) {
          return p.shift != planes.front().shift ||
                 p.mask != planes.front().mask;
        }))
      continue;
    uint64_t shift = planes.front().shift,
             scaledMask = planes.front().mask << shift;
    // The scaled bytes must stay bytes, and the sum of every lane's
    // products (four per instruction, at most scaledMask * 128 each) an
    // i32.
    uint64_t bound =
        trips->getZExtValue() * chain.size() * 4 * scaledMask * 128;
    if (scaledMask > 0xff || bound >= (uint64_t(1) << 31))
      continue;
    LLVM_DEBUG(llvm::dbgs() << "plane chain of " << chain.size()
                            << " dot products masked in place, sum >> "
                            << shift << "\n");
    for (auto [dot, plane] : llvm::zip(chain, planes)) {
      OpBuilder b(dot);
      Location loc = dot.getLoc();
      auto bytesType = cast<VectorType>(plane.bytes.getType());
      Value mask = arith::ConstantOp::create(
          b, loc,
          DenseElementsAttr::get(
              bytesType, b.getIntegerAttr(b.getI8Type(),
                                          static_cast<int8_t>(scaledMask))));
      Value masked = arith::AndIOp::create(b, loc, plane.bytes, mask);
      dot.getLhsMutable().assign(
          vector::BitCastOp::create(b, loc, dot.getLhs().getType(), masked));
    }
    OpBuilder b(loop->getContext());
    b.setInsertionPointAfter(loop);
    Value result = loop.getResult(i);
    Value shifted = arith::ShRSIOp::create(
        b, loop.getLoc(), result, splatI32(b, loop.getLoc(), type, shift));
    result.replaceAllUsesExcept(shifted, shifted.getDefiningOp());
  }
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
    getOperation()->walk(
        [&](scf::ForOp loop) { scaleMaskedPlaneChains(loop, *target); });
    RewritePatternSet patterns(&getContext());
    patterns.add<LowerDotBytes>(&getContext(), *target);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
