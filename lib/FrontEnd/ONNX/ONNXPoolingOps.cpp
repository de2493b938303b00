//===- ONNXPoolingOps.cpp - ONNX MaxPool, AveragePool and Conv ------------===//
//
// MaxPool and AveragePool over any number of spatial dimensions (N, C,
// D1, ...): one reduction linalg.generic whose reduction loops walk the
// window, reading the input with tensor.extract at
// o * stride + k * dilation - pad_begin and skipping positions in the
// padding. That says pads, strides, dilations, ceil_mode and auto_pad in
// one form, which TOSA's 2-D NHWC pools cannot. AveragePool multiplies by
// a constant of inverse per-position window counts (with or without the padding,
// count_include_pad); MaxPool's optional Indices output is a second
// reduction finding the first maximum's flattened position. Conv is the
// same window reduction, also over the group's input channels, and
// ConvTranspose its transpose (each output position gathers the input
// positions whose strided window reaches it).
//
//===----------------------------------------------------------------------===//

#include "ONNXBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::afm::onnx_import;

namespace {
/// Where each window of a pool lies in its input, per spatial dimension.
struct PoolGeometry {
  llvm::SmallVector<int64_t> kernel, strides, dilations, padsBegin, padsEnd;
  /// The result's shape: N, C and one extent per spatial dimension.
  llvm::SmallVector<int64_t> resultShape;
};
} // namespace

static int64_t ceilDiv(int64_t numerator, int64_t denominator) {
  return (numerator + denominator - 1) / denominator;
}

/// An ints attribute of one value per spatial dimension (`count` of
/// them), `fallback` for each when absent; each at least `minimum`.
static FailureOr<llvm::SmallVector<int64_t>>
getPerDimension(ONNXNode &node, llvm::StringRef name, size_t count,
                int64_t fallback, int64_t minimum) {
  auto values = node.getIntsAttribute(name);
  if (!values)
    return llvm::SmallVector<int64_t>(count, fallback);
  if (values->size() != count)
    return node.emitError() << "'" << name << "' has " << values->size()
                            << " values, expected " << count;
  for (int64_t value : *values)
    if (value < minimum)
      return node.emitError() << "'" << name << "' value " << value
                              << " is below " << minimum;
  return *values;
}

