//===- ONNXControlFlowOps.cpp - Loop, unrolled at import ------------------===//
//
// Shapes are static here, so a Loop runs a number of iterations known at
// import: its trip count and conditions must be constants, or computed
// from constants and bound inputs (the Range function body computes its
// trip count from start, limit and delta in float). The body graph is
// imported once per iteration, each iteration's loop-carried outputs
// feeding the next, and the scan outputs are stacked on a new first axis.
// A Loop whose iteration count depends on data has no static result shape
// and is an error naming what must be known.
//
//===----------------------------------------------------------------------===//

#include "ONNXBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::afm::onnx_import;

/// Unrolling copies the body this many times at most.
static constexpr int64_t kMaxUnrolledIterations = 1024;

/// The single boolean or integer element of `attr` as a truth value.
static std::optional<bool> truthOf(DenseElementsAttr attr) {
  if (!attr || attr.getNumElements() != 1 ||
      !isa<IntegerType>(attr.getElementType()))
    return std::nullopt;
  return !(*attr.getValues<APInt>().begin()).isZero();
}

/// The values of one scan output, one per iteration, stacked on a new
/// first axis (a constant when they all are).
static Value stack(ONNXNode &node, llvm::ArrayRef<Value> values) {
  auto type = cast<RankedTensorType>(values.front().getType());
  llvm::SmallVector<int64_t> rowShape = {1};
  llvm::append_range(rowShape, type.getShape());
  llvm::SmallVector<int64_t> shape = rowShape;
  shape[0] = values.size();
  auto stackedType = type.clone(shape);
  llvm::SmallVector<Attribute> elements;
  for (Value value : values) {
    DenseElementsAttr attr;
    if (!matchPattern(value, m_Constant(&attr))) {
      elements.clear();
      break;
    }
    llvm::append_range(elements, attr.getValues<Attribute>());
  }
  if (!elements.empty())
    return arith::ConstantOp::create(
        node.builder, node.loc, DenseElementsAttr::get(stackedType, elements));
  llvm::SmallVector<Value> rows;
  for (Value value : values)
    rows.push_back(reshape(node, value, rowShape));
  return tosa::ConcatOp::create(node.builder, node.loc, stackedType, rows, 0);
}

/// Loop(M, cond, v_initial...) with attribute body: the final values of
/// the loop-carried dependencies, then the stacked scan outputs.
static Results lowerLoop(ONNXNode &node) {
  const onnx::AttributeProto *bodyAttr = node.getAttribute("body");
  if (!bodyAttr || !bodyAttr->has_g())
    return node.emitError() << "missing graph attribute 'body'";
  const onnx::GraphProto &body = bodyAttr->g();
  if (node.proto.input_size() < 2)
    return node.emitError() << "needs the inputs M and cond (either may be "
                               "empty)";
  int64_t carried = node.proto.input_size() - 2;
  if (body.input_size() != carried + 2)
    return node.emitError()
           << "the body has " << body.input_size() << " inputs; expected "
           << carried + 2 << " (iteration number, condition and " << carried
           << " loop-carried values)";
  int64_t scans = body.output_size() - 1 - carried;
  if (scans < 0)
    return node.emitError() << "the body has " << body.output_size()
                            << " outputs; expected at least " << carried + 1
                            << " (condition and loop-carried values)";
  if (node.proto.output_size() > carried + scans)
    return node.emitError() << "has " << node.proto.output_size()
                            << " outputs; its body gives " << carried + scans;

  const char *howToFix = " (Loop is unrolled at import: shapes are static; "
                         "bind the inputs it is computed from to specialize "
                         "the model)";
  std::optional<int64_t> tripCount;
  if (node.hasInput(0)) {
    DenseElementsAttr m = node.getConstantInput(0);
    if (!m || m.getNumElements() != 1 ||
        !isa<IntegerType>(m.getElementType()))
      return node.emitError() << "the trip count M must be a constant integer"
                              << howToFix;
    tripCount = std::max<int64_t>(0, (*m.getValues<APInt>().begin())
                                         .getSExtValue());
  }
  bool running = true;
  if (node.hasInput(1)) {
    std::optional<bool> condition = truthOf(node.getConstantInput(1));
    if (!condition)
      return node.emitError() << "the condition 'cond' must be a constant"
                              << howToFix;
    running = *condition;
  }

  llvm::SmallVector<Value> values;
  for (int64_t i = 0; i < carried; ++i) {
    auto value = node.getInput(2 + i);
    if (failed(value))
      return failure();
    values.push_back(*value);
  }
  llvm::SmallVector<llvm::SmallVector<Value>> scanned(scans);
  MLIRContext *context = node.builder.getContext();
  auto scalar = [&](Type type, int64_t value) {
    return DenseElementsAttr::get(RankedTensorType::get({}, type),
                                  APInt(type.getIntOrFloatBitWidth(), value));
  };
  int64_t iteration = 0;
  for (; running && (!tripCount || iteration < *tripCount); ++iteration) {
    if (iteration == kMaxUnrolledIterations)
      return node.emitError() << "runs more than " << kMaxUnrolledIterations
                              << " iterations, the most unrolled at import";
    // A bool is a byte holding 0 or 1 (unsigned, as BOOL inputs are); a
    // loop-carried value keeps the signedness of its initial value.
    llvm::SmallVector<SubgraphImporter::Binding> inputs = {
        {{}, scalar(IntegerType::get(context, 64), iteration)},
        {{}, scalar(IntegerType::get(context, 8), 1), /*isUnsigned=*/true}};
    for (auto [i, value] : llvm::enumerate(values)) {
      SubgraphImporter::Binding binding{value, {}, node.isUnsignedInput(2 + i)};
      matchPattern(value, m_Constant(&binding.constant));
      inputs.push_back(binding);
    }
    auto outputs = node.subgraphs.importInline(body, inputs, node.table);
    if (failed(outputs))
      return node.emitError() << "in iteration " << iteration;
    DenseElementsAttr next;
    matchPattern((*outputs)[0], m_Constant(&next));
    std::optional<bool> condition = truthOf(next);
    if (!condition)
      return node.emitError() << "the body's condition output must be a "
                                 "constant"
                              << howToFix;
    running = *condition;
    for (int64_t i = 0; i < carried; ++i) {
      Value value = (*outputs)[1 + i];
      if (value.getType() != values[i].getType())
        return node.emitError()
               << "loop-carried value " << i << " changes type from "
               << values[i].getType() << " to " << value.getType()
               << " in iteration " << iteration;
      values[i] = value;
    }
    for (int64_t i = 0; i < scans; ++i) {
      Value value = (*outputs)[1 + carried + i];
      if (!scanned[i].empty() &&
          value.getType() != scanned[i].front().getType())
        return node.emitError()
               << "scan output " << i << " changes type from "
               << scanned[i].front().getType() << " to " << value.getType()
               << " in iteration " << iteration;
      scanned[i].push_back(value);
    }
  }

  llvm::SmallVector<Value> results = values;
  for (int64_t i = 0; i < scans; ++i) {
    if (scanned[i].empty())
      return node.emitError() << "runs no iteration, so the shape of scan "
                                 "output "
                              << i << " is unknown";
    results.push_back(stack(node, scanned[i]));
  }
  return results;
}

void mlir::afm::onnx_import::registerControlFlowLowerings(
    llvm::StringMap<NodeLowering> &lowerings) {
  lowerings["Loop"] = lowerLoop;
}
