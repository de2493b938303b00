//===- TOSABuilders.cpp - small TOSA builders the ONNX lowerings share ----===//

#include "TOSABuilders.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Tosa/Utils/ConversionUtils.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

using namespace mlir;
using namespace mlir::afm;
using namespace mlir::afm::onnx_import;

Value onnx_import::reshape(ONNXNode &node, Value input,
                           llvm::ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(input.getType());
  if (type.getShape() == shape)
    return input;
  ImplicitLocOpBuilder b(node.loc, node.builder);
  return tosa::ReshapeOp::create(b, type.clone(shape), input,
                                 tosa::getTosaConstShape(b, shape));
}

Value onnx_import::splat(ONNXNode &node, Type elementType, double value,
                         int64_t rank) {
  auto type =
      RankedTensorType::get(llvm::SmallVector<int64_t>(rank, 1), elementType);
  return tosa::ConstOp::create(
      node.builder, node.loc, type,
      DenseElementsAttr::get(type,
                             node.builder.getFloatAttr(elementType, value)));
}

FailureOr<std::tuple<Value, Value, RankedTensorType>>
onnx_import::broadcastOperands(ONNXNode &node) {
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

Value onnx_import::multiply(ONNXNode &node, Type type, Value lhs, Value rhs) {
  auto shiftType = RankedTensorType::get({1}, node.builder.getI8Type());
  Value shift = tosa::ConstOp::create(
      node.builder, node.loc, shiftType,
      DenseElementsAttr::get(shiftType, node.builder.getI8IntegerAttr(0)));
  return tosa::MulOp::create(node.builder, node.loc, type, lhs, rhs, shift);
}