/// The auto_pad attribute: NOTSET (the default), VALID, SAME_UPPER or
/// SAME_LOWER.
static FailureOr<std::string> getAutoPad(ONNXNode &node) {
  const onnx::AttributeProto *attr = node.getAttribute("auto_pad");
  std::string autoPad = attr ? attr->s() : "NOTSET";
  if (autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER")
    return node.emitError() << "auto_pad '" << autoPad << "' is not one of "
                            << "NOTSET, VALID, SAME_UPPER, SAME_LOWER";
  return autoPad;
}

/// `total` padding split between the start and the end of a dimension:
/// SAME_UPPER puts the odd one at the end, SAME_LOWER at the start.
static std::pair<int64_t, int64_t> splitPadding(const std::string &autoPad,
                                                int64_t total) {
  int64_t begin = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
  return {begin, total - begin};
}

/// The pads attribute's start and end for spatial dimension `dim` under
/// NOTSET; none under VALID.
static std::pair<int64_t, int64_t>
explicitPads(const std::string &autoPad, llvm::ArrayRef<int64_t> pads,
             size_t dim) {
  if (autoPad != "NOTSET")
    return {0, 0};
  return {pads[dim], pads[dim + pads.size() / 2]};
}

/// The kernel, strides, dilations and pads of a pool over `type` (the
/// attributes' defaults and auto_pad resolved) and its result shape.
/// `weightKernel` (a Conv's weight's spatial shape) stands for a missing
/// kernel_shape.
static FailureOr<PoolGeometry>
getPoolGeometry(ONNXNode &node, RankedTensorType type,
                std::optional<llvm::ArrayRef<int64_t>> weightKernel = {}) {
  int64_t rank = type.getRank();
  if (rank < 3)
    return node.emitError() << "the input must have rank >= 3 (N, C and "
                               "spatial dimensions), not "
                            << rank;
  size_t spatial = rank - 2;
  if (!node.getAttribute("kernel_shape") && !weightKernel)
    return node.emitError() << "missing attribute 'kernel_shape'";
  PoolGeometry geometry;
  auto kernel = getPerDimension(node, "kernel_shape", spatial, 1, 1);
  if (succeeded(kernel) && weightKernel) {
    if (node.getAttribute("kernel_shape") &&
        llvm::ArrayRef(*kernel) != *weightKernel)
      return node.emitError() << "kernel_shape does not match the weight";
    kernel = llvm::SmallVector<int64_t>(*weightKernel);
  }
  auto strides = getPerDimension(node, "strides", spatial, 1, 1);
  auto dilations = getPerDimension(node, "dilations", spatial, 1, 1);
  auto pads = getPerDimension(node, "pads", 2 * spatial, 0, 0);
  if (failed(kernel) || failed(strides) || failed(dilations) || failed(pads))
    return failure();
  geometry.kernel = *kernel;
  geometry.strides = *strides;
  geometry.dilations = *dilations;
  auto autoPadValue = getAutoPad(node);
  if (failed(autoPadValue))
    return failure();
  const std::string &autoPad = *autoPadValue;
  bool ceilMode = node.getIntAttribute("ceil_mode", 0) != 0;
  geometry.resultShape.assign(type.getShape().take_front(2));
  for (size_t dim = 0; dim < spatial; ++dim) {
    int64_t in = type.getDimSize(dim + 2), stride = geometry.strides[dim];
    int64_t extent = (geometry.kernel[dim] - 1) * geometry.dilations[dim] + 1;
    int64_t begin = 0, end = 0, out;
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      out = ceilDiv(in, stride);
      std::tie(begin, end) = splitPadding(
          autoPad, std::max<int64_t>(0, (out - 1) * stride + extent - in));
    } else {
      std::tie(begin, end) = explicitPads(autoPad, *pads, dim);
      int64_t room = in + begin + end - extent;
      if (room < 0)
        return node.emitError()
               << "the window (" << extent << " with dilation) is larger "
               << "than the padded spatial dimension " << dim << " ("
               << in + begin + end << ")";
      out = (ceilMode ? ceilDiv(room, stride) : room / stride) + 1;
      // A last window that would start in the end padding is dropped.
      if (ceilMode && (out - 1) * stride >= in + begin)
        --out;
    }
    geometry.padsBegin.push_back(begin);
    geometry.padsEnd.push_back(end);
    geometry.resultShape.push_back(out);
  }
  return geometry;
}

namespace {
/// One window position inside a reduction body: the input position
/// (clamped into the input, so reading it is always safe) and whether it
/// is inside the input rather than the padding.
struct WindowPosition {
  llvm::SmallVector<Value> position;
  Value inside;
};
} // namespace

static WindowPosition locate(OpBuilder &b, Location loc,
                             const PoolGeometry &geometry,
                             llvm::ArrayRef<int64_t> inputShape, ValueRange at,
                             ValueRange over) {
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  WindowPosition window;
  window.position.assign(at.begin(), at.begin() + 2);
  window.inside = arith::ConstantIntOp::create(b, loc, 1, 1);
  Value zero = constant(0);
  for (auto [dim, k] : llvm::enumerate(over)) {
    Value start = arith::MulIOp::create(b, loc, at[dim + 2],
                                        constant(geometry.strides[dim]));
    Value offset =
        arith::MulIOp::create(b, loc, k, constant(geometry.dilations[dim]));
    Value position = arith::SubIOp::create(
        b, loc, arith::AddIOp::create(b, loc, start, offset),
        constant(geometry.padsBegin[dim]));
    Value low = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                      position, zero);
    Value high = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                       position, constant(inputShape[dim + 2]));
    Value inside = arith::AndIOp::create(b, loc, low, high);
    window.inside = arith::AndIOp::create(b, loc, window.inside, inside);
    window.position.push_back(
        arith::SelectOp::create(b, loc, inside, position, zero));
  }
  return window;
}

