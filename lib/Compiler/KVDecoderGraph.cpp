//===- KVDecoderGraph.cpp - an exported decoder with a KV cache -----------===//

#include "afm/Compiler/KVDecoderGraph.h"
#include "afm/Compiler/DecoderGraph.h"

#include "dialects/afm/IR/AFMDialect.h"

#include "afm/kernel_abi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <map>

using namespace mlir;
using namespace mlir::afm;
using llvm::createStringError;
using llvm::formatv;

static constexpr llvm::StringLiteral kPastPrefix = "past_key_values.";
static constexpr llvm::StringLiteral kPresentPrefix = "present.";

int64_t KVDecoderInterface::arenaBytes(int64_t context) const {
  int64_t bytes = 0;
  for (const Cache &cache : caches) {
    int64_t one = 4;
    if (llvm::MulOverflow(one, cache.heads, one) ||
        llvm::MulOverflow(one, cache.headDim, one) ||
        llvm::MulOverflow(one, context, one) ||
        llvm::AddOverflow(bytes, one, bytes))
      return -1;
  }
  return bytes;
}

static bool isIntegerIds(const ONNXValueSignature &value) {
  return value.elementType == "INT64" || value.elementType == "INT32";
}

static std::string describe(const ONNXValueSignature &value) {
  std::string text = value.name + " " +
                     (value.elementType.empty() ? "(not a tensor)"
                                                : value.elementType) +
                     " [";
  for (auto [i, dim] : llvm::enumerate(value.dims))
    text += (i ? ", " : "") +
            (dim.param.empty()
                 ? (dim.size < 0 ? std::string("?") : std::to_string(dim.size))
                 : "'" + dim.param + "'");
  return text + "]";
}

