//===- AFMOps.cpp - afm op verifiers --------------------------------------===//
//
// Every static shape relation between operands is checked here, so that a
// model that verifies can be lowered without further shape errors. Dynamic
// dimensions (usually the token count) are compatible with anything.
//
//===----------------------------------------------------------------------===//

#include "dialects/afm/IR/AFMOps.h"

#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::afm;

#define GET_OP_CLASSES
#include "dialects/afm/IR/AFMOps.cpp.inc"

/// A dimension the way MLIR shapes print it (`?` for dynamic).
static std::string dimStr(int64_t size) {
  return ShapedType::isDynamic(size) ? "?" : std::to_string(size);
}

/// Checks that dimension `actual` of `what` may equal `expected`.
static LogicalResult checkDim(Operation *op, StringRef what, int64_t actual,
                              int64_t expected, StringRef expectedWhat) {
  if (dimsCompatible(actual, expected))
    return success();
  return op->emitOpError() << what << " (" << dimStr(actual)
                           << ") must match " << expectedWhat << " ("
                           << dimStr(expected) << ")";
}

static std::array<int64_t, 2> matrixShape(Type type) {
  return *getWeightMatrixShape(type);
}

//===----------------------------------------------------------------------===//
// WeightOp
//===----------------------------------------------------------------------===//

/// Checks the element count of one part of an inline compressed payload.
static LogicalResult checkPayloadSize(Operation *op, StringRef what,
                                      ElementsAttr attr, int64_t expected) {
  if (attr.getNumElements() == expected)
    return success();
  return op->emitOpError() << "inline " << what << " has "
                           << attr.getNumElements() << " elements, but the "
                           << "weight type needs " << expected;
}

ParseResult WeightOp::parse(OpAsmParser &parser, OperationState &result) {
  StringAttr name;
  Type type;
  // With an explicit (none) type, the string does not swallow `: type`.
  if (parser.parseAttribute(name, parser.getBuilder().getNoneType(), "name",
                            result.attributes) ||
      parser.parseColonType(type))
    return failure();
  if (succeeded(parser.parseOptionalEqual())) {
    Attribute value;
    if (isa<RankedTensorType>(type) ? parser.parseAttribute(value, type)
                                    : parser.parseAttribute(value))
      return failure();
    result.addAttribute("value", value);
  }
  if (parser.parseOptionalAttrDict(result.attributes))
    return failure();
  result.addTypes(type);
  return success();
}

void WeightOp::print(OpAsmPrinter &printer) {
  printer << ' ';
  printer.printAttributeWithoutType(getNameAttr());
  printer << " : " << getType();
  if (Attribute value = getValueAttr()) {
    printer << " = ";
    auto typed = dyn_cast<TypedAttr>(value);
    if (typed && typed.getType() == getType())
      printer.printAttributeWithoutType(value);
    else
      printer.printAttribute(value);
  }
  printer.printOptionalAttrDict((*this)->getAttrs(), {"name", "value"});
}

