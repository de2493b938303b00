//===- ONNXElementwiseMathOps.cpp - ONNX math and logic, element-wise -----===//
//
// The element-wise ops exporters emit beyond the arithmetic of
// ONNXToTOSA.cpp and the activations of ONNXActivationOps.cpp:
// trigonometric and hyperbolic functions, classification and rounding,
// comparisons and logic on bools, bitwise ops, variadic Max/Min/Sum/Mean,
// Clip, Mod and Dropout at inference. Each is a broadcasting
// linalg.generic over arith/math ops (broadcastElementwise), so numpy
// broadcasting, integer types and bools (a byte holding 0 or 1) come for
// free, and constants fold at import. Transcendentals use only the math
// ops the pipeline approximates or LLVM has instructions for (exp, log,
// sin, cos, tanh, erf, sqrt): a hyperbolic function is written with exp,
// an inverse one with log and sqrt.
//
//===----------------------------------------------------------------------===//

#include "ONNXElementwiseSupport.h"

#include <cmath>

using namespace mlir;
using namespace mlir::afm::onnx_import;

namespace {

//===- Trigonometric and hyperbolic ------------------------------------===//

Results lowerSin(ONNXNode &node) {
  return unaryFloat(node, [](Scalar s, Value x) -> Value {
    return math::SinOp::create(s.b, s.loc, x);
  });
}

Results lowerCos(ONNXNode &node) {
  return unaryFloat(node, [](Scalar s, Value x) -> Value {
    return math::CosOp::create(s.b, s.loc, x);
  });
}

Results lowerTan(ONNXNode &node) {
  return unaryFloat(node, [](Scalar s, Value x) {
    return s.div(math::SinOp::create(s.b, s.loc, x),
                 math::CosOp::create(s.b, s.loc, x));
  });
}

Results lowerSinh(ONNXNode &node) {
  return unaryFloat(node, [](Scalar s, Value x) {
    Value half = s.constant(x.getType(), 0.5);
    return s.mul(half, s.sub(s.exp(x), s.exp(s.sub(s.constant(x.getType(), 0),
                                                   x))));
  });
}

Results lowerCosh(ONNXNode &node) {
  return unaryFloat(node, [](Scalar s, Value x) {
    Value half = s.constant(x.getType(), 0.5);
    return s.mul(half, s.add(s.exp(x), s.exp(s.sub(s.constant(x.getType(), 0),
                                                   x))));
  });
}

Results lowerAsinh(ONNXNode &node) {
  return unaryFloat(node, [](Scalar s, Value x) {
    Value one = s.constant(x.getType(), 1);
    return s.log(s.add(x, s.sqrt(s.add(s.mul(x, x), one))));
  });
}

Results lowerAcosh(ONNXNode &node) {
  return unaryFloat(node, [](Scalar s, Value x) {
    Value one = s.constant(x.getType(), 1);
    return s.log(s.add(x, s.sqrt(s.sub(s.mul(x, x), one))));
  });
}

Results lowerAtanh(ONNXNode &node) {
  return unaryFloat(node, [](Scalar s, Value x) {
    Value one = s.constant(x.getType(), 1);
    Value half = s.constant(x.getType(), 0.5);
    return s.mul(half, s.log(s.div(s.add(one, x), s.sub(one, x))));
  });
}

//===- Classification, rounding, sign ------------------------------------===//

Results lowerIsNaN(ONNXNode &node) {
  return elementwise(
      node, 1, node.builder.getI8Type(),
      [](OpBuilder &b, Location loc, ValueRange args) {
        Scalar s = scalar(b, loc);
        return s.toBool(s.cmp(arith::CmpFPredicate::UNO, args[0], args[0]));
      },
      Operands::Float);
}

Results lowerIsInf(ONNXNode &node) {
  bool positive = node.getIntAttribute("detect_positive", 1) != 0;
  bool negative = node.getIntAttribute("detect_negative", 1) != 0;
  return elementwise(
      node, 1, node.builder.getI8Type(),
      [&](OpBuilder &b, Location loc, ValueRange args) {
        Scalar s = scalar(b, loc);
        Type t = args[0].getType();
        Value inf = s.constant(t, INFINITY);
        Value isPositive = s.cmp(arith::CmpFPredicate::OEQ, args[0], inf);
        Value isNegative =
            s.cmp(arith::CmpFPredicate::OEQ, args[0], s.constant(t, -INFINITY));
        Value no = arith::ConstantOp::create(b, loc, b.getBoolAttr(false));
        Value result = arith::OrIOp::create(b, loc, positive ? isPositive : no,
                                            negative ? isNegative : no);
        return s.toBool(result);
      },
      Operands::Float);
}

Results lowerRound(ONNXNode &node) {
  return unaryFloat(node, [](Scalar s, Value x) -> Value {
    return math::RoundEvenOp::create(s.b, s.loc, x);
  });
}

Results lowerSign(ONNXNode &node) {
  bool isUnsigned = node.isUnsignedInput(0);
  return elementwise(node, 1, Type(),
                     [&](OpBuilder &b, Location loc, ValueRange args) {
                       Scalar s = scalar(b, loc);
                       Value x = args[0];
                       Type t = x.getType();
                       Value zero = s.constant(t, 0), one = s.constant(t, 1),
                             minusOne = s.constant(t, -1);
                       Value above, below;
                       if (isa<FloatType>(t)) {
                         above = s.cmp(arith::CmpFPredicate::OGT, x, zero);
                         below = s.cmp(arith::CmpFPredicate::OLT, x, zero);
                       } else {
                         above = arith::CmpIOp::create(
                             b, loc,
                             isUnsigned ? arith::CmpIPredicate::ugt
                                        : arith::CmpIPredicate::sgt,
                             x, zero);
                         below = arith::CmpIOp::create(
                             b, loc, arith::CmpIPredicate::slt, x, zero);
                         if (isUnsigned)
                           below = arith::ConstantOp::create(
                               b, loc, b.getBoolAttr(false));
                       }
                       return s.select(above, one,
                                       s.select(below, minusOne, zero));
                     });
}

//===- Comparisons and logic ---------------------------------------------===//

/// Greater, Less, GreaterOrEqual, LessOrEqual: bools, on floats or
/// integers of the inputs' signedness.
template <arith::CmpFPredicate F, arith::CmpIPredicate S,
          arith::CmpIPredicate U>
Results lowerCompare(ONNXNode &node) {
  bool isUnsigned = node.isUnsignedInput(0);
  return elementwise(node, 2, node.builder.getI8Type(),
                     [&](OpBuilder &b, Location loc, ValueRange args) {
                       Scalar s = scalar(b, loc);
                       Value result =
                           isa<FloatType>(args[0].getType())
                               ? s.cmp(F, args[0], args[1])
                               : arith::CmpIOp::create(b, loc,
                                                       isUnsigned ? U : S,
                                                       args[0], args[1])
                                     .getResult();
                       return s.toBool(result);
                     });
}

/// And, Or, Xor of bools (and the Bitwise* ops of integers, the same
/// arith op on every bit).
template <typename OpTy> Results lowerLogical(ONNXNode &node) {
  return elementwise(
      node, 2, Type(),
      [](OpBuilder &b, Location loc, ValueRange args) -> Value {
        return OpTy::create(b, loc, args[0], args[1]);
      },
      Operands::Integer);
}

Results lowerNot(ONNXNode &node) {
  return elementwise(node, 1, node.builder.getI8Type(),
                     [](OpBuilder &b, Location loc, ValueRange args) {
                       Scalar s = scalar(b, loc);
                       return s.toBool(arith::CmpIOp::create(
                           b, loc, arith::CmpIPredicate::eq, args[0],
                           s.constant(args[0].getType(), 0)));
                     },
                     Operands::Integer);
}

Results lowerBitwiseNot(ONNXNode &node) {
  return elementwise(node, 1, Type(),
                     [](OpBuilder &b, Location loc, ValueRange args) -> Value {
                       Value ones = scalar(b, loc).constant(args[0].getType(),
                                                            -1);
                       return arith::XOrIOp::create(b, loc, args[0], ones);
                     },
                     Operands::Integer);
}

Results lowerBitShift(ONNXNode &node) {
  const onnx::AttributeProto *direction = node.getAttribute("direction");
  if (!direction || (direction->s() != "LEFT" && direction->s() != "RIGHT"))
    return node.emitError() << "attribute 'direction' must be LEFT or RIGHT";
  bool left = direction->s() == "LEFT";
  return elementwise(node, 2, Type(),
                     [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
                       if (left)
                         return arith::ShLIOp::create(b, loc, args[0], args[1]);
                       return arith::ShRUIOp::create(b, loc, args[0], args[1]);
                     },
                     Operands::Integer);
}

//===- Variadic, Clip, Mod, Dropout ---------------------------------------===//

/// The running value of Max, Min and Sum over `args`.
enum class Fold { Max, Min, Sum };

Value foldScalars(OpBuilder &b, Location loc, ValueRange args, Fold fold,
                  bool isUnsigned) {
  Value acc = args[0];
  for (Value x : args.drop_front()) {
    bool isFloat = isa<FloatType>(x.getType());
    switch (fold) {
    case Fold::Max:
      acc = isFloat ? arith::MaximumFOp::create(b, loc, acc, x).getResult()
            : isUnsigned ? arith::MaxUIOp::create(b, loc, acc, x).getResult()
                         : arith::MaxSIOp::create(b, loc, acc, x).getResult();
      break;
    case Fold::Min:
      acc = isFloat ? arith::MinimumFOp::create(b, loc, acc, x).getResult()
            : isUnsigned ? arith::MinUIOp::create(b, loc, acc, x).getResult()
                         : arith::MinSIOp::create(b, loc, acc, x).getResult();
      break;
    case Fold::Sum:
      acc = isFloat ? arith::AddFOp::create(b, loc, acc, x).getResult()
                    : arith::AddIOp::create(b, loc, acc, x).getResult();
      break;
    }
  }
  return acc;
}

template <Fold F> Results lowerVariadic(ONNXNode &node) {
  unsigned arity = node.proto.input_size();
  if (arity == 0)
    return node.emitError() << "needs at least one input";
  bool isUnsigned = node.isUnsignedInput(0);
  return elementwise(node, arity, Type(),
                     [&](OpBuilder &b, Location loc, ValueRange args) {
                       return foldScalars(b, loc, args, F, isUnsigned);
                     });
}

Results lowerMean(ONNXNode &node) {
  unsigned arity = node.proto.input_size();
  if (arity == 0)
    return node.emitError() << "needs at least one input";
  return elementwise(
      node, arity, Type(),
      [&](OpBuilder &b, Location loc, ValueRange args) {
        Scalar s = scalar(b, loc);
        Value sum = foldScalars(b, loc, args, Fold::Sum, false);
        return s.div(sum, s.constant(sum.getType(), arity));
      },
      Operands::Float);
}

/// Clip(x, min, max): bounds from optional inputs (opset 11+) or the min
/// and max attributes (opset 6); a missing bound does not clip.
Results lowerClip(ONNXNode &node) {
  auto input = node.getInput(0);
  if (failed(input))
    return failure();
  Type t = input->getType().getElementType();
  bool isUnsigned = node.isUnsignedInput(0);
  llvm::SmallVector<Value> operands = {*input};
  int lowIndex = -1, highIndex = -1;
  for (unsigned index : {1u, 2u})
    if (node.hasInput(index)) {
      auto bound = node.getInput(index);
      if (failed(bound))
        return failure();
      if (bound->getType().getElementType() != t)
        return node.emitError() << "bound element type differs from input";
      (index == 1 ? lowIndex : highIndex) = int(operands.size());
      operands.push_back(*bound);
    }
  const onnx::AttributeProto *minAttr = node.getAttribute("min");
  const onnx::AttributeProto *maxAttr = node.getAttribute("max");
  auto result = broadcastElementwise(
      node, operands, t, [&](OpBuilder &b, Location loc, ValueRange args) {
        Scalar s = scalar(b, loc);
        Value x = args[0];
        Value low = lowIndex >= 0 ? args[lowIndex]
                    : minAttr     ? s.constant(t, minAttr->f())
                                  : Value();
        Value high = highIndex >= 0 ? args[highIndex]
                     : maxAttr      ? s.constant(t, maxAttr->f())
                                    : Value();
        if (low)
          x = foldScalars(b, loc, {x, low}, Fold::Max, isUnsigned);
        if (high)
          x = foldScalars(b, loc, {x, high}, Fold::Min, isUnsigned);
        return x;
      });
  if (failed(result))
    return failure();
  if (isUnsigned && node.hasOutput(0))
    node.table.define(node.proto.output(0), *result, /*isUnsigned=*/true);
  return llvm::SmallVector<Value>{*result};
}

/// Mod: with fmod = 1 the remainder has the dividend's sign (C's fmod,
/// %); with fmod = 0 (integers only) the divisor's (Python's %).
Results lowerMod(ONNXNode &node) {
  bool fmod = node.getIntAttribute("fmod", 0) != 0;
  bool isUnsigned = node.isUnsignedInput(0);
  auto input = node.getInput(0);
  if (failed(input))
    return failure();
  if (isa<FloatType>(input->getType().getElementType()) && !fmod)
    return node.emitError() << "fmod must be 1 for floating-point inputs";
  return elementwise(
      node, 2, Type(), [&](OpBuilder &b, Location loc, ValueRange args) {
        Value a = args[0], d = args[1];
        if (isa<FloatType>(a.getType()))
          return arith::RemFOp::create(b, loc, a, d).getResult();
        // An integer remainder by 0 is undefined in ONNX; here it is 0,
        // not a hardware trap (the divisor 0 is replaced by 1 first).
        Scalar s = scalar(b, loc);
        Value zero = s.constant(a.getType(), 0);
        Value byZero =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, d, zero);
        d = s.select(byZero, s.constant(a.getType(), 1), d);
        if (isUnsigned)
          return s.select(byZero, zero,
                          arith::RemUIOp::create(b, loc, a, d));
        Value r = arith::RemSIOp::create(b, loc, a, d);
        if (fmod)
          return s.select(byZero, zero, r);
        Value nonZero =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, r, zero);
        Value rNegative =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, r, zero);
        Value dNegative =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, d, zero);
        Value signsDiffer =
            arith::XOrIOp::create(b, loc, rNegative, dNegative);
        Value adjust = arith::AndIOp::create(b, loc, nonZero, signsDiffer);
        return s.select(byZero, zero,
                        s.select(adjust, arith::AddIOp::create(b, loc, r, d),
                                 r));
      });
}

