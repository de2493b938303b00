//===- ONNXIndexOps.cpp - ONNX ops that pick elements by index ------------===//
//
// GatherElements (an index per output element along one axis), GatherND
// (index tuples naming slices), ArgMax / ArgMin (the position of the
// extreme along one axis, as INT64), Hardmax (1 at the first maximum
// along one axis), TopK (the k extremes along one axis and their
// positions), OneHot and EyeLike.
// Both compute positions, which TOSA cannot say (tosa.argmax gives i32 and
// always the first extreme), so they are linalg.generic ops reading their
// inputs with tensor.extract.
//
//===----------------------------------------------------------------------===//

#include "ONNXBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"

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

namespace {
/// What an arg-extreme reduction looks for.
struct ArgExtreme {
  bool isMax, keepDims, selectLast, isUnsigned;
};
} // namespace

/// The first (or with selectLast the last) position of the maximum or
/// minimum of `data` along `axis`, as INT64. The accumulator is the best
/// position so far, starting at 0: each step compares the element there
/// with the candidate, so one pass needs no sentinel value.
static Value buildArgExtreme(ONNXNode &node, TypedValue<RankedTensorType> data,
                             int64_t axis, ArgExtreme kind) {
  RankedTensorType type = data.getType();
  Type elementType = type.getElementType();
  llvm::SmallVector<int64_t> shape(type.getShape());
  if (kind.keepDims)
    shape[axis] = 1;
  else
    shape.erase(shape.begin() + axis);
  Type i64 = node.builder.getI64Type();
  return reduceIndexed(
      node, RankedTensorType::get(shape, i64), {type.getDimSize(axis)},
      node.builder.getI64IntegerAttr(0),
      [&](OpBuilder &b, Location loc, ValueRange at, ValueRange over,
          Value best) -> Value {
        llvm::SmallVector<Value> position(at);
        auto read = [&](Value index) -> Value {
          if (kind.keepDims)
            position[axis] = index;
          else
            position.insert(position.begin() + axis, index);
          Value element = tensor::ExtractOp::create(b, loc, data, position);
          if (!kind.keepDims)
            position.erase(position.begin() + axis);
          return element;
        };
        Value bestIndex =
            arith::IndexCastOp::create(b, loc, b.getIndexType(), best);
        Value candidate = read(over[0]), incumbent = read(bestIndex);
        Value better;
        if (isa<FloatType>(elementType)) {
          using P = arith::CmpFPredicate;
          P strict = kind.isMax ? P::OGT : P::OLT;
          P orEqual = kind.isMax ? P::OGE : P::OLE;
          better = arith::CmpFOp::create(
              b, loc, kind.selectLast ? orEqual : strict, candidate, incumbent);
        } else {
          using P = arith::CmpIPredicate;
          P predicate =
              kind.isMax
                  ? (kind.isUnsigned ? (kind.selectLast ? P::uge : P::ugt)
                                     : (kind.selectLast ? P::sge : P::sgt))
                  : (kind.isUnsigned ? (kind.selectLast ? P::ule : P::ult)
                                     : (kind.selectLast ? P::sle : P::slt));
          better =
              arith::CmpIOp::create(b, loc, predicate, candidate, incumbent);
        }
        Value index = arith::IndexCastOp::create(b, loc, i64, over[0]);
        return arith::SelectOp::create(b, loc, better, index, best);
      });
}

/// The input and its `axis` attribute (default `defaultAxis`) as a
/// non-empty dimension.
static FailureOr<std::pair<TypedValue<RankedTensorType>, int64_t>>
getAxisInput(ONNXNode &node, int64_t defaultAxis) {
  auto input = node.getInput(0);
  if (failed(input))
    return failure();
  int64_t rank = input->getType().getRank();
  if (rank == 0)
    return node.emitError() << "the input must have rank >= 1";
  auto axis =
      normalizeAxis(node, node.getIntAttribute("axis", defaultAxis), rank);
  if (failed(axis))
    return failure();
  if (input->getType().getDimSize(*axis) == 0)
    return node.emitError() << "the reduced axis " << *axis << " is empty";
  return std::make_pair(*input, *axis);
}