llvm::Expected<std::optional<KVDecoderInterface>>
mlir::afm::recognizeKVDecoder(const ONNXGraphSignature &signature) {
  bool hasPast = llvm::any_of(signature.inputs, [](const auto &input) {
    return llvm::StringRef(input.name).starts_with(kPastPrefix);
  });
  if (!hasPast)
    return std::nullopt;

  KVDecoderInterface interface;
  std::optional<unsigned> ids, mask;
  // Past inputs by the suffix they share with their present output.
  std::map<std::string, unsigned> pastBySuffix;
  for (unsigned index = 0; index < signature.inputs.size(); ++index) {
    const ONNXValueSignature &input = signature.inputs[index];
    llvm::StringRef name = input.name;
    auto refuse = [&](llvm::StringRef why) {
      return createStringError(formatv(
          "ONNX decoder with a KV cache: input {0}: {1}", describe(input), why));
    };
    if (!input.hasShape)
      return refuse("it has no shape");
    if (name == "input_ids" || name == "attention_mask" ||
        name == "position_ids") {
      if (!isIntegerIds(input) || input.dims.size() != 2)
        return refuse("expected INT64 or INT32 [batch, length]");
      if (name == "input_ids")
        ids = index;
      else if (name == "attention_mask")
        mask = index;
      else
        interface.positionIds = index;
      continue;
    }
    if (name.starts_with(kPastPrefix)) {
      llvm::StringRef suffix = name.drop_front(kPastPrefix.size());
      if (!suffix.ends_with(".key") && !suffix.ends_with(".value"))
        return refuse("a cache input is named past_key_values.<layer>.key "
                      "or .value");
      if (input.elementType != "FLOAT" || input.dims.size() != 4)
        return refuse("expected FLOAT [batch, kv_heads, past, head_dim]");
      if (input.dims[1].size < 1 || input.dims[3].size < 1)
        return refuse("the kv_heads and head_dim dimensions must be sizes");
      pastBySuffix[suffix.str()] = index;
      continue;
    }
    return refuse("not an input of a decoder with a KV cache (input_ids, "
                  "attention_mask, position_ids, past_key_values.<layer>."
                  "key/value)");
  }
  if (!ids || !mask)
    return createStringError(
        "ONNX decoder with a KV cache: it needs the inputs input_ids and "
        "attention_mask (the mask hides the cache's unfilled slots)");
  interface.inputIds = *ids;
  interface.attentionMask = *mask;

  if (signature.outputs.empty() || signature.outputs[0].name != "logits")
    return createStringError("ONNX decoder with a KV cache: its first output "
                             "must be the logits");
  const ONNXValueSignature &logits = signature.outputs[0];
  if (logits.elementType != "FLOAT" || logits.dims.size() != 3 ||
      logits.dims[2].size < 1)
    return createStringError(formatv(
        "ONNX decoder with a KV cache: output {0}: expected FLOAT "
        "[batch, length, vocab] with a vocabulary size",
        describe(logits)));
  interface.vocab = logits.dims[2].size;
  for (unsigned index = 1; index < signature.outputs.size(); ++index) {
    const ONNXValueSignature &output = signature.outputs[index];
    llvm::StringRef name = output.name;
    auto past = name.starts_with(kPresentPrefix)
                    ? pastBySuffix.find(
                          name.drop_front(kPresentPrefix.size()).str())
                    : pastBySuffix.end();
    if (past == pastBySuffix.end())
      return createStringError(formatv(
          "ONNX decoder with a KV cache: output '{0}' is not the logits or "
          "the present of a past_key_values input",
          name));
    const ONNXValueSignature &input = signature.inputs[past->second];
    if (output.elementType != "FLOAT" || output.dims.size() != 4 ||
        output.dims[1].size != input.dims[1].size ||
        output.dims[3].size != input.dims[3].size)
      return createStringError(formatv(
          "ONNX decoder with a KV cache: output {0} does not extend input {1}",
          describe(output), describe(input)));
    interface.caches.push_back({past->second, index, input.dims[1].size,
                                input.dims[3].size});
    pastBySuffix.erase(past);
  }
  if (!pastBySuffix.empty())
    return createStringError(formatv(
        "ONNX decoder with a KV cache: input 'past_key_values.{0}' has no "
        "output 'present.{0}'",
        pastBySuffix.begin()->first));
  if (llvm::is_contained(signature.opTypes, "GroupQueryAttention"))
    interface.layout = KVDecoderInterface::Layout::FromSeqlens;
  // The arena follows the graph's input order.
  llvm::sort(interface.caches, [](const auto &a, const auto &b) {
    return a.pastInput < b.pastInput;
  });
  return interface;
}

llvm::Expected<llvm::StringMap<int64_t>> mlir::afm::bindKVDecoderDims(
    const ONNXGraphSignature &signature, const KVDecoderInterface &interface,
    int64_t rows, int64_t context,
    const llvm::StringMap<int64_t> &userBindings) {
  llvm::StringMap<int64_t> sizes;
  llvm::StringMap<std::string> boundBy;
  // Each dimension's size in this entry; -1 for the ones the graph fixes
  // (heads, head_dim, vocabulary).
  auto bind = [&](const ONNXValueSignature &value,
                  llvm::ArrayRef<int64_t> expected) -> llvm::Error {
    for (auto [axis, dim] : llvm::enumerate(value.dims)) {
      int64_t size = expected[axis];
      std::string where = formatv("{0} dimension {1}", value.name, axis).str();
      if (dim.param.empty()) {
        if (size >= 0 && dim.size != size)
          return createStringError(formatv(
              "ONNX decoder with a KV cache: {0} is {1}; an entry of {2} "
              "row(s) over a context of {3} needs it symbolic or {4}",
              where, dim.size, rows, context, size));
        continue;
      }
      if (size < 0)
        return createStringError(formatv(
            "ONNX decoder with a KV cache: {0} is symbolic ('{1}'); it must "
            "be a size",
            where, dim.param));
      auto [it, inserted] = sizes.try_emplace(dim.param, size);
      if (inserted) {
        boundBy[dim.param] = where;
      } else if (it->second != size) {
        return createStringError(formatv(
            "ONNX decoder with a KV cache: the symbolic dimension '{0}' is "
            "both {1} ({2}) and {3} ({4})",
            dim.param, it->second, boundBy[dim.param], size, where));
      }
    }
    return llvm::Error::success();
  };
  const auto &inputs = signature.inputs;
  const auto &outputs = signature.outputs;
  int64_t total = context + rows;
  if (llvm::Error error = bind(inputs[interface.inputIds], {1, rows}))
    return std::move(error);
  if (llvm::Error error = bind(inputs[interface.attentionMask], {1, total}))
    return std::move(error);
  if (interface.positionIds)
    if (llvm::Error error = bind(inputs[*interface.positionIds], {1, rows}))
      return std::move(error);
  if (llvm::Error error = bind(outputs[0], {1, rows, -1}))
    return std::move(error);
  for (const KVDecoderInterface::Cache &cache : interface.caches) {
    if (llvm::Error error = bind(inputs[cache.pastInput], {1, -1, context, -1}))
      return std::move(error);
    if (llvm::Error error =
            bind(outputs[cache.presentOutput], {1, -1, total, -1}))
      return std::move(error);
  }
  for (const auto &user : userBindings) {
    auto role = boundBy.find(user.getKey());
    if (role != boundBy.end())
      return createStringError(formatv(
          "--bind-dim {0}: the decoder's inputs bind it ({1}) for each entry "
          "point; set the context with --context and the prefill rows with "
          "--prefill-chunk",
          user.getKey(), role->second));
    sizes[user.getKey()] = user.getValue();
  }
  return sizes;
}

