//===- AFMToLinalg.cpp - afm layers on plain weights -> linalg ------------===//
//
// Each pattern states the DESIGN.md section 1 formula of its op in linalg on
// tensors. Norm reductions and the SwiGLU gate are computed in f32 whatever
// the activation type, as the semantics require.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialects/afm/IR/AFMOps.h"
#include "passes/conversion/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

#include <cmath>

namespace mlir::afm {
#define GEN_PASS_DEF_AFMLOWERTOLINALGPASS
#include "passes/Passes.h.inc"
} // namespace mlir::afm

using namespace mlir;
using namespace mlir::afm;

static bool isPlainWeight(Value weight) {
  return isa<RankedTensorType>(weight.getType());
}

static Value f32Const(OpBuilder &b, Location loc, double value) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
}

namespace {

//===----------------------------------------------------------------------===//
// Embedding: result[t, j] = table[tokens[t], j]
//===----------------------------------------------------------------------===//

struct LowerEmbedding : OpConversionPattern<EmbeddingOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(EmbeddingOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isPlainWeight(op.getTable()))
      return rewriter.notifyMatchFailure(op, "compressed table");
    Location loc = op.getLoc();
    Value tokens = adaptor.getTokens();
    Value table = adaptor.getTable();
    RankedTensorType resultType = op.getType();
    OpFoldResult count = getSizes(rewriter, loc, tokens)[0];
    Value init = tensor::EmptyOp::create(
        rewriter, loc,
        SmallVector<OpFoldResult>{count,
                                  rewriter.getIndexAttr(resultType.getDimSize(1))},
        resultType.getElementType());
    MLIRContext *ctx = rewriter.getContext();
    AffineExpr t, j;
    bindDims(ctx, t, j);
    SmallVector<AffineMap> maps = {AffineMap::get(2, 0, {t}, ctx),
                                   AffineMap::get(2, 0, {t, j}, ctx)};
    auto gather = linalg::GenericOp::create(
        rewriter, loc, TypeRange{init.getType()}, ValueRange{tokens},
        ValueRange{init}, maps,
        {utils::IteratorType::parallel, utils::IteratorType::parallel},
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value row = arith::IndexCastOp::create(b, l, b.getIndexType(),
                                                 args[0]);
          Value col = linalg::IndexOp::create(b, l, 1);
          Value value = tensor::ExtractOp::create(b, l, table,
                                                  ValueRange{row, col});
          linalg::YieldOp::create(
              b, l, castFloat(b, l, value, resultType.getElementType()));
        });
    Value result = gather.getResult(0);
    if (result.getType() != resultType)
      result = tensor::CastOp::create(rewriter, loc, resultType, result);
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// RMSNorm: y = x / sqrt(mean(x^2) + eps) * g, reduced in f32
//===----------------------------------------------------------------------===//

struct LowerRMSNorm : OpConversionPattern<RMSNormOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(RMSNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    Value g = adaptor.getWeight();
    auto type = cast<RankedTensorType>(x.getType());
    int64_t rank = type.getRank();
    int64_t width = type.getShape().back();
    if (ShapedType::isDynamic(width))
      return rewriter.notifyMatchFailure(op, "dynamic normalized dimension");
    Type f32 = rewriter.getF32Type();
    Type elementType = type.getElementType();
    MLIRContext *ctx = rewriter.getContext();

    // sumsq[...] = sum_j x[..., j]^2
    SmallVector<OpFoldResult> sizes = getSizes(rewriter, loc, x);
    sizes.pop_back();
    Value zeros = createFilled(rewriter, loc, sizes, f32, 0.0);
    AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
    AffineMap dropLast = identity.dropResult(rank - 1);
    AffineMap lastOnly =
        AffineMap::get(rank, 0, rewriter.getAffineDimExpr(rank - 1), ctx);
    SmallVector<utils::IteratorType> reduceIterators(
        rank, utils::IteratorType::parallel);
    reduceIterators.back() = utils::IteratorType::reduction;
    auto sumsq = linalg::GenericOp::create(
        rewriter, loc, TypeRange{zeros.getType()}, ValueRange{x},
        ValueRange{zeros}, SmallVector<AffineMap>{identity, dropLast},
        reduceIterators, [&](OpBuilder &b, Location l, ValueRange args) {
          Value v = castFloat(b, l, args[0], f32);
          Value square = arith::MulFOp::create(b, l, v, v);
          Value sum = arith::AddFOp::create(b, l, args[1], square);
          linalg::YieldOp::create(b, l, sum);
        });

    // y = x * rsqrt(sumsq / width + eps) * g
    Value init = tensor::EmptyOp::create(rewriter, loc,
                                         getSizes(rewriter, loc, x),
                                         elementType);
    double eps = op.getEpsilon().convertToDouble();
    auto normalize = linalg::GenericOp::create(
        rewriter, loc, TypeRange{init.getType()},
        ValueRange{x, sumsq.getResult(0), g}, ValueRange{init},
        SmallVector<AffineMap>{identity, dropLast, lastOnly, identity},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value mean = arith::DivFOp::create(b, l, args[1],
                                             f32Const(b, l, double(width)));
          Value inv = math::RsqrtOp::create(
              b, l, arith::AddFOp::create(b, l, mean, f32Const(b, l, eps)));
          Value scaled = arith::MulFOp::create(
              b, l, castFloat(b, l, args[0], f32), inv);
          Value out = arith::MulFOp::create(b, l, scaled,
                                            castFloat(b, l, args[2], f32));
          linalg::YieldOp::create(b, l, castFloat(b, l, out, elementType));
        });
    rewriter.replaceOp(op, normalize.getResult(0));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// RoPE (rotate half): for i < hd/2 with partner i + hd/2,
