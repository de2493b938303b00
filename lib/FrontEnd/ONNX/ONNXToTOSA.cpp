//===- ONNXToTOSA.cpp - ONNX element-wise ops -> TOSA ---------------------===//
//
// One function per ONNX op and the table from op type to function, which
// also collects the tables of the other op families (shape, reduction,
// contraction). TOSA wants equal-rank operands (it broadcasts only size-1
// dimensions), so lowerings insert tosa.reshape where ONNX relies on
// numpy-style rank broadcasting. What TOSA cannot say (integer division
// and powers, truncating casts, comparisons producing bool) is a
// broadcasting linalg.generic over arith/math.
//
//===----------------------------------------------------------------------===//

#include "ONNXBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::afm::onnx_import;

/// Integer arithmetic: arith on every element, numpy broadcasting.
template <typename IntOp>
static Results lowerIntegerBinary(ONNXNode &node) {
  auto lhs = node.getInput(0);
  auto rhs = node.getInput(1);
  if (failed(lhs) || failed(rhs))
    return failure();
  Type elementType = lhs->getType().getElementType();
  if (rhs->getType().getElementType() != elementType)
    return node.emitError() << "operand element types differ";
  // Shape arithmetic on constants folds at import (arith's own folder).
  DenseElementsAttr folded = foldElementwise(
      node, {*lhs, *rhs}, elementType,
      [&](llvm::ArrayRef<Attribute> args) -> Attribute {
        APInt a = cast<IntegerAttr>(args[0]).getValue(),
              b = cast<IntegerAttr>(args[1]).getValue();
        std::optional<APInt> result;
        if constexpr (std::is_same_v<IntOp, arith::AddIOp>)
          result = a + b;
        else if constexpr (std::is_same_v<IntOp, arith::SubIOp>)
          result = a - b;
        else if constexpr (std::is_same_v<IntOp, arith::MulIOp>)
          result = a * b;
        else if (!b.isZero())
          result = std::is_same_v<IntOp, arith::DivUIOp> ? a.udiv(b)
                                                         : a.sdiv(b);
        if (!result)
          return nullptr;
        return IntegerAttr::get(elementType, *result);
      });
  if (folded)
    return llvm::SmallVector<Value>{
        arith::ConstantOp::create(node.builder, node.loc, folded)};
  auto result = broadcastElementwise(
      node, {*lhs, *rhs}, elementType,
      [](OpBuilder &b, Location loc, ValueRange args) -> Value {
        return IntOp::create(b, loc, args[0], args[1]);
      });
  if (failed(result))
    return failure();
  return llvm::SmallVector<Value>{*result};
}

/// Float ops lowered to TOSA fold on small constants too, by the folders
/// of the arith/math op `body` builds (foldBody): a Loop's trip count is
/// computed in float from Range-like bounds. Null when the node does not
/// have `arity` inputs, all constants (the lowering then reports what is
/// wrong).
static Value foldFloat(ONNXNode &node, int arity, ElementwiseBody body) {
  if (node.proto.input_size() != arity)
    return {};
  llvm::SmallVector<Value> operands;
  for (int index = 0; index < arity; ++index) {
    if (!node.hasInput(index) ||
        !node.table.lookupConstant(node.proto.input(index)))
      return {};
    operands.push_back(node.table.lookup(node.proto.input(index)));
  }
  Type elementType =
      cast<RankedTensorType>(operands[0].getType()).getElementType();
  if (!isa<FloatType>(elementType) ||
      llvm::any_of(operands, [&](Value operand) {
        return getElementTypeOrSelf(operand.getType()) != elementType;
      }))
    return {};
  DenseElementsAttr folded = foldBody(node, operands, elementType, body);
  if (!folded)
    return {};
  return arith::ConstantOp::create(node.builder, node.loc, folded);
}

/// Add, Sub, Mul and Div of float constants (true division, as ONNX
/// specifies; the compiled form multiplies by the reciprocal).
template <typename OpTy> static Value foldFloatBinary(ONNXNode &node) {
  return foldFloat(node, 2,
                   [](OpBuilder &b, Location loc, ValueRange args) -> Value {
                     if constexpr (std::is_same_v<OpTy, tosa::AddOp>)
                       return arith::AddFOp::create(b, loc, args[0], args[1]);
                     else if constexpr (std::is_same_v<OpTy, tosa::SubOp>)
                       return arith::SubFOp::create(b, loc, args[0], args[1]);
                     else if constexpr (std::is_same_v<OpTy, tosa::MulOp>)
                       return arith::MulFOp::create(b, loc, args[0], args[1]);
                     else
                       return arith::DivFOp::create(b, loc, args[0], args[1]);
                   });
}

