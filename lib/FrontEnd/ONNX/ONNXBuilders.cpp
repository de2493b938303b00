//===- ONNXBuilders.cpp - IR building blocks of the ONNX lowerings --------===//

#include "ONNXBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Tosa/Utils/ConversionUtils.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Matchers.h"

#include "llvm/ADT/ScopeExit.h"

using namespace mlir;
using namespace mlir::afm;
using namespace mlir::afm::onnx_import;

Value onnx_import::reshape(ONNXNode &node, Value input,
                           llvm::ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(input.getType());
  if (type.getShape() == shape)
    return input;
  // TOSA has no empty tensors; an empty result has no data to move.
  if (type.getNumElements() == 0)
    return tensor::EmptyOp::create(node.builder, node.loc, shape,
                                   type.getElementType());
  DenseElementsAttr constant;
  if (matchPattern(input, m_Constant(&constant)))
    return arith::ConstantOp::create(node.builder, node.loc,
                                     constant.reshape(type.clone(shape)));
  ImplicitLocOpBuilder b(node.loc, node.builder);
  return tosa::ReshapeOp::create(b, type.clone(shape), input,
                                 tosa::getTosaConstShape(b, shape));
}

TypedAttr onnx_import::scalarAttr(OpBuilder &b, Type elementType,
                                  double value) {
  if (isa<FloatType>(elementType))
    return b.getFloatAttr(elementType, value);
  return b.getIntegerAttr(elementType, static_cast<int64_t>(value));
}

Value onnx_import::splat(ONNXNode &node, Type elementType, double value,
                         int64_t rank) {
  auto type =
      RankedTensorType::get(llvm::SmallVector<int64_t>(rank, 1), elementType);
  return tosa::ConstOp::create(
      node.builder, node.loc, type,
      DenseElementsAttr::get(type,
                             scalarAttr(node.builder, elementType, value)));
}

Value onnx_import::multiply(ONNXNode &node, Type type, Value lhs, Value rhs) {
  auto shiftType = RankedTensorType::get({1}, node.builder.getI8Type());
  Value shift = tosa::ConstOp::create(
      node.builder, node.loc, shiftType,
      DenseElementsAttr::get(shiftType, node.builder.getI8IntegerAttr(0)));
  return tosa::MulOp::create(node.builder, node.loc, type, lhs, rhs, shift);
}

FailureOr<llvm::SmallVector<int64_t>>
onnx_import::broadcastShapes(ONNXNode &node,
                             llvm::ArrayRef<llvm::ArrayRef<int64_t>> shapes) {
  size_t rank = 0;
  for (llvm::ArrayRef<int64_t> shape : shapes)
    rank = std::max(rank, shape.size());
  llvm::SmallVector<int64_t> result(rank, 1);
  for (llvm::ArrayRef<int64_t> shape : shapes) {
    size_t offset = rank - shape.size();
    for (auto [index, dim] : llvm::enumerate(shape)) {
      int64_t &out = result[offset + index];
      if (dim == out || dim == 1)
        continue;
      if (out != 1) {
        InFlightDiagnostic diag = node.emitError() << "shapes ";
        llvm::interleave(
            shapes, diag,
            [&](llvm::ArrayRef<int64_t> s) {
              diag << "[";
              llvm::interleaveComma(s, diag);
              diag << "]";
            },
            " and ");
        return diag << " do not broadcast";
      }
      out = dim;
    }
  }
  return result;
}

FailureOr<std::tuple<Value, Value, RankedTensorType>>
onnx_import::broadcastOperands(ONNXNode &node) {
  auto lhs = node.getInput(0);
  auto rhs = node.getInput(1);
  if (failed(lhs) || failed(rhs))
    return failure();
  RankedTensorType lhsType = lhs->getType(), rhsType = rhs->getType();
  if (lhsType.getElementType() != rhsType.getElementType())
    return node.emitError() << "operand element types differ";
  auto shape =
      broadcastShapes(node, {lhsType.getShape(), rhsType.getShape()});
  if (failed(shape))
    return failure();
  int64_t rank = shape->size();
  auto padded = [&](RankedTensorType type) {
    llvm::SmallVector<int64_t> dims(rank - type.getRank(), 1);
    llvm::append_range(dims, type.getShape());
    return dims;
  };
  return std::make_tuple(reshape(node, *lhs, padded(lhsType)),
                         reshape(node, *rhs, padded(rhsType)),
                         lhsType.clone(*shape));
}

/// Element-wise ops on constants up to this many elements fold at import.
static constexpr int64_t kMaxFoldedBodyElements = 4096;