namespace {
/// Builds one entry point around a specialized graph.
class EntryBuilder {
public:
  EntryBuilder(OpBuilder &b, Location loc, const KVDecoderInterface &iface,
               int64_t context)
      : b(b), loc(loc), iface(iface), context(context) {}

  void build(llvm::StringRef symbol, EntryKind kind, func::FuncOp graph,
             int64_t rows);

private:
  Value indexConstant(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  /// tensor<1 x length x type> with element (0, j) = value(j).
  Value generateRow(RankedTensorType type,
                    llvm::function_ref<Value(OpBuilder &, Value)> value);

  OpBuilder &b;
  Location loc;
  const KVDecoderInterface &iface;
  int64_t context;
};
} // namespace

Value EntryBuilder::generateRow(
    RankedTensorType type, llvm::function_ref<Value(OpBuilder &, Value)> value) {
  auto generate = tensor::GenerateOp::create(b, loc, type, ValueRange{});
  OpBuilder::InsertionGuard guard(b);
  Block *body = b.createBlock(&generate.getBody(), {},
                              {b.getIndexType(), b.getIndexType()},
                              {loc, loc});
  b.setInsertionPointToStart(body);
  tensor::YieldOp::create(b, loc, value(b, body->getArgument(1)));
  return generate;
}

void EntryBuilder::build(llvm::StringRef symbol, EntryKind kind,
                         func::FuncOp graph, int64_t rows) {
  FunctionType graphType = graph.getFunctionType();
  OpBuilder::InsertionGuard guard(b);
  GraphEntry entry = createGraphEntry(
      b, loc, symbol, rows,
      MemRefType::get({iface.arenaBytes(context)}, b.getI8Type()),
      iface.vocab);
  contracts(b.getContext())
      .getEntryAttrHelper()
      .setAttr(entry.func, EntryKindAttr::get(b.getContext(), kind));
  Value tokens = entry.tokens, arena = entry.arena;
  Value count = entry.count, position = entry.position;
  Value contextValue = indexConstant(context);

  auto castIndex = [&](OpBuilder &nb, Value value, Type type) -> Value {
    return arith::IndexCastOp::create(nb, loc, type, value);
  };
  llvm::SmallVector<Value> args(graphType.getNumInputs());
  // input_ids: this call's tokens, 0 past `count`.
  auto idsType = cast<RankedTensorType>(graphType.getInput(iface.inputIds));
  args[iface.inputIds] = generateRow(idsType, [&](OpBuilder &nb, Value j) {
    Type type = idsType.getElementType();
    Value token = memref::LoadOp::create(nb, loc, tokens, ValueRange{j});
    token = arith::ExtSIOp::create(nb, loc, type, token);
    Value inside = arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::ult,
                                         j, count);
    Value zero = arith::ConstantOp::create(nb, loc, nb.getIntegerAttr(type, 0));
    return arith::SelectOp::create(nb, loc, inside, token, zero);
  });
  // attention_mask: the past's filled slots and this call's rows. In the
  // concatenated layout those are [context - position, context) and
  // [context, context + count); GroupQueryAttention counts the mask's ones
  // and reads the past from 0: [0, position + R), the rows after `count`
  // included so that the past's length comes out as `position`.
  bool fromSeqlens = iface.layout == KVDecoderInterface::Layout::FromSeqlens;
  auto maskType =
      cast<RankedTensorType>(graphType.getInput(iface.attentionMask));
  Value firstFilled =
      fromSeqlens ? indexConstant(0)
                  : Value(arith::SubIOp::create(b, loc, contextValue,
                                                position));
  Value end = fromSeqlens
                  ? Value(arith::AddIOp::create(b, loc, position,
                                                indexConstant(rows)))
                  : Value(arith::AddIOp::create(b, loc, contextValue, count));
  args[iface.attentionMask] =
      generateRow(maskType, [&](OpBuilder &nb, Value j) {
        Value visible = arith::AndIOp::create(
            nb, loc,
            arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::sge, j,
                                  firstFilled),
            arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::slt, j,
                                  end));
        return arith::ExtUIOp::create(nb, loc, maskType.getElementType(),
                                      visible);
      });
  // position_ids: position + i.
  if (iface.positionIds) {
    auto positionsType =
        cast<RankedTensorType>(graphType.getInput(*iface.positionIds));
    args[*iface.positionIds] =
        generateRow(positionsType, [&](OpBuilder &nb, Value j) {
          return castIndex(nb, arith::AddIOp::create(nb, loc, position, j),
                           positionsType.getElementType());
        });
  }
  // The past: each arena buffer's filled slots, right-aligned (padded with
  // zeros in front), so that slot s of the past is position
  // s - (context - position) and distances between keys and queries are
  // the true ones (a sliding window compares them).
  llvm::SmallVector<Value> buffers;
  int64_t offset = 0;
  OpFoldResult zero = b.getIndexAttr(0), unit = b.getIndexAttr(1);
  Value zeroF32 = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
  for (const KVDecoderInterface::Cache &cache : iface.caches) {
    auto type = MemRefType::get({1, cache.heads, context, cache.headDim},
                                b.getF32Type());
    Value buffer = memref::ViewOp::create(b, loc, type, arena,
                                          indexConstant(offset), ValueRange{});
    offset += cache.heads * context * cache.headDim * 4;
    buffers.push_back(buffer);
    Value filled = memref::SubViewOp::create(
        b, loc, buffer, llvm::SmallVector<OpFoldResult>(4, zero),
        llvm::SmallVector<OpFoldResult>{unit, b.getIndexAttr(cache.heads),
                                        position,
                                        b.getIndexAttr(cache.headDim)},
        llvm::SmallVector<OpFoldResult>(4, unit));
    Value filledTensor = bufferization::ToTensorOp::create(
        b, loc,
        memref::getTensorTypeFromMemRefType(filled.getType()), filled,
        /*restrict=*/true);
    auto pastType = memref::getTensorTypeFromMemRefType(type);
    if (fromSeqlens) {
      args[cache.pastInput] = bufferization::ToTensorOp::create(
          b, loc, pastType, buffer, /*restrict=*/true);
      continue;
    }
    args[cache.pastInput] = tensor::PadOp::create(
        b, loc, cast<RankedTensorType>(pastType), filledTensor,
        llvm::SmallVector<OpFoldResult>{zero, zero, firstFilled, zero},
        llvm::SmallVector<OpFoldResult>(4, zero), zeroF32);
  }
  auto call = func::CallOp::create(b, loc, graph, args);

  // This call's keys and values into the arena: present rows
  // [context, context + count) (concatenated) or [position, position +
  // count) (GroupQueryAttention) to slots [position, position + count).
  Value firstNew = fromSeqlens ? position : contextValue;
  for (auto [cache, buffer] : llvm::zip(iface.caches, buffers)) {
    int64_t dyn = ShapedType::kDynamic;
    auto sliceType = RankedTensorType::get(
        {1, cache.heads, dyn, cache.headDim}, b.getF32Type());
    Value rowsOut = tensor::ExtractSliceOp::create(
        b, loc, sliceType, call.getResult(cache.presentOutput),
        ValueRange{firstNew}, ValueRange{count}, ValueRange{},
        llvm::ArrayRef<int64_t>{0, 0, dyn, 0},
        llvm::ArrayRef<int64_t>{1, cache.heads, dyn, cache.headDim},
        llvm::ArrayRef<int64_t>{1, 1, 1, 1});
    Value slots = memref::SubViewOp::create(
        b, loc, buffer,
        llvm::SmallVector<OpFoldResult>{zero, zero, position, zero},
        llvm::SmallVector<OpFoldResult>{unit, b.getIndexAttr(cache.heads),
                                        count, b.getIndexAttr(cache.headDim)},
        llvm::SmallVector<OpFoldResult>(4, unit));
    auto copy = bufferization::MaterializeInDestinationOp::create(
        b, loc, TypeRange{}, rowsOut, slots);
    copy.setRestrict(true);
    copy.setWritable(true);
  }
  // The logits of the last new row.
  Value last = arith::SubIOp::create(b, loc, count, indexConstant(1));
  storeLogitsRowAndReturn(b, loc, entry, call.getResult(0), last);
  // The graph's body in the entry: its temporaries go to the arena.
  inlineGraphCall(b, call, graph);
}

