//===- ONNXReductionOps.cpp - ONNX reductions and normalizations ----------===//
//
// Reduce{Sum,Mean,Max,Min,SumSquare,L1,L2,LogSum,LogSumExp,Prod}, Softmax,
// LogSoftmax, LayerNormalization and GlobalMaxPool / GlobalAveragePool,
// each as a chain of TOSA reductions (one axis at a time, keeping
// dimensions so results broadcast back over the input); CumSum as a
// reduction linalg.generic.
//
//===----------------------------------------------------------------------===//

#include "ONNXBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"

using namespace mlir;
using namespace mlir::afm::onnx_import;

namespace {
enum class Reduction {
  Sum,
  Mean,
  Max,
  Min,
  SumSquare,
  L1,
  L2,
  LogSum,
  LogSumExp,
  Prod
};
} // namespace

/// `input` reduced over `axes` (sorted, distinct) with kept dimensions.
template <typename ReduceOp>
static Value reduceKeepDims(ONNXNode &node, Value input,
                            llvm::ArrayRef<int64_t> axes) {
  for (int64_t axis : axes) {
    auto type = cast<RankedTensorType>(input.getType());
    llvm::SmallVector<int64_t> shape(type.getShape());
    shape[axis] = 1;
    input = ReduceOp::create(node.builder, node.loc, type.clone(shape), input,
                             node.builder.getI32IntegerAttr(axis));
  }
  return input;
}

static int64_t countOf(RankedTensorType type, llvm::ArrayRef<int64_t> axes) {
  int64_t count = 1;
  for (int64_t axis : axes)
    count *= type.getDimSize(axis);
  return count;
}

Value mlir::afm::onnx_import::meanKeepDims(ONNXNode &node, Value input,
                                           llvm::ArrayRef<int64_t> axes) {
  auto type = cast<RankedTensorType>(input.getType());
  Value sum = reduceKeepDims<tosa::ReduceSumOp>(node, input, axes);
  Value scale = splat(node, type.getElementType(),
                      1.0 / static_cast<double>(countOf(type, axes)),
                      type.getRank());
  return multiply(node, sum.getType(), sum, scale);
}

/// The sorted, distinct dimensions named by `axes`.
static FailureOr<llvm::SmallVector<int64_t>>
normalizeAxes(ONNXNode &node, llvm::ArrayRef<int64_t> axes, int64_t rank) {
  llvm::SmallVector<int64_t> dims;
  for (int64_t axis : axes) {
    auto dim = normalizeAxis(node, axis, rank);
    if (failed(dim))
      return failure();
    dims.push_back(*dim);
  }
  llvm::sort(dims);
  if (std::adjacent_find(dims.begin(), dims.end()) != dims.end())
    return node.emitError() << "an axis is repeated";
  return dims;
}