DenseElementsAttr onnx_import::foldBody(ONNXNode &node, ValueRange operands,
                                       Type resultElementType,
                                       ElementwiseBody body) {
  if (llvm::any_of(operands, [](Value operand) {
        return !matchPattern(operand, m_Constant());
      }))
    return nullptr;
  // The scalar body, built once into a block of its own.
  Block scratch;
  for (Value operand : operands)
    scratch.addArgument(getElementTypeOrSelf(operand.getType()), node.loc);
  OpBuilder b(node.builder.getContext());
  b.setInsertionPointToEnd(&scratch);
  Value result = body(b, node.loc, scratch.getArguments());
  auto clear = llvm::make_scope_exit([&] {
    scratch.dropAllDefinedValueUses();
    scratch.clear();
  });
  return foldElementwise(
      node, operands, resultElementType,
      [&](llvm::ArrayRef<Attribute> args) -> Attribute {
        llvm::DenseMap<Value, Attribute> known;
        for (auto [arg, attr] : llvm::zip(scratch.getArguments(), args))
          known[arg] = attr;
        for (Operation &op : scratch) {
          llvm::SmallVector<Attribute> operandAttrs;
          for (Value operand : op.getOperands()) {
            Attribute attr = known.lookup(operand);
            if (!attr)
              return nullptr;
            operandAttrs.push_back(attr);
          }
          llvm::SmallVector<OpFoldResult> folded;
          if (failed(op.fold(operandAttrs, folded)) ||
              folded.size() != op.getNumResults())
            return nullptr;
          for (auto [opResult, fold] : llvm::zip(op.getResults(), folded)) {
            Attribute attr = dyn_cast<Attribute>(fold);
            if (!attr)
              attr = known.lookup(cast<Value>(fold));
            if (!attr)
              return nullptr;
            known[opResult] = attr;
          }
        }
        // Only plain numbers (no poison) become elements.
        Attribute value = known.lookup(result);
        auto typed = dyn_cast_if_present<TypedAttr>(value);
        if (!typed || typed.getType() != resultElementType ||
            !isa<IntegerAttr, FloatAttr>(typed))
          return nullptr;
        return typed;
      },
      kMaxFoldedBodyElements);
}

FailureOr<Value> onnx_import::broadcastElementwise(
    ONNXNode &node, ValueRange operands, Type resultElementType,
    ElementwiseBody body, llvm::ArrayRef<int64_t> alsoBroadcastTo) {
  if (alsoBroadcastTo.empty())
    if (DenseElementsAttr folded =
            foldBody(node, operands, resultElementType, body))
      return arith::ConstantOp::create(node.builder, node.loc, folded)
          .getResult();
  llvm::SmallVector<llvm::ArrayRef<int64_t>> shapes;
  for (Value operand : operands)
    shapes.push_back(cast<RankedTensorType>(operand.getType()).getShape());
  shapes.push_back(alsoBroadcastTo);
  auto shape = broadcastShapes(node, shapes);
  shapes.pop_back();
  if (failed(shape))
    return failure();
  int64_t rank = shape->size();
  MLIRContext *context = node.builder.getContext();
  llvm::SmallVector<AffineMap> maps;
  for (llvm::ArrayRef<int64_t> operandShape : shapes) {
    int64_t offset = rank - operandShape.size();
    llvm::SmallVector<AffineExpr> exprs;
    for (auto [index, dim] : llvm::enumerate(operandShape))
      exprs.push_back(dim == 1 && (*shape)[offset + index] != 1
                          ? getAffineConstantExpr(0, context)
                          : getAffineDimExpr(offset + index, context));
    maps.push_back(AffineMap::get(rank, 0, exprs, context));
  }
  maps.push_back(AffineMap::getMultiDimIdentityMap(rank, context));
  Value init = tensor::EmptyOp::create(node.builder, node.loc, *shape,
                                       resultElementType);
  if (cast<RankedTensorType>(init.getType()).getNumElements() == 0)
    return init;
  llvm::SmallVector<utils::IteratorType> iterators(
      rank, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      node.builder, node.loc, init.getType(), operands, init, maps, iterators,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        linalg::YieldOp::create(b, loc, body(b, loc, args.drop_back()));
      });
  return generic.getResult(0);
}