template <bool isMax> static Results lowerArgExtreme(ONNXNode &node) {
  auto input = getAxisInput(node, 0);
  if (failed(input))
    return failure();
  ArgExtreme kind{isMax, node.getIntAttribute("keepdims", 1) != 0,
                  node.getIntAttribute("select_last_index", 0) != 0,
                  node.isUnsignedInput(0)};
  return llvm::SmallVector<Value>{
      buildArgExtreme(node, input->first, input->second, kind)};
}

/// 1 at the first maximum along `axis`, 0 elsewhere. Before opset 13 the
/// input is read as 2-D ([before axis, from axis on]) and the maximum is
/// over each row.
static Results lowerHardmax(ONNXNode &node) {
  bool singleAxis = node.opset >= 13;
  auto input = getAxisInput(node, singleAxis ? -1 : 1);
  if (failed(input))
    return failure();
  auto [data, axis] = *input;
  RankedTensorType type = data.getType();
  if (!isa<FloatType>(type.getElementType()))
    return node.emitError() << "the input must be a float tensor";
  if (!singleAxis) {
    llvm::ArrayRef<int64_t> shape = type.getShape();
    int64_t rows = 1, columns = 1;
    for (int64_t dim : shape.take_front(axis))
      rows *= dim;
    for (int64_t dim : shape.drop_front(axis))
      columns *= dim;
    data = cast<TypedValue<RankedTensorType>>(
        reshape(node, data, {rows, columns}));
    axis = 1;
  }
  Value index = buildArgExtreme(node, data, axis,
                                ArgExtreme{true, true, false, false});
  RankedTensorType resultType = data.getType();
  Value result = generateTensor(
      node, resultType, [&](OpBuilder &b, Location loc, ValueRange at) {
        llvm::SmallVector<Value> indexAt(at);
        indexAt[axis] = arith::ConstantIndexOp::create(b, loc, 0);
        Value best = tensor::ExtractOp::create(b, loc, index, indexAt);
        Value here =
            arith::IndexCastOp::create(b, loc, b.getI64Type(), at[axis]);
        Value isBest = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                             best, here);
        return arith::UIToFPOp::create(b, loc, resultType.getElementType(),
                                       isBest)
            .getResult();
      });
  return llvm::SmallVector<Value>{reshape(node, result, type.getShape())};
}

/// The most k TopK takes: each of the k positions is one pass over the
/// axis (an MoE router's k is at most a few dozen).
static constexpr int64_t kMaxTopK = 256;

