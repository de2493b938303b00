//===- ONNXNormalizationOps.cpp - ONNX per-channel normalizations ---------===//
//
// BatchNormalization and InstanceNormalization over [N, C, D...]:
// (x - mean) * rsqrt(var + epsilon) * scale + bias with per-channel
// scale and bias, as TOSA ops broadcasting [1, C, 1...] operands. Batch
// statistics (BatchNormalization's training_mode, every
// InstanceNormalization) are means over the other dimensions;
// GroupNormalization's over each group of channels. LRN
// normalizes by the squares of the neighbouring channels.
//
//===----------------------------------------------------------------------===//

#include "TOSABuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::afm::onnx_import;

/// Input `index`, a [C] float tensor of the data's type, as [1, C, 1...].
static FailureOr<Value> getChannelInput(ONNXNode &node, unsigned index,
                                        RankedTensorType dataType) {
  auto input = node.getFloatInput(index);
  if (failed(input))
    return failure();
  int64_t channels = dataType.getDimSize(1);
  if (input->getType() !=
      RankedTensorType::get({channels}, dataType.getElementType()))
    return node.emitError() << "input " << index << " " << input->getType()
                            << " is not one " << dataType.getElementType()
                            << " per channel (" << channels << ")";
  llvm::SmallVector<int64_t> shape(dataType.getRank(), 1);
  shape[1] = channels;
  return reshape(node, *input, shape);
}

/// The data input, [N, C, D...] floats.
static FailureOr<TypedValue<RankedTensorType>> getDataInput(ONNXNode &node) {
  auto input = node.getFloatInput(0);
  if (failed(input))
    return failure();
  if (input->getType().getRank() < 2)
    return node.emitError() << "the input must have rank >= 2 (N, C, ...), "
                            << "not " << input->getType().getRank();
  return *input;
}

/// (x - mean) * rsqrt(var + epsilon) * scale + bias.
static Value normalize(TOSABuilder &t, Value x, Value mean, Value variance,
                       Value scale, Value bias, double epsilon) {
  RankedTensorType type = TOSABuilder::typeOf(variance);
  Value shifted = t.add(variance, splat(t.node, type.getElementType(),
                                        epsilon, type.getRank()));
  Value inverse = tosa::RsqrtOp::create(t.b, t.loc, type, shifted);
  return t.add(t.mul(t.mul(t.sub(x, mean), inverse), scale), bias);
}

/// The mean and (population) variance of `x` over `dims`, kept.
static std::pair<Value, Value> moments(TOSABuilder &t, Value x,
                                       llvm::ArrayRef<int64_t> dims) {
  Value mean = meanKeepDims(t.node, x, dims);
  Value centered = t.sub(x, mean);
  return {mean, meanKeepDims(t.node, t.mul(centered, centered), dims)};
}

static Results lowerInstanceNormalization(ONNXNode &node) {
  auto data = getDataInput(node);
  if (failed(data))
    return failure();
  RankedTensorType type = data->getType();
  auto scale = getChannelInput(node, 1, type);
  auto bias = getChannelInput(node, 2, type);
  if (failed(scale) || failed(bias))
    return failure();
  TOSABuilder t(node);
  auto [mean, variance] = moments(
      t, *data, llvm::to_vector(llvm::seq<int64_t>(2, type.getRank())));
  double epsilon = node.getAttribute("epsilon")
                       ? node.getAttribute("epsilon")->f()
                       : 1e-5;
  return llvm::SmallVector<Value>{
      normalize(t, *data, mean, variance, *scale, *bias, epsilon)};
}

/// GroupNormalization: the channels in `num_groups` groups, each group of
/// each sample normalized over its channels and positions; then scale and
/// bias, one per group before opset 21, one per channel from 21 on.
static Results lowerGroupNormalization(ONNXNode &node) {
  auto data = getDataInput(node);
  if (failed(data))
    return failure();
  RankedTensorType type = data->getType();
  int64_t groups = node.getIntAttribute("num_groups", 0);
  int64_t batch = type.getDimSize(0), channels = type.getDimSize(1);
  if (groups <= 0 || channels % groups != 0)
    return node.emitError() << "num_groups (" << groups
                            << ") must be positive and divide the "
                            << channels << " channels";
  bool perChannel = node.opset >= 21;
  int64_t per = perChannel ? channels : groups;
  llvm::SmallVector<Value> affine;
  for (unsigned index : {1u, 2u}) {
    auto input = node.getFloatInput(index);
    if (failed(input))
      return failure();
    if (input->getType() !=
        RankedTensorType::get({per}, type.getElementType()))
      return node.emitError()
             << "input " << index << " " << input->getType() << " is not one "
             << type.getElementType() << " per "
             << (perChannel ? "channel (" : "group (") << per << ")";
    affine.push_back(*input);
  }
  TOSABuilder t(node);
  int64_t rest = type.getNumElements() / (batch * groups);
  Value grouped = t.reshape(*data, {batch, groups, rest});
  auto [mean, variance] = moments(t, grouped, {2});
  double epsilon = node.getAttribute("epsilon")
                       ? node.getAttribute("epsilon")->f()
                       : 1e-5;
  llvm::ArrayRef<int64_t> shape = type.getShape();
  if (perChannel) {
    Value one = splat(node, type.getElementType(), 1.0, 3);
    Value zero = splat(node, type.getElementType(), 0.0, 3);
    Value normalized = t.reshape(
        normalize(t, grouped, mean, variance, one, zero, epsilon), shape);
    llvm::SmallVector<int64_t> channelShape(type.getRank(), 1);
    channelShape[1] = channels;
    return llvm::SmallVector<Value>{
        t.add(t.mul(normalized, t.reshape(affine[0], channelShape)),
              t.reshape(affine[1], channelShape))};
  }
  Value scale = t.reshape(affine[0], {1, groups, 1});
  Value bias = t.reshape(affine[1], {1, groups, 1});
  return llvm::SmallVector<Value>{t.reshape(
      normalize(t, grouped, mean, variance, scale, bias, epsilon), shape)};
}

