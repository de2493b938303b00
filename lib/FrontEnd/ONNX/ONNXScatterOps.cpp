//===- ONNXScatterOps.cpp - ONNX ops that write elements by index ---------===//
//
// ScatterElements (an index per update element along one axis) and
// ScatterND (index tuples naming slices), with their `reduction` (none,
// add, mul, max, min). A scatter is written as a gather from the other
// side: each output element starts as the data's and folds in, in order,
// every update whose index names it. That is one linalg.generic whose
// reduction loops run over the updates that could land on the element, so
// it stays in tensors with no write conflicts; the cost is (output
// elements) x (updates per element), fine for the routing tables and
// cache updates exporters emit.
//
//===----------------------------------------------------------------------===//

#include "ONNXBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::afm::onnx_import;

namespace {
/// How an update combines with the element it lands on.
enum class ScatterReduction { None, Add, Mul, Max, Min };
} // namespace

static FailureOr<ScatterReduction> getScatterReduction(ONNXNode &node) {
  const onnx::AttributeProto *attr = node.getAttribute("reduction");
  if (!attr || attr->s() == "none")
    return ScatterReduction::None;
  if (attr->s() == "add")
    return ScatterReduction::Add;
  if (attr->s() == "mul")
    return ScatterReduction::Mul;
  if (attr->s() == "max")
    return ScatterReduction::Max;
  if (attr->s() == "min")
    return ScatterReduction::Min;
  return node.emitError() << "reduction '" << attr->s()
                          << "' is not one of none, add, mul, max, min";
}

static Value combine(OpBuilder &b, Location loc, ScatterReduction reduction,
                     bool isUnsigned, Value acc, Value update) {
  bool isFloat = isa<FloatType>(acc.getType());
  switch (reduction) {
  case ScatterReduction::None:
    return update;
  case ScatterReduction::Add:
    return isFloat ? arith::AddFOp::create(b, loc, acc, update).getResult()
                   : arith::AddIOp::create(b, loc, acc, update).getResult();
  case ScatterReduction::Mul:
    return isFloat ? arith::MulFOp::create(b, loc, acc, update).getResult()
                   : arith::MulIOp::create(b, loc, acc, update).getResult();
  case ScatterReduction::Max:
    if (isFloat)
      return arith::MaximumFOp::create(b, loc, acc, update);
    return isUnsigned ? arith::MaxUIOp::create(b, loc, acc, update).getResult()
                      : arith::MaxSIOp::create(b, loc, acc, update).getResult();
  case ScatterReduction::Min:
    if (isFloat)
      return arith::MinimumFOp::create(b, loc, acc, update);
    return isUnsigned ? arith::MinUIOp::create(b, loc, acc, update).getResult()
                      : arith::MinSIOp::create(b, loc, acc, update).getResult();
  }
  llvm_unreachable("unknown scatter reduction");
}

/// The result of a scatter: `data` with its unsigned flag, as output 0.
static Results scatterResult(ONNXNode &node, Value result) {
  if (node.isUnsignedInput(0) && node.hasOutput(0))
    node.table.define(node.proto.output(0), result, /*isUnsigned=*/true);
  return llvm::SmallVector<Value>{result};
}

/// ScatterElements: out = data, then for each position p of indices,
/// out[p with the axis index replaced by indices[p]] (reduced with)
/// updates[p]. Output element o takes the updates at p = o with the axis
/// index running over indices' axis, where p lies inside indices.
static Results lowerScatterElements(ONNXNode &node) {
  auto operands = getGatherOperands(node);
  auto updates = node.getInput(2);
  auto reduction = getScatterReduction(node);
  if (failed(operands) || failed(updates) || failed(reduction))
    return failure();
  TypedValue<RankedTensorType> data = operands->data,
                               indices = operands->indices;
  int64_t axis = operands->axis;
  RankedTensorType dataType = data.getType(), indicesType = indices.getType();
  if (indicesType.getRank() != dataType.getRank())
    return node.emitError() << "indices have rank " << indicesType.getRank()
                            << ", data rank " << dataType.getRank();
  if (updates->getType().getShape() != indicesType.getShape())
    return node.emitError() << "updates and indices differ in shape";
  if (updates->getType().getElementType() != dataType.getElementType())
    return node.emitError() << "updates and data differ in element type";
  for (int64_t dim = 0; dim < dataType.getRank(); ++dim)
    if (dim != axis && indicesType.getDimSize(dim) > dataType.getDimSize(dim))
      return node.emitError()
             << "indices dimension " << dim << " (" << indicesType.getDimSize(dim)
             << ") exceeds the data's (" << dataType.getDimSize(dim) << ")";
  int64_t extent = dataType.getDimSize(axis);
  bool isUnsigned = node.isUnsignedInput(0);
  Value updatesValue = *updates;
  Value result = reduceIndexedInto(
      node, data, {indicesType.getDimSize(axis)},
      [&](OpBuilder &b, Location loc, ValueRange at, ValueRange over,
          Value acc) -> Value {
        Value inside = arith::ConstantIntOp::create(b, loc, 1, 1);
        Value zero = arith::ConstantIndexOp::create(b, loc, 0);
        llvm::SmallVector<Value> position;
        for (int64_t dim = 0; dim < dataType.getRank(); ++dim) {
          if (dim == axis) {
            position.push_back(over[0]);
            continue;
          }
          int64_t bound = indicesType.getDimSize(dim);
          if (bound == dataType.getDimSize(dim)) {
            position.push_back(at[dim]);
            continue;
          }
          // Outside indices along this dimension: nothing lands here; read
          // at 0 so that the read stays in bounds.
          Value within = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::ult, at[dim],
              arith::ConstantIndexOp::create(b, loc, bound));
          inside = arith::AndIOp::create(b, loc, inside, within);
          position.push_back(
              arith::SelectOp::create(b, loc, within, at[dim], zero));
        }
        Value raw = tensor::ExtractOp::create(b, loc, indices, position);
        Value target = wrapIndex(b, loc, raw, extent);
        Value hit = arith::AndIOp::create(
            b, loc, inside,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, target,
                                  at[axis]));
        Value update = tensor::ExtractOp::create(b, loc, updatesValue, position);
        Value combined = combine(b, loc, *reduction, isUnsigned, acc, update);
        return arith::SelectOp::create(b, loc, hit, combined, acc);
      });
  return scatterResult(node, result);
}