DenseElementsAttr onnx_import::foldElementwise(
    ONNXNode &node, ValueRange operands, Type resultElementType,
    llvm::function_ref<Attribute(llvm::ArrayRef<Attribute>)> fn,
    int64_t maxElements) {
  llvm::SmallVector<DenseElementsAttr> attrs;
  llvm::SmallVector<llvm::ArrayRef<int64_t>> shapes;
  for (Value operand : operands) {
    DenseElementsAttr attr;
    if (!matchPattern(operand, m_Constant(&attr)))
      return nullptr;
    attrs.push_back(attr);
    shapes.push_back(attr.getType().getShape());
  }
  int64_t rank = 0;
  for (llvm::ArrayRef<int64_t> shape : shapes)
    rank = std::max<int64_t>(rank, shape.size());
  llvm::SmallVector<int64_t> shape(rank, 1);
  for (llvm::ArrayRef<int64_t> operandShape : shapes)
    for (auto [index, dim] : llvm::enumerate(operandShape)) {
      // 1 broadcasts to anything, including 0.
      int64_t &out = shape[rank - operandShape.size() + index];
      if (dim == 1)
        continue;
      if (out != 1 && dim != out)
        return nullptr;
      out = dim;
    }
  auto type = RankedTensorType::get(shape, resultElementType);
  if (type.getNumElements() > maxElements)
    return nullptr;
  llvm::SmallVector<llvm::SmallVector<Attribute>> values;
  for (DenseElementsAttr attr : attrs)
    values.push_back(llvm::to_vector(attr.getValues<Attribute>()));
  llvm::SmallVector<Attribute> results;
  llvm::SmallVector<int64_t> position(rank, 0);
  for (int64_t linear = 0; linear < type.getNumElements(); ++linear) {
    int64_t rest = linear;
    for (int64_t dim = rank - 1; dim >= 0; --dim) {
      position[dim] = rest % shape[dim];
      rest /= shape[dim];
    }
    llvm::SmallVector<Attribute> args;
    for (auto [operandShape, operandValues] : llvm::zip(shapes, values)) {
      int64_t offset = rank - operandShape.size(), index = 0;
      for (auto [d, dim] : llvm::enumerate(operandShape))
        index = index * dim + (dim == 1 ? 0 : position[offset + d]);
      args.push_back(operandValues[index]);
    }
    Attribute result = fn(args);
    if (!result)
      return nullptr;
    results.push_back(result);
  }
  return DenseElementsAttr::get(type, results);
}

Value onnx_import::castScalar(OpBuilder &b, Location loc, Value value, Type to,
                              bool fromUnsigned, bool toBool) {
  if (toBool) {
    Value bit = castScalar(b, loc, value, b.getI1Type(), fromUnsigned);
    return arith::ExtUIOp::create(b, loc, to, bit);
  }
  Type from = value.getType();
  if (from == to)
    return value;
  auto fromFloat = dyn_cast<FloatType>(from);
  auto toFloat = dyn_cast<FloatType>(to);
  if (fromFloat && toFloat) {
    // bf16 <-> f16: same width, neither an extension nor a truncation of
    // the other; through f32, which holds both exactly.
    if (fromFloat.getWidth() == toFloat.getWidth()) {
      Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), value);
      return arith::TruncFOp::create(b, loc, to, wide);
    }
    return fromFloat.getWidth() < toFloat.getWidth()
               ? arith::ExtFOp::create(b, loc, to, value).getResult()
               : arith::TruncFOp::create(b, loc, to, value).getResult();
  }
  if (fromFloat) {
    if (to.isInteger(1)) {
      Value zero = arith::ConstantOp::create(b, loc, b.getFloatAttr(from, 0));
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, value,
                                   zero);
    }
    return arith::FPToSIOp::create(b, loc, to, value);
  }
  bool isUnsigned = fromUnsigned || from.isInteger(1);
  if (toFloat)
    return isUnsigned ? arith::UIToFPOp::create(b, loc, to, value).getResult()
                      : arith::SIToFPOp::create(b, loc, to, value).getResult();
  if (to.isInteger(1)) {
    Value zero = arith::ConstantOp::create(b, loc, b.getIntegerAttr(from, 0));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, value,
                                 zero);
  }
  if (from.getIntOrFloatBitWidth() > to.getIntOrFloatBitWidth())
    return arith::TruncIOp::create(b, loc, to, value);
  return isUnsigned ? arith::ExtUIOp::create(b, loc, to, value).getResult()
                    : arith::ExtSIOp::create(b, loc, to, value).getResult();
}

Value onnx_import::castTensor(ONNXNode &node, Value value, Type elementType,
                              bool fromUnsigned, bool toBool) {
  if (cast<RankedTensorType>(value.getType()).getElementType() ==
          elementType &&
      !toBool)
    return value;
  return *broadcastElementwise(
      node, value, elementType,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        return castScalar(b, loc, args[0], elementType, fromUnsigned, toBool);
      });
}

