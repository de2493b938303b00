//===- DecoderGraph.cpp - a stateless decoder graph as afm entry points ---===//

#include "afm/Compiler/DecoderGraph.h"

#include "dialects/afm/IR/AFMDialect.h"

#include "afm/kernel_abi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::afm;

/// One entry point with the afm_entry_fn signature: `tokens` holds
/// `maxTokens` ids; the arena is the token history.
static void buildEntry(OpBuilder &b, Location loc, llvm::StringRef symbol,
                       int64_t maxTokens, func::FuncOp graph,
                       RankedTensorType idsType, RankedTensorType logitsType) {
  MLIRContext *context = b.getContext();
  int64_t window = idsType.getDimSize(1), vocab = logitsType.getDimSize(2);
  Type i64 = b.getI64Type(), index = b.getIndexType();
  Type idType = idsType.getElementType();
  // The graph holds its weights as constants: it reads no weights section.
  auto noWeights = MemRefType::get({0}, b.getI8Type());
  auto bytes = MemRefType::get({1}, b.getI8Type());
  auto tokensType = MemRefType::get({maxTokens}, b.getI32Type());
  auto historyType = MemRefType::get({window}, idType);
  auto outType = MemRefType::get({vocab}, logitsType.getElementType());
  auto entry = func::FuncOp::create(
      b, loc, symbol,
      FunctionType::get(context,
                        {noWeights, tokensType, i64, i64, historyType,
                         outType, bytes},
                        {}));
  OpBuilder::InsertionGuard guard(b);
  Block *body = entry.addEntryBlock();
  b.setInsertionPointToStart(body);
  Value tokens = body->getArgument(1), history = body->getArgument(4),
        logits = body->getArgument(5);
  Value count = arith::IndexCastOp::create(b, loc, index, body->getArgument(2));
  Value position =
      arith::IndexCastOp::create(b, loc, index, body->getArgument(3));
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);

  // Append the new tokens to the history.
  scf::ForOp::create(
      b, loc, zero, count, one, ValueRange{},
      [&](OpBuilder &nb, Location nloc, Value i, ValueRange) {
        Value token = memref::LoadOp::create(nb, nloc, tokens, ValueRange{i});
        if (idType != token.getType())
          token = arith::ExtSIOp::create(nb, nloc, idType, token);
        Value at = arith::AddIOp::create(nb, nloc, position, i);
        memref::StoreOp::create(nb, nloc, token, history, ValueRange{at});
        scf::YieldOp::create(nb, nloc);
      });

  // Run the graph on the whole window; keep the last new position's row.
  Value window1D = bufferization::ToTensorOp::create(
      b, loc, RankedTensorType::get({window}, idType), history,
      /*restrict=*/true);
  Value ids = tensor::ExpandShapeOp::create(
      b, loc, idsType, window1D,
      llvm::ArrayRef<ReassociationIndices>{{0, 1}});
  auto call = func::CallOp::create(b, loc, graph, ValueRange{ids});
  Value last = arith::SubIOp::create(
      b, loc, arith::AddIOp::create(b, loc, position, count), one);
  auto rowType = RankedTensorType::get({vocab}, logitsType.getElementType());
  Value row = tensor::ExtractSliceOp::create(
      b, loc, rowType, call.getResult(0), ValueRange{last}, ValueRange{},
      ValueRange{},
      llvm::ArrayRef<int64_t>{0, ShapedType::kDynamic, 0},
      llvm::ArrayRef<int64_t>{1, 1, vocab}, llvm::ArrayRef<int64_t>{1, 1, 1});
  auto store = bufferization::MaterializeInDestinationOp::create(
      b, loc, TypeRange{}, row, logits);
  store.setRestrict(true);
  store.setWritable(true);
  func::ReturnOp::create(b, loc);
}

LogicalResult mlir::afm::wrapDecoderGraph(ModuleOp module,
                                          llvm::StringRef name) {
  auto graph = module.lookupSymbol<func::FuncOp>("main");
  if (!graph)
    return module.emitError() << "the graph has no @main";
  FunctionType type = graph.getFunctionType();
  auto idsType = type.getNumInputs() == 1
                     ? dyn_cast<RankedTensorType>(type.getInput(0))
                     : nullptr;
  auto logitsType = type.getNumResults() >= 1
                        ? dyn_cast<RankedTensorType>(type.getResult(0))
                        : nullptr;
  bool isDecoder =
      idsType && logitsType && idsType.getRank() == 2 &&
      idsType.getDimSize(0) == 1 &&
      (idsType.getElementType().isInteger(64) ||
       idsType.getElementType().isInteger(32)) &&
      logitsType.getRank() == 3 && logitsType.getDimSize(0) == 1 &&
      logitsType.getDimSize(1) == idsType.getDimSize(1) &&
      logitsType.getElementType().isF32();
  if (!isDecoder)
    return graph.emitError()
           << "a decoder graph takes one input, token ids [1, S] (int64 or "
              "int32), and returns the logits [1, S, V] (float) first; this "
              "graph is "
           << type;

  MLIRContext *context = module.getContext();
  context->loadDialect<arith::ArithDialect, bufferization::BufferizationDialect,
                       memref::MemRefDialect, scf::SCFDialect,
                       tensor::TensorDialect>();
  graph.setSymName("afm_graph");
  graph.setPrivate();
  OpBuilder b(context);
  b.setInsertionPointToEnd(module.getBody());
  Location loc = graph.getLoc();
  int64_t window = idsType.getDimSize(1), vocab = logitsType.getDimSize(2);
  buildEntry(b, loc, AFM_PREFILL_SYMBOL, window, graph, idsType, logitsType);
  buildEntry(b, loc, AFM_DECODE_SYMBOL, 1, graph, idsType, logitsType);

  // A graph's hidden size and layers are not known: 0 in the manifest.
  auto i64 = [&](int64_t value) { return b.getI64IntegerAttr(value); };
  AFMDialect &afmAttrs = contracts(context);
  afmAttrs.getModelAttrHelper().setAttr(
      module, ModelAttr::get(context, name, "onnx-graph", vocab,
                             /*hidden_size=*/0, /*num_layers=*/0, window,
                             window, /*lora_rank=*/0, FloatAttr(),
                             ActivationFormat::F32));
  afmAttrs.getWeightsAttrHelper().setAttr(module, b.getArrayAttr({}));
  afmAttrs.getWeightsBytesAttrHelper().setAttr(module, i64(0));
  afmAttrs.getKvLayoutAttrHelper().setAttr(module, b.getArrayAttr({}));
  int64_t idBytes = idsType.getElementTypeBitWidth() / 8;
  afmAttrs.getKvArenaBytesAttrHelper().setAttr(module, i64(window * idBytes));
  return success();
}
