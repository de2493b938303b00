//===- ONNXToTOSA.cpp - ONNX ops -> TOSA ops ------------------------------===//
//
// One function per ONNX op and a table from op type to function. TOSA
// wants equal-rank operands (it broadcasts only size-1 dimensions) and
// 3-D batched matmuls, so lowerings insert tosa.reshape where ONNX relies
// on numpy-style rank broadcasting.
//
//===----------------------------------------------------------------------===//

#include "ONNXImporter.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Tosa/Utils/ConversionUtils.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <limits>
#include <numeric>

using namespace mlir;
using namespace mlir::afm::onnx_import;

using Results = FailureOr<llvm::SmallVector<Value>>;

static Value reshape(ONNXNode &node, Value input,
                     llvm::ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(input.getType());
  if (type.getShape() == shape)
    return input;
  ImplicitLocOpBuilder b(node.loc, node.builder);
  return tosa::ReshapeOp::create(b, type.clone(shape), input,
                                 tosa::getTosaConstShape(b, shape));
}

/// A float tensor<1x..x1xT> of `rank` holding `value`: TOSA's scalar
/// operands (zero points) and rank-equal broadcast scalars.
static Value splat(ONNXNode &node, Type elementType, double value,
                   int64_t rank) {
  auto type =
      RankedTensorType::get(llvm::SmallVector<int64_t>(rank, 1), elementType);
  return tosa::ConstOp::create(
      node.builder, node.loc, type,
      DenseElementsAttr::get(type,
                             node.builder.getFloatAttr(elementType, value)));
}

/// ONNX multidirectional broadcasting: both operands reshaped to the
/// larger rank (leading 1s), and the broadcast result shape.
static FailureOr<std::tuple<Value, Value, RankedTensorType>>
broadcastOperands(ONNXNode &node) {
  auto lhs = node.getFloatInput(0);
  auto rhs = node.getFloatInput(1);
  if (failed(lhs) || failed(rhs))
    return failure();
  RankedTensorType lhsType = lhs->getType(), rhsType = rhs->getType();
  if (lhsType.getElementType() != rhsType.getElementType())
    return node.emitError() << "operand element types differ";
  int64_t rank = std::max(lhsType.getRank(), rhsType.getRank());
  auto padded = [&](RankedTensorType type) {
    llvm::SmallVector<int64_t> shape(rank - type.getRank(), 1);
    llvm::append_range(shape, type.getShape());
    return shape;
  };
  llvm::SmallVector<int64_t> lhsShape = padded(lhsType),
                             rhsShape = padded(rhsType), shape;
  for (auto [l, r] : llvm::zip(lhsShape, rhsShape)) {
    if (l != r && l != 1 && r != 1)
      return node.emitError() << "shapes " << lhsType << " and " << rhsType
                              << " do not broadcast";
    shape.push_back(l == 1 ? r : l);
  }
  return std::make_tuple(reshape(node, *lhs, lhsShape),
                         reshape(node, *rhs, rhsShape), lhsType.clone(shape));
}

template <typename OpTy> static Results lowerBinary(ONNXNode &node) {
  auto operands = broadcastOperands(node);
  if (failed(operands))
    return failure();
  auto [lhs, rhs, type] = *operands;
  return llvm::SmallVector<Value>{
      OpTy::create(node.builder, node.loc, type, lhs, rhs)};
}

/// tosa.mul's shift only applies to i32; floats take a zero shift.
static Value multiply(ONNXNode &node, Type type, Value lhs, Value rhs) {
  auto shiftType = RankedTensorType::get({1}, node.builder.getI8Type());
  Value shift = tosa::ConstOp::create(
      node.builder, node.loc, shiftType,
      DenseElementsAttr::get(shiftType, node.builder.getI8IntegerAttr(0)));
  return tosa::MulOp::create(node.builder, node.loc, type, lhs, rhs, shift);
}

static Results lowerMul(ONNXNode &node) {
  auto operands = broadcastOperands(node);
  if (failed(operands))
    return failure();
  auto [lhs, rhs, type] = *operands;
  return llvm::SmallVector<Value>{multiply(node, type, lhs, rhs)};
}

