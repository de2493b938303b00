//===- BindEntryABI.cpp - entry points get the runtime's C ABI ------------===//
//
// After this pass the model's functions no longer refer to weights by name
// nor to caches as values: everything is a view of one of the three memory
// regions the runtime passes in (weights, KV arena, logits). The layouts
// chosen here are recorded on the module for the packager.
//
// An i8 cache is two arena regions: its codes (memref<2xGxCxDxi8>) and, 64
// bytes aligned right after them, its scales (memref<2xGxCxf32>, one per
// token per head), which become the `scales` operand of every attention op
// that reads the cache. The factors of run-time adapters (afm.adapter_weight)
// follow the caches in the arena, each 64-byte aligned, in the order the
// entries first use them; the runtime fills them per session.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "afm/kernel_abi.h"

#include "dialects/afm/IR/AFMOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::afm {
#define GEN_PASS_DEF_AFMBINDENTRYABIPASS
#include "passes/Passes.h.inc"
} // namespace mlir::afm

#define DEBUG_TYPE "afm-bind-entry-abi"

using namespace mlir;
using namespace mlir::afm;

static constexpr uint64_t kAlignment = 64;

/// The kernel ABI's name of each entry kind.
static StringRef entrySymbol(EntryKind kind) {
  switch (kind) {
  case EntryKind::Prefill:
    return AFM_PREFILL_SYMBOL;
  case EntryKind::Decode:
    return AFM_DECODE_SYMBOL;
  case EntryKind::Verify:
    return AFM_VERIFY_SYMBOL;
  }
  llvm_unreachable("unknown entry kind");
}

static uint64_t byteSize(ShapedType type) {
  return type.getNumElements() *
         llvm::divideCeil(type.getElementTypeBitWidth(), 8);
}

namespace {
/// One buffer of a weight in the weights region: the whole tensor of a
/// plain weight, or one part (codes, scales, ...) of a compressed one.
struct PartSlot {
  StringRef role; // empty for plain weights
  RankedTensorType type;
  uint64_t offset = 0;
};

struct WeightSlot {
  Type type; // the weight's type: a tensor or a compressed weight type
  SmallVector<PartSlot> parts;
  Attribute value;         // inline payload, if any
  SVDFactorAttr svdFactor;     // the LoRA split of afm-svd-split, if any
  SVDResidualAttr svdResidual;
};

struct CacheSlot {
  KVCacheType type;
  uint64_t offset;
  uint64_t bytes;
  std::optional<AttentionKind> kind;
  Location loc;
  /// Bytes of the scales of an i8 cache (0 otherwise) and their offset.
  uint64_t scalesBytes = 0;
  uint64_t scalesOffset = 0;
};

/// Whether `type` stores int8 codes with separate per-token, per-head scales.
static bool hasScales(KVCacheType type) {
  return type.getElementType().isSignlessInteger(8);
}

/// A factor of a run-time adapter (afm.adapter_weight): f32, per session.
struct AdapterSlot {
  RankedTensorType type;
  uint64_t offset = 0;
};

/// The memory layout of one module's weights, caches and adapter slots.
struct Layout {
  llvm::MapVector<StringRef, WeightSlot> weights;
  uint64_t weightBytes = 0;
  std::map<int64_t, CacheSlot> caches;
  llvm::MapVector<StringRef, AdapterSlot> adapters;
  uint64_t arenaBytes = 0;
};

struct EntrySignature {
  RankedTensorType tokens;
  RankedTensorType logits;
  SmallVector<int64_t> layers; // layer of each cache argument
};

class Binder {
public:
  explicit Binder(ModuleOp module) : module(module), b(module.getContext()) {}
  LogicalResult run();

private:
  FailureOr<EntrySignature> checkSignature(func::FuncOp func);
  LogicalResult collectWeights(func::FuncOp func);
  LogicalResult collectCaches(func::FuncOp func, const EntrySignature &sig);
  LogicalResult collectAdapters(func::FuncOp func);
  void rewrite(func::FuncOp func, const EntrySignature &sig);
  void recordLayout();

  ModuleOp module;
  OpBuilder b;
  Layout layout;
};
} // namespace

