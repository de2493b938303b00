//===- ONNXShapeOps.cpp - ONNX data movement and shape ops ----------------===//
//
// Ops that move or select elements (Reshape, Transpose, Concat, Slice,
// Split, Squeeze, Unsqueeze, Flatten, Expand, Gather, Trilu) and ops that
// compute shapes (Shape, ConstantOfShape, Range). Shapes are static, so
// every operand that decides a shape must be a constant; ops on constants
// fold at import, which turns exporters' Shape -> Gather -> Concat ->
// Reshape chains into plain constants.
//
//===----------------------------------------------------------------------===//

#include "ONNXBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"

#include <numeric>

using namespace mlir;
using namespace mlir::afm::onnx_import;

/// Constants up to this many elements are folded at import; bigger ones
/// stay computations, so folding never multiplies a model's weights.
constexpr int64_t kMaxFoldedElements = 1 << 16;

static DenseElementsAttr getFoldableConstant(Value value) {
  DenseElementsAttr attr;
  if (!matchPattern(value, m_Constant(&attr)) ||
      attr.getNumElements() > kMaxFoldedElements)
    return nullptr;
  return attr;
}

static Results single(Value value) { return llvm::SmallVector<Value>{value}; }

static Value constant(ONNXNode &node, DenseElementsAttr attr) {
  return arith::ConstantOp::create(node.builder, node.loc, attr);
}

static int64_t product(llvm::ArrayRef<int64_t> dims) {
  return std::accumulate(dims.begin(), dims.end(), int64_t{1},
                         std::multiplies<int64_t>());
}

/// The axes of a Squeeze/Unsqueeze/Reduce-style op: an attribute before
/// `inputFromOpset`, input 1 from then on; nullopt when absent.
static FailureOr<std::optional<llvm::SmallVector<int64_t>>>
getAxes(ONNXNode &node, int64_t inputFromOpset) {
  if (node.opset < inputFromOpset)
    return node.getIntsAttribute("axes");
  if (!node.hasInput(1))
    return std::optional<llvm::SmallVector<int64_t>>();
  auto axes = node.getConstantInts(1, "axes");
  if (failed(axes))
    return failure();
  return std::optional<llvm::SmallVector<int64_t>>(*axes);
}