/// ScatterND: out = data, then for each index tuple t = indices[i..., :]
/// (m numbers), out[t..., j...] (reduced with) updates[i..., j...].
/// Output element o takes the updates of every tuple equal to o's first m
/// indices.
static Results lowerScatterND(ONNXNode &node) {
  auto data = node.getInput(0);
  auto indices = node.getInput(1);
  auto updates = node.getInput(2);
  auto reduction = getScatterReduction(node);
  if (failed(data) || failed(indices) || failed(updates) || failed(reduction))
    return failure();
  RankedTensorType dataType = data->getType(), indicesType = indices->getType();
  if (!isa<IntegerType>(indicesType.getElementType()))
    return node.emitError() << "indices must be integers";
  int64_t rank = dataType.getRank(), indexRank = indicesType.getRank();
  if (indexRank < 1)
    return node.emitError() << "indices must have rank >= 1";
  int64_t depth = indicesType.getDimSize(indexRank - 1);
  if (depth < 1 || depth > rank)
    return node.emitError() << "index tuples of " << depth
                            << " do not fit data rank " << rank;
  llvm::SmallVector<int64_t> updatesShape(indicesType.getShape().drop_back());
  llvm::append_range(updatesShape, dataType.getShape().drop_front(depth));
  if (updates->getType().getShape() != llvm::ArrayRef<int64_t>(updatesShape))
    return node.emitError() << "updates must have shape indices.shape[:-1] + "
                               "data.shape[" << depth << ":]";
  if (updates->getType().getElementType() != dataType.getElementType())
    return node.emitError() << "updates and data differ in element type";
  bool isUnsigned = node.isUnsignedInput(0);
  Value indicesValue = *indices, updatesValue = *updates;
  Value result = reduceIndexedInto(
      node, *data, indicesType.getShape().drop_back(),
      [&](OpBuilder &b, Location loc, ValueRange at, ValueRange over,
          Value acc) -> Value {
        Value hit = arith::ConstantIntOp::create(b, loc, 1, 1);
        for (int64_t m = 0; m < depth; ++m) {
          llvm::SmallVector<Value> indexAt(over);
          indexAt.push_back(arith::ConstantIndexOp::create(b, loc, m));
          Value raw = tensor::ExtractOp::create(b, loc, indicesValue, indexAt);
          Value target = wrapIndex(b, loc, raw, dataType.getDimSize(m));
          hit = arith::AndIOp::create(
              b, loc, hit,
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, target,
                                    at[m]));
        }
        llvm::SmallVector<Value> updateAt(over);
        llvm::append_range(updateAt, at.drop_front(depth));
        Value update = tensor::ExtractOp::create(b, loc, updatesValue, updateAt);
        Value combined = combine(b, loc, *reduction, isUnsigned, acc, update);
        return arith::SelectOp::create(b, loc, hit, combined, acc);
      });
  return scatterResult(node, result);
}

void mlir::afm::onnx_import::registerScatterLowerings(
    llvm::StringMap<NodeLowering> &lowerings) {
  lowerings["ScatterElements"] = lowerScatterElements;
  lowerings["Scatter"] = lowerScatterElements; // deprecated, same semantics
  lowerings["ScatterND"] = lowerScatterND;
}
