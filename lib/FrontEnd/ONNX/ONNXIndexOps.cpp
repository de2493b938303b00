//===- ONNXIndexOps.cpp - ONNX ops that pick elements by index ------------===//
//
// GatherElements (an index per output element along one axis) and
// ArgMax / ArgMin (the position of the extreme along one axis, as INT64).
// Both compute positions, which TOSA cannot say (tosa.argmax gives i32 and
// always the first extreme), so they are linalg.generic ops reading their
// inputs with tensor.extract.
//
//===----------------------------------------------------------------------===//

#include "ONNXBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::afm::onnx_import;

/// out[i...] = data[i...] with the `axis` index replaced by
/// indices[i...] (negative counting from the end).
static Results lowerGatherElements(ONNXNode &node) {
  auto operands = getGatherOperands(node);
  if (failed(operands))
    return failure();
  auto [dataValue, indicesValue, axis] = *operands;
  RankedTensorType dataType = dataValue.getType(),
                   indicesType = indicesValue.getType();
  if (indicesType.getRank() != dataType.getRank())
    return node.emitError() << "indices have rank " << indicesType.getRank()
                            << ", data rank " << dataType.getRank();
  int64_t extent = dataType.getDimSize(axis);
  Value result = generateTensor(
      node, dataType.clone(indicesType.getShape()),
      [&](OpBuilder &b, Location loc, ValueRange at) -> Value {
        Value raw = tensor::ExtractOp::create(b, loc, indicesValue, at);
        llvm::SmallVector<Value> dataAt(at);
        dataAt[axis] = wrapIndex(b, loc, raw, extent);
        return tensor::ExtractOp::create(b, loc, dataValue, dataAt);
      });
  if (node.isUnsignedInput(0) && node.hasOutput(0))
    node.table.define(node.proto.output(0), result, /*isUnsigned=*/true);
  return llvm::SmallVector<Value>{result};
}

/// The first (or with select_last_index the last) position of the
/// maximum or minimum along `axis`. The accumulator is the best position
/// so far, starting at 0: each step compares the element there with the
/// candidate, so one pass needs no sentinel value.
template <bool isMax> static Results lowerArgExtreme(ONNXNode &node) {
  auto input = node.getInput(0);
  if (failed(input))
    return failure();
  RankedTensorType type = input->getType();
  int64_t rank = type.getRank();
  if (rank == 0)
    return node.emitError() << "the input must have rank >= 1";
  auto axis = normalizeAxis(node, node.getIntAttribute("axis", 0), rank);
  if (failed(axis))
    return failure();
  int64_t extent = type.getDimSize(*axis);
  if (extent == 0)
    return node.emitError() << "the reduced axis " << *axis << " is empty";
  bool keepDims = node.getIntAttribute("keepdims", 1) != 0;
  bool selectLast = node.getIntAttribute("select_last_index", 0) != 0;
  bool isUnsigned = node.isUnsignedInput(0);
  Type elementType = type.getElementType();

  llvm::SmallVector<int64_t> shape(type.getShape());
  if (keepDims)
    shape[*axis] = 1;
  else
    shape.erase(shape.begin() + *axis);
  Type i64 = node.builder.getI64Type();
  auto resultType = RankedTensorType::get(shape, i64);
  Value data = *input;
  Value result = reduceIndexed(
      node, resultType, {extent}, node.builder.getI64IntegerAttr(0),
      [&](OpBuilder &b, Location loc, ValueRange at, ValueRange over,
          Value best) -> Value {
        llvm::SmallVector<Value> position(at);
        auto read = [&](Value index) -> Value {
          if (keepDims)
            position[*axis] = index;
          else
            position.insert(position.begin() + *axis, index);
          Value element = tensor::ExtractOp::create(b, loc, data, position);
          if (!keepDims)
            position.erase(position.begin() + *axis);
          return element;
        };
        Value bestIndex =
            arith::IndexCastOp::create(b, loc, b.getIndexType(), best);
        Value candidate = read(over[0]), incumbent = read(bestIndex);
        Value better;
        if (isa<FloatType>(elementType)) {
          auto strict = isMax ? arith::CmpFPredicate::OGT
                              : arith::CmpFPredicate::OLT;
          auto orEqual = isMax ? arith::CmpFPredicate::OGE
                               : arith::CmpFPredicate::OLE;
          better = arith::CmpFOp::create(b, loc, selectLast ? orEqual : strict,
                                         candidate, incumbent);
        } else {
          using P = arith::CmpIPredicate;
          P predicate =
              isMax ? (isUnsigned ? (selectLast ? P::uge : P::ugt)
                                  : (selectLast ? P::sge : P::sgt))
                    : (isUnsigned ? (selectLast ? P::ule : P::ult)
                                  : (selectLast ? P::sle : P::slt));
          better =
              arith::CmpIOp::create(b, loc, predicate, candidate, incumbent);
        }
        Value index = arith::IndexCastOp::create(b, loc, i64, over[0]);
        return arith::SelectOp::create(b, loc, better, index, best);
      });
  return llvm::SmallVector<Value>{result};
}

void mlir::afm::onnx_import::registerIndexLowerings(
    llvm::StringMap<NodeLowering> &lowerings) {
  lowerings["GatherElements"] = lowerGatherElements;
  lowerings["ArgMax"] = lowerArgExtreme<true>;
  lowerings["ArgMin"] = lowerArgExtreme<false>;
}
