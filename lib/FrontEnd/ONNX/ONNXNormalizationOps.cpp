//===- ONNXNormalizationOps.cpp - ONNX per-channel normalizations ---------===//
//
// BatchNormalization and InstanceNormalization over [N, C, D...]:
// (x - mean) * rsqrt(var + epsilon) * scale + bias with per-channel
// scale and bias, as TOSA ops broadcasting [1, C, 1...] operands. Batch
// statistics (BatchNormalization's training_mode, every
// InstanceNormalization) are means over the other dimensions.
//
//===----------------------------------------------------------------------===//

#include "TOSABuilder.h"

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

void mlir::afm::onnx_import::registerNormalizationLowerings(
    llvm::StringMap<NodeLowering> &lowerings) {
  lowerings["InstanceNormalization"] = lowerInstanceNormalization;
  lowerings["BatchNormalization"] = lowerBatchNormalization;
}
