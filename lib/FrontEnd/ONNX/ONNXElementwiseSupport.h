//===- ONNXElementwiseSupport.h - building element-wise bodies --*- C++ -*-===//
//
// What the element-wise op files share: scalar helpers for the bodies of
// broadcastElementwise, and the one-call element-wise lowering over a
// node's inputs.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_FRONTEND_ONNX_ONNXELEMENTWISESUPPORT_H
#define AFM_FRONTEND_ONNX_ONNXELEMENTWISESUPPORT_H

#include "ONNXBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

namespace mlir::afm::onnx_import {

/// Scalar helpers for element-wise bodies.
struct Scalar {
  OpBuilder &b;
  Location loc;

  Value constant(Type type, double value) {
    if (isa<FloatType>(type))
      return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
    return arith::ConstantOp::create(b, loc,
                                     b.getIntegerAttr(type, int64_t(value)));
  }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value exp(Value x) { return math::ExpOp::create(b, loc, x); }
  Value log(Value x) { return math::LogOp::create(b, loc, x); }
  Value sqrt(Value x) { return math::SqrtOp::create(b, loc, x); }
  Value abs(Value x) { return math::AbsFOp::create(b, loc, x); }
  Value max(Value x, Value y) {
    return arith::MaximumFOp::create(b, loc, x, y);
  }
  Value min(Value x, Value y) {
    return arith::MinimumFOp::create(b, loc, x, y);
  }
  Value cmp(arith::CmpFPredicate p, Value x, Value y) {
    return arith::CmpFOp::create(b, loc, p, x, y);
  }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  /// An i1 as an ONNX bool (a byte).
  Value toBool(Value i1) {
    return arith::ExtUIOp::create(b, loc, b.getI8Type(), i1);
  }
  /// An ONNX bool (a byte) as an i1.
  Value isTrue(Value byte) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, byte,
                                 constant(byte.getType(), 0));
  }
};

inline Scalar scalar(OpBuilder &b, Location loc) { return Scalar{b, loc}; }

/// Exact Gelu: 0.5 x (1 + erf(x / sqrt(2))).
inline Value geluErf(Scalar s, Value x) {
  Type t = x.getType();
  Value inner =
      math::ErfOp::create(s.b, s.loc, s.mul(x, s.constant(t, M_SQRT1_2)));
  return s.mul(s.mul(s.constant(t, 0.5), x), s.add(s.constant(t, 1), inner));
}

/// Gelu's tanh approximation:
/// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
inline Value geluTanh(Scalar s, Value x) {
  Type t = x.getType();
  Value cube = s.mul(s.mul(x, x), x);
  Value u = s.mul(s.constant(t, std::sqrt(2.0 / M_PI)),
                  s.add(x, s.mul(s.constant(t, 0.044715), cube)));
  Value inner = math::TanhOp::create(s.b, s.loc, u);
  return s.mul(s.mul(s.constant(t, 0.5), x), s.add(s.constant(t, 1), inner));
}

inline float floatAttribute(ONNXNode &node, llvm::StringRef name, float fallback) {
  const onnx::AttributeProto *attribute = node.getAttribute(name);
  return attribute ? attribute->f() : fallback;
}

/// The result of an element-wise op over inputs [0, arity) (all present,
/// of one element type), of `resultType` (null: the inputs' type). An
/// integer result of unsigned inputs stays unsigned.
/// The element types an element-wise op takes.
enum class Operands { Any, Float, Integer };

inline Results elementwise(ONNXNode &node, unsigned arity, Type resultType,
                           ElementwiseBody body,
                           Operands kinds = Operands::Any) {
  llvm::SmallVector<Value> operands;
  Type elementType;
  for (unsigned index = 0; index < arity; ++index) {
    auto input = kinds == Operands::Float ? node.getFloatInput(index)
                                          : node.getInput(index);
    if (failed(input))
      return failure();
    Type type = input->getType().getElementType();
    if (kinds == Operands::Integer && !isa<IntegerType>(type))
      return node.emitError() << "input " << index
                              << " must be a bool or integer tensor";
    if (elementType && type != elementType)
      return node.emitError() << "operand element types differ";
    elementType = type;
    operands.push_back(*input);
  }
  Type result = resultType ? resultType : elementType;
  auto value = broadcastElementwise(node, operands, result, body);
  if (failed(value))
    return failure();
  if (result == elementType && isa<IntegerType>(result) &&
      node.isUnsignedInput(0) && node.hasOutput(0))
    node.table.define(node.proto.output(0), *value, /*isUnsigned=*/true);
  return llvm::SmallVector<Value>{*value};
}

/// A float function of one input.
template <typename Fn> Results unaryFloat(ONNXNode &node, Fn fn) {
  return elementwise(
      node, 1, Type(),
      [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
        return fn(scalar(b, loc), args[0]);
      },
      Operands::Float);
}

} // namespace mlir::afm::onnx_import

#endif // AFM_FRONTEND_ONNX_ONNXELEMENTWISESUPPORT_H
