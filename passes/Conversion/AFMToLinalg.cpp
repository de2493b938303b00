//===- AFMToLinalg.cpp - afm layers on plain weights -> linalg ------------===//
//
// Each pattern states the docs/semantics.md sections 2-4 formula of its op in linalg on
// tensors. Norm reductions and the SwiGLU gate are computed in f32 whatever
// the activation type, as the semantics require.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialects/afm/IR/AFMOps.h"
#include "dialects/afm_cpu/IR/AFMCPUDialect.h"
#include "passes/Conversion/CompressedKernels.h"
#include "passes/Conversion/LinalgBuilders.h"
#include "passes/GateActivation.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/Support/Debug.h"

#include <cmath>

namespace mlir::afm {
#define GEN_PASS_DEF_AFMLOWERTOLINALGPASS
#include "passes/Passes.h.inc"
} // namespace mlir::afm

#define DEBUG_TYPE "afm-lower-to-linalg"

using namespace mlir;
using namespace mlir::afm;

static bool isPlainWeight(Value weight) {
  return isa<RankedTensorType>(weight.getType());
}

/// `x` as a linear layer over `weight` multiplies it: rounded to int8 when
/// the weight is the materialized `afm.dequantize` of a compressed one
/// (the unfused form), as the fused kernels round it.
static Value activationsFor(OpBuilder &b, Location loc, Value x, Value weight,
                            const LinearLowering &how) {
  auto dequantize = weight.getDefiningOp<DequantizeOp>();
  if (how.int8Activations && dequantize &&
      isa<Q2WeightType, ASTCWeightType>(dequantize.getWeight().getType()))
    return buildInt8RoundTrip(b, loc, x);
  return x;
}