/// The lowest value of `elementType` (the maximum's starting point).
static TypedAttr lowest(OpBuilder &b, Type elementType, bool isUnsigned) {
  if (isa<FloatType>(elementType))
    return b.getFloatAttr(elementType,
                          -std::numeric_limits<double>::infinity());
  unsigned width = elementType.getIntOrFloatBitWidth();
  return b.getIntegerAttr(elementType, isUnsigned
                                           ? APInt::getZero(width)
                                           : APInt::getSignedMinValue(width));
}

/// The flattened input position of `position` as MaxPool's Indices give
/// it: (n * C + c) * spatial size plus the spatial position in row-major
/// order (storage_order 0) or column-major (1).
static Value flatIndex(OpBuilder &b, Location loc,
                       llvm::ArrayRef<int64_t> inputShape,
                       llvm::ArrayRef<Value> position, bool columnMajor) {
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  auto accumulate = [&](Value sum, int64_t dim) -> Value {
    Value scaled = arith::MulIOp::create(b, loc, sum, constant(inputShape[dim]));
    return arith::AddIOp::create(b, loc, scaled, position[dim]);
  };
  Value index = accumulate(position[0], 1);
  int64_t rank = inputShape.size();
  if (!columnMajor) {
    for (int64_t dim = 2; dim < rank; ++dim)
      index = accumulate(index, dim);
  } else {
    Value spatial = position[rank - 1];
    for (int64_t dim = rank - 2; dim >= 2; --dim)
      spatial = accumulate(spatial, dim);
    int64_t spatialSize = 1;
    for (int64_t dim = 2; dim < rank; ++dim)
      spatialSize *= inputShape[dim];
    index = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, index, constant(spatialSize)),
        spatial);
  }
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
}

namespace {
/// A pool's input and where its windows lie.
struct PoolInput {
  TypedValue<RankedTensorType> data;
  PoolGeometry geometry;
};

/// The next accumulator from the element `x` at a window position inside
/// the input.
using WindowCombine = llvm::function_ref<Value(
    OpBuilder &, Location, ValueRange at, const WindowPosition &, Value x,
    Value acc)>;
} // namespace

static FailureOr<PoolInput> getPoolInput(ONNXNode &node, bool floatOnly) {
  auto input = floatOnly ? node.getFloatInput(0) : node.getInput(0);
  if (failed(input))
    return failure();
  auto geometry = getPoolGeometry(node, input->getType());
  if (failed(geometry))
    return failure();
  return PoolInput{*input, *geometry};
}

/// A tensor of `elementType` over the pool's result positions folding
/// `combine` over each window's positions inside the input (those in
/// the padding leave the accumulator), from `init`.
static Value reduceWindows(ONNXNode &node, const PoolInput &pool,
                           Type elementType, TypedAttr init,
                           WindowCombine combine) {
  llvm::ArrayRef<int64_t> inputShape = pool.data.getType().getShape();
  auto type = RankedTensorType::get(pool.geometry.resultShape, elementType);
  return reduceIndexed(
      node, type, pool.geometry.kernel, init,
      [&](OpBuilder &b, Location loc, ValueRange at, ValueRange over,
          Value acc) -> Value {
        WindowPosition window =
            locate(b, loc, pool.geometry, inputShape, at, over);
        Value x =
            tensor::ExtractOp::create(b, loc, pool.data, window.position);
        Value next = combine(b, loc, at, window, x, acc);
        return arith::SelectOp::create(b, loc, window.inside, next, acc);
      });
}