static bool hasIntegerInput(ONNXNode &node) {
  auto input = node.getInput(0);
  return succeeded(input) &&
         isa<IntegerType>(input->getType().getElementType());
}

template <typename OpTy> static Results lowerBinary(ONNXNode &node) {
  if (hasIntegerInput(node)) {
    if constexpr (std::is_same_v<OpTy, tosa::AddOp>)
      return lowerIntegerBinary<arith::AddIOp>(node);
    else
      return lowerIntegerBinary<arith::SubIOp>(node);
  }
  if (Value folded = foldFloatBinary<OpTy>(node))
    return llvm::SmallVector<Value>{folded};
  auto operands = broadcastOperands(node);
  if (failed(operands))
    return failure();
  auto [lhs, rhs, type] = *operands;
  return llvm::SmallVector<Value>{
      OpTy::create(node.builder, node.loc, type, lhs, rhs)};
}

static Results lowerMul(ONNXNode &node) {
  if (hasIntegerInput(node))
    return lowerIntegerBinary<arith::MulIOp>(node);
  if (Value folded = foldFloatBinary<tosa::MulOp>(node))
    return llvm::SmallVector<Value>{folded};
  auto operands = broadcastOperands(node);
  if (failed(operands))
    return failure();
  auto [lhs, rhs, type] = *operands;
  return llvm::SmallVector<Value>{multiply(node, type, lhs, rhs)};
}

/// TOSA has no float division: a / b is a * reciprocal(b).
static Results lowerDiv(ONNXNode &node) {
  // ONNX integer division truncates, like C.
  if (hasIntegerInput(node))
    return node.isUnsignedInput(0) ? lowerIntegerBinary<arith::DivUIOp>(node)
                                   : lowerIntegerBinary<arith::DivSIOp>(node);
  if (Value folded = foldFloatBinary<void>(node))
    return llvm::SmallVector<Value>{folded};
  auto operands = broadcastOperands(node);
  if (failed(operands))
    return failure();
  auto [lhs, rhs, type] = *operands;
  Value inverse =
      tosa::ReciprocalOp::create(node.builder, node.loc, rhs.getType(), rhs);
  return llvm::SmallVector<Value>{multiply(node, type, lhs, inverse)};
}

template <typename OpTy> static Results lowerUnary(ONNXNode &node) {
  auto input = node.getFloatInput(0);
  if (failed(input))
    return failure();
  return llvm::SmallVector<Value>{
      OpTy::create(node.builder, node.loc, input->getType(), *input)};
}

/// Ceil and Floor, folding on constants.
template <typename OpTy> static Results lowerRounding(ONNXNode &node) {
  auto input = node.getFloatInput(0);
  if (failed(input))
    return failure();
  if (Value folded =
          foldFloat(node, 1, [](OpBuilder &b, Location loc, ValueRange args) {
            if constexpr (std::is_same_v<OpTy, tosa::CeilOp>)
              return math::CeilOp::create(b, loc, args[0]).getResult();
            else
              return math::FloorOp::create(b, loc, args[0]).getResult();
          }))
    return llvm::SmallVector<Value>{folded};
  return llvm::SmallVector<Value>{
      OpTy::create(node.builder, node.loc, input->getType(), *input)};
}

static Results lowerRelu(ONNXNode &node) {
  auto input = node.getFloatInput(0);
  if (failed(input))
    return failure();
  if (Value folded =
          foldFloat(node, 1, [](OpBuilder &b, Location loc, ValueRange args) {
            Value zero = arith::ConstantOp::create(
                b, loc, b.getFloatAttr(args[0].getType(), 0.0));
            return arith::MaximumFOp::create(b, loc, args[0], zero)
                .getResult();
          }))
    return llvm::SmallVector<Value>{folded};
  // An upper bound of +inf keeps relu(inf) = inf.
  Type elementType = input->getType().getElementType();
  return llvm::SmallVector<Value>{tosa::ClampOp::create(
      node.builder, node.loc, input->getType(), *input,
      node.builder.getFloatAttr(elementType, 0.0),
      node.builder.getFloatAttr(elementType,
                                std::numeric_limits<double>::infinity()))};
}

