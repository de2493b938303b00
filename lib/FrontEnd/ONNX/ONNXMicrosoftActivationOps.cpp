//===- ONNXMicrosoftActivationOps.cpp - com.microsoft Gelus ---------------===//
//
// The Gelu variants of the com.microsoft domain (FastGelu, BiasGelu,
// QuickGelu), as ONNX Runtime's CPU kernels compute them: one broadcasting
// element-wise body each, the optional bias added inside it so that the
// sum is never materialized.
//
//===----------------------------------------------------------------------===//

#include "ONNXElementwiseSupport.h"

using namespace mlir;
using namespace mlir::afm::onnx_import;

namespace {

/// gelu(X + bias): the bias (input 1) is optional for FastGelu and
/// required for BiasGelu; `exact` picks erf over the tanh approximation.
template <bool exact> Results lowerBiasedGelu(ONNXNode &node) {
  unsigned arity = exact || node.hasInput(1) ? 2 : 1;
  return elementwise(
      node, arity, Type(),
      [](OpBuilder &b, Location loc, ValueRange args) {
        Scalar s = scalar(b, loc);
        Value x = args.size() == 2 ? s.add(args[0], args[1]) : args[0];
        return exact ? geluErf(s, x) : geluTanh(s, x);
      },
      Operands::Float);
}

/// QuickGelu: x * sigmoid(alpha * x) = x / (1 + e^(-alpha x)).
Results lowerQuickGelu(ONNXNode &node) {
  float alpha = floatAttribute(node, "alpha", 1.702f);
  return unaryFloat(node, [&](Scalar s, Value x) {
    Type t = x.getType();
    Value e = s.exp(s.mul(s.constant(t, -alpha), x));
    return s.div(x, s.add(s.constant(t, 1), e));
  });
}

} // namespace

void mlir::afm::onnx_import::registerMicrosoftActivationLowerings(
    llvm::StringMap<NodeLowering> &lowerings) {
  lowerings.insert({
      {"FastGelu", lowerBiasedGelu<false>},
      {"BiasGelu", lowerBiasedGelu<true>},
      {"QuickGelu", lowerQuickGelu},
  });
}
