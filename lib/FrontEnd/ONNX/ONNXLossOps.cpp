//===- ONNXLossOps.cpp - ONNX NegativeLogLikelihoodLoss and friends -------===//
//
// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (which is the
// former over a log-softmax of the scores along the class axis). The loss
// at each target position reads the input at the target's class, so it
// is an index-computing linalg.generic; the sum and mean reductions are
// reduction generics over the target's positions, the mean dividing by
// the summed weights of the positions not ignored.
//
//===----------------------------------------------------------------------===//

#include "ONNXBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::afm::onnx_import;

namespace {
enum class LossReduction { None, Sum, Mean };

/// The operands of the loss, checked: input [N, C, D...], target
/// [N, D...] integers, optional weight [C] (null when absent).
struct LossOperands {
  TypedValue<RankedTensorType> input, target;
  Value weight;
  LossReduction reduction;
  std::optional<int64_t> ignoreIndex;
};
} // namespace

static FailureOr<LossOperands>
checkLossOperands(ONNXNode &node, TypedValue<RankedTensorType> input) {
  auto target = node.getInput(1);
  if (failed(target))
    return failure();
  RankedTensorType inputType = input.getType(), targetType = target->getType();
  if (inputType.getRank() < 2)
    return node.emitError() << "the input must have rank >= 2 (N, C, ...), "
                            << "not " << inputType.getRank();
  if (!isa<IntegerType>(targetType.getElementType()))
    return node.emitError() << "the target must be an integer tensor";
  llvm::SmallVector<int64_t> expected(inputType.getShape());
  expected.erase(expected.begin() + 1);
  if (targetType.getShape() != llvm::ArrayRef(expected))
    return node.emitError() << "the target " << targetType
                            << " does not match the input " << inputType
                            << " without its class dimension";
  LossOperands operands{input, *target, Value(), LossReduction::Mean,
                        std::nullopt};
  if (node.hasInput(2)) {
    auto weight = node.getFloatInput(2);
    if (failed(weight))
      return failure();
    if (weight->getType() !=
        RankedTensorType::get({inputType.getDimSize(1)},
                              inputType.getElementType()))
      return node.emitError() << "the weight " << weight->getType()
                              << " is not one " << inputType.getElementType()
                              << " per class";
    operands.weight = *weight;
  }
  const onnx::AttributeProto *reduction = node.getAttribute("reduction");
  std::string mode = reduction ? reduction->s() : "mean";
  if (mode == "none")
    operands.reduction = LossReduction::None;
  else if (mode == "sum")
    operands.reduction = LossReduction::Sum;
  else if (mode != "mean")
    return node.emitError() << "reduction '" << mode
                            << "' is not one of none, sum, mean";
  if (node.getAttribute("ignore_index"))
    operands.ignoreIndex = node.getIntAttribute("ignore_index", 0);
  return operands;
}

namespace {
/// The loss term and its weight at one target position (both 0 where the
/// target is ignore_index).
struct LossTerm {
  Value loss, weight;
};
} // namespace