/// TOSA has no float division: a / b is a * reciprocal(b).
static Results lowerDiv(ONNXNode &node) {
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

static Results lowerRelu(ONNXNode &node) {
  auto input = node.getFloatInput(0);
  if (failed(input))
    return failure();
  // An upper bound of +inf keeps relu(inf) = inf.
  Type elementType = input->getType().getElementType();
  return llvm::SmallVector<Value>{tosa::ClampOp::create(
      node.builder, node.loc, input->getType(), *input,
      node.builder.getFloatAttr(elementType, 0.0),
      node.builder.getFloatAttr(elementType,
                                std::numeric_limits<double>::infinity()))};
}

static Results lowerNeg(ONNXNode &node) {
  auto input = node.getFloatInput(0);
  if (failed(input))
    return failure();
  Type elementType = input->getType().getElementType();
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
  auto input = node.getFloatInput(0);
  if (failed(input))
    return failure();
  return llvm::SmallVector<Value>{*input};
}

/// numpy matmul over operands of rank >= 2 as one 3-D tosa.matmul: equal
/// batch dimensions are flattened into its batch; a 2-D right operand
/// (x @ W) folds the left batch into its rows instead.
static Results lowerMatMul(ONNXNode &node) {
  auto lhs = node.getFloatInput(0);
  auto rhs = node.getFloatInput(1);
  if (failed(lhs) || failed(rhs))
    return failure();
  RankedTensorType lhsType = lhs->getType(), rhsType = rhs->getType();
  if (lhsType.getElementType() != rhsType.getElementType())
    return node.emitError() << "operand element types differ";
  if (lhsType.getRank() < 2 || rhsType.getRank() < 2)
    return node.emitError() << "1-D operands are not supported";
  llvm::ArrayRef<int64_t> lhsShape = lhsType.getShape(),
                          rhsShape = rhsType.getShape();
  int64_t m = lhsShape[lhsShape.size() - 2], k = lhsShape.back();
  int64_t n = rhsShape.back();
  if (rhsShape[rhsShape.size() - 2] != k)
    return node.emitError() << "contraction dimensions of " << lhsType
                            << " and " << rhsType << " differ";
  llvm::ArrayRef<int64_t> lhsBatch = lhsShape.drop_back(2),
                          rhsBatch = rhsShape.drop_back(2);
  auto product = [](llvm::ArrayRef<int64_t> dims) {
    return std::accumulate(dims.begin(), dims.end(), int64_t{1},
                           std::multiplies<int64_t>());
  };
  int64_t batch, rows;
  if (rhsBatch.empty()) {
    batch = 1;
    rows = product(lhsBatch) * m;
  } else if (lhsBatch == rhsBatch) {
    batch = product(lhsBatch);
    rows = m;
  } else {
    return node.emitError() << "broadcasting batch dimensions of " << lhsType
                            << " and " << rhsType << " is not supported";
  }
  Type elementType = lhsType.getElementType();
  Value a = reshape(node, *lhs, {batch, rows, k});
  Value b = reshape(node, *rhs, {batch, k, n});
  Value zero = splat(node, elementType, 0.0, 1);
  Value product3d = tosa::MatMulOp::create(
      node.builder, node.loc,
      RankedTensorType::get({batch, rows, n}, elementType), a, b, zero, zero);
  llvm::SmallVector<int64_t> shape(lhsBatch);
  shape.append({m, n});
  return llvm::SmallVector<Value>{reshape(node, product3d, shape)};
}

static Results lowerTranspose(ONNXNode &node) {
  auto input = node.getFloatInput(0);
  if (failed(input))
    return failure();
  RankedTensorType type = input->getType();
  int64_t rank = type.getRank();
  // The default permutation reverses the dimensions.
  llvm::SmallVector<int64_t> perm = node.getIntsAttribute("perm").value_or(
      llvm::SmallVector<int64_t>(llvm::reverse(llvm::seq<int64_t>(0, rank))));
  llvm::SmallVector<bool> seen(rank, false);
  llvm::SmallVector<int32_t> perms;
  llvm::SmallVector<int64_t> shape;
  // An empty (or non-INTS) 'perm' has no entry for the loop to reject.
  if (static_cast<int64_t>(perm.size()) != rank)
    return node.emitError()
           << "'perm' is not a permutation of " << rank << " dimensions";
  for (int64_t dim : perm) {
    if (dim < 0 || dim >= rank || seen[dim])
      return node.emitError()
             << "'perm' is not a permutation of " << rank << " dimensions";
    seen[dim] = true;
    perms.push_back(static_cast<int32_t>(dim));
    shape.push_back(type.getDimSize(dim));
  }
  return llvm::SmallVector<Value>{tosa::TransposeOp::create(
      node.builder, node.loc, type.clone(shape), *input,
      node.builder.getDenseI32ArrayAttr(perms))};
}

/// The target shape must be a constant; 0 copies the input dimension
/// (unless allowzero) and one -1 takes what is left.
static Results lowerReshape(ONNXNode &node) {
  auto input = node.getFloatInput(0);
  if (failed(input))
    return failure();
  DenseElementsAttr shapeAttr = node.getConstantInput(1);
  if (!shapeAttr || !shapeAttr.getElementType().isInteger(64))
    return node.emitError()
           << "the shape operand must be a constant int64 tensor";
  RankedTensorType type = input->getType();
  bool allowZero = node.getIntAttribute("allowzero", 0) != 0;
  llvm::SmallVector<int64_t> shape;
  std::optional<size_t> inferred;
  int64_t known = 1;
  for (const auto &[index, value] :
       llvm::enumerate(shapeAttr.getValues<int64_t>())) {
    int64_t dim = value;
    if (dim == 0 && !allowZero) {
      if (static_cast<int64_t>(index) >= type.getRank())
        return node.emitError() << "shape entry " << index
                                << " is 0 but the input has no such dimension";
      dim = type.getDimSize(index);
    }
    if (dim == -1) {
      if (inferred)
        return node.emitError() << "the shape has more than one -1";
      inferred = index;
    } else if (dim < 0) {
      return node.emitError() << "shape entry " << index << " is " << dim;
    } else if (llvm::MulOverflow(known, dim, known)) {
      return node.emitError() << "the shape has more elements than fit in 64 "
                              << "bits";
    }
    shape.push_back(dim);
  }
  int64_t count = type.getNumElements();
  if (inferred) {
    if (known == 0 || count % known != 0)
      return node.emitError() << "cannot infer the -1 entry of the shape";
    shape[*inferred] = count / known;
    known = count;
  }
  if (known != count)
    return node.emitError()
           << "cannot reshape " << type << " to " << shape.size()
           << " dimensions of " << known << " elements";
  return llvm::SmallVector<Value>{reshape(node, *input, shape)};
}

/// Softmax over the last axis, stabilized by its maximum:
/// exp(x - max) * reciprocal(sum(exp(x - max))). Before opset 13 the axis
/// flattened the input to 2-D; for the last axis both readings agree.
static Results lowerSoftmax(ONNXNode &node) {
  auto input = node.getFloatInput(0);
  if (failed(input))
    return failure();
  RankedTensorType type = input->getType();
  int64_t rank = type.getRank();
  int64_t axis = node.getIntAttribute("axis", node.opset >= 13 ? -1 : 1);
  if (axis < 0)
    axis += rank;
  if (rank == 0 || axis != rank - 1)
    return node.emitError()
           << "only the last axis is supported (axis "
           << node.getIntAttribute("axis", 0) << " of rank " << rank << ")";
  llvm::SmallVector<int64_t> reducedShape(type.getShape());
  reducedShape.back() = 1;
  RankedTensorType reducedType = type.clone(reducedShape);
  OpBuilder &b = node.builder;
  auto axisAttr = b.getI32IntegerAttr(static_cast<int32_t>(axis));
  Value max =
      tosa::ReduceMaxOp::create(b, node.loc, reducedType, *input, axisAttr);
  Value shifted = tosa::SubOp::create(b, node.loc, type, *input, max);
  Value exp = tosa::ExpOp::create(b, node.loc, type, shifted);
  Value sum =
      tosa::ReduceSumOp::create(b, node.loc, reducedType, exp, axisAttr);
  Value inverse = tosa::ReciprocalOp::create(b, node.loc, reducedType, sum);
  return llvm::SmallVector<Value>{multiply(node, type, exp, inverse)};
}

const llvm::StringMap<NodeLowering> &
mlir::afm::onnx_import::getONNXToTOSALowerings() {
  static const llvm::StringMap<NodeLowering> lowerings = {
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
      {"MatMul", lowerMatMul},
      {"Transpose", lowerTranspose},
      {"Reshape", lowerReshape},
      {"Softmax", lowerSoftmax},
      {"Identity", lowerIdentity},
  };
  return lowerings;
}