FailureOr<EntrySignature> Binder::checkSignature(func::FuncOp func) {
  FunctionType type = func.getFunctionType();
  auto fail = [&](const Twine &what) {
    return func.emitOpError("entry point ") << what;
  };
  if (type.getNumInputs() < 3 || type.getNumResults() != 1)
    return fail("must take (tokens, count, position, caches...) and return "
                "the logits");
  EntrySignature sig;
  sig.tokens = dyn_cast<RankedTensorType>(type.getInput(0));
  if (!sig.tokens || sig.tokens.getRank() != 1 ||
      !sig.tokens.hasStaticShape() ||
      !sig.tokens.getElementType().isSignlessInteger(32))
    return fail("tokens must be a static tensor<Nxi32>, got ")
           << type.getInput(0);
  if (!type.getInput(1).isIndex() || !type.getInput(2).isIndex())
    return fail("count and position must be index values");
  // Prefill and decode return one row of logits, verify one per token.
  auto logits = dyn_cast<RankedTensorType>(type.getResult(0));
  int64_t rows =
      getEntryKind(func) == EntryKind::Verify ? sig.tokens.getDimSize(0) : 1;
  if (!logits || !logits.hasStaticShape() ||
      !logits.getElementType().isF32() || logits.getRank() > 2 ||
      (logits.getRank() == 2 && logits.getDimSize(0) != rows) ||
      (logits.getRank() == 1 && rows != 1))
    return rows == 1
               ? fail("must return tensor<Vxf32> or tensor<1xVxf32>, got ")
                     << type.getResult(0)
               : fail("(verify) must return tensor<")
                     << rows << "xVxf32>, one row per token, got "
                     << type.getResult(0);
  sig.logits = RankedTensorType::get({logits.getNumElements()},
                                     logits.getElementType());
  for (unsigned i = 3; i < type.getNumInputs(); ++i) {
    if (!isa<KVCacheType>(type.getInput(i)))
      return fail("argument ") << i << " must be a !afm.kv_cache, got "
                               << type.getInput(i);
    auto layer = func.getArgAttrOfType<IntegerAttr>(
        i, contracts(func).getLayerAttrHelper().getName());
    if (!layer)
      return fail("cache argument ") << i << " needs an afm.layer attribute";
    sig.layers.push_back(layer.getInt());
  }
  return sig;
}

/// The buffers `type` is stored in, or nothing if it cannot be bound.
static SmallVector<PartSlot> partsOf(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type)) {
    if (!tensor.hasStaticShape())
      return {};
    return {PartSlot{StringRef(), tensor}};
  }
  SmallVector<PartSlot> parts;
  for (const WeightPart &part : getBoundWeightParts(type))
    parts.push_back(PartSlot{part.role, part.type});
  return parts;
}

