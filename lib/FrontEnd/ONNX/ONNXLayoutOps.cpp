//===- ONNXLayoutOps.cpp - ONNX ops that rearrange elements ---------------===//
//
// DepthToSpace, SpaceToDepth and Tile: each output element is one input
// element at a position computed from the output's (divisions and
// remainders by the block size or the input extent), so each is one
// index-computing linalg.generic.
//
//===----------------------------------------------------------------------===//

#include "ONNXBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::afm::onnx_import;

namespace {
/// Index arithmetic by constants inside an index body.
struct IndexMath {
  OpBuilder &b;
  Location loc;

  Value constant(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, int64_t y) {
    return arith::MulIOp::create(b, loc, x, constant(y));
  }
  Value div(Value x, int64_t y) {
    return arith::DivUIOp::create(b, loc, x, constant(y));
  }
  Value rem(Value x, int64_t y) {
    return arith::RemUIOp::create(b, loc, x, constant(y));
  }
};
} // namespace

/// The NCHW input of DepthToSpace / SpaceToDepth and its blocksize.
static FailureOr<std::pair<TypedValue<RankedTensorType>, int64_t>>
getBlockInput(ONNXNode &node) {
  auto input = node.getInput(0);
  if (failed(input))
    return failure();
  if (input->getType().getRank() != 4)
    return node.emitError() << "the input must have rank 4 (N, C, H, W), not "
                            << input->getType().getRank();
  int64_t block = node.getIntAttribute("blocksize", 0);
  if (block <= 0)
    return node.emitError() << "blocksize must be positive, not " << block;
  return std::make_pair(*input, block);
}

/// [N, C, H, W] -> [N, C / b^2, H * b, W * b]: in DCR mode (the default)
/// the channel is (row in block, column in block, channel), in CRD mode
/// (channel, row in block, column in block).
static Results lowerDepthToSpace(ONNXNode &node) {
  auto operands = getBlockInput(node);
  if (failed(operands))
    return failure();
  auto [input, block] = *operands;
  const onnx::AttributeProto *modeAttr = node.getAttribute("mode");
  std::string mode = modeAttr ? modeAttr->s() : "DCR";
  if (mode != "DCR" && mode != "CRD")
    return node.emitError() << "mode '" << mode << "' is not DCR or CRD";
  RankedTensorType type = input.getType();
  llvm::ArrayRef<int64_t> shape = type.getShape();
  if (shape[1] % (block * block) != 0)
    return node.emitError() << "the channels (" << shape[1]
                            << ") are not a multiple of blocksize^2";
  int64_t channels = shape[1] / (block * block);
  auto resultType =
      type.clone({shape[0], channels, shape[2] * block, shape[3] * block});
  return llvm::SmallVector<Value>{generateTensor(
      node, resultType, [&](OpBuilder &b, Location loc, ValueRange at) {
        IndexMath m{b, loc};
        Value offset = m.add(m.mul(m.rem(at[2], block), block),
                             m.rem(at[3], block));
        Value channel = mode == "DCR"
                            ? m.add(m.mul(offset, channels), at[1])
                            : m.add(m.mul(at[1], block * block), offset);
        return tensor::ExtractOp::create(
                   b, loc, input,
                   ValueRange{at[0], channel, m.div(at[2], block),
                              m.div(at[3], block)})
            .getResult();
      })};
}

/// [N, C, H, W] -> [N, C * b^2, H / b, W / b], the inverse of DCR.
static Results lowerSpaceToDepth(ONNXNode &node) {
  auto operands = getBlockInput(node);
  if (failed(operands))
    return failure();
  auto [input, block] = *operands;
  RankedTensorType type = input.getType();
  llvm::ArrayRef<int64_t> shape = type.getShape();
  if (shape[2] % block != 0 || shape[3] % block != 0)
    return node.emitError() << "H and W (" << shape[2] << ", " << shape[3]
                            << ") are not multiples of blocksize";
  int64_t channels = shape[1];
  auto resultType = type.clone(
      {shape[0], channels * block * block, shape[2] / block, shape[3] / block});
  return llvm::SmallVector<Value>{generateTensor(
      node, resultType, [&](OpBuilder &b, Location loc, ValueRange at) {
        IndexMath m{b, loc};
        Value offset = m.div(at[1], channels);
        Value row = m.add(m.mul(at[2], block), m.div(offset, block));
        Value column = m.add(m.mul(at[3], block), m.rem(offset, block));
        return tensor::ExtractOp::create(
                   b, loc, input,
                   ValueRange{at[0], m.rem(at[1], channels), row, column})
            .getResult();
      })};
}

/// The input repeated `repeats` times along each dimension:
/// out[i...] = in[i % extent...].
static Results lowerTile(ONNXNode &node) {
  auto input = node.getInput(0);
  if (failed(input))
    return failure();
  auto repeats = node.getConstantInts(1, "repeats");
  if (failed(repeats))
    return failure();
  RankedTensorType type = input->getType();
  if (static_cast<int64_t>(repeats->size()) != type.getRank())
    return node.emitError() << "repeats has " << repeats->size()
                            << " values for rank " << type.getRank();
  llvm::SmallVector<int64_t> shape;
  for (auto [dim, repeat] : llvm::zip(type.getShape(), *repeats)) {
    if (repeat < 0)
      return node.emitError() << "repeat " << repeat << " is negative";
    shape.push_back(dim * repeat);
  }
  Value data = *input;
  Value result = generateTensor(
      node, type.clone(shape), [&](OpBuilder &b, Location loc, ValueRange at) {
        IndexMath m{b, loc};
        llvm::SmallVector<Value> position;
        for (auto [index, extent] : llvm::zip(at, type.getShape()))
          position.push_back(m.rem(index, extent));
        return tensor::ExtractOp::create(b, loc, data, position).getResult();
      });
  if (node.isUnsignedInput(0) && node.hasOutput(0))
    node.table.define(node.proto.output(0), result, /*isUnsigned=*/true);
  return llvm::SmallVector<Value>{result};
}

void mlir::afm::onnx_import::registerLayoutLowerings(
    llvm::StringMap<NodeLowering> &lowerings) {
  lowerings["DepthToSpace"] = lowerDepthToSpace;
  lowerings["SpaceToDepth"] = lowerSpaceToDepth;
  lowerings["Tile"] = lowerTile;
}