/// Integer Sum, SumSquare, L1, Max, Min and Prod (an attention mask's
/// length, a shape's product): one reduction linalg.generic, wrapping
/// like ONNX Runtime's integer arithmetic; unsigned inputs compare
/// unsigned.
static FailureOr<Value> reduceIntegers(ONNXNode &node, Reduction kind,
                                       Value input,
                                       llvm::ArrayRef<int64_t> dims) {
  auto type = cast<RankedTensorType>(input.getType());
  auto intType = cast<IntegerType>(type.getElementType());
  unsigned width = intType.getWidth();
  bool isUnsigned = node.isUnsignedInput(0);
  APInt initValue;
  switch (kind) {
  case Reduction::Sum:
  case Reduction::SumSquare:
  case Reduction::L1:
    initValue = APInt::getZero(width);
    break;
  case Reduction::Prod:
    initValue = APInt(width, 1);
    break;
  case Reduction::Max:
    initValue = isUnsigned ? APInt::getMinValue(width)
                           : APInt::getSignedMinValue(width);
    break;
  case Reduction::Min:
    initValue = isUnsigned ? APInt::getMaxValue(width)
                           : APInt::getSignedMaxValue(width);
    break;
  default:
    return node.emitError() << "an integer input " << type
                            << " is supported for ReduceSum, "
                               "ReduceSumSquare, ReduceL1, ReduceMax, "
                               "ReduceMin and ReduceProd only";
  }
  // A plain reduction generic (the input read by its identity map, the
  // result by the kept dimensions), which the vectorizer handles; then the
  // reduced dimensions back as 1s.
  OpBuilder &builder = node.builder;
  Location loc = node.loc;
  int64_t rank = type.getRank();
  llvm::SmallVector<int64_t> kept, keptDims(type.getShape());
  llvm::SmallVector<AffineExpr> keptExprs;
  llvm::SmallVector<utils::IteratorType> iterators;
  for (int64_t dim = 0; dim < rank; ++dim) {
    bool isReduced = llvm::is_contained(dims, dim);
    iterators.push_back(isReduced ? utils::IteratorType::reduction
                                  : utils::IteratorType::parallel);
    if (isReduced) {
      keptDims[dim] = 1;
      continue;
    }
    kept.push_back(type.getDimSize(dim));
    keptExprs.push_back(builder.getAffineDimExpr(dim));
  }
  auto resultType = RankedTensorType::get(kept, intType);
  Value init = linalg::FillOp::create(
                   builder, loc,
                   ValueRange{arith::ConstantOp::create(
                       builder, loc, IntegerAttr::get(intType, initValue))},
                   ValueRange{tensor::EmptyOp::create(builder, loc, kept,
                                                      intType)})
                   .getResult(0);
  llvm::SmallVector<AffineMap> maps{
      builder.getMultiDimIdentityMap(rank),
      AffineMap::get(rank, 0, keptExprs, builder.getContext())};
  auto generic = linalg::GenericOp::create(
      builder, loc, TypeRange{resultType}, ValueRange{input}, ValueRange{init},
      maps, iterators,
      [&](OpBuilder &b, Location nloc, ValueRange args) {
        Value x = args[0], acc = args[1], next;
        switch (kind) {
        case Reduction::SumSquare:
          x = arith::MulIOp::create(b, nloc, x, x);
          break;
        case Reduction::L1:
          if (!isUnsigned) {
            Value zero = arith::ConstantOp::create(
                b, nloc, IntegerAttr::get(intType, 0));
            Value negative = arith::CmpIOp::create(
                b, nloc, arith::CmpIPredicate::slt, x, zero);
            x = arith::SelectOp::create(
                b, nloc, negative, arith::SubIOp::create(b, nloc, zero, x), x);
          }
          break;
        default:
          break;
        }
        switch (kind) {
        case Reduction::Prod:
          next = arith::MulIOp::create(b, nloc, acc, x);
          break;
        case Reduction::Max:
          next = isUnsigned
                     ? arith::MaxUIOp::create(b, nloc, acc, x).getResult()
                     : arith::MaxSIOp::create(b, nloc, acc, x).getResult();
          break;
        case Reduction::Min:
          next = isUnsigned
                     ? arith::MinUIOp::create(b, nloc, acc, x).getResult()
                     : arith::MinSIOp::create(b, nloc, acc, x).getResult();
          break;
        default:
          next = arith::AddIOp::create(b, nloc, acc, x);
          break;
        }
        linalg::YieldOp::create(b, nloc, next);
      });
  return reshape(node, generic.getResult(0), keptDims);
}

