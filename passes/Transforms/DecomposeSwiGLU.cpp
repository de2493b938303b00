//===- DecomposeSwiGLU.cpp - a fused FFN as its three linear layers -------===//

#include "passes/Transforms/DecomposeSwiGLU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::afm;

/// A splat f32 tensor of `type`'s shape.
static Value splat(OpBuilder &b, Location loc, RankedTensorType type,
                   double value) {
  return arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(type, b.getF32FloatAttr(value)));
}

/// silu(g) = g / (1 + exp(-g)), as afm-lower-to-linalg lowers afm.swiglu.
static Value silu(OpBuilder &b, Location loc, Value g) {
  auto type = cast<RankedTensorType>(g.getType());
  Value denom = arith::AddFOp::create(
      b, loc, splat(b, loc, type, 1.0),
      math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, g)));
  return arith::DivFOp::create(b, loc, g, denom);
}

/// GELU, tanh form: 0.5 g (1 + tanh(sqrt(2/pi) (g + 0.044715 g^3))).
static Value geluTanh(OpBuilder &b, Location loc, Value g) {
  auto type = cast<RankedTensorType>(g.getType());
  Value cube = arith::MulFOp::create(b, loc, arith::MulFOp::create(b, loc, g, g),
                                     g);
  Value inner = arith::AddFOp::create(
      b, loc, g,
      arith::MulFOp::create(b, loc, splat(b, loc, type, 0.044715), cube));
  Value t = math::TanhOp::create(
      b, loc,
      arith::MulFOp::create(b, loc, splat(b, loc, type, 0.7978845608028654),
                            inner));
  Value half = arith::MulFOp::create(b, loc, splat(b, loc, type, 0.5), g);
  return arith::MulFOp::create(
      b, loc, half,
      arith::AddFOp::create(b, loc, splat(b, loc, type, 1.0), t));
}

void afm::decomposeSwiGLU(SwiGLUOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>(op.getType());
  auto [f, d] = *getWeightMatrixShape(op.getGate().getType());
  auto hiddenType =
      RankedTensorType::get({type.getDimSize(0), f}, b.getF32Type());
  auto int8 = contracts(op).getInt8ActivationsAttrHelper();
  UnitAttr int8Activations = int8.getAttr(op);
  auto linear = [&](RankedTensorType resultType, Value x, Value weight) {
    auto product = LinearOp::create(b, loc, resultType, x, weight);
    if (int8Activations)
      int8.setAttr(product, int8Activations);
    return product.getResult();
  };
  Value x = op.getInput();
  Value gate = linear(hiddenType, x, op.getGate());
  Value up = linear(hiddenType, x, op.getUp());
  Value active = op.getActivation() == GateActivation::SiLU
                     ? silu(b, loc, gate)
                     : geluTanh(b, loc, gate);
  Value hidden = arith::MulFOp::create(b, loc, active, up);
  Value down = linear(type, hidden, op.getDown());
  op.replaceAllUsesWith(down);
  op.erase();
}
