//===- ONNXActivationOps.cpp - ONNX activation functions ------------------===//
//
// The activations beyond Relu, Sigmoid and Tanh (ONNXToTOSA.cpp): Softplus,
// Softsign, Mish, Elu, Celu, Selu, LeakyRelu, ThresholdedRelu, HardSigmoid,
// HardSwish, Shrink, Gelu and PRelu, each its formula over arith/math in a
// broadcasting linalg.generic, attributes with the specification's
// defaults.
//
//===----------------------------------------------------------------------===//

#include "ONNXElementwiseSupport.h"

#include <cmath>

using namespace mlir;
using namespace mlir::afm::onnx_import;

namespace {


/// log(1 + e^x) as max(x, 0) + log(1 + e^-|x|): no overflow for large x.
Value softplus(Scalar s, Value x) {
  Value zero = s.constant(x.getType(), 0);
  Value one = s.constant(x.getType(), 1);
  return s.add(s.max(x, zero),
               s.log(s.add(one, s.exp(s.sub(zero, s.abs(x))))));
}

Results lowerSoftplus(ONNXNode &node) { return unaryFloat(node, softplus); }

Results lowerSoftsign(ONNXNode &node) {
  return unaryFloat(node, [](Scalar s, Value x) {
    return s.div(x, s.add(s.constant(x.getType(), 1), s.abs(x)));
  });
}

Results lowerMish(ONNXNode &node) {
  return unaryFloat(node, [](Scalar s, Value x) {
    return s.mul(x, math::TanhOp::create(s.b, s.loc, softplus(s, x)));
  });
}

Results lowerElu(ONNXNode &node) {
  float alpha = floatAttribute(node, "alpha", 1.0f);
  return unaryFloat(node, [&](Scalar s, Value x) {
    Type t = x.getType();
    Value negative = s.mul(s.constant(t, alpha),
                           s.sub(s.exp(x), s.constant(t, 1)));
    return s.select(s.cmp(arith::CmpFPredicate::OLT, x, s.constant(t, 0)),
                    negative, x);
  });
}

Results lowerCelu(ONNXNode &node) {
  float alpha = floatAttribute(node, "alpha", 1.0f);
  return unaryFloat(node, [&](Scalar s, Value x) {
    Type t = x.getType();
    Value a = s.constant(t, alpha), zero = s.constant(t, 0);
    Value negative =
        s.mul(a, s.sub(s.exp(s.div(x, a)), s.constant(t, 1)));
    return s.add(s.max(zero, x), s.min(zero, negative));
  });
}

Results lowerSelu(ONNXNode &node) {
  float alpha = floatAttribute(node, "alpha", 1.67326319217681884765625f);
  float gamma = floatAttribute(node, "gamma", 1.05070102214813232421875f);
  return unaryFloat(node, [&](Scalar s, Value x) {
    Type t = x.getType();
    Value a = s.constant(t, alpha), g = s.constant(t, gamma);
    Value negative = s.mul(g, s.sub(s.mul(a, s.exp(x)), a));
    return s.select(s.cmp(arith::CmpFPredicate::OGT, x, s.constant(t, 0)),
                    s.mul(g, x), negative);
  });
}

Results lowerLeakyRelu(ONNXNode &node) {
  float alpha = floatAttribute(node, "alpha", 0.01f);
  return unaryFloat(node, [&](Scalar s, Value x) {
    Type t = x.getType();
    return s.select(s.cmp(arith::CmpFPredicate::OLT, x, s.constant(t, 0)),
                    s.mul(s.constant(t, alpha), x), x);
  });
}

Results lowerThresholdedRelu(ONNXNode &node) {
  float alpha = floatAttribute(node, "alpha", 1.0f);
  return unaryFloat(node, [&](Scalar s, Value x) {
    Type t = x.getType();
    return s.select(s.cmp(arith::CmpFPredicate::OGT, x, s.constant(t, alpha)),
                    x, s.constant(t, 0));
  });
}

/// max(0, min(1, alpha * x + beta)).
Value hardSigmoid(Scalar s, Value x, float alpha, float beta) {
  Type t = x.getType();
  Value y = s.add(s.mul(s.constant(t, alpha), x), s.constant(t, beta));
  return s.max(s.constant(t, 0), s.min(s.constant(t, 1), y));
}

Results lowerHardSigmoid(ONNXNode &node) {
  float alpha = floatAttribute(node, "alpha", 0.2f);
  float beta = floatAttribute(node, "beta", 0.5f);
  return unaryFloat(node, [&](Scalar s, Value x) {
    return hardSigmoid(s, x, alpha, beta);
  });
}

Results lowerHardSwish(ONNXNode &node) {
  return unaryFloat(node, [](Scalar s, Value x) {
    return s.mul(x, hardSigmoid(s, x, 1.0f / 6, 0.5f));
  });
}

Results lowerShrink(ONNXNode &node) {
  float bias = floatAttribute(node, "bias", 0.0f);
  float lambd = floatAttribute(node, "lambd", 0.5f);
  return unaryFloat(node, [&](Scalar s, Value x) {
    Type t = x.getType();
    Value below = s.cmp(arith::CmpFPredicate::OLT, x, s.constant(t, -lambd));
    Value above = s.cmp(arith::CmpFPredicate::OGT, x, s.constant(t, lambd));
    Value b = s.constant(t, bias);
    return s.select(below, s.add(x, b),
                    s.select(above, s.sub(x, b), s.constant(t, 0)));
  });
}

/// Gelu: x * Phi(x), with erf, or the tanh approximation when
/// approximate = "tanh".
Results lowerGelu(ONNXNode &node) {
  const onnx::AttributeProto *approximate = node.getAttribute("approximate");
  bool useTanh = approximate && approximate->s() == "tanh";
  if (approximate && !useTanh && approximate->s() != "none")
    return node.emitError() << "approximate '" << approximate->s()
                            << "' is not 'none' or 'tanh'";
  return unaryFloat(node, [&](Scalar s, Value x) {
    return useTanh ? geluTanh(s, x) : geluErf(s, x);
  });
}

Results lowerPRelu(ONNXNode &node) {
  return elementwise(
      node, 2, Type(),
      [](OpBuilder &b, Location loc, ValueRange args) {
        Scalar s = scalar(b, loc);
        Value x = args[0], slope = args[1];
        Value zero = s.constant(x.getType(), 0);
        return s.select(s.cmp(arith::CmpFPredicate::OLT, x, zero),
                        s.mul(slope, x), x);
      },
      Operands::Float);
}

} // namespace

void mlir::afm::onnx_import::registerActivationLowerings(
    llvm::StringMap<NodeLowering> &lowerings) {
  lowerings.insert({
      {"Softplus", lowerSoftplus},
      {"Softsign", lowerSoftsign},
      {"Mish", lowerMish},
      {"Elu", lowerElu},
      {"Celu", lowerCelu},
      {"Selu", lowerSelu},
      {"LeakyRelu", lowerLeakyRelu},
      {"ThresholdedRelu", lowerThresholdedRelu},
      {"HardSigmoid", lowerHardSigmoid},
      {"HardSwish", lowerHardSwish},
      {"Shrink", lowerShrink},
      {"Gelu", lowerGelu},
      {"PRelu", lowerPRelu},
  });
}