/// Replaces `op` by `result`, cast to the op's result type when the
/// lowering computed a more static (or less static) shape.
static LogicalResult replaceWithCast(ConversionPatternRewriter &rewriter,
                                     Operation *op, Value result) {
  Type type = op->getResult(0).getType();
  if (result.getType() != type)
    result = tensor::CastOp::create(rewriter, op->getLoc(), type, result);
  rewriter.replaceOp(op, result);
  return success();
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
    Location loc = op.getLoc();
    if (!isPlainWeight(op.getTable())) {
      Value rows = buildQ4Gather(rewriter, loc, adaptor.getTokens(),
                                 op.getTable(), op.getType().getElementType());
      if (!rows)
        return failure();
      return replaceWithCast(rewriter, op, rows);
    }
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
    return replaceWithCast(rewriter, op, gather.getResult(0));
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
    double offset = op.getWeightOffset().convertToDouble();
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
          Value gain = castFloat(b, l, args[2], f32);
          if (offset != 0.0)
            gain = arith::AddFOp::create(b, l, gain, f32Const(b, l, offset));
          Value out = arith::MulFOp::create(b, l, scaled, gain);
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
    std::optional<ArrayRef<double>> given = op.getInvFreq();

    // inv_freq[i], i < hd/2: the op's array, or theta^(-2 i / hd)
    // computed in double at compile time.
    SmallVector<float> invFreq(half);
    for (int64_t i = 0; i < half; ++i)
      invFreq[i] = given ? float((*given)[i])
                         : float(std::pow(double(theta),
                                          -2.0 * double(i) / double(headDim)));
    Value table = arith::ConstantOp::create(
        rewriter, loc,
        DenseElementsAttr::get(RankedTensorType::get({half}, f32),
                               ArrayRef(invFreq)));
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<OpFoldResult> sizes = getSizes(rewriter, loc, x);
    OpFoldResult tokens = sizes[0];
    // cos and sin of a = (position + t) * inv_freq[i], [T, hd/2]: once per
    // token and frequency, not per head (a sine per element of every head
    // was most of a decode step's serial time).
    AffineExpr t, h, i;
    bindDims(ctx, t, h, i);
    auto trig = [&](bool sine) {
      Value init = tensor::EmptyOp::create(
          rewriter, loc, SmallVector<OpFoldResult>{tokens,
                                                   rewriter.getIndexAttr(half)},
          f32);
      AffineExpr t2, i2;
      bindDims(ctx, t2, i2);
      return buildGeneric(
          rewriter, loc, ValueRange{table}, init, mapsOf(2, {{i2}, {t2, i2}}, ctx),
          SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel),
          [&](OpBuilder &b, Location l, ValueRange args) -> Value {
            Value p = arith::AddIOp::create(
                b, l, position, linalg::IndexOp::create(b, l, 0));
            Value pf = arith::UIToFPOp::create(
                b, l, f32,
                arith::IndexCastUIOp::create(b, l, b.getI64Type(), p));
            Value angle = arith::MulFOp::create(b, l, pf, args[0]);
            if (sine)
              return math::SinOp::create(b, l, angle);
            return math::CosOp::create(b, l, angle);
          });
    };
    Value cos = trig(false), sin = trig(true);
    // The halves of each head, [T, H, hd/2] slices of x (no gather of a
    // partner element), rotated into the halves of the result.
    auto halfOf = [&](int64_t which) {
      SmallVector<OpFoldResult> offsets(3, rewriter.getIndexAttr(0)),
          halfSizes(sizes), strides(3, rewriter.getIndexAttr(1));
      offsets[2] = rewriter.getIndexAttr(which * half);
      halfSizes[2] = rewriter.getIndexAttr(half);
      return std::tuple(offsets, halfSizes, strides);
    };
    auto slice = [&](int64_t which) {
      auto [offsets, halfSizes, strides] = halfOf(which);
      return tensor::ExtractSliceOp::create(rewriter, loc, x, offsets,
                                            halfSizes, strides)
          .getResult();
    };
    Value first = slice(0), second = slice(1);
    auto rotate = [&](bool secondHalf) {
      auto [offsets, halfSizes, strides] = halfOf(0);
      Value init =
          tensor::EmptyOp::create(rewriter, loc, halfSizes, elementType);
      // first: x1 cos - x2 sin; second: x2 cos + x1 sin.
      return buildGeneric(
          rewriter, loc, ValueRange{first, second, cos, sin}, init,
          mapsOf(3, {{t, h, i}, {t, h, i}, {t, i}, {t, i}, {t, h, i}}, ctx),
          SmallVector<utils::IteratorType>(3, utils::IteratorType::parallel),
          [&](OpBuilder &b, Location l, ValueRange args) {
            Value x1 = castFloat(b, l, args[0], f32);
            Value x2 = castFloat(b, l, args[1], f32);
            Value self = secondHalf ? x2 : x1, partner = secondHalf ? x1 : x2;
            Value selfCos = arith::MulFOp::create(b, l, self, args[2]);
            Value partnerSin = arith::MulFOp::create(b, l, partner, args[3]);
            Value out =
                secondHalf
                    ? arith::AddFOp::create(b, l, selfCos, partnerSin)
                          .getResult()
                    : arith::SubFOp::create(b, l, selfCos, partnerSin)
                          .getResult();
            return castFloat(b, l, out, elementType);
          });
    };
    Value rotated = tensor::EmptyOp::create(rewriter, loc, sizes, elementType);
    for (int64_t which : {0, 1}) {
      auto [offsets, halfSizes, strides] = halfOf(which);
      rotated = tensor::InsertSliceOp::create(rewriter, loc, rotate(which == 1),
                                              rotated, offsets, halfSizes,
                                              strides);
    }
    rewriter.replaceOp(op, rotated);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Linear, LM head: x * w^T
//===----------------------------------------------------------------------===//

template <typename OpTy>
struct LowerMatmulLike : OpConversionPattern<OpTy> {
  using OpAdaptor = typename OpTy::Adaptor;
  LowerMatmulLike(MLIRContext *ctx, LinearLowering how)
      : OpConversionPattern<OpTy>(ctx), how(how) {}
  LinearLowering how;

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getOperands()[0];
    Value acc;
    if constexpr (std::is_same_v<OpTy, LinearOp>)
      acc = adaptor.getAcc();
    // Compressed weights are read through their bound parts (original
    // values); plain ones through the converted value.
    Value weight = isPlainWeight(op.getWeight()) &&
                           !op.getWeight().template getDefiningOp<ASTCDecodeOp>()
                       ? adaptor.getWeight()
                       : op.getWeight();
    // A layer may ask for int8 activations itself. (The LM head keeps f32
    // activations.)
    LinearLowering layer = how;
    if (contracts(op).getInt8ActivationsAttrHelper().isAttrPresent(op))
      layer.int8Activations = true;
    if constexpr (std::is_same_v<OpTy, LinearOp>)
      x = activationsFor(rewriter, loc, x, op.getWeight(), layer);
    LLVM_DEBUG(llvm::dbgs() << "lowering " << op->getName() << " at " << loc
                            << " over " << op.getWeight().getType()
                            << (layer.int8Activations ? ", int8 activations"
                                                      : "")
                            << "\n");
    Value result = buildLinear(rewriter, loc, x, weight,
                               op.getType().getElementType(), acc, layer);
    if (!result) {
      LLVM_DEBUG(llvm::dbgs() << "  buildLinear has no kernel for this "
                                 "weight: the pattern fails\n");
      return failure();
    }
    return replaceWithCast(rewriter, op, result);
  }
};