static Results lowerMaxPool(ONNXNode &node) {
  auto pool = getPoolInput(node, /*floatOnly=*/false);
  if (failed(pool))
    return failure();
  int64_t storageOrder = node.getIntAttribute("storage_order", 0);
  if (storageOrder != 0 && storageOrder != 1)
    return node.emitError() << "storage_order " << storageOrder
                            << " is neither 0 (row-major) nor 1";
  RankedTensorType type = pool->data.getType();
  Type elementType = type.getElementType();
  bool isUnsigned = node.isUnsignedInput(0);
  Value max = reduceWindows(
      node, *pool, elementType, lowest(node.builder, elementType, isUnsigned),
      [&](OpBuilder &b, Location loc, ValueRange, const WindowPosition &,
          Value x, Value acc) -> Value {
        if (isa<FloatType>(elementType))
          return arith::MaximumFOp::create(b, loc, acc, x);
        if (isUnsigned)
          return arith::MaxUIOp::create(b, loc, acc, x);
        return arith::MaxSIOp::create(b, loc, acc, x);
      });
  if (isUnsigned && node.hasOutput(0))
    node.table.define(node.proto.output(0), max, /*isUnsigned=*/true);
  if (!node.hasOutput(1))
    return llvm::SmallVector<Value>{max};

  // Indices: the first window position (in row-major window order) that
  // holds the maximum; -1 stands for none found yet.
  Value indices = reduceWindows(
      node, *pool, node.builder.getI64Type(),
      node.builder.getI64IntegerAttr(-1),
      [&](OpBuilder &b, Location loc, ValueRange at,
          const WindowPosition &window, Value x, Value acc) -> Value {
        Value best = tensor::ExtractOp::create(b, loc, max, at);
        Value equal =
            isa<FloatType>(elementType)
                ? arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x,
                                        best)
                      .getResult()
                : arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x,
                                        best)
                      .getResult();
        Value none = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::slt, acc,
            arith::ConstantIntOp::create(b, loc, b.getI64Type(), 0));
        Value found = arith::AndIOp::create(b, loc, none, equal);
        Value index = flatIndex(b, loc, type.getShape(), window.position,
                                storageOrder == 1);
        return arith::SelectOp::create(b, loc, found, index, acc);
      });
  return llvm::SmallVector<Value>{max, indices};
}

/// 1 / how many of the window's positions at each result position count
/// for AveragePool, as a [1, 1, spatial...] constant: those inside the
/// input, or with count_include_pad those inside the padded input.
static DenseElementsAttr inverseWindowCounts(const PoolGeometry &geometry,
                                      llvm::ArrayRef<int64_t> inputShape,
                                      bool includePad, Type elementType) {
  llvm::ArrayRef<int64_t> spatialShape =
      llvm::ArrayRef(geometry.resultShape).drop_front(2);
  size_t spatial = spatialShape.size();
  // Per dimension, the count at each result position along it.
  llvm::SmallVector<llvm::SmallVector<int64_t>> counts(spatial);
  for (size_t dim = 0; dim < spatial; ++dim) {
    int64_t low = includePad ? -geometry.padsBegin[dim] : 0;
    int64_t high = inputShape[dim + 2] + (includePad ? geometry.padsEnd[dim] : 0);
    for (int64_t o = 0; o < spatialShape[dim]; ++o) {
      int64_t count = 0;
      for (int64_t k = 0; k < geometry.kernel[dim]; ++k) {
        int64_t p = o * geometry.strides[dim] + k * geometry.dilations[dim] -
                    geometry.padsBegin[dim];
        count += p >= low && p < high;
      }
      counts[dim].push_back(count);
    }
  }
  llvm::SmallVector<int64_t> shape{1, 1};
  llvm::append_range(shape, spatialShape);
  auto type = RankedTensorType::get(shape, elementType);
  llvm::SmallVector<APFloat> values;
  llvm::SmallVector<int64_t> position(spatial, 0);
  for (int64_t linear = 0; linear < type.getNumElements(); ++linear) {
    int64_t rest = linear, count = 1;
    for (int64_t dim = spatial - 1; dim >= 0; --dim) {
      count *= counts[dim][rest % spatialShape[dim]];
      rest /= spatialShape[dim];
    }
    // A window entirely in the padding averages nothing: 0 / 1.
    APFloat value(1.0 / static_cast<double>(std::max<int64_t>(count, 1)));
    bool losesInfo;
    value.convert(cast<FloatType>(elementType).getFloatSemantics(),
                  APFloat::rmNearestTiesToEven, &losesInfo);
    values.push_back(value);
  }
  return DenseElementsAttr::get(type, values);
}