/// With training_mode the batch's statistics normalize, and the running
/// mean and variance outputs move toward them by 1 - momentum.
static Results lowerBatchNormalization(ONNXNode &node) {
  auto data = getDataInput(node);
  if (failed(data))
    return failure();
  RankedTensorType type = data->getType();
  llvm::SmallVector<Value> channelInputs;
  for (unsigned index = 1; index <= 4; ++index) {
    auto input = getChannelInput(node, index, type);
    if (failed(input))
      return failure();
    channelInputs.push_back(*input);
  }
  Value scale = channelInputs[0], bias = channelInputs[1];
  Value inputMean = channelInputs[2], inputVariance = channelInputs[3];
  double epsilon = node.getAttribute("epsilon")
                       ? node.getAttribute("epsilon")->f()
                       : 1e-5;
  TOSABuilder t(node);
  if (node.getIntAttribute("training_mode", 0) == 0)
    return llvm::SmallVector<Value>{normalize(t, *data, inputMean,
                                              inputVariance, scale, bias,
                                              epsilon)};
  llvm::SmallVector<int64_t> dims{0};
  llvm::append_range(dims, llvm::seq<int64_t>(2, type.getRank()));
  auto [mean, variance] = moments(t, *data, dims);
  double momentum = node.getAttribute("momentum")
                        ? node.getAttribute("momentum")->f()
                        : 0.9;
  auto running = [&](Value previous, Value current) {
    Value moved = t.add(t.scale(previous, momentum),
                        t.scale(current, 1.0 - momentum));
    return reshape(node, moved, {type.getDimSize(1)});
  };
  return llvm::SmallVector<Value>{
      normalize(t, *data, mean, variance, scale, bias, epsilon),
      running(inputMean, mean), running(inputVariance, variance)};
}

/// LRN: x / (bias + alpha / size * sum of x^2 over the `size` channels
/// around c)^beta; the sum is a reduction linalg.generic over the channel
/// window (channels past the edges count nothing).
static Results lowerLRN(ONNXNode &node) {
  auto data = getDataInput(node);
  if (failed(data))
    return failure();
  RankedTensorType type = data->getType();
  int64_t size = node.getIntAttribute("size", 0);
  if (size < 1)
    return node.emitError() << "size must be positive, not " << size;
  auto floatAttr = [&](llvm::StringRef name, double fallback) {
    const onnx::AttributeProto *attr = node.getAttribute(name);
    return attr ? static_cast<double>(attr->f()) : fallback;
  };
  double alpha = floatAttr("alpha", 1e-4), beta = floatAttr("beta", 0.75),
         bias = floatAttr("bias", 1.0);
  int64_t before = (size - 1) / 2, channels = type.getDimSize(1);
  Type elementType = type.getElementType();
  Value x = *data;
  Value squares = reduceIndexed(
      node, type, {size}, node.builder.getFloatAttr(elementType, 0.0),
      [&](OpBuilder &b, Location loc, ValueRange at, ValueRange over,
          Value acc) -> Value {
        using P = arith::CmpIPredicate;
        // c - before + j, in signed index arithmetic.
        Value channel = arith::SubIOp::create(
            b, loc, arith::AddIOp::create(b, loc, at[1], over[0]),
            arith::ConstantIndexOp::create(b, loc, before));
        Value zero = arith::ConstantIndexOp::create(b, loc, 0);
        Value inside = arith::AndIOp::create(
            b, loc, arith::CmpIOp::create(b, loc, P::sge, channel, zero),
            arith::CmpIOp::create(
                b, loc, P::slt, channel,
                arith::ConstantIndexOp::create(b, loc, channels)));
        llvm::SmallVector<Value> position(at);
        position[1] = arith::SelectOp::create(b, loc, inside, channel, zero);
        Value value = tensor::ExtractOp::create(b, loc, x, position);
        Value sum = arith::AddFOp::create(
            b, loc, acc, arith::MulFOp::create(b, loc, value, value));
        return arith::SelectOp::create(b, loc, inside, sum, acc);
      });
  auto result = broadcastElementwise(
      node, {x, squares}, elementType,
      [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
        auto constant = [&](double value) -> Value {
          return arith::ConstantOp::create(b, loc,
                                           b.getFloatAttr(elementType, value));
        };
        Value base = arith::AddFOp::create(
            b, loc, constant(bias),
            arith::MulFOp::create(b, loc, constant(alpha / size), args[1]));
        return arith::DivFOp::create(
            b, loc, args[0], math::PowFOp::create(b, loc, base, constant(beta)));
      });
  if (failed(result))
    return failure();
  return llvm::SmallVector<Value>{*result};
}

void mlir::afm::onnx_import::registerNormalizationLowerings(
    llvm::StringMap<NodeLowering> &lowerings) {
  lowerings["InstanceNormalization"] = lowerInstanceNormalization;
  lowerings["GroupNormalization"] = lowerGroupNormalization;
  lowerings["BatchNormalization"] = lowerBatchNormalization;
  lowerings["LRN"] = lowerLRN;
}
