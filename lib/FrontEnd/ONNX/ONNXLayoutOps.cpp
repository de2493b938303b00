//===- ONNXLayoutOps.cpp - ONNX ops that rearrange elements ---------------===//
//
// DepthToSpace, SpaceToDepth, Tile, Pad and ReverseSequence: each output
// element is one input element (or Pad's constant) at a position computed
// from the output's (divisions and remainders by the block size or the
// input extent, reflections, reversal within a sequence length), so each
// is one index-computing linalg.generic.
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

/// Pad: each output position minus the leading pad is an input
/// position; outside the input, `constant` mode gives the constant value
/// (input 2, 0 by default), `edge` the nearest edge element, `reflect` the
/// element mirrored about the edge, `wrap` the one a period away. Negative
/// pads crop.
static Results lowerPad(ONNXNode &node) {
  auto input = node.getInput(0);
  if (failed(input))
    return failure();
  RankedTensorType type = input->getType();
  int64_t rank = type.getRank();
  llvm::SmallVector<int64_t> pads;
  if (node.opset < 11) {
    pads = node.getIntsAttribute("pads").value_or(llvm::SmallVector<int64_t>());
  } else {
    auto values = node.getConstantInts(1, "pads");
    if (failed(values))
      return failure();
    pads = *values;
  }
  if (node.opset >= 18 && node.hasInput(3))
    return node.emitError() << "the axes input is not supported";
  if (static_cast<int64_t>(pads.size()) != 2 * rank)
    return node.emitError() << "pads has " << pads.size()
                            << " values, expected " << 2 * rank;
  const onnx::AttributeProto *modeAttr = node.getAttribute("mode");
  std::string mode = modeAttr ? modeAttr->s() : "constant";
  if (mode != "constant" && mode != "edge" && mode != "reflect" &&
      mode != "wrap")
    return node.emitError() << "mode '" << mode
                            << "' is not one of constant, edge, reflect, wrap";
  llvm::SmallVector<int64_t> shape;
  for (int64_t dim = 0; dim < rank; ++dim) {
    int64_t in = type.getDimSize(dim);
    int64_t out = in + pads[dim] + pads[dim + rank];
    if (out < 0)
      return node.emitError() << "pads crop dimension " << dim
                              << " below zero";
    if (mode != "constant" && in == 0 && out > 0)
      return node.emitError() << "mode '" << mode
                              << "' cannot pad the empty dimension " << dim;
    if (mode == "reflect" &&
        (pads[dim] >= in || pads[dim + rank] >= in))
      return node.emitError() << "reflect pads of dimension " << dim
                              << " must be smaller than its size " << in;
    shape.push_back(out);
  }
  Value data = *input;
  Value padValue;
  if (mode == "constant" && node.hasInput(2)) {
    auto value = node.getInput(2);
    if (failed(value))
      return failure();
    if (value->getType().getElementType() != type.getElementType() ||
        value->getType().getNumElements() != 1)
      return node.emitError() << "the constant value must be one "
                              << type.getElementType();
    padValue = *value;
  }
  Type elementType = type.getElementType();
  Value result = generateTensor(
      node, type.clone(shape),
      [&](OpBuilder &b, Location loc, ValueRange at) -> Value {
        auto constant = [&](int64_t value) -> Value {
          return arith::ConstantIndexOp::create(b, loc, value);
        };
        using P = arith::CmpIPredicate;
        Value inside = arith::ConstantIntOp::create(b, loc, 1, 1);
        llvm::SmallVector<Value> position;
        for (int64_t dim = 0; dim < rank; ++dim) {
          int64_t in = type.getDimSize(dim);
          Value p = arith::SubIOp::create(b, loc, at[dim], constant(pads[dim]));
          Value below = arith::CmpIOp::create(b, loc, P::slt, p, constant(0));
          Value above =
              arith::CmpIOp::create(b, loc, P::sge, p, constant(in));
          if (mode == "constant") {
            inside = arith::AndIOp::create(
                b, loc, inside,
                arith::XOrIOp::create(
                    b, loc, arith::OrIOp::create(b, loc, below, above),
                    arith::ConstantIntOp::create(b, loc, 1, 1)));
            p = arith::SelectOp::create(
                b, loc, arith::OrIOp::create(b, loc, below, above),
                constant(0), p);
          } else if (mode == "edge") {
            p = arith::MaxSIOp::create(
                b, loc, arith::MinSIOp::create(b, loc, p, constant(in - 1)),
                constant(0));
          } else if (mode == "reflect") {
            Value mirroredLow = arith::SubIOp::create(b, loc, constant(0), p);
            Value mirroredHigh =
                arith::SubIOp::create(b, loc, constant(2 * (in - 1)), p);
            p = arith::SelectOp::create(b, loc, below, mirroredLow, p);
            p = arith::SelectOp::create(b, loc, above, mirroredHigh, p);
          } else {
            // wrap: ((p mod in) + in) mod in.
            Value rem = arith::RemSIOp::create(b, loc, p, constant(in));
            p = arith::RemSIOp::create(
                b, loc, arith::AddIOp::create(b, loc, rem, constant(in)),
                constant(in));
          }
          position.push_back(p);
        }
        Value fill =
            padValue
                ? tensor::ExtractOp::create(
                      b, loc, padValue,
                      llvm::SmallVector<Value>(
                          cast<RankedTensorType>(padValue.getType()).getRank(),
                          constant(0)))
                      .getResult()
                : arith::ConstantOp::create(b, loc,
                                            scalarAttr(b, elementType, 0.0))
                      .getResult();
        // An empty input has nothing to read: all is padding.
        if (type.getNumElements() == 0)
          return fill;
        Value x = tensor::ExtractOp::create(b, loc, data, position);
        if (mode != "constant")
          return x;
        return arith::SelectOp::create(b, loc, inside, x, fill).getResult();
      });
  if (node.isUnsignedInput(0) && node.hasOutput(0))
    node.table.define(node.proto.output(0), result, /*isUnsigned=*/true);
  return llvm::SmallVector<Value>{result};
}