/// TopK: the k largest (or smallest) elements along `axis`, sorted, and
/// their positions as INT64; equal elements in order of position (the
/// spec's rule since opset 11). Pass i finds the best element that comes
/// after pass i - 1's in that total order (value, then lower position),
/// so each pass is one reduction whose result does not depend on the
/// order it visits the axis in.
static Results lowerTopK(ONNXNode &node) {
  auto input = getAxisInput(node, -1);
  if (failed(input))
    return failure();
  TypedValue<RankedTensorType> data = input->first;
  int64_t axis = input->second;
  auto kValues = node.getConstantInts(1, "k");
  if (failed(kValues))
    return failure();
  RankedTensorType type = data.getType();
  int64_t extent = type.getDimSize(axis);
  if (kValues->size() != 1)
    return node.emitError() << "k must hold one value, not "
                            << kValues->size();
  int64_t k = kValues->front();
  if (k < 1 || k > extent)
    return node.emitError() << "k = " << k << " is outside [1, " << extent
                            << "], the length of axis " << axis;
  if (k > kMaxTopK)
    return node.emitError() << "k = " << k << " is more than the "
                            << kMaxTopK << " this importer takes";
  bool largest = node.getIntAttribute("largest", 1) != 0;
  bool isUnsigned = node.isUnsignedInput(0);
  Type elementType = type.getElementType();
  Type i64 = node.builder.getI64Type();
  llvm::SmallVector<int64_t> oneShape(type.getShape());
  oneShape[axis] = 1;
  auto oneType = RankedTensorType::get(oneShape, i64);

  // (a, i) before (b, j) in the output order.
  auto before = [&](OpBuilder &b, Location loc, Value a, Value i, Value x,
                    Value j) -> Value {
    Value ahead, same;
    if (isa<FloatType>(elementType)) {
      using P = arith::CmpFPredicate;
      ahead = arith::CmpFOp::create(b, loc, largest ? P::OGT : P::OLT, a, x);
      same = arith::CmpFOp::create(b, loc, P::OEQ, a, x);
    } else {
      using P = arith::CmpIPredicate;
      P order = largest ? (isUnsigned ? P::ugt : P::sgt)
                        : (isUnsigned ? P::ult : P::slt);
      ahead = arith::CmpIOp::create(b, loc, order, a, x);
      same = arith::CmpIOp::create(b, loc, P::eq, a, x);
    }
    Value earlier =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i, j);
    Value tie = arith::AndIOp::create(b, loc, same, earlier);
    return arith::OrIOp::create(b, loc, ahead, tie);
  };

  llvm::SmallVector<Value> passes;
  for (int64_t pass = 0; pass < k; ++pass) {
    Value previous = pass == 0 ? Value() : passes.back();
    passes.push_back(reduceIndexed(
        node, oneType, {extent}, node.builder.getI64IntegerAttr(-1),
        [&](OpBuilder &b, Location loc, ValueRange at, ValueRange over,
            Value best) -> Value {
          auto read = [&](Value position) -> Value {
            llvm::SmallVector<Value> where(at);
            where[axis] =
                arith::IndexCastOp::create(b, loc, b.getIndexType(), position);
            return tensor::ExtractOp::create(b, loc, data, where);
          };
          Value zero = arith::ConstantIntOp::create(b, loc, i64, 0);
          Value here = arith::IndexCastOp::create(b, loc, i64, over[0]);
          Value candidate = read(here);
          Value none = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                             best, zero);
          Value incumbent =
              read(arith::SelectOp::create(b, loc, none, zero, best));
          Value take = arith::OrIOp::create(
              b, loc, none, before(b, loc, candidate, here, incumbent, best));
          if (previous) {
            Value last = tensor::ExtractOp::create(b, loc, previous, at);
            Value eligible = before(b, loc, read(last), last, candidate, here);
            take = arith::AndIOp::create(b, loc, eligible, take);
          }
          return arith::SelectOp::create(b, loc, take, here, best);
        }));
  }
  llvm::SmallVector<int64_t> shape(type.getShape());
  shape[axis] = k;
  auto indicesType = RankedTensorType::get(shape, i64);
  Value indices =
      k == 1 ? passes.front()
             : tosa::ConcatOp::create(node.builder, node.loc, indicesType,
                                      passes, node.builder.getI32IntegerAttr(
                                                  static_cast<int32_t>(axis)))
                   .getResult();
  Value values = generateTensor(
      node, type.clone(shape), [&](OpBuilder &b, Location loc, ValueRange at) {
        Value position = tensor::ExtractOp::create(b, loc, indices, at);
        llvm::SmallVector<Value> where(at);
        where[axis] =
            arith::IndexCastOp::create(b, loc, b.getIndexType(), position);
        return tensor::ExtractOp::create(b, loc, data, where).getResult();
      });
  if (isUnsigned && node.hasOutput(0))
    node.table.define(node.proto.output(0), values, /*isUnsigned=*/true);
  return llvm::SmallVector<Value>{values, indices};
}