template <Reduction kind> static Results lowerReduce(ONNXNode &node) {
  auto anyInput = node.getInput(0);
  if (failed(anyInput))
    return failure();
  bool isInteger = isa<IntegerType>(anyInput->getType().getElementType());
  auto input = isInteger ? anyInput : node.getFloatInput(0);
  if (failed(input))
    return failure();
  RankedTensorType type = input->getType();
  int64_t rank = type.getRank();
  // Axes became an input in opset 13 for ReduceSum, 18 for the others.
  int64_t inputFromOpset = kind == Reduction::Sum ? 13 : 18;
  std::optional<llvm::SmallVector<int64_t>> axes;
  if (node.opset < inputFromOpset) {
    axes = node.getIntsAttribute("axes");
  } else if (node.hasInput(1)) {
    auto values = node.getConstantInts(1, "axes");
    if (failed(values))
      return failure();
    axes = *values;
  }
  if (axes && axes->empty())
    axes.reset();
  if (!axes) {
    if (node.getIntAttribute("noop_with_empty_axes", 0))
      return llvm::SmallVector<Value>{*input};
    axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  }
  auto dims = normalizeAxes(node, *axes, rank);
  if (failed(dims))
    return failure();

  Value value = *input;
  Value result;
  if (isInteger) {
    auto reducedValue = reduceIntegers(node, kind, value, *dims);
    if (failed(reducedValue))
      return failure();
    result = *reducedValue;
  }
  if (!isInteger)
  switch (kind) {
  case Reduction::Sum:
    result = reduceKeepDims<tosa::ReduceSumOp>(node, value, *dims);
    break;
  case Reduction::SumSquare:
    value = multiply(node, type, value, value);
    result = reduceKeepDims<tosa::ReduceSumOp>(node, value, *dims);
    break;
  case Reduction::Mean:
    result = meanKeepDims(node, value, *dims);
    break;
  case Reduction::Max:
    result = reduceKeepDims<tosa::ReduceMaxOp>(node, value, *dims);
    break;
  case Reduction::Min:
    result = reduceKeepDims<tosa::ReduceMinOp>(node, value, *dims);
    break;
  case Reduction::L1:
    value = tosa::AbsOp::create(node.builder, node.loc, type, value);
    result = reduceKeepDims<tosa::ReduceSumOp>(node, value, *dims);
    break;
  case Reduction::L2: {
    value = multiply(node, type, value, value);
    Value sum = reduceKeepDims<tosa::ReduceSumOp>(node, value, *dims);
    result = tosa::PowOp::create(
        node.builder, node.loc, sum.getType(), sum,
        splat(node, type.getElementType(), 0.5, type.getRank()));
    break;
  }
  case Reduction::LogSum: {
    Value sum = reduceKeepDims<tosa::ReduceSumOp>(node, value, *dims);
    result = tosa::LogOp::create(node.builder, node.loc, sum.getType(), sum);
    break;
  }
  case Reduction::LogSumExp: {
    // max + log(sum(exp(x - max))): exp never overflows. (A slice that is
    // all -inf gives NaN: -inf - -inf.)
    Value max = reduceKeepDims<tosa::ReduceMaxOp>(node, value, *dims);
    Value shifted = tosa::SubOp::create(node.builder, node.loc, type, value,
                                        max);
    Value exp = tosa::ExpOp::create(node.builder, node.loc, type, shifted);
    Value sum = reduceKeepDims<tosa::ReduceSumOp>(node, exp, *dims);
    Value log = tosa::LogOp::create(node.builder, node.loc, sum.getType(), sum);
    result = tosa::AddOp::create(node.builder, node.loc, sum.getType(), log,
                                 max);
    break;
  }
  case Reduction::Prod:
    result = reduceKeepDims<tosa::ReduceProductOp>(node, value, *dims);
    break;
  }
  if (!node.getIntAttribute("keepdims", 1)) {
    llvm::SmallVector<int64_t> shape;
    for (int64_t dim = 0; dim < rank; ++dim)
      if (!llvm::is_contained(*dims, dim))
        shape.push_back(type.getDimSize(dim));
    result = reshape(node, result, shape);
  }
  if (isInteger && node.isUnsignedInput(0) && node.hasOutput(0))
    node.table.define(node.proto.output(0), result, /*isUnsigned=*/true);
  return llvm::SmallVector<Value>{result};
}

/// The dimensions (Log)Softmax normalizes over: the axis from opset 13,
/// before that everything from the axis on (the input read as 2-D).
static FailureOr<llvm::SmallVector<int64_t>>
getSoftmaxDims(ONNXNode &node, int64_t rank) {
  bool singleAxis = node.opset >= 13;
  int64_t axis = node.getIntAttribute("axis", singleAxis ? -1 : 1);
  if (rank == 0)
    return node.emitError() << "the input must have rank >= 1";
  auto dim = normalizeAxis(node, axis, rank);
  if (failed(dim))
    return failure();
  if (singleAxis)
    return llvm::SmallVector<int64_t>{*dim};
  return llvm::to_vector(llvm::seq<int64_t>(*dim, rank));
}