/// ReverseSequence: along time_axis, the first sequence_lens[b]
/// elements of each batch entry b reversed, the rest as they are
/// (sequence_lens is read at run time).
static Results lowerReverseSequence(ONNXNode &node) {
  auto input = node.getInput(0);
  auto lengths = node.getInput(1);
  if (failed(input) || failed(lengths))
    return failure();
  RankedTensorType type = input->getType();
  if (type.getRank() < 2)
    return node.emitError() << "the input must have rank >= 2, not "
                            << type.getRank();
  int64_t timeAxis = node.getIntAttribute("time_axis", 0);
  int64_t batchAxis = node.getIntAttribute("batch_axis", 1);
  if (!((timeAxis == 0 && batchAxis == 1) || (timeAxis == 1 && batchAxis == 0)))
    return node.emitError() << "time_axis and batch_axis must be 0 and 1";
  if (!isa<IntegerType>(lengths->getType().getElementType()) ||
      lengths->getType().getShape() !=
          llvm::ArrayRef<int64_t>{type.getDimSize(batchAxis)})
    return node.emitError() << "sequence_lens must be one integer per batch "
                            << "entry (" << type.getDimSize(batchAxis) << ")";
  Value data = *input, lengthValues = *lengths;
  Value result = generateTensor(
      node, type, [&](OpBuilder &b, Location loc, ValueRange at) -> Value {
        Value raw =
            tensor::ExtractOp::create(b, loc, lengthValues, at[batchAxis]);
        Value length =
            arith::IndexCastOp::create(b, loc, b.getIndexType(), raw);
        Value time = at[timeAxis];
        Value reversed = arith::SubIOp::create(
            b, loc, arith::SubIOp::create(b, loc, length, time),
            arith::ConstantIndexOp::create(b, loc, 1));
        Value inSequence = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::slt, time, length);
        llvm::SmallVector<Value> position(at);
        position[timeAxis] =
            arith::SelectOp::create(b, loc, inSequence, reversed, time);
        return tensor::ExtractOp::create(b, loc, data, position);
      });
  return llvm::SmallVector<Value>{result};
}

void mlir::afm::onnx_import::registerLayoutLowerings(
    llvm::StringMap<NodeLowering> &lowerings) {
  lowerings["DepthToSpace"] = lowerDepthToSpace;
  lowerings["SpaceToDepth"] = lowerSpaceToDepth;
  lowerings["Tile"] = lowerTile;
  lowerings["Pad"] = lowerPad;
  lowerings["ReverseSequence"] = lowerReverseSequence;
}