LogicalResult Binder::collectWeights(func::FuncOp func) {
  WalkResult result = func.walk([&](WeightOp op) {
    Type type = op.getType();
    SmallVector<PartSlot> parts = partsOf(type);
    if (parts.empty())
      return op.emitOpError("weights of type ")
                 << type
                 << " cannot be bound: only static tensors, 2-bit, 4-bit and "
                    "ASTC weights in 6x6 blocks are",
             WalkResult::interrupt();
    auto [it, inserted] = layout.weights.try_emplace(op.getName());
    if (!inserted) {
      if (it->second.type != type)
        return op.emitOpError("weight '")
                   << op.getName() << "' is used as " << type << " and as "
                   << it->second.type,
               WalkResult::interrupt();
      return WalkResult::advance();
    }
    WeightSlot &slot = it->second;
    slot.type = type;
    slot.value = op.getValueAttr();
    slot.svdFactor = contracts(op).getSvdFactorAttrHelper().getAttr(op);
    slot.svdResidual = contracts(op).getSvdResidualAttrHelper().getAttr(op);
    for (PartSlot &part : parts) {
      part.offset = llvm::alignTo(layout.weightBytes, kAlignment);
      layout.weightBytes = part.offset + byteSize(part.type);
    }
    slot.parts = std::move(parts);
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

LogicalResult Binder::collectCaches(func::FuncOp func,
                                    const EntrySignature &sig) {
  for (auto [i, layer] : llvm::enumerate(sig.layers)) {
    BlockArgument arg = func.getArgument(3 + i);
    auto type = cast<KVCacheType>(arg.getType());
    std::optional<AttentionKind> kind;
    for (Operation *user : arg.getUsers()) {
      if (auto attn = dyn_cast<AttentionOp>(user))
        kind = attn.getKind();
      else if (auto shared = dyn_cast<SharedKVAttentionOp>(user))
        kind = shared.getKind();
    }
    auto it = layout.caches.find(layer);
    if (it != layout.caches.end()) {
      if (it->second.type != type)
        return func.emitOpError("cache of layer ")
               << layer << " is " << type << " here but "
               << it->second.type << " in another entry point";
      continue;
    }
    uint64_t bytes = 2 * uint64_t(type.getKvHeads()) * type.getCapacity() *
                     type.getHeadDim() *
                     llvm::divideCeil(type.getElementType().getIntOrFloatBitWidth(), 8);
    CacheSlot slot{type, 0, bytes, kind, arg.getLoc()};
    if (hasScales(type))
      slot.scalesBytes =
          2 * uint64_t(type.getKvHeads()) * type.getCapacity() * sizeof(float);
    layout.caches.emplace(layer, slot);
  }
  return success();
}

LogicalResult Binder::collectAdapters(func::FuncOp func) {
  WalkResult result = func.walk([&](AdapterWeightOp op) {
    auto [it, inserted] =
        layout.adapters.try_emplace(op.getName(), AdapterSlot{op.getType()});
    if (!inserted && it->second.type != op.getType())
      return op.emitOpError("adapter slot '")
                 << op.getName() << "' is used as " << op.getType()
                 << " and as " << it->second.type,
             WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

void Binder::rewrite(func::FuncOp func, const EntrySignature &sig) {
  MLIRContext *ctx = module.getContext();
  Location loc = func.getLoc();
  auto i8 = b.getIntegerType(8);
  auto weightsType = MemRefType::get(
      {int64_t(std::max<uint64_t>(layout.weightBytes, 1))}, i8);
  auto arenaType = MemRefType::get(
      {int64_t(std::max<uint64_t>(layout.arenaBytes, 1))}, i8);
  auto tokensType = MemRefType::get(sig.tokens.getShape(), b.getI32Type());
  auto logitsType = MemRefType::get(sig.logits.getShape(), b.getF32Type());
  SmallVector<Type> inputs = {weightsType, tokensType,
                              b.getIndexType(), b.getIndexType(),
                              arenaType, logitsType,
                              LLVM::LLVMPointerType::get(ctx)};

  Block &entry = func.getBody().front();
  unsigned oldArgs = entry.getNumArguments();
  SmallVector<Location> locs(inputs.size(), loc);
  entry.addArguments(inputs, locs);
  Value weights = entry.getArgument(oldArgs + 0);
  Value tokens = entry.getArgument(oldArgs + 1);
  Value count = entry.getArgument(oldArgs + 2);
  Value position = entry.getArgument(oldArgs + 3);
  Value arena = entry.getArgument(oldArgs + 4);
  Value logits = entry.getArgument(oldArgs + 5);

  b.setInsertionPointToStart(&entry);
  auto view = [&](Value source, uint64_t offset, MemRefType type) {
    Value shift = arith::ConstantIndexOp::create(b, loc, offset);
    return memref::ViewOp::create(b, loc, type, source, shift, ValueRange{})
        .getResult();
  };
  Value tokenTensor = bufferization::ToTensorOp::create(
      b, loc, sig.tokens, tokens, /*restrict=*/true, /*writable=*/false);
  entry.getArgument(0).replaceAllUsesWith(tokenTensor);
  entry.getArgument(1).replaceAllUsesWith(count);
  entry.getArgument(2).replaceAllUsesWith(position);
  for (auto [i, layer] : llvm::enumerate(sig.layers)) {
    const CacheSlot &slot = layout.caches.at(layer);
    auto type = MemRefType::get({2, slot.type.getKvHeads(),
                                 slot.type.getCapacity(),
                                 slot.type.getHeadDim()},
                                slot.type.getElementType());
    BlockArgument cache = entry.getArgument(3 + i);
    if (hasScales(slot.type)) {
      auto scalesType = MemRefType::get(
          {2, slot.type.getKvHeads(), slot.type.getCapacity()}, b.getF32Type());
      Value scales = view(arena, slot.scalesOffset, scalesType);
      for (Operation *user : cache.getUsers()) {
        if (auto attn = dyn_cast<AttentionOp>(user))
          attn.getScalesMutable().assign(scales);
        else if (auto shared = dyn_cast<SharedKVAttentionOp>(user))
          shared.getScalesMutable().assign(scales);
      }
    }
    cache.replaceAllUsesWith(view(arena, slot.offset, type));
  }

  SmallVector<AdapterWeightOp> adapterOps;
  func.walk([&](AdapterWeightOp op) { adapterOps.push_back(op); });
  for (AdapterWeightOp op : adapterOps) {
    const AdapterSlot &slot = layout.adapters.find(op.getName())->second;
    b.setInsertionPoint(op);
    auto type = MemRefType::get(slot.type.getShape(), b.getF32Type());
    // Read-only to the code: only the runtime writes a session's adapter.
    Value factor = bufferization::ToTensorOp::create(
        b, op.getLoc(), slot.type, view(arena, slot.offset, type),
        /*restrict=*/true, /*writable=*/false);
    op.replaceAllUsesWith(factor);
    op.erase();
  }

  SmallVector<WeightOp> weightOps;
  func.walk([&](WeightOp op) { weightOps.push_back(op); });
  for (WeightOp op : weightOps) {
    const WeightSlot &slot = layout.weights.find(op.getName())->second;
    b.setInsertionPoint(op);
    SmallVector<Value> buffers;
    for (const PartSlot &part : slot.parts) {
      auto type = MemRefType::get(part.type.getShape(),
                                  part.type.getElementType());
      buffers.push_back(bufferization::ToTensorOp::create(
          b, op.getLoc(), part.type, view(weights, part.offset, type),
          /*restrict=*/true, /*writable=*/false));
    }
    // Compressed weights keep their type: kernels read the parts.
    Value replacement =
        isCompressedWeight(slot.type)
            ? BoundWeightOp::create(b, op.getLoc(), slot.type, buffers)
                  .getResult()
            : buffers.front();
    op.replaceAllUsesWith(replacement);
    op.erase();
  }

  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  b.setInsertionPoint(ret);
  Value result = ret.getOperand(0);
  if (cast<RankedTensorType>(result.getType()).getRank() == 2)
    result = tensor::CollapseShapeOp::create(
        b, loc, sig.logits, result,
        SmallVector<ReassociationIndices>{{0, 1}});
  auto store = bufferization::MaterializeInDestinationOp::create(
      b, loc, TypeRange{}, result, logits);
  store.setRestrict(true);
  store.setWritable(true);
  func::ReturnOp::create(b, loc);
  ret.erase();

  entry.eraseArguments(0, oldArgs);
  func.setFunctionType(FunctionType::get(ctx, inputs, {}));
  // Argument attributes described the old arguments.
  func.setAllArgAttrs(SmallVector<DictionaryAttr>(inputs.size(),
                                                  DictionaryAttr::get(ctx)));
  func.setSymName(entrySymbol(*getEntryKind(func)));
}

void Binder::recordLayout() {
  MLIRContext *ctx = b.getContext();
  SmallVector<Attribute> weights;
  for (auto &[name, slot] : layout.weights) {
    for (const PartSlot &part : slot.parts) {
      bool compressed = !part.role.empty();
      weights.push_back(WeightSlotAttr::get(
          ctx, name, part.offset, byteSize(part.type), part.type, part.role,
          compressed ? slot.type : Type(), slot.value, slot.svdFactor,
          slot.svdResidual));
    }
  }
  SmallVector<Attribute> caches;
  for (auto &[layer, slot] : layout.caches) {
    KVCacheAttention attention = KVCacheAttention::None;
    if (slot.kind)
      attention = *slot.kind == AttentionKind::Local
                      ? KVCacheAttention::Local
                      : KVCacheAttention::Global;
    caches.push_back(KVSlotAttr::get(ctx, layer, slot.offset, slot.bytes,
                                     slot.type, attention, slot.scalesOffset,
                                     slot.scalesBytes));
  }
  AFMDialect &afmAttrs = contracts(ctx);
  afmAttrs.getWeightsAttrHelper().setAttr(module, b.getArrayAttr(weights));
  afmAttrs.getWeightsBytesAttrHelper().setAttr(
      module, b.getI64IntegerAttr(layout.weightBytes));
  afmAttrs.getKvLayoutAttrHelper().setAttr(module, b.getArrayAttr(caches));
  afmAttrs.getKvArenaBytesAttrHelper().setAttr(
      module, b.getI64IntegerAttr(layout.arenaBytes));
  // A layout the input carried would describe slots nothing reads now.
  afmAttrs.getAdapterLayoutAttrHelper().removeAttr(module);
  if (layout.adapters.empty())
    return;
  SmallVector<Attribute> adapters;
  for (auto &[name, slot] : layout.adapters)
    adapters.push_back(AdapterSlotAttr::get(
        ctx, name, slot.offset, byteSize(slot.type),
        slot.type.getDimSize(0), slot.type.getDimSize(1)));
  afmAttrs.getAdapterLayoutAttrHelper().setAttr(module,
                                                b.getArrayAttr(adapters));
}

LogicalResult Binder::run() {
  SmallVector<std::pair<func::FuncOp, EntrySignature>> entries;
  llvm::SmallDenseMap<unsigned, func::FuncOp> byKind;
  for (auto func : module.getOps<func::FuncOp>()) {
    std::optional<EntryKind> kind = getEntryKind(func);
    if (!kind)
      continue;
    auto [seen, inserted] =
        byKind.try_emplace(static_cast<unsigned>(*kind), func);
    if (!inserted)
      return func.emitOpError("is a second ")
             << stringifyEntryKind(*kind) << " entry (@"
             << seen->second.getSymName() << " is one already)";
    FailureOr<EntrySignature> sig = checkSignature(func);
    if (failed(sig) || failed(collectWeights(func)) ||
        failed(collectCaches(func, *sig)) || failed(collectAdapters(func)))
      return failure();
    entries.emplace_back(func, *sig);
  }
  if (entries.empty())
    return module.emitError("no function has an afm.entry attribute; "
                            "nothing to bind");
  for (auto &[layer, slot] : layout.caches) {
    slot.offset = llvm::alignTo(layout.arenaBytes, kAlignment);
    layout.arenaBytes = slot.offset + slot.bytes;
    if (slot.scalesBytes) {
      slot.scalesOffset = llvm::alignTo(layout.arenaBytes, kAlignment);
      layout.arenaBytes = slot.scalesOffset + slot.scalesBytes;
    }
    LLVM_DEBUG(llvm::dbgs() << "layer " << layer << ": " << slot.type
                            << " at arena offset " << slot.offset << " ("
                            << slot.bytes << " bytes, " << slot.scalesBytes
                            << " bytes of scales)\n");
  }
  // Adapter factors after the caches: the runtime writes them when a
  // session attaches an adapter, and again after a reset clears the arena.
  for (auto &[name, slot] : layout.adapters) {
    slot.offset = llvm::alignTo(layout.arenaBytes, kAlignment);
    layout.arenaBytes = slot.offset + byteSize(slot.type);
  }
  LLVM_DEBUG(llvm::dbgs() << layout.weights.size() << " weights in "
                          << layout.weightBytes << " bytes, "
                          << layout.caches.size() << " caches in a "
                          << layout.arenaBytes << "-byte arena\n");
  for (auto &[func, sig] : entries)
    rewrite(func, sig);
  recordLayout();
  return success();
}

namespace {
struct AFMBindEntryABIPass
    : afm::impl::AFMBindEntryABIPassBase<AFMBindEntryABIPass> {
  void runOnOperation() override {
    if (failed(Binder(getOperation()).run()))
      signalPassFailure();
  }
};
} // namespace