/// GatherND: out[b..., i..., j...] = data[b..., indices[b..., i..., :],
/// j...], the first batch_dims dimensions shared, each index tuple
/// (negative from the end) naming a slice of the rest.
static Results lowerGatherND(ONNXNode &node) {
  auto data = node.getInput(0);
  auto indices = node.getInput(1);
  if (failed(data) || failed(indices))
    return failure();
  RankedTensorType dataType = data->getType(),
                   indicesType = indices->getType();
  if (!isa<IntegerType>(indicesType.getElementType()))
    return node.emitError() << "indices must be integers";
  int64_t batch = node.getIntAttribute("batch_dims", 0);
  int64_t rank = dataType.getRank(), indexRank = indicesType.getRank();
  if (indexRank < 1 || batch < 0 || batch >= std::min(rank, indexRank))
    return node.emitError() << "batch_dims " << batch
                            << " does not fit data rank " << rank
                            << " and indices rank " << indexRank;
  int64_t depth = indicesType.getDimSize(indexRank - 1);
  if (depth > rank - batch)
    return node.emitError() << "index tuples of " << depth
                            << " exceed data rank " << rank
                            << " after batch_dims " << batch;
  for (int64_t dim = 0; dim < batch; ++dim)
    if (dataType.getDimSize(dim) != indicesType.getDimSize(dim))
      return node.emitError() << "batch dimension " << dim
                              << " differs between data and indices";
  llvm::SmallVector<int64_t> shape(indicesType.getShape().drop_back());
  llvm::append_range(shape, dataType.getShape().drop_front(batch + depth));
  Value dataValue = *data, indicesValue = *indices;
  Value result = generateTensor(
      node, dataType.clone(shape),
      [&](OpBuilder &b, Location loc, ValueRange at) -> Value {
        ValueRange tuple = at.take_front(indexRank - 1);
        llvm::SmallVector<Value> dataAt(at.take_front(batch));
        for (int64_t m = 0; m < depth; ++m) {
          llvm::SmallVector<Value> indexAt(tuple);
          indexAt.push_back(arith::ConstantIndexOp::create(b, loc, m));
          Value raw = tensor::ExtractOp::create(b, loc, indicesValue, indexAt);
          dataAt.push_back(
              wrapIndex(b, loc, raw, dataType.getDimSize(batch + m)));
        }
        llvm::append_range(dataAt, at.drop_front(indexRank - 1));
        return tensor::ExtractOp::create(b, loc, dataValue, dataAt);
      });
  return llvm::SmallVector<Value>{result};
}

/// A constant scalar (or one-element) input read as a number of any
/// element type, or failure with an error naming it `what`.
static FailureOr<double> getConstantNumber(ONNXNode &node, unsigned index,
                                           llvm::StringRef what) {
  DenseElementsAttr attr = node.getConstantInput(index);
  if (!attr || attr.getNumElements() != 1)
    return node.emitError() << "the " << what
                            << " operand must be a constant scalar (shapes "
                               "are static; bind the input to specialize "
                               "the model)";
  Attribute value = *attr.getValues<Attribute>().begin();
  if (auto number = dyn_cast<FloatAttr>(value))
    return number.getValueAsDouble();
  return static_cast<double>(cast<IntegerAttr>(value).getInt());
}