//   out[i]        = x[i] cos(a) - x[i + hd/2] sin(a)
//   out[i + hd/2] = x[i + hd/2] cos(a) + x[i] sin(a)
// with a = (position + t) * theta^(-2i/hd).
//===----------------------------------------------------------------------===//

struct LowerRoPE : OpConversionPattern<RoPEOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(RoPEOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    auto type = cast<RankedTensorType>(x.getType());
    int64_t headDim = type.getDimSize(2);
    int64_t half = headDim / 2;
    Type f32 = rewriter.getF32Type();
    Type elementType = type.getElementType();
    Value position = adaptor.getPosition();
    float theta = op.getTheta().convertToFloat();

    // inv_freq[i] = theta^(-2 (i mod hd/2) / hd), computed in double at
    // compile time, one entry per element of a head.
    SmallVector<float> invFreq(headDim);
    for (int64_t i = 0; i < headDim; ++i)
      invFreq[i] = float(std::pow(double(theta), -2.0 * double(i % half) /
                                                     double(headDim)));
    auto tableType = RankedTensorType::get({headDim}, f32);
    Value table = arith::ConstantOp::create(
        rewriter, loc, DenseElementsAttr::get(tableType, ArrayRef(invFreq)));
    Value init = tensor::EmptyOp::create(rewriter, loc,
                                         getSizes(rewriter, loc, x),
                                         elementType);
    MLIRContext *ctx = rewriter.getContext();
    AffineMap identity = rewriter.getMultiDimIdentityMap(3);
    AffineMap lastDim = AffineMap::get(3, 0, rewriter.getAffineDimExpr(2), ctx);
    Value rotated = buildGeneric(
        rewriter, loc, ValueRange{x, table}, init,
        {identity, lastDim, identity},
        SmallVector<utils::IteratorType>(3, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value t = linalg::IndexOp::create(b, l, 0);
          Value h = linalg::IndexOp::create(b, l, 1);
          Value i = linalg::IndexOp::create(b, l, 2);
          Value halfIdx = arith::ConstantIndexOp::create(b, l, half);
          Value firstHalf = arith::CmpIOp::create(
              b, l, arith::CmpIPredicate::ult, i, halfIdx);
          Value partnerIdx = arith::SelectOp::create(
              b, l, firstHalf, arith::AddIOp::create(b, l, i, halfIdx),
              arith::SubIOp::create(b, l, i, halfIdx));
          Value partner = castFloat(
              b, l,
              tensor::ExtractOp::create(b, l, x, ValueRange{t, h, partnerIdx}),
              f32);
          Value self = castFloat(b, l, args[0], f32);
          Value p = arith::AddIOp::create(b, l, position, t);
          Value pf = arith::UIToFPOp::create(
              b, l, f32, arith::IndexCastUIOp::create(b, l, b.getI64Type(), p));
          Value angle = arith::MulFOp::create(b, l, pf, args[1]);
          Value cos = math::CosOp::create(b, l, angle);
          Value sin = math::SinOp::create(b, l, angle);
          // First half: x cos - partner sin; second half: x cos + partner sin.
          Value partnerSin = arith::MulFOp::create(b, l, partner, sin);
          Value signedTerm = arith::SelectOp::create(
              b, l, firstHalf, arith::NegFOp::create(b, l, partnerSin),
              partnerSin);
          Value out = arith::AddFOp::create(
              b, l, arith::MulFOp::create(b, l, self, cos), signedTerm);
          return castFloat(b, l, out, elementType);
        });
    rewriter.replaceOp(op, rotated);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Linear, LM head: x * w^T
//===----------------------------------------------------------------------===//

template <typename OpTy>
struct LowerMatmulLike : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpTy::Adaptor;

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isPlainWeight(op.getWeight()))
      return rewriter.notifyMatchFailure(op, "compressed weight");
    Location loc = op.getLoc();
    Value x = adaptor.getOperands()[0];
    Value result =
        matmulTransposeB(rewriter, loc, x, adaptor.getWeight(),
                         op.getType().getElementType());
    if (result.getType() != op.getType())
      result = tensor::CastOp::create(rewriter, loc, op.getType(), result);
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// LoRA: base + (alpha / r) * (x a^T) b^T
//===----------------------------------------------------------------------===//