static Results lowerAveragePool(ONNXNode &node) {
  auto pool = getPoolInput(node, /*floatOnly=*/true);
  if (failed(pool))
    return failure();
  RankedTensorType type = pool->data.getType();
  Type elementType = type.getElementType();
  auto resultType = type.clone(pool->geometry.resultShape);
  Value sum = reduceWindows(
      node, *pool, elementType, node.builder.getFloatAttr(elementType, 0.0),
      [&](OpBuilder &b, Location loc, ValueRange, const WindowPosition &,
          Value x, Value acc) -> Value {
        return arith::AddFOp::create(b, loc, acc, x);
      });
  bool includePad = node.getIntAttribute("count_include_pad", 0) != 0;
  DenseElementsAttr counts =
      inverseWindowCounts(pool->geometry, type.getShape(), includePad,
                          elementType);
  Value inverse =
      tosa::ConstOp::create(node.builder, node.loc, counts.getType(), counts);
  return llvm::SmallVector<Value>{multiply(node, resultType, sum, inverse)};
}

/// `result` [N, M, ...] plus the optional [M] bias input `index`.
static Results addChannelBias(ONNXNode &node, Value result, unsigned index) {
  if (!node.hasInput(index))
    return llvm::SmallVector<Value>{result};
  auto type = cast<RankedTensorType>(result.getType());
  int64_t features = type.getDimSize(1);
  auto bias = node.getFloatInput(index);
  if (failed(bias))
    return failure();
  if (bias->getType() !=
      RankedTensorType::get({features}, type.getElementType()))
    return node.emitError() << "the bias " << bias->getType()
                            << " is not one " << type.getElementType()
                            << " per output channel (" << features << ")";
  llvm::SmallVector<int64_t> biasShape(type.getRank(), 1);
  biasShape[1] = features;
  return llvm::SmallVector<Value>{tosa::AddOp::create(
      node.builder, node.loc, type, result,
      reshape(node, *bias, biasShape))};
}

/// The input channel a convolution reads for output channel `feature`
/// and channel `c` within the group: (feature / groupFeatures) *
/// groupChannels + c.
static Value inputChannel(OpBuilder &b, Location loc, Value feature, Value c,
                          int64_t groupFeatures, int64_t groupChannels) {
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  Value group =
      arith::DivUIOp::create(b, loc, feature, constant(groupFeatures));
  return arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, group, constant(groupChannels)), c);
}

/// The input and weight of Conv, ConvTranspose (floats of one type) or
/// ConvInteger (8-bit integers), of one rank >= 3.
static FailureOr<std::pair<TypedValue<RankedTensorType>,
                           TypedValue<RankedTensorType>>>
getConvOperands(ONNXNode &node, bool isInteger) {
  auto input = isInteger ? node.getInput(0) : node.getFloatInput(0);
  auto weight = isInteger ? node.getInput(1) : node.getFloatInput(1);
  if (failed(input) || failed(weight))
    return failure();
  RankedTensorType type = input->getType(), weightType = weight->getType();
  if (isInteger) {
    if (!type.getElementType().isInteger(8) ||
        !weightType.getElementType().isInteger(8))
      return node.emitError() << "the input and weight must be 8-bit "
                                 "integer tensors";
  } else if (weightType.getElementType() != type.getElementType()) {
    return node.emitError() << "operand element types differ";
  }
  if (weightType.getRank() != type.getRank() || type.getRank() < 3)
    return node.emitError() << "the input " << type << " and weight "
                            << weightType
                            << " must have one rank >= 3 (N, C, spatial...)";
  return std::make_pair(*input, *weight);
}