/// OneHot: a new `axis` dimension of `depth` holding values[1] where it
/// equals the index (negative counting back from depth) and values[0]
/// elsewhere.
static Results lowerOneHot(ONNXNode &node) {
  auto indices = node.getInput(0);
  auto values = node.getInput(2);
  if (failed(indices) || failed(values))
    return failure();
  auto depthValue = getConstantNumber(node, 1, "depth");
  if (failed(depthValue))
    return failure();
  auto depth = static_cast<int64_t>(*depthValue);
  if (depth < 1)
    return node.emitError() << "depth " << depth << " is not positive";
  if (values->getType().getNumElements() != 2)
    return node.emitError() << "values must hold 2 elements (off, on)";
  RankedTensorType indicesType = indices->getType();
  int64_t rank = indicesType.getRank() + 1;
  auto axis = normalizeAxis(node, node.getIntAttribute("axis", -1), rank);
  if (failed(axis))
    return failure();
  llvm::SmallVector<int64_t> shape(indicesType.getShape());
  shape.insert(shape.begin() + *axis, depth);
  Value indicesValue = *indices, valuesValue = *values;
  Type indexType = indicesType.getElementType();
  bool isUnsigned = node.isUnsignedInput(0);
  Value result = generateTensor(
      node, values->getType().clone(shape),
      [&](OpBuilder &b, Location loc, ValueRange at) -> Value {
        llvm::SmallVector<Value> indexAt(at);
        indexAt.erase(indexAt.begin() + *axis);
        Value raw = tensor::ExtractOp::create(b, loc, indicesValue, indexAt);
        // Float indices truncate, as ONNX casts them.
        Value index = castScalar(b, loc, raw, b.getI64Type(),
                                 isUnsigned && isa<IntegerType>(indexType));
        Value depthConstant =
            arith::ConstantIntOp::create(b, loc, b.getI64Type(), depth);
        Value zero = arith::ConstantIntOp::create(b, loc, b.getI64Type(), 0);
        Value negative = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::slt, index, zero);
        index = arith::SelectOp::create(
            b, loc, negative, arith::AddIOp::create(b, loc, index, depthConstant),
            index);
        Value here =
            arith::IndexCastOp::create(b, loc, b.getI64Type(), at[*axis]);
        Value hot = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          index, here);
        Value flat = arith::SelectOp::create(
            b, loc, hot, arith::ConstantIndexOp::create(b, loc, 1),
            arith::ConstantIndexOp::create(b, loc, 0));
        llvm::SmallVector<Value> valueAt(
            values->getType().getRank(),
            arith::ConstantIndexOp::create(b, loc, 0));
        valueAt.back() = flat;
        return tensor::ExtractOp::create(b, loc, valuesValue, valueAt);
      });
  return llvm::SmallVector<Value>{result};
}

/// EyeLike: ones on the k-th diagonal of a matrix shaped like the input,
/// of the dtype attribute's type (the input's by default).
static Results lowerEyeLike(ONNXNode &node) {
  auto input = node.getInput(0);
  if (failed(input))
    return failure();
  RankedTensorType type = input->getType();
  if (type.getRank() != 2)
    return node.emitError() << "the input must have rank 2, not "
                            << type.getRank();
  Type elementType = type.getElementType();
  if (const onnx::AttributeProto *dtype = node.getAttribute("dtype")) {
    elementType = getElementType(node.builder.getContext(), dtype->i());
    if (!elementType)
      return node.emitError() << "dtype " << getDataTypeName(dtype->i())
                              << " is not supported";
  }
  int64_t k = node.getIntAttribute("k", 0);
  Value result = generateTensor(
      node, type.clone(elementType),
      [&](OpBuilder &b, Location loc, ValueRange at) -> Value {
        Value shifted = arith::AddIOp::create(
            b, loc, at[0], arith::ConstantIndexOp::create(b, loc, k));
        Value onDiagonal = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::eq, shifted, at[1]);
        return castScalar(b, loc, onDiagonal, elementType,
                          /*fromUnsigned=*/true);
      });
  return llvm::SmallVector<Value>{result};
}

void mlir::afm::onnx_import::registerIndexLowerings(
    llvm::StringMap<NodeLowering> &lowerings) {
  lowerings["GatherElements"] = lowerGatherElements;
  lowerings["ArgMax"] = lowerArgExtreme<true>;
  lowerings["ArgMin"] = lowerArgExtreme<false>;
  lowerings["Hardmax"] = lowerHardmax;
  lowerings["TopK"] = lowerTopK;
  lowerings["GatherND"] = lowerGatherND;
  lowerings["OneHot"] = lowerOneHot;
  lowerings["EyeLike"] = lowerEyeLike;
}