/// softmax = exp(x - max) / sum(exp(x - max)); log-softmax =
/// (x - max) - log(sum(exp(x - max))). The max keeps exp from overflowing.
Value mlir::afm::onnx_import::buildSoftmax(ONNXNode &node, Value input,
                                           llvm::ArrayRef<int64_t> dims,
                                           bool isLog) {
  auto type = cast<RankedTensorType>(input.getType());
  OpBuilder &b = node.builder;
  Value max = reduceKeepDims<tosa::ReduceMaxOp>(node, input, dims);
  Value shifted = tosa::SubOp::create(b, node.loc, type, input, max);
  Value exp = tosa::ExpOp::create(b, node.loc, type, shifted);
  Value sum = reduceKeepDims<tosa::ReduceSumOp>(node, exp, dims);
  if (isLog) {
    Value log = tosa::LogOp::create(b, node.loc, sum.getType(), sum);
    return tosa::SubOp::create(b, node.loc, type, shifted, log);
  }
  Value inverse = tosa::ReciprocalOp::create(b, node.loc, sum.getType(), sum);
  return multiply(node, type, exp, inverse);
}

template <bool isLog> static Results lowerSoftmax(ONNXNode &node) {
  auto input = node.getFloatInput(0);
  if (failed(input))
    return failure();
  auto dims = getSoftmaxDims(node, input->getType().getRank());
  if (failed(dims))
    return failure();
  return llvm::SmallVector<Value>{buildSoftmax(node, *input, *dims, isLog)};
}

/// LayerNormalization over the dimensions from `axis` on:
/// y = (x - mean) * rsqrt(var + epsilon) * scale + bias, and the optional
/// Mean and InvStdDev outputs (kept dimensions).
static Results lowerLayerNormalization(ONNXNode &node) {
  auto input = node.getFloatInput(0);
  auto scale = node.getFloatInput(1);
  if (failed(input) || failed(scale))
    return failure();
  RankedTensorType type = input->getType();
  int64_t rank = type.getRank();
  auto axis = normalizeAxis(node, node.getIntAttribute("axis", -1), rank);
  if (failed(axis))
    return failure();
  llvm::SmallVector<int64_t> dims = llvm::to_vector(llvm::seq(*axis, rank));
  const onnx::AttributeProto *epsilonAttr = node.getAttribute("epsilon");
  double epsilon = epsilonAttr ? epsilonAttr->f() : 1e-5;
  Type elementType = type.getElementType();
  OpBuilder &b = node.builder;

  Value mean = meanKeepDims(node, *input, dims);
  Value centered = tosa::SubOp::create(b, node.loc, type, *input, mean);
  Value variance =
      meanKeepDims(node, multiply(node, type, centered, centered), dims);
  Value shiftedVariance = tosa::AddOp::create(
      b, node.loc, variance.getType(), variance,
      splat(node, elementType, epsilon, rank));
  Value invStdDev = tosa::RsqrtOp::create(b, node.loc, variance.getType(),
                                          shiftedVariance);
  Value normalized = multiply(node, type, centered, invStdDev);

  auto affine = [&](Value operand, bool isScale) -> FailureOr<Value> {
    auto operandType = cast<RankedTensorType>(operand.getType());
    if (operandType.getRank() > rank)
      return node.emitError() << (isScale ? "scale" : "bias") << " has rank "
                              << operandType.getRank() << " > " << rank;
    llvm::SmallVector<int64_t> shape(rank - operandType.getRank(), 1);
    llvm::append_range(shape, operandType.getShape());
    for (int64_t dim = 0; dim < rank; ++dim)
      if (shape[dim] != 1 && shape[dim] != type.getDimSize(dim))
        return node.emitError()
               << (isScale ? "scale " : "bias ") << operandType
               << " does not broadcast to " << type;
    Value padded = reshape(node, operand, shape);
    return isScale ? multiply(node, type, normalized, padded)
                   : Value(tosa::AddOp::create(b, node.loc, type, normalized,
                                                padded));
  };
  auto scaled = affine(*scale, true);
  if (failed(scaled))
    return failure();
  normalized = *scaled;
  if (node.hasInput(2)) {
    auto bias = node.getFloatInput(2);
    if (failed(bias))
      return failure();
    auto shifted = affine(*bias, false);
    if (failed(shifted))
      return failure();
    normalized = *shifted;
  }
  return llvm::SmallVector<Value>{normalized, mean, invStdDev};
}