static Results lowerNeg(ONNXNode &node) {
  auto input = node.getInput(0);
  if (failed(input))
    return failure();
  Type elementType = input->getType().getElementType();
  if (isa<IntegerType>(elementType)) {
    if (DenseElementsAttr folded = foldElementwise(
            node, *input, elementType, [](llvm::ArrayRef<Attribute> args) {
              auto value = cast<IntegerAttr>(args[0]);
              return IntegerAttr::get(value.getType(), -value.getValue());
            }))
      return llvm::SmallVector<Value>{
          arith::ConstantOp::create(node.builder, node.loc, folded)};
    auto result = broadcastElementwise(
        node, *input, elementType,
        [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          Value zero = arith::ConstantOp::create(
              b, loc, b.getIntegerAttr(elementType, 0));
          return arith::SubIOp::create(b, loc, zero, args[0]);
        });
    if (failed(result))
      return failure();
    return llvm::SmallVector<Value>{*result};
  }
  Value zero = splat(node, elementType, 0.0, 1);
  return llvm::SmallVector<Value>{tosa::NegateOp::create(
      node.builder, node.loc, input->getType(), *input, zero, zero)};
}

/// TOSA has no sqrt: x ** 0.5.
static Results lowerSqrt(ONNXNode &node) {
  auto input = node.getFloatInput(0);
  if (failed(input))
    return failure();
  RankedTensorType type = input->getType();
  Value half = splat(node, type.getElementType(), 0.5, type.getRank());
  return llvm::SmallVector<Value>{
      tosa::PowOp::create(node.builder, node.loc, type, *input, half)};
}

static Results lowerIdentity(ONNXNode &node) {
  auto input = node.getInput(0);
  if (failed(input))
    return failure();
  return llvm::SmallVector<Value>{*input};
}

/// Pow(X, Y) has X's element type whatever Y's is: float bases take
/// powf (or fpowi for integer exponents), integer bases ipowi, and an
/// integer base with a float exponent is computed in float and truncated.
static Results lowerPow(ONNXNode &node) {
  auto base = node.getInput(0);
  auto exponent = node.getInput(1);
  if (failed(base) || failed(exponent))
    return failure();
  Type baseType = base->getType().getElementType();
  Type exponentType = exponent->getType().getElementType();
  bool unsignedExponent = node.isUnsignedInput(1);
  auto result = broadcastElementwise(
      node, {*base, *exponent}, baseType,
      [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
        Value x = args[0], y = args[1];
        if (isa<FloatType>(baseType)) {
          if (isa<IntegerType>(exponentType)) {
            Value y32 = castScalar(b, loc, y, b.getI32Type(), unsignedExponent);
            return math::FPowIOp::create(b, loc, x, y32);
          }
          return math::PowFOp::create(
              b, loc, x, castScalar(b, loc, y, baseType, false));
        }
        if (isa<IntegerType>(exponentType))
          return math::IPowIOp::create(
              b, loc, x, castScalar(b, loc, y, baseType, unsignedExponent));
        Value xf = castScalar(b, loc, x, exponentType, false);
        return castScalar(b, loc, math::PowFOp::create(b, loc, xf, y),
                          baseType, false);
      });
  if (failed(result))
    return failure();
  return llvm::SmallVector<Value>{*result};
}

static Results lowerEqual(ONNXNode &node) {
  auto lhs = node.getInput(0);
  auto rhs = node.getInput(1);
  if (failed(lhs) || failed(rhs))
    return failure();
  if (lhs->getType().getElementType() != rhs->getType().getElementType())
    return node.emitError() << "operand element types differ";
  // A bool is a byte holding 0 or 1.
  auto result = broadcastElementwise(
      node, {*lhs, *rhs}, node.builder.getI8Type(),
      [](OpBuilder &b, Location loc, ValueRange args) -> Value {
        Value equal =
            isa<FloatType>(args[0].getType())
                ? arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                        args[0], args[1])
                      .getResult()
                : arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        args[0], args[1])
                      .getResult();
        return arith::ExtUIOp::create(b, loc, b.getI8Type(), equal);
      });
  if (failed(result))
    return failure();
  return llvm::SmallVector<Value>{*result};
}