LogicalResult WeightOp::verify() {
  if (getName().empty())
    return emitOpError("weight name must not be empty");
  Attribute value = getValueAttr();
  if (!value)
    return success();
  Type type = getType();
  if (auto tensorType = dyn_cast<RankedTensorType>(type)) {
    auto elements = dyn_cast<ElementsAttr>(value);
    if (!elements)
      return emitOpError("inline value of a tensor weight must be an "
                         "elements attribute, got ")
             << value;
    if (elements.getType() != tensorType)
      return emitOpError("inline value of type ")
             << elements.getType() << " does not match result type " << type;
    return success();
  }
  if (isa<Q2WeightType, Q4WeightType>(type)) {
    auto data = dyn_cast<QuantizedDataAttr>(value);
    if (!data)
      return emitOpError("inline value of a ")
             << type << " weight must be #afm.quantized, got " << value;
    int64_t codeBytes, numScales;
    if (auto q2 = dyn_cast<Q2WeightType>(type)) {
      codeBytes = q2.getCodeBytes();
      numScales = q2.getNumScales();
    } else {
      auto q4 = cast<Q4WeightType>(type);
      codeBytes = q4.getCodeBytes();
      numScales = q4.getNumScales();
    }
    if (failed(checkPayloadSize(*this, "codes", data.getCodes(), codeBytes)) ||
        failed(checkPayloadSize(*this, "scales", data.getScales(), numScales)))
      return failure();
    return success();
  }
  auto astc = cast<ASTCWeightType>(type);
  auto data = dyn_cast<ASTCDataAttr>(value);
  if (!data)
    return emitOpError("inline value of a ")
           << type << " weight must be #afm.astc_blocks, got " << value;
  if (failed(checkPayloadSize(*this, "blocks", data.getBlocks(),
                              16 * astc.getNumBlocks())) ||
      failed(checkPayloadSize(*this, "offsets", data.getOffsets(),
                              astc.getNumBlocks())))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// DequantizeOp
//===----------------------------------------------------------------------===//

LogicalResult DequantizeOp::verify() {
  auto [rows, cols] = matrixShape(getWeight().getType());
  ArrayRef<int64_t> shape = getType().getShape();
  if (shape[0] != rows || shape[1] != cols)
    return emitOpError("result shape ")
           << getType() << " must be the weight's shape " << rows << "x"
           << cols;
  return success();
}

//===----------------------------------------------------------------------===//
// Token-wise layers
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingOp::verify() {
  auto [vocab, dim] = matrixShape(getTable().getType());
  (void)vocab;
  auto result = getType().getShape();
  if (failed(checkDim(*this, "result token count", result[0],
                      getTokens().getType().getDimSize(0), "token count")) ||
      failed(checkDim(*this, "result hidden size", result[1], dim,
                      "embedding width")))
    return failure();
  return success();
}

LogicalResult RMSNormOp::verify() {
  RankedTensorType input = getInput().getType();
  if (input.getRank() == 0)
    return emitOpError("input must have at least one dimension");
  if (failed(checkDim(*this, "weight size",
                      getWeight().getType().getDimSize(0),
                      input.getShape().back(), "normalized dimension")))
    return failure();
  if (!(getEpsilon().convertToDouble() > 0.0))
    return emitOpError("epsilon must be positive, got ")
           << getEpsilon().convertToDouble();
  return success();
}

LogicalResult RoPEOp::verify() {
  int64_t headDim = getInput().getType().getDimSize(2);
  if (ShapedType::isDynamic(headDim) || headDim % 2 != 0)
    return emitOpError("head dimension must be static and even, got ")
           << dimStr(headDim);
  if (!(getTheta().convertToDouble() > 0.0))
    return emitOpError("theta must be positive, got ")
           << getTheta().convertToDouble();
  if (std::optional<ArrayRef<double>> invFreq = getInvFreq()) {
    if (int64_t(invFreq->size()) != headDim / 2)
      return emitOpError("inv_freq must have head dimension / 2 = ")
             << headDim / 2 << " entries, got " << invFreq->size();
    for (auto [i, f] : llvm::enumerate(*invFreq))
      if (!(f > 0.0) || !std::isfinite(f))
        return emitOpError("inv_freq[") << i << "] must be positive and "
                                           "finite, got " << f;
  }
  return success();
}

/// Checks `input [T, K] x weight[N, K]^T -> result [T, N]`.
static LogicalResult verifyMatmulShapes(Operation *op, ShapedType input,
                                        Type weight, ShapedType result,
                                        StringRef weightName) {
  auto [n, k] = matrixShape(weight);
  std::string weightCols = (weightName + " columns").str();
  std::string weightRows = (weightName + " rows").str();
  if (failed(checkDim(op, "input features", input.getDimSize(1), k,
                      weightCols)) ||
      failed(checkDim(op, "result rows", result.getDimSize(0),
                      input.getDimSize(0), "input rows")) ||
      failed(checkDim(op, "result features", result.getDimSize(1), n,
                      weightRows)))
    return failure();
  return success();
}

LogicalResult LinearOp::verify() {
  if (failed(verifyMatmulShapes(*this, getInput().getType(),
                                getWeight().getType(), getType(), "weight")))
    return failure();
  if (Value acc = getAcc()) {
    auto accType = cast<RankedTensorType>(acc.getType());
    if (failed(checkDim(*this, "accumulator rows", accType.getDimSize(0),
                        getType().getDimSize(0), "result rows")) ||
        failed(checkDim(*this, "accumulator columns", accType.getDimSize(1),
                        getType().getDimSize(1), "result columns")))
      return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Compressed weight parts and the ASTC split
//===----------------------------------------------------------------------===//

LogicalResult BoundWeightOp::verify() {
  SmallVector<WeightPart> parts = getBoundWeightParts(getType());
  if (parts.empty())
    return emitOpError("weights of type ")
           << getType() << " have no bound form";
  if (parts.size() != getParts().size())
    return emitOpError("a ") << getType() << " weight is bound to "
                             << parts.size() << " buffers, got "
                             << getParts().size();
  for (auto [index, part, operand] : llvm::enumerate(parts, getParts()))
    if (operand.getType() != part.type)
      return emitOpError("buffer #")
             << index << " (" << part.role << ") must be " << part.type
             << ", got " << operand.getType();
  return success();
}

/// `[ceil(N/R), ceil(K/C)]` of an ASTC weight.
static std::array<int64_t, 2> blockGrid(ASTCWeightType type) {
  return {(type.getRows() + type.getBlockRows() - 1) / type.getBlockRows(),
          (type.getCols() + type.getBlockCols() - 1) / type.getBlockCols()};
}

LogicalResult ASTCDecodeOp::verify() {
  ASTCWeightType type = getWeight().getType();
  ArrayRef<int64_t> shape = getType().getShape();
  if (shape[0] != type.getRows() || shape[1] != type.getCols())
    return emitOpError("result shape ")
           << getType() << " must be the weight's shape " << type.getRows()
           << "x" << type.getCols();
  return success();
}

LogicalResult ASTCOffsetsOp::verify() {
  auto [nb, kb] = blockGrid(getWeight().getType());
  ArrayRef<int64_t> shape = getType().getShape();
  if (shape[0] != nb || shape[1] != kb)
    return emitOpError("result shape ")
           << getType() << " must be the weight's block grid " << nb << "x"
           << kb;
  return success();
}

LogicalResult MinShiftOp::verify() {
  ArrayRef<int64_t> block = getBlock();
  if (block.size() != 2 || block[0] <= 0 || block[1] <= 0)
    return emitOpError("block must be two positive sizes (rows, columns)");
  ArrayRef<int64_t> input = getInput().getType().getShape();
  ArrayRef<int64_t> offsets = getOffsets().getType().getShape();
  ArrayRef<int64_t> result = getType().getShape();
  auto blocks = [](int64_t size, int64_t block) {
    return ShapedType::isDynamic(size) ? size : (size + block - 1) / block;
  };
  if (failed(checkDim(*this, "result rows", result[0], input[0],
                      "input rows")) ||
      failed(checkDim(*this, "offset rows", offsets[0],
                      blocks(result[1], block[0]),
                      "block rows of the result")) ||
      failed(checkDim(*this, "offset columns", offsets[1],
                      blocks(input[1], block[1]),
                      "block columns of the input")))
    return failure();
  return success();
}

LogicalResult LMHeadOp::verify() {
  return verifyMatmulShapes(*this, getHidden().getType(),
                            getWeight().getType(), getType(), "weight");
}

LogicalResult LoRAOp::verify() {
  auto input = getInput().getType().getShape();
  auto base = getBase().getType().getShape();
  auto a = getA().getType().getShape();
  auto b = getB().getType().getShape();
  int64_t rank = a[0];
  if (ShapedType::isDynamic(rank) || rank <= 0)
    return emitOpError("adapter rank must be static and positive, got ")
           << dimStr(rank);
  if (failed(checkDim(*this, "columns of a", a[1], input[1],
                      "input features")) ||
      failed(checkDim(*this, "columns of b", b[1], rank, "adapter rank")) ||
      failed(checkDim(*this, "rows of b", b[0], base[1], "base features")) ||
      failed(checkDim(*this, "input rows", input[0], base[0], "base rows")))
    return failure();
  return success();
}

LogicalResult AdapterWeightOp::verify() {
  if (getName().empty())
    return emitOpError("adapter slot name must not be empty");
  if (!getType().hasStaticShape())
    return emitOpError("adapter factors must have a static shape, got ")
           << getType();
  return success();
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// The checks `afm.attention` and `afm.shared_kv_attention` share.
static LogicalResult verifyAttention(Operation *op, AttentionKind kind,
                                     RankedTensorType query,
                                     Type cacheType, Value scales,
                                     std::optional<int64_t> window,
                                     std::optional<APFloat> scale,
                                     bool int8Query,
                                     RankedTensorType result) {
  if (query != result)
    return op->emitOpError("result type ")
           << result << " must match query type " << query;
  std::optional<KVCacheShape> cache = getKVCacheShape(cacheType);
  if (!cache)
    return op->emitOpError("cache memref must be static with a leading "
                           "dimension of 2 (keys, values), got ")
           << cacheType;
  int64_t heads = query.getDimSize(1);
  int64_t headDim = query.getDimSize(2);
  if (ShapedType::isDynamic(heads) || ShapedType::isDynamic(headDim))
    return op->emitOpError("query heads and head dimension must be static");
  if (heads % cache->kvHeads != 0)
    return op->emitOpError("query heads (")
           << heads << ") must be a multiple of KV heads ("
           << cache->kvHeads << ")";
  if (failed(checkDim(op, "query head dimension", headDim, cache->headDim,
                      "cache head dimension")))
    return failure();
  // Before binding, the scales are part of the !afm.kv_cache value; after,
  // an i8 memref holds only the codes and its scales are a memref of their
  // own.
  bool needsScales =
      isa<MemRefType>(cacheType) && cache->elementType.isSignlessInteger(8);
  if (needsScales && !scales)
    return op->emitOpError("an i8 cache memref needs its scales operand");
  if (!needsScales && scales)
    return op->emitOpError("scales are only allowed with an i8 cache memref, "
                           "got cache ")
           << cacheType;
  if (scales) {
    auto scalesType = cast<MemRefType>(scales.getType());
    SmallVector<int64_t> expected = {2, cache->kvHeads, cache->capacity};
    if (scalesType.getShape() != ArrayRef<int64_t>(expected))
      return op->emitOpError("scales must be memref<2x")
             << cache->kvHeads << "x" << cache->capacity
             << "xf32> to match the cache, got " << scalesType;
  }
  if (int8Query && !cache->elementType.isSignlessInteger(8))
    return op->emitOpError("int8_query needs an i8 cache, got ")
           << cacheType;
  if (kind == AttentionKind::Local) {
    if (!window)
      return op->emitOpError("local attention requires a window");
    if (*window <= 0)
      return op->emitOpError("window must be positive, got ") << *window;
  } else if (window) {
    return op->emitOpError("global attention must not have a window");
  }
  if (scale && !(scale->convertToDouble() > 0.0))
    return op->emitOpError("scale must be positive, got ")
           << scale->convertToDouble();
  return success();
}

LogicalResult AttentionOp::verify() {
  RankedTensorType query = getQuery().getType();
  if (failed(verifyAttention(*this, getKind(), query, getCache().getType(),
                             getScales(), getWindow(), getScale(),
                             getInt8Query(), getType())))
    return failure();
  KVCacheShape cache = *getKVCacheShape(getCache().getType());
  for (auto [name, value] :
       {std::make_pair("key", getKey()), std::make_pair("value", getValue())}) {
    auto type = cast<RankedTensorType>(value.getType());
    std::string what = std::string(name);
    if (failed(checkDim(*this, what + " token count", type.getDimSize(0),
                        query.getDimSize(0), "query token count")) ||
        failed(checkDim(*this, what + " heads", type.getDimSize(1),
                        cache.kvHeads, "cache KV heads")) ||
        failed(checkDim(*this, what + " head dimension", type.getDimSize(2),
                        cache.headDim, "cache head dimension")))
      return failure();
  }
  return success();
}

LogicalResult SharedKVAttentionOp::verify() {
  return verifyAttention(*this, getKind(), getQuery().getType(),
                         getCache().getType(), getScales(), getWindow(),
                         getScale(), getInt8Query(), getType());
}

//===----------------------------------------------------------------------===//
// Feed-forward and mixture of experts
//===----------------------------------------------------------------------===//

LogicalResult SwiGLUOp::verify() {
  int64_t dim = getInput().getType().getDimSize(1);
  auto [gateRows, gateCols] = matrixShape(getGate().getType());
  auto [upRows, upCols] = matrixShape(getUp().getType());
  auto [downRows, downCols] = matrixShape(getDown().getType());
  if (failed(checkDim(*this, "gate columns", gateCols, dim, "hidden size")) ||
      failed(checkDim(*this, "up shape", upRows, gateRows, "gate rows")) ||
      failed(checkDim(*this, "up columns", upCols, dim, "hidden size")) ||
      failed(checkDim(*this, "down rows", downRows, dim, "hidden size")) ||
      failed(checkDim(*this, "down columns", downCols, gateRows,
                      "FFN width (gate rows)")))
    return failure();
  return success();
}

/// Checks `1 <= topK <= experts` and the router's shape.
static LogicalResult verifyRouting(Operation *op, ShapedType input,
                                   ShapedType router, int64_t topK) {
  int64_t experts = router.getDimSize(0);
  if (ShapedType::isDynamic(experts))
    return op->emitOpError("number of experts must be static");
  if (failed(checkDim(op, "router columns", router.getDimSize(1),
                      input.getDimSize(1), "hidden size")))
    return failure();
  if (topK < 1)
    return op->emitOpError("top_k must be at least 1, got ") << topK;
  if (topK > experts)
    return op->emitOpError("top_k (")
           << topK << ") must not exceed the number of experts (" << experts
           << ")";
  return success();
}

LogicalResult TopKRouterOp::verify() {
  if (failed(verifyRouting(*this, getInput().getType(), getRouter().getType(),
                           getTopK())))
    return failure();
  int64_t tokens = getInput().getType().getDimSize(0);
  for (auto [name, type] : {std::make_pair("experts", getExperts().getType()),
                            std::make_pair("gates", getGates().getType())}) {
    std::string what = std::string(name);
    if (failed(checkDim(*this, what + " rows", type.getDimSize(0), tokens,
                        "token count")) ||
        failed(checkDim(*this, what + " columns", type.getDimSize(1),
                        getTopK(), "top_k")))
      return failure();
  }
  return success();
}

LogicalResult MoEOp::verify() {
  if (failed(verifyRouting(*this, getInput().getType(), getRouter().getType(),
                           getTopK())))
    return failure();
  int64_t experts = getRouter().getType().getDimSize(0);
  for (auto [what, weights] :
       {std::make_pair("gate", getGate()), std::make_pair("up", getUp()),
        std::make_pair("down", getDown())})
    if (failed(checkDim(*this, (Twine(what) + " weights").str(),
                        int64_t(weights.size()), experts, "router experts")))
      return failure();
  int64_t dim = getInput().getType().getDimSize(1);
  int64_t width = matrixShape(getGate()[0].getType())[0];
  for (int64_t e = 0; e < experts; ++e) {
    std::string expert = ("expert " + Twine(e) + " ").str();
    auto [gateRows, gateCols] = matrixShape(getGate()[e].getType());
    auto [upRows, upCols] = matrixShape(getUp()[e].getType());
    auto [downRows, downCols] = matrixShape(getDown()[e].getType());
    if (failed(checkDim(*this, expert + "gate rows", gateRows, width,
                        "expert 0's gate rows")) ||
        failed(checkDim(*this, expert + "gate columns", gateCols, dim,
                        "hidden size")) ||
        failed(
            checkDim(*this, expert + "up rows", upRows, width, "gate rows")) ||
        failed(checkDim(*this, expert + "up columns", upCols, dim,
                        "hidden size")) ||
        failed(checkDim(*this, expert + "down rows", downRows, dim,
                        "hidden size")) ||
        failed(checkDim(*this, expert + "down columns", downCols, width,
                        "FFN width (gate rows)")))
      return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// TrackBlockOp
//===----------------------------------------------------------------------===//

LogicalResult TrackBlockOp::verify() {
  if (getTracks().empty())
    return emitOpError("must have at least one track");
  return success();
}

LogicalResult TrackBlockOp::verifyRegions() {
  Type type = getInput().getType();
  for (auto [index, region] : llvm::enumerate(getTracks())) {
    Block &block = region.front();
    if (block.getNumArguments() != 1 || block.getArgument(0).getType() != type)
      return emitOpError("track ")
             << index << " must take exactly one argument of type " << type;
    auto yield = block.mightHaveTerminator()
                     ? dyn_cast<YieldOp>(block.getTerminator())
                     : YieldOp();
    if (!yield)
      return emitOpError("track ") << index << " must end with afm.yield";
    if (yield.getValue().getType() != type)
      return yield.emitOpError("yields ")
             << yield.getValue().getType() << " but the track block carries "
             << type;
  }
  return success();
}
