//===- AFMContracts.cpp - verifying the stage-contract attributes ---------===//
//
// The attributes one stage leaves for a later one (AFMDialect.td's
// discardableAttrs) are checked wherever they appear: the right type, on
// the right kind of op, and, for `afm.model`, in agreement with the entry
// points it describes. A later stage then reads them without re-checking.
//
//===----------------------------------------------------------------------===//

#include "dialects/afm/IR/AFMDialect.h"
#include "dialects/afm/IR/AFMOps.h"

#include "afm/Target/TargetDescription.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace mlir::afm;

std::optional<EntryKind> afm::getEntryKind(Operation *func) {
  if (auto kind = contracts(func).getEntryAttrHelper().getAttr(func))
    return kind.getValue();
  return std::nullopt;
}

FailureOr<TargetDescription> afm::getTargetDescription(Operation *op) {
  auto module = dyn_cast<ModuleOp>(op);
  if (!module)
    module = op->getParentOfType<ModuleOp>();
  TargetAttr attr =
      module ? contracts(op).getTargetAttrHelper().getAttr(module) : nullptr;
  if (!attr)
    return op->emitError("the module has no afm.target: run afm-set-target "
                         "first (the afm-codegen pipelines do)");
  auto target = lookupTarget(attr.getName(), attr.getOs());
  if (!target)
    return op->emitError(llvm::toString(target.takeError()));
  return *target;
}

//===----------------------------------------------------------------------===//
// Attribute verifiers
//===----------------------------------------------------------------------===//

/// Whether `order` lists each of the loops 0..loops-1 exactly once.
static bool isPermutation(ArrayRef<int64_t> order, size_t loops) {
  if (order.size() != loops)
    return false;
  llvm::SmallBitVector seen(loops);
  for (int64_t loop : order) {
    if (loop < 0 || loop >= int64_t(loops) || seen.test(loop))
      return false;
    seen.set(loop);
  }
  return true;
}

LogicalResult ModelAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                StringRef name, StringRef architecture,
                                int64_t vocabSize, int64_t hiddenSize,
                                int64_t numLayers, int64_t contextLength,
                                int64_t prefillChunk, int64_t loraRank,
                                FloatAttr loraAlpha,
                                ActivationFormat linearActivations) {
  for (auto [field, value] :
       {std::pair<StringRef, int64_t>{"vocab_size", vocabSize},
        {"context_length", contextLength},
        {"prefill_chunk", prefillChunk}})
    if (value < 1 || value > INT32_MAX)
      return emitError() << field << " must be in [1, 2^31), got " << value;
  // 0: not known (a graph imported from ONNX).
  for (auto [field, value] :
       {std::pair<StringRef, int64_t>{"hidden_size", hiddenSize},
        {"num_layers", numLayers}})
    if (value < 0 || value > INT32_MAX)
      return emitError() << field << " must be in [0, 2^31), got " << value;
  if (prefillChunk > contextLength)
    return emitError() << "prefill_chunk " << prefillChunk
                       << " exceeds context_length " << contextLength;
  if (loraRank < 0)
    return emitError() << "lora_rank must not be negative";
  if (loraAlpha && !(loraAlpha.getValueAsDouble() > 0))
    return emitError() << "lora_alpha must be positive";
  return success();
}

LogicalResult KVSlotAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 int64_t layer, int64_t offset, int64_t bytes,
                                 Type type, KVCacheAttention attention,
                                 int64_t scalesOffset, int64_t scalesBytes) {
  if (layer < 0 || offset < 0 || bytes < 0 || scalesOffset < 0 ||
      scalesBytes < 0)
    return emitError() << "layer, offsets and sizes must not be negative";
  if (!getKVCacheShape(type))
    return emitError() << "type must be a KV cache, got " << type;
  return success();
}

LogicalResult
AdapterSlotAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        StringRef name, int64_t offset, int64_t bytes,
                        int64_t rows, int64_t cols) {
  if (name.empty())
    return emitError() << "adapter slot name must not be empty";
  if (offset < 0 || rows < 1 || cols < 1)
    return emitError() << "offset must not be negative, rows and cols must "
                          "be positive";
  if (bytes != rows * cols * int64_t(sizeof(float)))
    return emitError() << "bytes must be rows x cols x 4 (" << rows << "x"
                       << cols << " f32), got " << bytes;
  return success();
}

LogicalResult
SVDFactorAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      StringRef source, StringRef factor, int64_t rank,
                      FloatAttr alpha, int64_t rows, int64_t cols) {
  if (factor != "a" && factor != "b")
    return emitError() << "factor must be \"a\" or \"b\", got \"" << factor
                       << "\"";
  if (rank < 1 || rows < 1 || cols < 1)
    return emitError() << "rank, rows and cols must be positive";
  return success();
}