static LossTerm buildLossTerm(OpBuilder &b, Location loc,
                              const LossOperands &operands,
                              ValueRange position) {
  RankedTensorType inputType = operands.input.getType();
  Type elementType = inputType.getElementType();
  int64_t classes = inputType.getDimSize(1);
  Value raw = tensor::ExtractOp::create(b, loc, operands.target, position);
  Type rawType = raw.getType();
  auto intConstant = [&](int64_t value) -> Value {
    return arith::ConstantOp::create(b, loc, b.getIntegerAttr(rawType, value));
  };
  // A class outside [0, C) reads class 0 rather than out of bounds.
  Value valid = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, raw,
                            intConstant(0)),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, raw,
                            intConstant(classes)));
  Value safe = arith::SelectOp::create(b, loc, valid, raw, intConstant(0));
  Value index = arith::IndexCastOp::create(b, loc, b.getIndexType(), safe);
  llvm::SmallVector<Value> inputAt{position.front(), index};
  llvm::append_range(inputAt, position.drop_front());
  Value x = tensor::ExtractOp::create(b, loc, operands.input, inputAt);
  Value zero =
      arith::ConstantOp::create(b, loc, b.getFloatAttr(elementType, 0.0));
  Value weight =
      operands.weight
          ? tensor::ExtractOp::create(b, loc, operands.weight, index)
                .getResult()
          : arith::ConstantOp::create(b, loc, b.getFloatAttr(elementType, 1.0))
                .getResult();
  Value loss = arith::SubFOp::create(
      b, loc, zero, arith::MulFOp::create(b, loc, x, weight));
  if (operands.ignoreIndex) {
    Value ignored = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          raw,
                                          intConstant(*operands.ignoreIndex));
    loss = arith::SelectOp::create(b, loc, ignored, zero, loss);
    weight = arith::SelectOp::create(b, loc, ignored, zero, weight);
  }
  return {loss, weight};
}

/// The loss as `reduction` asks: per target position, summed, or summed
/// and divided by the summed weights.
static Value negativeLogLikelihood(ONNXNode &node,
                                   const LossOperands &operands) {
  RankedTensorType targetType = operands.target.getType();
  Type elementType = operands.input.getType().getElementType();
  if (operands.reduction == LossReduction::None)
    return generateTensor(
        node, targetType.clone(elementType),
        [&](OpBuilder &b, Location loc, ValueRange at) {
          return buildLossTerm(b, loc, operands, at).loss;
        });
  auto scalarType = RankedTensorType::get({}, elementType);
  auto sumOf = [&](bool weights) {
    return reduceIndexed(
        node, scalarType, targetType.getShape(),
        node.builder.getFloatAttr(elementType, 0.0),
        [&](OpBuilder &b, Location loc, ValueRange, ValueRange over,
            Value acc) -> Value {
          LossTerm term = buildLossTerm(b, loc, operands, over);
          return arith::AddFOp::create(b, loc, acc,
                                       weights ? term.weight : term.loss);
        });
  };
  Value total = sumOf(false);
  if (operands.reduction == LossReduction::Sum)
    return total;
  // Without weights or an ignored class every position weighs 1.
  Value weights =
      operands.weight || operands.ignoreIndex
          ? sumOf(true)
          : splat(node, elementType,
                  static_cast<double>(targetType.getNumElements()), 0);
  return *broadcastElementwise(
      node, {total, weights}, elementType,
      [](OpBuilder &b, Location loc, ValueRange args) -> Value {
        return arith::DivFOp::create(b, loc, args[0], args[1]);
      });
}

static Results lowerNegativeLogLikelihoodLoss(ONNXNode &node) {
  auto input = node.getFloatInput(0);
  if (failed(input))
    return failure();
  auto operands = checkLossOperands(node, *input);
  if (failed(operands))
    return failure();
  return llvm::SmallVector<Value>{negativeLogLikelihood(node, *operands)};
}

/// The loss over log_prob = log-softmax(scores) along the classes; the
/// optional second output is log_prob.
static Results lowerSoftmaxCrossEntropyLoss(ONNXNode &node) {
  auto scores = node.getFloatInput(0);
  if (failed(scores))
    return failure();
  auto operands = checkLossOperands(node, *scores);
  if (failed(operands))
    return failure();
  auto logProb = cast<TypedValue<RankedTensorType>>(
      buildSoftmax(node, *scores, {1}, /*isLog=*/true));
  operands->input = logProb;
  return llvm::SmallVector<Value>{negativeLogLikelihood(node, *operands),
                                  logProb};
}

void mlir::afm::onnx_import::registerLossLowerings(
    llvm::StringMap<NodeLowering> &lowerings) {
  lowerings["NegativeLogLikelihoodLoss"] = lowerNegativeLogLikelihoodLoss;
  lowerings["SoftmaxCrossEntropyLoss"] = lowerSoftmaxCrossEntropyLoss;
}
