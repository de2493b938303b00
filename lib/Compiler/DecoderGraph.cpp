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
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::afm;

GraphEntry mlir::afm::createGraphEntry(OpBuilder &b, Location loc,
                                       llvm::StringRef symbol,
                                       int64_t maxTokens, MemRefType arenaType,
                                       int64_t vocab) {
  MLIRContext *context = b.getContext();
  // A graph holds its weights as constants: it reads no weights section.
  auto noWeights = MemRefType::get({0}, b.getI8Type());
  auto bytes = MemRefType::get({1}, b.getI8Type());
  auto tokensType = MemRefType::get({maxTokens}, b.getI32Type());
  auto outType = MemRefType::get({vocab}, b.getF32Type());
  GraphEntry entry;
  entry.func = func::FuncOp::create(
      b, loc, symbol,
      FunctionType::get(context,
                        {noWeights, tokensType, b.getI64Type(), b.getI64Type(),
                         arenaType, outType, bytes},
                        {}));
  Block *body = entry.func.addEntryBlock();
  b.setInsertionPointToStart(body);
  entry.tokens = body->getArgument(1);
  entry.arena = body->getArgument(4);
  entry.logits = body->getArgument(5);
  entry.count = arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                           body->getArgument(2));
  entry.position = arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                              body->getArgument(3));
  return entry;
}

void mlir::afm::storeLogitsRowAndReturn(OpBuilder &b, Location loc,
                                        const GraphEntry &entry, Value logits,
                                        Value row) {
  auto logitsType = cast<RankedTensorType>(logits.getType());
  int64_t vocab = logitsType.getDimSize(2);
  auto rowType = RankedTensorType::get({vocab}, logitsType.getElementType());
  Value slice = tensor::ExtractSliceOp::create(
      b, loc, rowType, logits, ValueRange{row}, ValueRange{}, ValueRange{},
      llvm::ArrayRef<int64_t>{0, ShapedType::kDynamic, 0},
      llvm::ArrayRef<int64_t>{1, 1, vocab}, llvm::ArrayRef<int64_t>{1, 1, 1});
  auto store = bufferization::MaterializeInDestinationOp::create(
      b, loc, TypeRange{}, slice, entry.logits);
  store.setRestrict(true);
  store.setWritable(true);
  func::ReturnOp::create(b, loc);
}

void mlir::afm::inlineGraphCall(OpBuilder &b, func::CallOp call,
                                func::FuncOp graph) {
  IRMapping mapping;
  Block &body = graph.getBody().front();
  mapping.map(body.getArguments(), call.getOperands());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(call);
  for (Operation &op : body.without_terminator())
    b.clone(op, mapping);
  for (auto [result, value] :
       llvm::zip(call.getResults(), body.getTerminator()->getOperands()))
    result.replaceAllUsesWith(mapping.lookupOrDefault(value));
  call.erase();
}

static void setEntryKind(func::FuncOp func, EntryKind kind) {
  MLIRContext *context = func.getContext();
  contracts(context).getEntryAttrHelper().setAttr(
      func, EntryKindAttr::get(context, kind));
}

/// The prefill entry: `tokens` holds up to `window` ids; the arena holds
/// the token history. The graph's body is inlined, so that
/// afm-plan-step-memory lays its temporaries out in the arena.
static func::FuncOp buildPrefill(OpBuilder &b, Location loc,
                                 func::FuncOp graph, RankedTensorType idsType,
                                 RankedTensorType logitsType) {
  int64_t window = idsType.getDimSize(1), vocab = logitsType.getDimSize(2);
  Type idType = idsType.getElementType();
  int64_t historyBytes = window * idType.getIntOrFloatBitWidth() / 8;
  OpBuilder::InsertionGuard guard(b);
  GraphEntry entry =
      createGraphEntry(b, loc, AFM_PREFILL_SYMBOL, window,
                       MemRefType::get({historyBytes}, b.getI8Type()), vocab);
  setEntryKind(entry.func, EntryKind::Prefill);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value history = memref::ViewOp::create(
      b, loc, MemRefType::get({window}, idType), entry.arena, zero,
      ValueRange{});

  // Append the new tokens to the history.
  scf::ForOp::create(
      b, loc, zero, entry.count, one, ValueRange{},
      [&](OpBuilder &nb, Location nloc, Value i, ValueRange) {
        Value token =
            memref::LoadOp::create(nb, nloc, entry.tokens, ValueRange{i});
        if (idType != token.getType())
          token = arith::ExtSIOp::create(nb, nloc, idType, token);
        Value at = arith::AddIOp::create(nb, nloc, entry.position, i);
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
      b, loc, arith::AddIOp::create(b, loc, entry.position, entry.count), one);
  storeLogitsRowAndReturn(b, loc, entry, call.getResult(0), last);
  inlineGraphCall(b, call, graph);
  return entry.func;
}

/// The decode entry: a prefill call of its one token (the window is the
/// same work either way), so the graph's code exists once.
static void buildDecode(OpBuilder &b, Location loc, func::FuncOp prefill,
                        int64_t window, int64_t vocab) {
  OpBuilder::InsertionGuard guard(b);
  FunctionType prefillType = prefill.getFunctionType();
  GraphEntry entry =
      createGraphEntry(b, loc, AFM_DECODE_SYMBOL, 1,
                       cast<MemRefType>(prefillType.getInput(4)), vocab);
  setEntryKind(entry.func, EntryKind::Decode);
  Block &body = entry.func.getBody().front();
  auto tokensType = MemRefType::get({window}, b.getI32Type());
  Value tokens = memref::AllocaOp::create(b, loc, tokensType);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value token = memref::LoadOp::create(b, loc, entry.tokens, ValueRange{zero});
  memref::StoreOp::create(b, loc, token, tokens, ValueRange{zero});
  llvm::SmallVector<Value> args(body.getArguments());
  args[1] = tokens;
  func::CallOp::create(b, loc, prefill, args);
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
  func::FuncOp prefill = buildPrefill(b, loc, graph, idsType, logitsType);
  buildDecode(b, loc, prefill, window, vocab);
  graph.erase();

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