LogicalResult
GEMMScheduleAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                         ArrayRef<int64_t> cacheTiles,
                         ArrayRef<int64_t> cacheInterchange,
                         ArrayRef<int64_t> registerTiles, int64_t packInput,
                         ArrayRef<int64_t> packOrder) {
  size_t loops = cacheTiles.size();
  if (cacheInterchange.size() != loops || registerTiles.size() != loops)
    return emitError() << "cache_tiles, cache_interchange and register_tiles "
                          "must have one entry per loop";
  if (!isPermutation(cacheInterchange, loops))
    return emitError() << "cache_interchange must be a permutation of the "
                          "loops";
  for (ArrayRef<int64_t> tiles : {cacheTiles, registerTiles})
    if (llvm::any_of(tiles, [](int64_t t) { return t < 0; }))
      return emitError() << "tile sizes must not be negative";
  if (packInput < -1)
    return emitError() << "pack_input must be an operand index or -1";
  return success();
}

LogicalResult TilePlanAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   TileKind kind, ArrayRef<int64_t> tiles,
                                   ArrayRef<int64_t> interchange) {
  if (llvm::any_of(tiles, [](int64_t t) { return t < 0; }))
    return emitError() << "tile sizes must not be negative";
  if (kind != TileKind::SME && tiles.empty())
    return emitError() << "a " << stringifyTileKind(kind)
                       << " plan needs a tile size per loop";
  if (!interchange.empty() && !isPermutation(interchange, tiles.size()))
    return emitError() << "interchange must be a permutation of the loops";
  return success();
}

LogicalResult TargetAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 StringRef name, StringRef os) {
  auto target = lookupTarget(name, os);
  if (!target)
    return emitError() << llvm::toString(target.takeError());
  return success();
}

//===----------------------------------------------------------------------===//
// Where each contract may appear
//===----------------------------------------------------------------------===//

/// `afm.model` against the entry points still in their imported form
/// (tokens tensor -> logits tensor): the vocabulary and the prefill chunk
/// (the verify entry: a logits row per token).
/// Bound entry points are checked by afm-export-model-facts.
static LogicalResult checkModelAgainstEntries(ModuleOp module,
                                              ModelAttr model) {
  for (auto &op : module.getBody()->getOperations()) {
    std::optional<EntryKind> kind = getEntryKind(&op);
    auto func = dyn_cast<FunctionOpInterface>(op);
    if (!kind || !func || func.getNumArguments() < 1 ||
        func.getNumResults() != 1)
      continue;
    auto tokens = dyn_cast<RankedTensorType>(func.getArgumentTypes()[0]);
    auto logits = dyn_cast<RankedTensorType>(func.getResultTypes()[0]);
    if (!tokens || !logits || tokens.getRank() != 1 || !logits.hasRank())
      continue;
    int64_t vocab = logits.getShape().back();
    if (!ShapedType::isDynamic(vocab) && vocab != model.getVocabSize())
      return op.emitOpError("returns ")
             << vocab << " logits, but afm.model's vocab_size is "
             << model.getVocabSize();
    if (*kind == EntryKind::Verify) {
      // Its own row count (afm-compile --verify-tokens), one logits row
      // per token.
      if (tokens.hasStaticShape() &&
          (logits.getRank() != 2 ||
           logits.getDimSize(0) != tokens.getDimSize(0)))
        return op.emitOpError("(verify) reads ")
               << tokens.getDimSize(0)
               << " tokens, so it must return one row of logits per token, "
                  "not "
               << logits;
      continue;
    }
    int64_t expected = *kind == EntryKind::Decode ? 1 : model.getPrefillChunk();
    if (tokens.getDimSize(0) != expected)
      return op.emitOpError("reads ")
             << tokens.getDimSize(0) << " tokens, but afm.model says "
             << (*kind == EntryKind::Decode ? "decode reads 1"
                                            : "prefill_chunk is ")
             << (*kind == EntryKind::Decode ? "" : std::to_string(expected));
  }
  return success();
}

template <typename AttrT>
static LogicalResult checkElements(Operation *op, NamedAttribute attr) {
  for (Attribute element : cast<ArrayAttr>(attr.getValue()))
    if (!isa<AttrT>(element))
      return op->emitOpError("'")
             << attr.getName().getValue() << "' holds " << element
             << ", which is not a " << AttrT::getMnemonic();
  return success();
}

LogicalResult AFMDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  auto onModule = [&]() -> LogicalResult {
    if (isa<ModuleOp>(op))
      return success();
    return op->emitOpError("'") << name << "' belongs on a module";
  };
  auto nonNegative = [&]() -> LogicalResult {
    if (cast<IntegerAttr>(attr.getValue()).getValue().isNegative())
      return op->emitOpError("'") << name << "' must not be negative";
    return success();
  };
  // The declared type first: the generated helpers test it.
  auto wrongType = [&](StringRef expected) {
    return op->emitOpError("'") << name << "' must be " << expected
                                << ", got " << attr.getValue();
  };