static Results lowerWhere(ONNXNode &node) {
  auto condition = node.getInput(0);
  auto lhs = node.getInput(1);
  auto rhs = node.getInput(2);
  if (failed(condition) || failed(lhs) || failed(rhs))
    return failure();
  if (!condition->getType().getElementType().isInteger(8))
    return node.emitError() << "the condition must be a bool tensor";
  Type elementType = lhs->getType().getElementType();
  if (rhs->getType().getElementType() != elementType)
    return node.emitError() << "operand element types differ";
  auto result = broadcastElementwise(
      node, {*condition, *lhs, *rhs}, elementType,
      [](OpBuilder &b, Location loc, ValueRange args) -> Value {
        Value zero = arith::ConstantOp::create(b, loc, b.getI8IntegerAttr(0));
        Value isTrue = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                             args[0], zero);
        return arith::SelectOp::create(b, loc, isTrue, args[1], args[2]);
      });
  if (failed(result))
    return failure();
  if (node.isUnsignedInput(1) && node.proto.output_size() > 0)
    node.table.define(node.proto.output(0), *result, /*isUnsigned=*/true);
  return llvm::SmallVector<Value>{*result};
}

/// Cast to the `to` attribute's type, or CastLike to input 1's type.
static Results lowerCast(ONNXNode &node) {
  auto input = node.getInput(0);
  if (failed(input))
    return failure();
  Type elementType;
  bool toUnsigned, toBool = false, toString;
  bool fromString = node.table.isString(node.proto.input(0));
  if (node.proto.op_type() == "CastLike") {
    auto like = node.getInput(1);
    if (failed(like))
      return failure();
    elementType = like->getType().getElementType();
    toUnsigned = node.isUnsignedInput(1);
    toString = node.table.isString(node.proto.input(1));
  } else {
    const onnx::AttributeProto *to = node.getAttribute("to");
    if (!to)
      return node.emitError() << "missing attribute 'to'";
    toString = to->i() == onnx::TensorProto::STRING;
    elementType = getElementType(node.builder.getContext(), to->i());
    if (!elementType && !toString)
      return node.emitError() << "casting to " << getDataTypeName(to->i())
                              << " is not supported";
    toUnsigned = isUnsignedDataType(to->i());
    toBool = to->i() == onnx::TensorProto::BOOL;
  }
  if (fromString || toString)
    return castStrings(node, *input, fromString, toString, elementType);
  Value result =
      castTensor(node, *input, elementType, node.isUnsignedInput(0), toBool);
  if (toUnsigned && node.proto.output_size() > 0)
    node.table.define(node.proto.output(0), result, /*isUnsigned=*/true);
  return llvm::SmallVector<Value>{result};
}
const llvm::StringMap<NodeLowering> &
mlir::afm::onnx_import::getONNXToTOSALowerings() {
  static llvm::StringMap<NodeLowering> lowerings = {
      {"Add", lowerBinary<tosa::AddOp>},
      {"Sub", lowerBinary<tosa::SubOp>},
      {"Mul", lowerMul},
      {"Div", lowerDiv},
      {"Relu", lowerRelu},
      {"Sigmoid", lowerUnary<tosa::SigmoidOp>},
      {"Tanh", lowerUnary<tosa::TanhOp>},
      {"Exp", lowerUnary<tosa::ExpOp>},
      {"Neg", lowerNeg},
      {"Sqrt", lowerSqrt},
      {"Reciprocal", lowerUnary<tosa::ReciprocalOp>},
      {"Erf", lowerUnary<tosa::ErfOp>},
      {"Log", lowerUnary<tosa::LogOp>},
      {"Ceil", lowerRounding<tosa::CeilOp>},
      {"Floor", lowerRounding<tosa::FloorOp>},
      {"Abs", lowerUnary<tosa::AbsOp>},
      {"Identity", lowerIdentity},
      {"Pow", lowerPow},
      {"Equal", lowerEqual},
      {"Where", lowerWhere},
      {"Cast", lowerCast},
      {"CastLike", lowerCast},
  };
  static const bool registered = [] {
    registerShapeLowerings(lowerings);
    registerReductionLowerings(lowerings);
    registerContractionLowerings(lowerings);
    registerControlFlowLowerings(lowerings);
    registerElementwiseMathLowerings(lowerings);
    registerActivationLowerings(lowerings);
    registerIndexLowerings(lowerings);
    registerScatterLowerings(lowerings);
    registerPoolingLowerings(lowerings);
    registerLossLowerings(lowerings);
    registerResizeLowerings(lowerings);
    registerLayoutLowerings(lowerings);
    registerNormalizationLowerings(lowerings);
    return true;
  }();
  (void)registered;
  return lowerings;
}
