//===- GateActivation.cpp - the FFN gate's nonlinearity -------------------===//

#include "passes/GateActivation.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::afm;

/// The constant `value` of `like`'s type: a scalar, or a splat tensor.
static Value constantLike(OpBuilder &b, Location loc, Value like,
                          double value) {
  Type type = like.getType();
  auto shaped = dyn_cast<ShapedType>(type);
  FloatAttr element = b.getFloatAttr(
      shaped ? shaped.getElementType() : type, value);
  TypedAttr attr = element;
  if (shaped)
    attr = DenseElementsAttr::get(shaped, element);
  return arith::ConstantOp::create(b, loc, attr);
}

static Value silu(OpBuilder &b, Location loc, Value g) {
  Value denom = arith::AddFOp::create(
      b, loc, constantLike(b, loc, g, 1.0),
      math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, g)));
  return arith::DivFOp::create(b, loc, g, denom);
}

static Value geluTanh(OpBuilder &b, Location loc, Value g) {
  auto c = [&](double value) { return constantLike(b, loc, g, value); };
  Value cube =
      arith::MulFOp::create(b, loc, arith::MulFOp::create(b, loc, g, g), g);
  Value inner = arith::AddFOp::create(
      b, loc, g, arith::MulFOp::create(b, loc, c(0.044715), cube));
  Value t = math::TanhOp::create(
      b, loc, arith::MulFOp::create(b, loc, c(0.7978845608028654), inner));
  Value half = arith::MulFOp::create(b, loc, c(0.5), g);
  return arith::MulFOp::create(b, loc, half,
                               arith::AddFOp::create(b, loc, c(1.0), t));
}

Value afm::buildGateActivation(OpBuilder &b, Location loc, Value g,
                               GateActivation activation) {
  return activation == GateActivation::SiLU ? silu(b, loc, g)
                                            : geluTanh(b, loc, g);
}