#define AFM_EXPECT(HELPER, EXPECTED)                                           \
  if (!HELPER().isAttrPresent(op))                                             \
    return wrongType(EXPECTED);

  if (name == getModelAttrHelper().getName()) {
    AFM_EXPECT(getModelAttrHelper, "#afm.model<...>")
    if (failed(onModule()))
      return failure();
    return checkModelAgainstEntries(cast<ModuleOp>(op),
                                    cast<ModelAttr>(attr.getValue()));
  }
  if (name == getTargetAttrHelper().getName()) {
    AFM_EXPECT(getTargetAttrHelper, "#afm.target<...>")
    return onModule();
  }
  if (name == getWeightsFileAttrHelper().getName()) {
    AFM_EXPECT(getWeightsFileAttrHelper, "a string")
    return onModule();
  }
  if (name == getWeightsAttrHelper().getName()) {
    AFM_EXPECT(getWeightsAttrHelper, "an array of #afm.weight_slot")
    if (failed(onModule()))
      return failure();
    return checkElements<WeightSlotAttr>(op, attr);
  }
  if (name == getKvLayoutAttrHelper().getName()) {
    AFM_EXPECT(getKvLayoutAttrHelper, "an array of #afm.kv_slot")
    if (failed(onModule()))
      return failure();
    return checkElements<KVSlotAttr>(op, attr);
  }
  if (name == getAdapterLayoutAttrHelper().getName()) {
    AFM_EXPECT(getAdapterLayoutAttrHelper, "an array of #afm.adapter_slot")
    if (failed(onModule()))
      return failure();
    return checkElements<AdapterSlotAttr>(op, attr);
  }
  if (name == getWeightsBytesAttrHelper().getName() ||
      name == getKvArenaBytesAttrHelper().getName() ||
      name == getScratchBytesAttrHelper().getName() ||
      name == getVerifyTokensAttrHelper().getName() ||
      name == getTrackCountAttrHelper().getName()) {
    if (!isa<IntegerAttr>(attr.getValue()))
      return wrongType("an integer");
    if (failed(onModule()))
      return failure();
    return nonNegative();
  }
  if (name == getEntryAttrHelper().getName() ||
      name == getHostArgumentAttrHelper().getName()) {
    if (name == getEntryAttrHelper().getName()) {
      AFM_EXPECT(getEntryAttrHelper, "#afm.entry<prefill>, "
                                     "#afm.entry<decode> or "
                                     "#afm.entry<verify>")
    } else {
      AFM_EXPECT(getHostArgumentAttrHelper, "an argument index")
      if (failed(nonNegative()))
        return failure();
    }
    if (!isa<FunctionOpInterface>(op))
      return op->emitOpError("'") << name << "' belongs on a function";
    return success();
  }
  if (name == getSvdFactorAttrHelper().getName() ||
      name == getSvdResidualAttrHelper().getName()) {
    if (name == getSvdFactorAttrHelper().getName()) {
      AFM_EXPECT(getSvdFactorAttrHelper, "#afm.svd_factor<...>")
    } else {
      AFM_EXPECT(getSvdResidualAttrHelper, "#afm.svd_residual<...>")
    }
    if (!isa<WeightOp>(op))
      return op->emitOpError("'") << name << "' belongs on an afm.weight";
    return success();
  }
  if (name == getInt8ActivationsAttrHelper().getName()) {
    AFM_EXPECT(getInt8ActivationsAttrHelper, "a unit attribute")
    return success();
  }
  if (name == getParallelAttrHelper().getName()) {
    AFM_EXPECT(getParallelAttrHelper, "a unit attribute")
    if (op->getName().getStringRef() != "scf.for")
      return op->emitOpError("'") << name << "' belongs on an scf.for";
    return success();
  }
  if (name == getGemmScheduleAttrHelper().getName() ||
      name == getWholeTileDimsAttrHelper().getName() ||
      name == getTilePlanAttrHelper().getName()) {
    if (name == getGemmScheduleAttrHelper().getName()) {
      AFM_EXPECT(getGemmScheduleAttrHelper, "#afm.gemm_schedule<...>")
    } else if (name == getTilePlanAttrHelper().getName()) {
      AFM_EXPECT(getTilePlanAttrHelper, "#afm.tile_plan<...>")
    } else if (!isa<DenseI64ArrayAttr>(attr.getValue())) {
      return wrongType("an array<i64>");
    }
    if (op->getName().getDialectNamespace() != "linalg")
      return op->emitOpError("'") << name << "' belongs on a linalg op";
    return success();
  }
#undef AFM_EXPECT
  return op->emitOpError("unknown afm attribute '") << name << "'";
}

LogicalResult AFMDialect::verifyRegionArgAttribute(Operation *op,
                                                   unsigned regionIndex,
                                                   unsigned argIndex,
                                                   NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name != getLayerAttrHelper().getName())
    return op->emitOpError("unknown afm argument attribute '") << name << "'";
  auto layer = dyn_cast<IntegerAttr>(attr.getValue());
  if (!layer || layer.getValue().isNegative())
    return op->emitOpError("'")
           << name << "' of argument " << argIndex
           << " must be a non-negative layer index, got " << attr.getValue();
  return success();
}