static Results lowerTranspose(ONNXNode &node) {
  auto input = node.getInput(0);
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
  // A scalar is its own transpose; tosa.transpose wants rank >= 1.
  if (rank == 0)
    return llvm::SmallVector<Value>{*input};
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
  auto input = node.getInput(0);
  if (failed(input))
    return failure();
  auto target = node.getConstantInts(1, "shape");
  if (failed(target))
    return failure();
  RankedTensorType type = input->getType();
  bool allowZero = node.getIntAttribute("allowzero", 0) != 0;
  llvm::SmallVector<int64_t> shape;
  std::optional<size_t> inferred;
  int64_t known = 1;
  for (const auto &[index, value] : llvm::enumerate(*target)) {
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

static Results lowerFlatten(ONNXNode &node) {
  auto input = node.getInput(0);
  if (failed(input))
    return failure();
  llvm::ArrayRef<int64_t> shape = input->getType().getShape();
  int64_t rank = shape.size();
  int64_t axis = node.getIntAttribute("axis", 1);
  // Flatten's axis may equal the rank (everything in the rows).
  if (axis < -rank || axis > rank)
    return node.emitError() << "axis " << axis << " is out of range for rank "
                            << rank;
  if (axis < 0)
    axis += rank;
  return single(reshape(node, *input,
                        {product(shape.take_front(axis)),
                         product(shape.drop_front(axis))}));
}

static Results lowerSqueeze(ONNXNode &node) {
  auto input = node.getInput(0);
  auto axes = getAxes(node, 13);
  if (failed(input) || failed(axes))
    return failure();
  llvm::ArrayRef<int64_t> shape = input->getType().getShape();
  int64_t rank = shape.size();
  llvm::SmallVector<bool> drop(rank, false);
  if (*axes) {
    for (int64_t axis : **axes) {
      auto dim = normalizeAxis(node, axis, rank);
      if (failed(dim))
        return failure();
      if (shape[*dim] != 1)
        return node.emitError() << "cannot squeeze dimension " << *dim
                                << " of size " << shape[*dim];
      drop[*dim] = true;
    }
  } else {
    for (int64_t dim = 0; dim < rank; ++dim)
      drop[dim] = shape[dim] == 1;
  }
  llvm::SmallVector<int64_t> result;
  for (int64_t dim = 0; dim < rank; ++dim)
    if (!drop[dim])
      result.push_back(shape[dim]);
  return single(reshape(node, *input, result));
}

static Results lowerUnsqueeze(ONNXNode &node) {
  auto input = node.getInput(0);
  auto axes = getAxes(node, 13);
  if (failed(input) || failed(axes))
    return failure();
  if (!*axes)
    return node.emitError() << "missing axes";
  llvm::ArrayRef<int64_t> shape = input->getType().getShape();
  int64_t rank = shape.size() + (*axes)->size();
  llvm::SmallVector<bool> inserted(rank, false);
  for (int64_t axis : **axes) {
    auto dim = normalizeAxis(node, axis, rank);
    if (failed(dim))
      return failure();
    if (inserted[*dim])
      return node.emitError() << "axis " << axis << " is repeated";
    inserted[*dim] = true;
  }
  llvm::SmallVector<int64_t> result;
  const int64_t *next = shape.begin();
  for (int64_t dim = 0; dim < rank; ++dim)
    result.push_back(inserted[dim] ? 1 : *next++);
  return single(reshape(node, *input, result));
}

static Results lowerConcat(ONNXNode &node) {
  llvm::SmallVector<Value> inputs;
  for (int index = 0; index < node.proto.input_size(); ++index) {
    auto input = node.getInput(index);
    if (failed(input))
      return failure();
    inputs.push_back(*input);
  }
  if (inputs.empty())
    return node.emitError() << "needs at least one input";
  auto firstType = cast<RankedTensorType>(inputs[0].getType());
  int64_t rank = firstType.getRank();
  if (!node.getAttribute("axis"))
    return node.emitError() << "missing attribute 'axis'";
  auto axis = normalizeAxis(node, node.getIntAttribute("axis", 0), rank);
  if (failed(axis))
    return failure();
  llvm::SmallVector<int64_t> shape(firstType.getShape());
  shape[*axis] = 0;
  for (Value input : inputs) {
    auto type = cast<RankedTensorType>(input.getType());
    bool compatible = type.getRank() == rank &&
                      type.getElementType() == firstType.getElementType();
    for (int64_t dim = 0; compatible && dim < rank; ++dim)
      compatible = dim == *axis || type.getDimSize(dim) == shape[dim];
    if (!compatible)
      return node.emitError() << "inputs " << firstType << " and " << type
                              << " cannot be concatenated on axis " << *axis;
    shape[*axis] += type.getDimSize(*axis);
  }
  RankedTensorType type = firstType.clone(shape);

  // Constants (typically pieces of a shape) concatenate at import.
  llvm::SmallVector<DenseElementsAttr> attrs;
  for (Value input : inputs)
    if (DenseElementsAttr attr = getFoldableConstant(input))
      attrs.push_back(attr);
  if (attrs.size() == inputs.size()) {
    int64_t outer = product(llvm::ArrayRef<int64_t>(shape).take_front(*axis));
    llvm::SmallVector<Attribute> elements;
    for (int64_t row = 0; row < outer; ++row)
      for (DenseElementsAttr attr : attrs) {
        auto values = attr.getValues<Attribute>();
        int64_t chunk = attr.getNumElements() / outer;
        for (int64_t i = 0; i < chunk; ++i)
          elements.push_back(values[row * chunk + i]);
      }
    return single(constant(node, DenseElementsAttr::get(type, elements)));
  }
  return single(tosa::ConcatOp::create(node.builder, node.loc, type, inputs,
                                       static_cast<int32_t>(*axis)));
}

/// Reads input `index`'s elements at `indices` inside an index body.
static Value extractAt(OpBuilder &b, Location loc, Value tensor,
                       ValueRange indices) {
  return tensor::ExtractOp::create(b, loc, tensor, indices);
}

static Value indexConstant(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

/// Slice: per axis, start/end clamped as ONNX specifies for the sign of
/// the step, then out[i] = in[start + i * step].
static Results lowerSlice(ONNXNode &node) {
  auto input = node.getInput(0);
  if (failed(input))
    return failure();
  RankedTensorType type = input->getType();
  int64_t rank = type.getRank();
  llvm::SmallVector<int64_t> starts, ends, axes, steps;
  if (node.opset < 10) {
    starts = node.getIntsAttribute("starts").value_or(starts);
    ends = node.getIntsAttribute("ends").value_or(ends);
    axes = node.getIntsAttribute("axes").value_or(axes);
  } else {
    auto startsOr = node.getConstantInts(1, "starts");
    auto endsOr = node.getConstantInts(2, "ends");
    if (failed(startsOr) || failed(endsOr))
      return failure();
    starts = *startsOr;
    ends = *endsOr;
    if (node.hasInput(3)) {
      auto axesOr = node.getConstantInts(3, "axes");
      if (failed(axesOr))
        return failure();
      axes = *axesOr;
    }
    if (node.hasInput(4)) {
      auto stepsOr = node.getConstantInts(4, "steps");
      if (failed(stepsOr))
        return failure();
      steps = *stepsOr;
    }
  }
  if (axes.empty())
    axes = llvm::to_vector(llvm::seq<int64_t>(0, starts.size()));
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    return node.emitError()
           << "starts, ends, axes and steps must have the same length";

  llvm::SmallVector<int64_t> offset(rank, 0), stride(rank, 1),
      shape(type.getShape());
  llvm::SmallVector<bool> seen(rank, false);
  for (auto [start, end, axis, step] : llvm::zip(starts, ends, axes, steps)) {
    auto dimOr = normalizeAxis(node, axis, rank);
    if (failed(dimOr))
      return failure();
    int64_t dim = *dimOr, size = type.getDimSize(dim);
    if (seen[dim])
      return node.emitError() << "axis " << axis << " is repeated";
    seen[dim] = true;
    if (step == 0)
      return node.emitError() << "step 0 on axis " << axis;
    if (start < 0)
      start += size;
    if (end < 0)
      end += size;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, size);
      end = std::clamp<int64_t>(end, 0, size);
    } else {
      start = std::clamp<int64_t>(start, 0, size - 1);
      end = std::clamp<int64_t>(end, -1, size - 1);
    }
    int64_t distance = end - start;
    int64_t count = step > 0 ? (distance + step - 1) / step
                             : (distance + step + 1) / step;
    offset[dim] = start;
    stride[dim] = step;
    shape[dim] = std::max<int64_t>(0, count);
  }
  RankedTensorType resultType = type.clone(shape);
  // A slice of a constant (typically of a Shape) folds.
  if (DenseElementsAttr attr = getFoldableConstant(*input)) {
    auto values = attr.getValues<Attribute>();
    llvm::SmallVector<Attribute> elements;
    for (int64_t linear = 0; linear < resultType.getNumElements(); ++linear) {
      int64_t rest = linear, index = 0, scale = 1;
      for (int64_t dim = rank - 1; dim >= 0; --dim) {
        int64_t at = offset[dim] + (rest % shape[dim]) * stride[dim];
        rest /= shape[dim];
        index += at * scale;
        scale *= type.getDimSize(dim);
      }
      elements.push_back(values[index]);
    }
    return single(constant(node, DenseElementsAttr::get(resultType, elements)));
  }
  Value source = *input;
  return single(generateTensor(
      node, resultType,
      [&](OpBuilder &b, Location loc, ValueRange indices) {
        llvm::SmallVector<Value> at;
        for (auto [dim, index] : llvm::enumerate(indices)) {
          Value scaled = arith::MulIOp::create(
              b, loc, index, indexConstant(b, loc, stride[dim]));
          at.push_back(arith::AddIOp::create(
              b, loc, scaled, indexConstant(b, loc, offset[dim])));
        }
        return extractAt(b, loc, source, at);
      }));
}

/// Split into the node's outputs: sizes from the `split` input (opset 13)
/// or attribute, else equal parts (the last smaller, opset 18).
static Results lowerSplit(ONNXNode &node) {
  auto input = node.getInput(0);
  if (failed(input))
    return failure();
  RankedTensorType type = input->getType();
  auto axis =
      normalizeAxis(node, node.getIntAttribute("axis", 0), type.getRank());
  if (failed(axis))
    return failure();
  int64_t size = type.getDimSize(*axis);
  int64_t outputs = node.proto.output_size();
  llvm::SmallVector<int64_t> sizes;
  if (node.opset >= 13 && node.hasInput(1)) {
    auto split = node.getConstantInts(1, "split");
    if (failed(split))
      return failure();
    sizes = *split;
  } else if (auto split = node.getIntsAttribute("split")) {
    sizes = *split;
  } else {
    if (outputs == 0)
      return node.emitError() << "has no outputs";
    int64_t chunk = (size + outputs - 1) / outputs;
    for (int64_t i = 0; i < outputs; ++i)
      sizes.push_back(std::max<int64_t>(0, std::min(chunk, size - i * chunk)));
  }
  if (static_cast<int64_t>(sizes.size()) != outputs ||
      llvm::any_of(sizes, [](int64_t s) { return s < 0; }) ||
      std::accumulate(sizes.begin(), sizes.end(), int64_t{0}) != size)
    return node.emitError() << "split sizes do not divide dimension " << *axis
                            << " of size " << size << " into " << outputs
                            << " outputs";
  llvm::SmallVector<Value> results;
  llvm::SmallVector<int64_t> offsets(type.getRank(), 0),
      strides(type.getRank(), 1), shape(type.getShape());
  for (int64_t part : sizes) {
    shape[*axis] = part;
    if (part == 0 || type.getNumElements() == 0) {
      results.push_back(tensor::EmptyOp::create(node.builder, node.loc, shape,
                                                type.getElementType()));
      continue;
    }
    results.push_back(tensor::ExtractSliceOp::create(
        node.builder, node.loc, type.clone(shape), *input, ValueRange{},
        ValueRange{}, ValueRange{}, offsets, shape, strides));
    offsets[*axis] += part;
  }
  return results;
}

/// Expand broadcasts the input and the target shape both ways (numpy).
static Results lowerExpand(ONNXNode &node) {
  auto input = node.getInput(0);
  auto shape = node.getConstantInts(1, "shape");
  if (failed(input) || failed(shape))
    return failure();
  auto result = broadcastElementwise(
      node, *input, input->getType().getElementType(),
      [](OpBuilder &, Location, ValueRange args) { return args[0]; }, *shape);
  if (failed(result))
    return failure();
  return single(*result);
}

/// Gather along `axis`: out[a, i..., b] = data[a, indices[i...], b], with
/// negative indices counting from the end.
static Results lowerGather(ONNXNode &node) {
  auto operands = getGatherOperands(node);
  if (failed(operands))
    return failure();
  auto [data, indices, axis] = *operands;
  RankedTensorType dataType = data.getType(),
                   indicesType = indices.getType();
  int64_t extent = dataType.getDimSize(axis);
  int64_t indexRank = indicesType.getRank();
  llvm::SmallVector<int64_t> shape(dataType.getShape().take_front(axis));
  llvm::append_range(shape, indicesType.getShape());
  llvm::append_range(shape, dataType.getShape().drop_front(axis + 1));
  RankedTensorType type = dataType.clone(shape);

  // Constant data and indices (a shape and the dimensions it picks) fold.
  DenseElementsAttr dataAttr = getFoldableConstant(data),
                    indicesAttr = getFoldableConstant(indices);
  if (dataAttr && indicesAttr) {
    int64_t outer = product(dataType.getShape().take_front(axis));
    int64_t inner = product(dataType.getShape().drop_front(axis + 1));
    auto values = dataAttr.getValues<Attribute>();
    llvm::SmallVector<Attribute> elements;
    for (int64_t o = 0; o < outer; ++o)
      for (const APInt &raw : indicesAttr.getValues<APInt>()) {
        int64_t index = raw.getSExtValue();
        if (index < 0)
          index += extent;
        if (index < 0 || index >= extent)
          return node.emitError() << "index " << raw.getSExtValue()
                                  << " is out of range for a dimension of "
                                  << extent;
        for (int64_t i = 0; i < inner; ++i)
          elements.push_back(values[(o * extent + index) * inner + i]);
      }
    return single(constant(node, DenseElementsAttr::get(type, elements)));
  }

  Value dataValue = data, indicesValue = indices;
  return single(generateTensor(
      node, type, [&](OpBuilder &b, Location loc, ValueRange at) {
        ValueRange indexAt = at.slice(axis, indexRank);
        Value index =
            wrapIndex(b, loc, extractAt(b, loc, indicesValue, indexAt), extent);
        llvm::SmallVector<Value> dataAt(at.take_front(axis));
        dataAt.push_back(index);
        llvm::append_range(dataAt, at.drop_front(axis + indexRank));
        return extractAt(b, loc, dataValue, dataAt);
      }));
}

/// Shape is always a constant here; start/end (opset 15) clamp.
static Results lowerShape(ONNXNode &node) {
  auto input = node.getInput(0);
  if (failed(input))
    return failure();
  llvm::ArrayRef<int64_t> shape = input->getType().getShape();
  int64_t rank = shape.size();
  auto clampedAxis = [&](int64_t axis) {
    return std::clamp<int64_t>(axis < 0 ? axis + rank : axis, 0, rank);
  };
  int64_t start = clampedAxis(node.getIntAttribute("start", 0));
  int64_t end = clampedAxis(node.getIntAttribute("end", rank));
  llvm::ArrayRef<int64_t> dims =
      start < end ? shape.slice(start, end - start) : shape.take_front(0);
  auto type = RankedTensorType::get({static_cast<int64_t>(dims.size())},
                                    node.builder.getI64Type());
  return single(constant(node, DenseElementsAttr::get(type, dims)));
}

static Results lowerSize(ONNXNode &node) {
  auto input = node.getInput(0);
  if (failed(input))
    return failure();
  auto type = RankedTensorType::get({}, node.builder.getI64Type());
  return single(constant(
      node, DenseElementsAttr::get(
                type, {static_cast<int64_t>(input->getType().getNumElements())})));
}

static Results lowerConstantOfShape(ONNXNode &node) {
  auto shape = node.getConstantInts(0, "shape");
  if (failed(shape))
    return failure();
  if (llvm::any_of(*shape, [](int64_t dim) { return dim < 0; }))
    return node.emitError() << "the shape has a negative dimension";
  DenseElementsAttr value;
  bool isUnsigned = false;
  if (const onnx::AttributeProto *attr = node.getAttribute("value")) {
    auto converted = convertTensor(node.builder.getContext(), attr->t(), "");
    if (!converted)
      return node.emitError() << llvm::toString(converted.takeError());
    if (converted->getNumElements() != 1)
      return node.emitError() << "'value' must hold one element";
    value = *converted;
    isUnsigned = isUnsignedDataType(attr->t().data_type());
  } else {
    value = DenseElementsAttr::get(
        RankedTensorType::get({1}, node.builder.getF32Type()),
        node.builder.getF32FloatAttr(0));
  }
  auto type = RankedTensorType::get(*shape, value.getElementType());
  Value result = constant(
      node, DenseElementsAttr::get(type, value.getValues<Attribute>()[0]));
  if (isUnsigned)
    node.table.define(node.proto.output(0), result, /*isUnsigned=*/true);
  return single(result);
}

/// Range(start, limit, delta) with constant scalars: start + i * delta
/// for i < max(ceil((limit - start) / delta), 0).
static Results lowerRange(ONNXNode &node) {
  llvm::SmallVector<DenseElementsAttr, 3> operands;
  for (unsigned index = 0; index < 3; ++index)
    operands.push_back(node.getConstantInput(index));
  for (auto [index, attr] : llvm::enumerate(operands))
    if (!attr || attr.getNumElements() != 1)
      return node.emitError()
             << "the " << (index == 0 ? "start" : index == 1 ? "limit" : "delta")
             << " operand must be a constant scalar (the output's size "
                "depends on it; bind the input to specialize the model)";
  Type elementType = operands[0].getElementType();
  if (isa<FloatType>(elementType)) {
    double start = operands[0].getSplatValue<APFloat>().convertToDouble();
    double limit = operands[1].getSplatValue<APFloat>().convertToDouble();
    double delta = operands[2].getSplatValue<APFloat>().convertToDouble();
    if (delta == 0)
      return node.emitError() << "delta is 0";
    int64_t count =
        std::max<int64_t>(0, static_cast<int64_t>(std::ceil((limit - start) /
                                                            delta)));
    if (count > kMaxFoldedElements)
      return node.emitError() << "the range has " << count << " elements";
    llvm::SmallVector<Attribute> elements;
    for (int64_t i = 0; i < count; ++i) {
      // In the element type, as the reference's repeated additions are.
      APFloat value(start);
      bool lost;
      value.convert(cast<FloatType>(elementType).getFloatSemantics(),
                    APFloat::rmNearestTiesToEven, &lost);
      APFloat step(delta);
      step.convert(value.getSemantics(), APFloat::rmNearestTiesToEven, &lost);
      for (int64_t k = 0; k < i; ++k)
        value.add(step, APFloat::rmNearestTiesToEven);
      elements.push_back(FloatAttr::get(elementType, value));
    }
    return single(constant(
        node, DenseElementsAttr::get(
                  RankedTensorType::get({count}, elementType), elements)));
  }
  int64_t start = operands[0].getSplatValue<APInt>().getSExtValue();
  int64_t limit = operands[1].getSplatValue<APInt>().getSExtValue();
  int64_t delta = operands[2].getSplatValue<APInt>().getSExtValue();
  if (delta == 0)
    return node.emitError() << "delta is 0";
  int64_t distance = limit - start;
  int64_t count = delta > 0 ? (distance + delta - 1) / delta
                            : (distance + delta + 1) / delta;
  count = std::max<int64_t>(0, count);
  if (count > kMaxFoldedElements)
    return node.emitError() << "the range has " << count << " elements";
  llvm::SmallVector<APInt> elements;
  for (int64_t i = 0; i < count; ++i)
    elements.push_back(APInt(elementType.getIntOrFloatBitWidth(),
                             start + i * delta, /*isSigned=*/true,
                             /*implicitTrunc=*/true));
  return single(constant(
      node, DenseElementsAttr::get(
                RankedTensorType::get({count}, elementType), elements)));
}

/// Trilu keeps the upper (or lower) triangle of the last two dimensions
/// from diagonal k, which may be a run-time scalar.
static Results lowerTrilu(ONNXNode &node) {
  auto input = node.getInput(0);
  if (failed(input))
    return failure();
  RankedTensorType type = input->getType();
  int64_t rank = type.getRank();
  if (rank < 2)
    return node.emitError() << "the input must have rank >= 2";
  bool upper = node.getIntAttribute("upper", 1) != 0;
  Value k;
  if (node.hasInput(1)) {
    auto kInput = node.getInput(1);
    if (failed(kInput))
      return failure();
    if (kInput->getType().getNumElements() != 1 ||
        !isa<IntegerType>(kInput->getType().getElementType()))
      return node.emitError() << "k must be an integer scalar";
    Value scalar = reshape(node, *kInput, {});
    k = tensor::ExtractOp::create(node.builder, node.loc, scalar, ValueRange{});
    k = arith::IndexCastOp::create(node.builder, node.loc,
                                   node.builder.getIndexType(), k);
  } else {
    k = arith::ConstantIndexOp::create(node.builder, node.loc, 0);
  }
  Value source = *input;
  Type elementType = type.getElementType();
  return single(generateTensor(
      node, type, [&](OpBuilder &b, Location loc, ValueRange at) {
        Value row = at[rank - 2], column = at[rank - 1];
        Value diagonal = arith::SubIOp::create(b, loc, column, row);
        Value keep = arith::CmpIOp::create(
            b, loc,
            upper ? arith::CmpIPredicate::sge : arith::CmpIPredicate::sle,
            diagonal, k);
        Value zero = arith::ConstantOp::create(
            b, loc, scalarAttr(b, elementType, 0));
        return arith::SelectOp::create(b, loc, keep,
                                       extractAt(b, loc, source, at), zero);
      }));
}

void mlir::afm::onnx_import::registerShapeLowerings(
    llvm::StringMap<NodeLowering> &lowerings) {
  lowerings["Reshape"] = lowerReshape;
  lowerings["Transpose"] = lowerTranspose;
  lowerings["Flatten"] = lowerFlatten;
  lowerings["Squeeze"] = lowerSqueeze;
  lowerings["Unsqueeze"] = lowerUnsqueeze;
  lowerings["Concat"] = lowerConcat;
  lowerings["Slice"] = lowerSlice;
  lowerings["Split"] = lowerSplit;
  lowerings["Expand"] = lowerExpand;
  lowerings["Gather"] = lowerGather;
  lowerings["Shape"] = lowerShape;
  lowerings["Size"] = lowerSize;
  lowerings["ConstantOfShape"] = lowerConstantOfShape;
  lowerings["Range"] = lowerRange;
  lowerings["Trilu"] = lowerTrilu;
}