/// Conv: out[n, m, o...] = sum over the group's channels c and the window
/// k... of x[n, g * C/group + c, o * stride + k * dilation - pad] *
/// w[m, c, k...] (+ bias[m]), g = m / (M/group): one reduction
/// linalg.generic over [C/group, kernel...] sharing the pools' geometry.
///
/// ConvInteger is the same over 8-bit integers minus their zero points
/// (inputs 2 and 3: a scalar, or for the weight one per output channel),
/// accumulated in INT32; the padding contributes 0, as the zero point
/// would.
static Results lowerConv(ONNXNode &node) {
  bool isInteger = node.proto.op_type() == "ConvInteger";
  auto operands = getConvOperands(node, isInteger);
  if (failed(operands))
    return failure();
  auto [input, weight] = *operands;
  RankedTensorType type = input.getType(), weightType = weight.getType();
  int64_t group = node.getIntAttribute("group", 1);
  int64_t channels = type.getDimSize(1), features = weightType.getDimSize(0);
  int64_t groupChannels = weightType.getDimSize(1);
  if (group < 1 || channels != group * groupChannels ||
      features % group != 0)
    return node.emitError() << "group " << group << " does not split "
                            << channels << " input and " << features
                            << " output channels (" << groupChannels
                            << " per group in the weight)";
  auto geometry =
      getPoolGeometry(node, type, weightType.getShape().drop_front(2));
  if (failed(geometry))
    return failure();
  geometry->resultShape[1] = features;
  int64_t groupFeatures = features / group;
  llvm::SmallVector<int64_t> reduced{groupChannels};
  llvm::append_range(reduced, geometry->kernel);
  // Zero points of ConvInteger: null when absent (0).
  Value zeroPoints[2];
  for (unsigned index : {2u, 3u}) {
    if (!isInteger || !node.hasInput(index))
      continue;
    auto zeroPoint = node.getInput(index);
    if (failed(zeroPoint))
      return failure();
    int64_t count = zeroPoint->getType().getNumElements();
    if (zeroPoint->getType().getElementType() !=
            (index == 2 ? type : weightType).getElementType() ||
        (count != 1 && (index == 2 || count != features)))
      return node.emitError() << "zero point " << zeroPoint->getType()
                              << " is not one value"
                              << (index == 3 ? " or one per output channel"
                                             : "")
                              << " of its operand's type";
    zeroPoints[index - 2] = *zeroPoint;
  }
  bool unsignedInput = node.isUnsignedInput(0),
       unsignedWeight = node.isUnsignedInput(1);
  Type elementType =
      isInteger ? node.builder.getI32Type() : type.getElementType();
  Value data = input, weights = weight;
  Value result = reduceIndexed(
      node, RankedTensorType::get(geometry->resultShape, elementType), reduced,
      scalarAttr(node.builder, elementType, 0.0),
      [&](OpBuilder &b, Location loc, ValueRange at, ValueRange over,
          Value acc) -> Value {
        auto constant = [&](int64_t value) -> Value {
          return arith::ConstantIndexOp::create(b, loc, value);
        };
        Value channel =
            inputChannel(b, loc, at[1], over[0], groupFeatures, groupChannels);
        llvm::SmallVector<Value> inputAt{at[0], channel};
        llvm::append_range(inputAt, at.drop_front(2));
        WindowPosition window = locate(b, loc, *geometry, type.getShape(),
                                       inputAt, over.drop_front(1));
        Value x = tensor::ExtractOp::create(b, loc, data, window.position);
        llvm::SmallVector<Value> weightAt{at[1]};
        llvm::append_range(weightAt, over);
        Value w = tensor::ExtractOp::create(b, loc, weights, weightAt);
        Value sum;
        if (isInteger) {
          // An operand widened to INT32 minus its zero point.
          auto centered = [&](Value value, Value zeroPoint, bool isUnsigned,
                              Value channel) {
            Value wide = castScalar(b, loc, value, elementType, isUnsigned);
            if (!zeroPoint)
              return wide;
            auto zeroType = cast<RankedTensorType>(zeroPoint.getType());
            llvm::SmallVector<Value> zeroAt(zeroType.getRank(), constant(0));
            if (zeroType.getNumElements() != 1)
              zeroAt.back() = channel;
            Value zero = tensor::ExtractOp::create(b, loc, zeroPoint, zeroAt);
            return arith::SubIOp::create(
                       b, loc, wide,
                       castScalar(b, loc, zero, elementType, isUnsigned))
                .getResult();
          };
          Value product = arith::MulIOp::create(
              b, loc, centered(x, zeroPoints[0], unsignedInput, Value()),
              centered(w, zeroPoints[1], unsignedWeight, at[1]));
          sum = arith::AddIOp::create(b, loc, acc, product);
        } else {
          sum = arith::AddFOp::create(b, loc, acc,
                                      arith::MulFOp::create(b, loc, x, w));
        }
        return arith::SelectOp::create(b, loc, window.inside, sum, acc);
      });
  if (isInteger)
    return llvm::SmallVector<Value>{result};
  return addChannelBias(node, result, 2);
}


