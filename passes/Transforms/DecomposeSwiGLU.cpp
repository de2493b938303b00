//===- DecomposeSwiGLU.cpp - a fused FFN as its three linear layers -------===//

#include "passes/Transforms/DecomposeSwiGLU.h"

#include "passes/GateActivation.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::afm;

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
  Value active = buildGateActivation(b, loc, gate, op.getActivation());
  Value hidden = arith::MulFOp::create(b, loc, active, up);
  Value down = linear(type, hidden, op.getDown());
  op.replaceAllUsesWith(down);
  op.erase();
}