//===----------------------------------------------------------------------===//
// Compressed weights seen as tensors: dequantize, the ASTC split, min-shift
//===----------------------------------------------------------------------===//

struct LowerDequantize : OpConversionPattern<DequantizeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(DequantizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value dense = buildDequantized(rewriter, op.getLoc(), op.getWeight(),
                                   /*withOffsets=*/true);
    if (!dense)
      return failure();
    rewriter.replaceOp(op, castTo(rewriter, op.getLoc(), dense, op.getType()));
    return success();
  }

  static Value castTo(OpBuilder &b, Location loc, Value dense,
                      RankedTensorType type) {
    if (type.getElementType() == b.getF32Type())
      return dense;
    return mapElementwise(b, loc, ValueRange{dense}, type.getElementType(),
                          [&](OpBuilder &nb, Location l, ValueRange args) {
                            return castFloat(nb, l, args[0],
                                             type.getElementType());
                          });
  }
};

struct LowerASTCDecode : OpConversionPattern<ASTCDecodeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ASTCDecodeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // Linear layers over this op read the blocks themselves (through the
    // original op); the materialized copy is dead code for them.
    Value dense = buildDequantized(rewriter, op.getLoc(), op.getWeight(),
                                   /*withOffsets=*/false);
    if (!dense)
      return failure();
    rewriter.replaceOp(op, dense);
    return success();
  }
};

struct LowerASTCOffsets : OpConversionPattern<ASTCOffsetsOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ASTCOffsetsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value offsets = buildASTCOffsets(rewriter, op.getLoc(), op.getWeight());
    if (!offsets)
      return failure();
    rewriter.replaceOp(op, offsets);
    return success();
  }
};

struct LowerMinShift : OpConversionPattern<MinShiftOp> {
  LowerMinShift(MLIRContext *ctx, LinearLowering how)
      : OpConversionPattern(ctx), how(how) {}
  LinearLowering how;

  LogicalResult
  matchAndRewrite(MinShiftOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    // The block sums of the activations the ASTC kernel multiplies: with
    // int8 activations, the rounded ones.
    Value input = adaptor.getInput();
    if (how.int8Activations || contracts(op).getInt8ActivationsAttrHelper().isAttrPresent(op))
      input = buildInt8RoundTrip(rewriter, loc, input);
    // The offsets of a bound ASTC weight are its stored f16 biases: read
    // them as they are rather than as a converted f32 copy.
    Value offsets = adaptor.getOffsets();
    if (auto astc = op.getOffsets().getDefiningOp<ASTCOffsetsOp>())
      if (auto bound = astc.getWeight().getDefiningOp<BoundWeightOp>())
        offsets = bound.getParts()[kASTCBiasesPart];
    Value result = buildMinShift(rewriter, loc, input, offsets,
                                 op.getType().getDimSize(1), op.getBlock()[0],
                                 op.getBlock()[1]);
    result = LowerDequantize::castTo(rewriter, loc, result,
                                     cast<RankedTensorType>(op.getType()));
    return replaceWithCast(rewriter, op, result);
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
    // The f32 kernels of a plain linear layer: one decode row reads `a`
    // through the split-K GEMV (its r outputs are too few to split rows).
    Value xa = buildLinear(rewriter, loc, adaptor.getInput(), adaptor.getA(),
                           elementType, /*acc=*/Value(), LinearLowering());
    if (!xa)
      return failure();
    Value scaled = mapElementwise(
        rewriter, loc, ValueRange{xa}, elementType,
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          Value s = arith::ConstantOp::create(
              b, l, elementType, b.getFloatAttr(elementType, scale));
          return arith::MulFOp::create(b, l, args[0], s);
        });
    Value result = buildLinear(rewriter, loc, scaled, adaptor.getB(),
                               elementType, adaptor.getBase(),
                               LinearLowering());
    if (!result)
      return failure();
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// SwiGLU / GeGLU: down(act(gate(x)) * up(x))
//===----------------------------------------------------------------------===//

struct LowerSwiGLU : OpConversionPattern<SwiGLUOp> {
  LowerSwiGLU(MLIRContext *ctx, LinearLowering how)
      : OpConversionPattern(ctx), how(how) {}
  LinearLowering how;