struct LowerLoRA : OpConversionPattern<LoRAOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(LoRAOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type elementType = op.getType().getElementType();
    int64_t rank = op.getA().getType().getDimSize(0);
    double scale = op.getAlpha().convertToDouble() / double(rank);
    Value xa = matmulTransposeB(rewriter, loc, adaptor.getInput(),
                                adaptor.getA(), elementType);
    Value scaled = mapElementwise(
        rewriter, loc, ValueRange{xa}, elementType,
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          Value s = arith::ConstantOp::create(
              b, l, elementType, b.getFloatAttr(elementType, scale));
          return arith::MulFOp::create(b, l, args[0], s);
        });
    Value result = matmulTransposeB(rewriter, loc, scaled, adaptor.getB(),
                                    adaptor.getBase());
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// SwiGLU: down(silu(gate(x)) * up(x))
//===----------------------------------------------------------------------===//

struct LowerSwiGLU : OpConversionPattern<SwiGLUOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(SwiGLUOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isPlainWeight(op.getGate()) || !isPlainWeight(op.getUp()) ||
        !isPlainWeight(op.getDown()))
      return rewriter.notifyMatchFailure(op, "compressed weight");
    Location loc = op.getLoc();
    Type elementType = op.getType().getElementType();
    Type f32 = rewriter.getF32Type();
    Value x = adaptor.getInput();
    Value gate = matmulTransposeB(rewriter, loc, x, adaptor.getGate(), f32);
    Value up = matmulTransposeB(rewriter, loc, x, adaptor.getUp(), f32);
    Value hidden = mapElementwise(
        rewriter, loc, ValueRange{gate, up}, elementType,
        [&](OpBuilder &b, Location l, ValueRange args) {
          // silu(g) = g / (1 + exp(-g))
          Value g = args[0];
          Value denom = arith::AddFOp::create(
              b, l, f32Const(b, l, 1.0),
              math::ExpOp::create(b, l, arith::NegFOp::create(b, l, g)));
          Value silu = arith::DivFOp::create(b, l, g, denom);
          return castFloat(b, l, arith::MulFOp::create(b, l, silu, args[1]),
                           elementType);
        });
    Value result =
        matmulTransposeB(rewriter, loc, hidden, adaptor.getDown(), elementType);
    if (result.getType() != op.getType())
      result = tensor::CastOp::create(rewriter, loc, op.getType(), result);
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct AFMLowerToLinalgPass
    : afm::impl::AFMLowerToLinalgPassBase<AFMLowerToLinalgPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    ConversionTarget target(*ctx);
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, tensor::TensorDialect>();
    target.addIllegalOp<RMSNormOp, RoPEOp, LoRAOp>();
    target.addDynamicallyLegalOp<EmbeddingOp>(
        [](EmbeddingOp op) { return !isPlainWeight(op.getTable()); });
    target.addDynamicallyLegalOp<LinearOp>(
        [](LinearOp op) { return !isPlainWeight(op.getWeight()); });
    target.addDynamicallyLegalOp<LMHeadOp>(
        [](LMHeadOp op) { return !isPlainWeight(op.getWeight()); });
    target.addDynamicallyLegalOp<SwiGLUOp>([](SwiGLUOp op) {
      return !isPlainWeight(op.getGate()) || !isPlainWeight(op.getUp()) ||
             !isPlainWeight(op.getDown());
    });
    RewritePatternSet patterns(ctx);
    populateAFMToLinalgPatterns(patterns);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void afm::populateAFMToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerEmbedding, LowerRMSNorm, LowerRoPE,
               LowerMatmulLike<LinearOp>, LowerMatmulLike<LMHeadOp>,
               LowerLoRA, LowerSwiGLU>(
      patterns.getContext());
}