/// ConvTranspose: out[n, m, o...] = bias[m] + the sum over the group's
/// input channels c and the window k... of x[n, c, i...] * w[c, m', k...]
/// wherever o = i * stride + k * dilation - pad_begin for an input
/// position i (m' is m within its group). The output size comes from
/// output_shape, or from the pads (auto_pad SAME_*: in * stride) and
/// output_padding.
static Results lowerConvTranspose(ONNXNode &node) {
  auto operands = getConvOperands(node, /*isInteger=*/false);
  if (failed(operands))
    return failure();
  auto [input, weight] = *operands;
  RankedTensorType type = input.getType(), weightType = weight.getType();
  int64_t rank = type.getRank();
  int64_t group = node.getIntAttribute("group", 1);
  int64_t channels = type.getDimSize(1);
  if (group < 1 || channels % group != 0 ||
      weightType.getDimSize(0) != channels)
    return node.emitError() << "group " << group << " does not split the "
                            << channels << " input channels of weight "
                            << weightType;
  size_t spatial = rank - 2;
  llvm::ArrayRef<int64_t> weightKernel = weightType.getShape().drop_front(2);
  auto kernel = getPerDimension(node, "kernel_shape", spatial, 1, 1);
  auto strides = getPerDimension(node, "strides", spatial, 1, 1);
  auto dilations = getPerDimension(node, "dilations", spatial, 1, 1);
  auto pads = getPerDimension(node, "pads", 2 * spatial, 0, 0);
  auto outputPadding =
      getPerDimension(node, "output_padding", spatial, 0, 0);
  if (failed(kernel) || failed(strides) || failed(dilations) ||
      failed(pads) || failed(outputPadding))
    return failure();
  if (node.getAttribute("kernel_shape") &&
      llvm::ArrayRef(*kernel) != weightKernel)
    return node.emitError() << "kernel_shape does not match the weight";
  auto autoPadValue = getAutoPad(node);
  if (failed(autoPadValue))
    return failure();
  const std::string &autoPad = *autoPadValue;
  auto outputShape = getPerDimension(node, "output_shape", spatial, -1, 1);
  if (failed(outputShape))
    return failure();
  bool givenShape = node.getAttribute("output_shape") != nullptr;
  PoolGeometry geometry;
  geometry.kernel.assign(weightKernel.begin(), weightKernel.end());
  geometry.strides = *strides;
  geometry.dilations = *dilations;
  int64_t groupFeatures = weightType.getDimSize(1);
  geometry.resultShape = {type.getDimSize(0), groupFeatures * group};
  for (size_t dim = 0; dim < spatial; ++dim) {
    int64_t in = type.getDimSize(dim + 2), stride = (*strides)[dim];
    int64_t extent = (weightKernel[dim] - 1) * (*dilations)[dim] + 1;
    int64_t full = stride * (in - 1) + (*outputPadding)[dim] + extent;
    int64_t begin = 0, end = 0, out;
    bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
    if (givenShape || same) {
      out = givenShape ? (*outputShape)[dim] : in * stride;
      // An output larger than the input reaches is zero-extended at the
      // end (as output_padding would), not padded negatively.
      std::tie(begin, end) =
          splitPadding(autoPad, std::max<int64_t>(0, full - out));
    } else {
      std::tie(begin, end) = explicitPads(autoPad, *pads, dim);
      out = full - begin - end;
    }
    if (out < 0)
      return node.emitError() << "the output of spatial dimension " << dim
                              << " would be empty (" << out << ")";
    geometry.padsBegin.push_back(begin);
    geometry.padsEnd.push_back(end);
    geometry.resultShape.push_back(out);
  }
  int64_t groupChannels = channels / group;
  llvm::SmallVector<int64_t> reduced{groupChannels};
  llvm::append_range(reduced, geometry.kernel);
  Type elementType = type.getElementType();
  Value data = input, weights = weight;
  Value result = reduceIndexed(
      node, type.clone(geometry.resultShape), reduced,
      node.builder.getFloatAttr(elementType, 0.0),
      [&](OpBuilder &b, Location loc, ValueRange at, ValueRange over,
          Value acc) -> Value {
        auto constant = [&](int64_t value) -> Value {
          return arith::ConstantIndexOp::create(b, loc, value);
        };
        using P = arith::CmpIPredicate;
        Value channel =
            inputChannel(b, loc, at[1], over[0], groupFeatures, groupChannels);
        Value feature =
            arith::RemUIOp::create(b, loc, at[1], constant(groupFeatures));
        llvm::SmallVector<Value> inputAt{at[0], channel};
        llvm::SmallVector<Value> weightAt{channel, feature};
        Value inside = arith::ConstantIntOp::create(b, loc, 1, 1);
        for (size_t dim = 0; dim < spatial; ++dim) {
          Value k = over[dim + 1];
          // o + pad_begin - k * dilation, which stride must divide.
          Value numerator = arith::SubIOp::create(
              b, loc,
              arith::AddIOp::create(b, loc, at[dim + 2],
                                    constant(geometry.padsBegin[dim])),
              arith::MulIOp::create(b, loc, k,
                                    constant(geometry.dilations[dim])));
          Value stride = constant(geometry.strides[dim]);
          Value position = arith::DivSIOp::create(b, loc, numerator, stride);
          Value divides = arith::CmpIOp::create(
              b, loc, P::eq, arith::RemSIOp::create(b, loc, numerator, stride),
              constant(0));
          Value low =
              arith::CmpIOp::create(b, loc, P::sge, numerator, constant(0));
          Value high = arith::CmpIOp::create(
              b, loc, P::slt, position, constant(type.getDimSize(dim + 2)));
          Value valid = arith::AndIOp::create(
              b, loc, divides, arith::AndIOp::create(b, loc, low, high));
          inside = arith::AndIOp::create(b, loc, inside, valid);
          inputAt.push_back(
              arith::SelectOp::create(b, loc, valid, position, constant(0)));
          weightAt.push_back(k);
        }
        Value x = tensor::ExtractOp::create(b, loc, data, inputAt);
        Value w = tensor::ExtractOp::create(b, loc, weights, weightAt);
        Value sum = arith::AddFOp::create(b, loc, acc,
                                          arith::MulFOp::create(b, loc, x, w));
        return arith::SelectOp::create(b, loc, inside, sum, acc);
      });
  return addChannelBias(node, result, 2);
}

void mlir::afm::onnx_import::registerPoolingLowerings(
    llvm::StringMap<NodeLowering> &lowerings) {
  lowerings["MaxPool"] = lowerMaxPool;
  lowerings["AveragePool"] = lowerAveragePool;
  lowerings["Conv"] = lowerConv;
  lowerings["ConvInteger"] = lowerConv;
  lowerings["ConvTranspose"] = lowerConvTranspose;
}