  LogicalResult
  matchAndRewrite(SwiGLUOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type elementType = op.getType().getElementType();
    Type f32 = rewriter.getF32Type();
    Value x = adaptor.getInput();
    GateActivation activation = op.getActivation();
    auto pick = [](Value original, Value converted) {
      return isPlainWeight(original) ? converted : original;
    };
    Value gate = buildLinear(
        rewriter, loc, activationsFor(rewriter, loc, x, op.getGate(), how),
        pick(op.getGate(), adaptor.getGate()), f32, {}, how);
    Value up = buildLinear(
        rewriter, loc, activationsFor(rewriter, loc, x, op.getUp(), how),
        pick(op.getUp(), adaptor.getUp()), f32, {}, how);
    if (!gate || !up)
      return failure();
    Value hidden = mapElementwise(
        rewriter, loc, ValueRange{gate, up}, elementType,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value active = buildGateActivation(b, l, args[0], activation);
          return castFloat(b, l, arith::MulFOp::create(b, l, active, args[1]),
                           elementType);
        });
    Value result = buildLinear(
        rewriter, loc,
        activationsFor(rewriter, loc, hidden, op.getDown(), how),
        pick(op.getDown(), adaptor.getDown()), elementType, {}, how);
    if (!result)
      return failure();
    return replaceWithCast(rewriter, op, result);
  }
};

struct AFMLowerToLinalgPass
    : afm::impl::AFMLowerToLinalgPassBase<AFMLowerToLinalgPass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    ConversionTarget target(*ctx);
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, tensor::TensorDialect,
                           bufferization::BufferizationDialect,
                           memref::MemRefDialect>();
    target.addIllegalOp<RMSNormOp, RoPEOp, LoRAOp, EmbeddingOp, LinearOp,
                        LMHeadOp, SwiGLUOp, DequantizeOp, ASTCDecodeOp,
                        ASTCOffsetsOp, MinShiftOp>();
    // The int8 kernels' dot products (lowered after vectorization).
    target.addLegalDialect<afm_cpu::AFMCPUDialect>();
    RewritePatternSet patterns(ctx);
    LinearLowering how;
    how.int8Activations = int8Activations;
    if (ModelAttr model =
            contracts(getOperation()).getModelAttrHelper().getAttr(
                getOperation()))
      how.int8Activations |=
          model.getLinearActivations() == ActivationFormat::Int8;
    LLVM_DEBUG(llvm::dbgs() << "int8 activations for compressed linear "
                               "layers: "
                            << (how.int8Activations ? "yes" : "no") << "\n");
    populateAFMToLinalgPatterns(patterns, how);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      return signalPassFailure();
    // Bound weights are read through their parts; once every reader is
    // lowered they are dead.
    getOperation()->walk([](BoundWeightOp op) {
      if (op->use_empty())
        op->erase();
    });
  }
};
} // namespace

void afm::populateAFMToLinalgPatterns(RewritePatternSet &patterns,
                                      const LinearLowering &how) {
  patterns.add<LowerEmbedding, LowerRMSNorm, LowerRoPE, LowerLoRA,
               LowerDequantize, LowerASTCDecode, LowerASTCOffsets>(
      patterns.getContext());
  patterns.add<LowerMatmulLike<LinearOp>, LowerMatmulLike<LMHeadOp>,
               LowerSwiGLU, LowerMinShift>(patterns.getContext(), how);
}