/// GlobalMaxPool and GlobalAveragePool: the maximum or mean over every
/// spatial dimension (all from 2 on), kept as size 1.
template <bool isMax> static Results lowerGlobalPool(ONNXNode &node) {
  auto input = node.getFloatInput(0);
  if (failed(input))
    return failure();
  int64_t rank = input->getType().getRank();
  if (rank < 3)
    return node.emitError() << "the input must have rank >= 3 (N, C and "
                               "spatial dimensions), not "
                            << rank;
  llvm::SmallVector<int64_t> dims = llvm::to_vector(llvm::seq<int64_t>(2, rank));
  return llvm::SmallVector<Value>{
      isMax ? reduceKeepDims<tosa::ReduceMaxOp>(node, *input, dims)
            : meanKeepDims(node, *input, dims)};
}

/// CumSum along the constant `axis`: out[i] sums x[j] over j <= i (j < i
/// when exclusive; j >= i or j > i when reverse). A reduction over the
/// whole axis per element: quadratic in the axis length, which keeps it
/// one linalg.generic.
static Results lowerCumSum(ONNXNode &node) {
  auto input = node.getInput(0);
  if (failed(input))
    return failure();
  RankedTensorType type = input->getType();
  auto axisValues = node.getConstantInts(1, "axis");
  if (failed(axisValues))
    return failure();
  if (axisValues->size() != 1)
    return node.emitError() << "axis must hold one value, not "
                            << axisValues->size();
  auto axis = normalizeAxis(node, axisValues->front(), type.getRank());
  if (failed(axis))
    return failure();
  bool exclusive = node.getIntAttribute("exclusive", 0) != 0;
  bool reverse = node.getIntAttribute("reverse", 0) != 0;
  using P = arith::CmpIPredicate;
  P predicate = reverse ? (exclusive ? P::ugt : P::uge)
                        : (exclusive ? P::ult : P::ule);
  Type elementType = type.getElementType();
  Value data = *input;
  Value result = reduceIndexed(
      node, type, {type.getDimSize(*axis)},
      scalarAttr(node.builder, elementType, 0.0),
      [&](OpBuilder &b, Location loc, ValueRange at, ValueRange over,
          Value acc) -> Value {
        llvm::SmallVector<Value> position(at);
        position[*axis] = over[0];
        Value x = tensor::ExtractOp::create(b, loc, data, position);
        Value sum = isa<FloatType>(elementType)
                        ? arith::AddFOp::create(b, loc, acc, x).getResult()
                        : arith::AddIOp::create(b, loc, acc, x).getResult();
        Value counted =
            arith::CmpIOp::create(b, loc, predicate, over[0], at[*axis]);
        return arith::SelectOp::create(b, loc, counted, sum, acc);
      });
  if (node.isUnsignedInput(0) && node.hasOutput(0))
    node.table.define(node.proto.output(0), result, /*isUnsigned=*/true);
  return llvm::SmallVector<Value>{result};
}

void mlir::afm::onnx_import::registerReductionLowerings(
    llvm::StringMap<NodeLowering> &lowerings) {
  lowerings["ReduceSum"] = lowerReduce<Reduction::Sum>;
  lowerings["ReduceMean"] = lowerReduce<Reduction::Mean>;
  lowerings["ReduceMax"] = lowerReduce<Reduction::Max>;
  lowerings["ReduceMin"] = lowerReduce<Reduction::Min>;
  lowerings["ReduceSumSquare"] = lowerReduce<Reduction::SumSquare>;
  lowerings["ReduceL1"] = lowerReduce<Reduction::L1>;
  lowerings["ReduceL2"] = lowerReduce<Reduction::L2>;
  lowerings["ReduceLogSum"] = lowerReduce<Reduction::LogSum>;
  lowerings["ReduceLogSumExp"] = lowerReduce<Reduction::LogSumExp>;
  lowerings["ReduceProd"] = lowerReduce<Reduction::Prod>;
  lowerings["Softmax"] = lowerSoftmax<false>;
  lowerings["LogSoftmax"] = lowerSoftmax<true>;
  lowerings["LayerNormalization"] = lowerLayerNormalization;
  lowerings["GlobalMaxPool"] = lowerGlobalPool<true>;
  lowerings["GlobalAveragePool"] = lowerGlobalPool<false>;
  lowerings["CumSum"] = lowerCumSum;
}