/// Dropout at inference is the identity; its optional mask output is all
/// true. Training mode (a random mask) is refused.
Results lowerDropout(ONNXNode &node) {
  auto input = node.getInput(0);
  if (failed(input))
    return failure();
  if (node.hasInput(2)) {
    DenseElementsAttr training = node.getConstantInput(2);
    if (!training || training.getNumElements() != 1)
      return node.emitError()
             << "training_mode must be a constant (inference only)";
    if (!training.getSplatValue<APInt>().isZero())
      return node.emitError()
             << "training_mode is true: a random mask cannot be compiled";
  }
  llvm::SmallVector<Value> results = {*input};
  if (node.hasOutput(1)) {
    auto mask = broadcastElementwise(
        node, *input, node.builder.getI8Type(),
        [](OpBuilder &b, Location loc, ValueRange) -> Value {
          return arith::ConstantOp::create(b, loc, b.getI8IntegerAttr(1));
        });
    if (failed(mask))
      return failure();
    results.push_back(*mask);
  }
  return results;
}

} // namespace

void mlir::afm::onnx_import::registerElementwiseMathLowerings(
    llvm::StringMap<NodeLowering> &lowerings) {
  using arith::CmpFPredicate;
  using arith::CmpIPredicate;
  lowerings.insert({
      {"Sin", lowerSin},
      {"Cos", lowerCos},
      {"Tan", lowerTan},
      {"Sinh", lowerSinh},
      {"Cosh", lowerCosh},
      {"Asinh", lowerAsinh},
      {"Acosh", lowerAcosh},
      {"Atanh", lowerAtanh},
      {"IsNaN", lowerIsNaN},
      {"IsInf", lowerIsInf},
      {"Round", lowerRound},
      {"Sign", lowerSign},
      {"Greater", lowerCompare<CmpFPredicate::OGT, CmpIPredicate::sgt,
                               CmpIPredicate::ugt>},
      {"Less", lowerCompare<CmpFPredicate::OLT, CmpIPredicate::slt,
                            CmpIPredicate::ult>},
      {"GreaterOrEqual", lowerCompare<CmpFPredicate::OGE, CmpIPredicate::sge,
                                      CmpIPredicate::uge>},
      {"LessOrEqual", lowerCompare<CmpFPredicate::OLE, CmpIPredicate::sle,
                                   CmpIPredicate::ule>},
      {"And", lowerLogical<arith::AndIOp>},
      {"Or", lowerLogical<arith::OrIOp>},
      {"Xor", lowerLogical<arith::XOrIOp>},
      {"Not", lowerNot},
      {"BitwiseAnd", lowerLogical<arith::AndIOp>},
      {"BitwiseOr", lowerLogical<arith::OrIOp>},
      {"BitwiseXor", lowerLogical<arith::XOrIOp>},
      {"BitwiseNot", lowerBitwiseNot},
      {"BitShift", lowerBitShift},
      {"Max", lowerVariadic<Fold::Max>},
      {"Min", lowerVariadic<Fold::Min>},
      {"Sum", lowerVariadic<Fold::Sum>},
      {"Mean", lowerMean},
      {"Clip", lowerClip},
      {"Mod", lowerMod},
      {"Dropout", lowerDropout},
  });
}