Value onnx_import::generateTensor(ONNXNode &node, RankedTensorType type,
                                  IndexBody body) {
  int64_t rank = type.getRank();
  Value init = tensor::EmptyOp::create(node.builder, node.loc, type.getShape(),
                                       type.getElementType());
  // Nothing to compute in an empty tensor.
  if (type.getNumElements() == 0)
    return init;
  llvm::SmallVector<utils::IteratorType> iterators(
      rank, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      node.builder, node.loc, type, ValueRange{}, init,
      llvm::ArrayRef<AffineMap>{
          AffineMap::getMultiDimIdentityMap(rank, node.builder.getContext())},
      iterators, [&](OpBuilder &b, Location loc, ValueRange) {
        llvm::SmallVector<Value> indices;
        for (int64_t dim = 0; dim < rank; ++dim)
          indices.push_back(linalg::IndexOp::create(b, loc, dim));
        linalg::YieldOp::create(b, loc, body(b, loc, indices));
      });
  return generic.getResult(0);
}

Value onnx_import::reduceIndexed(ONNXNode &node, RankedTensorType type,
                                 llvm::ArrayRef<int64_t> reducedShape,
                                 TypedAttr init, ReductionBody body) {
  OpBuilder &builder = node.builder;
  Value empty = tensor::EmptyOp::create(builder, node.loc, type.getShape(),
                                        type.getElementType());
  if (type.getNumElements() == 0)
    return empty;
  Value initValue = arith::ConstantOp::create(builder, node.loc, init);
  Value filled =
      linalg::FillOp::create(builder, node.loc, initValue, empty).result();
  return reduceIndexedInto(node, filled, reducedShape, body);
}

Value onnx_import::reduceIndexedInto(ONNXNode &node, Value init,
                                     llvm::ArrayRef<int64_t> reducedShape,
                                     ReductionBody body) {
  OpBuilder &builder = node.builder;
  auto type = cast<RankedTensorType>(init.getType());
  int64_t rank = type.getRank();
  int64_t reducedRank = reducedShape.size();
  if (type.getNumElements() == 0)
    return init;
  // The operand whose shape gives the reduction loops their extents (as
  // linalg's pooling ops take their window); its elements are never read.
  Value window = tensor::EmptyOp::create(builder, node.loc, reducedShape,
                                         type.getElementType());
  MLIRContext *context = builder.getContext();
  auto dims = [&](int64_t from, int64_t count) {
    llvm::SmallVector<AffineExpr> exprs;
    for (int64_t dim = from; dim < from + count; ++dim)
      exprs.push_back(getAffineDimExpr(dim, context));
    return AffineMap::get(rank + reducedRank, 0, exprs, context);
  };
  llvm::SmallVector<utils::IteratorType> iterators(
      rank, utils::IteratorType::parallel);
  iterators.append(reducedRank, utils::IteratorType::reduction);
  auto generic = linalg::GenericOp::create(
      builder, node.loc, type, window, init,
      llvm::ArrayRef<AffineMap>{dims(rank, reducedRank), dims(0, rank)},
      iterators, [&](OpBuilder &b, Location loc, ValueRange args) {
        llvm::SmallVector<Value> indices;
        for (int64_t dim = 0; dim < rank + reducedRank; ++dim)
          indices.push_back(linalg::IndexOp::create(b, loc, dim));
        ValueRange all(indices);
        linalg::YieldOp::create(
            b, loc,
            body(b, loc, all.take_front(rank), all.drop_front(rank), args[1]));
      });
  return generic.getResult(0);
}

Value onnx_import::wrapIndex(OpBuilder &b, Location loc, Value raw,
                             int64_t extent) {
  Value index = arith::IndexCastOp::create(b, loc, b.getIndexType(), raw);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value negative =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, index, zero);
  Value wrapped = arith::AddIOp::create(
      b, loc, index, arith::ConstantIndexOp::create(b, loc, extent));
  return arith::SelectOp::create(b, loc, negative, wrapped, index);
}

FailureOr<GatherOperands> onnx_import::getGatherOperands(ONNXNode &node) {
  auto data = node.getInput(0);
  auto indices = node.getInput(1);
  if (failed(data) || failed(indices))
    return failure();
  if (!isa<IntegerType>(indices->getType().getElementType()))
    return node.emitError() << "indices must be integers";
  auto axis = normalizeAxis(node, node.getIntAttribute("axis", 0),
                            data->getType().getRank());
  if (failed(axis))
    return failure();
  return GatherOperands{*data, *indices, *axis};
}

FailureOr<int64_t> onnx_import::normalizeAxis(ONNXNode &node, int64_t axis,
                                              int64_t rank) {
  if (axis < -rank || axis >= rank)
    return node.emitError() << "axis " << axis << " is out of range for rank "
                            << rank;
  return axis < 0 ? axis + rank : axis;
}