LogicalResult mlir::afm::wrapKVDecoderGraphs(
    ModuleOp module, func::FuncOp prefillGraph, func::FuncOp decodeGraph,
    const KVDecoderInterface &interface, int64_t context, int64_t prefillRows,
    llvm::StringRef name) {
  MLIRContext *ctx = module.getContext();
  ctx->loadDialect<arith::ArithDialect, bufferization::BufferizationDialect,
                   memref::MemRefDialect, scf::SCFDialect,
                   tensor::TensorDialect>();
  auto logitsType = dyn_cast<RankedTensorType>(
      decodeGraph.getFunctionType().getResult(0));
  if (!logitsType || !logitsType.getElementType().isF32())
    return decodeGraph.emitError() << "the logits must be f32";
  prefillGraph.setPrivate();
  decodeGraph.setPrivate();
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(module.getBody());
  Location loc = decodeGraph.getLoc();
  EntryBuilder entries(b, loc, interface, context);
  entries.build(AFM_PREFILL_SYMBOL, EntryKind::Prefill, prefillGraph,
                prefillRows);
  entries.build(AFM_DECODE_SYMBOL, EntryKind::Decode, decodeGraph, 1);
  bool shared = decodeGraph == prefillGraph;
  prefillGraph.erase();
  if (!shared)
    decodeGraph.erase();

  auto i64 = [&](int64_t value) { return b.getI64IntegerAttr(value); };
  AFMDialect &afmAttrs = contracts(ctx);
  afmAttrs.getModelAttrHelper().setAttr(
      module, ModelAttr::get(ctx, name, "onnx-graph", interface.vocab,
                             /*hidden_size=*/0, /*num_layers=*/0, context,
                             prefillRows, /*lora_rank=*/0, FloatAttr(),
                             ActivationFormat::F32));
  afmAttrs.getWeightsAttrHelper().setAttr(module, b.getArrayAttr({}));
  afmAttrs.getWeightsBytesAttrHelper().setAttr(module, i64(0));
  afmAttrs.getKvLayoutAttrHelper().setAttr(module, b.getArrayAttr({}));
  afmAttrs.getKvArenaBytesAttrHelper().setAttr(
      module, i64(interface.arenaBytes(context)));
  return success();
}
