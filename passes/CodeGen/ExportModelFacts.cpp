//===- ExportModelFacts.cpp - the code says what it was compiled for ------===//
//
// The entry points have their sizes built in: the logits they write, the
// tokens buffer they read, the weights and arena bytes they address. The
// manifest repeats those sizes for the runtime, and a manifest can be
// edited (its checksums recomputed), so the code exports them itself as
// the constant `afm_compiled_facts` (include/afm/kernel_abi.h), taken from the
// entry points' types. The runtime checks the manifest against it at load.
//
// The same facts check the module's `afm.model` attribute, from which the
// manifest is written: IR whose attributes disagree with its entry types
// is refused here rather than packaged into a binary that overflows.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "afm/kernel_abi.h"
#include "dialects/afm/IR/AFMOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::afm {
#define GEN_PASS_DEF_AFMEXPORTMODELFACTSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::afm

#define DEBUG_TYPE "afm-export-model-facts"

using namespace mlir;
using namespace mlir::afm;

namespace {
/// Argument positions of an entry point (kernel_abi.h's afm_entry_fn).
enum EntryArgument {
  kWeights = 0,
  kTokens = 1,
  kArena = 4,
  kLogits = 5,
  kNumEntryArguments = 7
};

/// The sizes one entry point's types give.
struct EntrySizes {
  int64_t tokens, weightsBytes, arenaBytes, vocab;
};
} // namespace

/// Bytes of a statically shaped memref, or nullopt (dynamic shape, or more
/// than int64 holds).
static std::optional<int64_t> memrefBytes(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref || !memref.hasStaticShape() ||
      !memref.getElementType().isIntOrFloat())
    return std::nullopt;
  int64_t bytes = llvm::divideCeil(
      memref.getElementType().getIntOrFloatBitWidth(), 8);
  for (int64_t dim : memref.getShape())
    if (llvm::MulOverflow(bytes, dim, bytes))
      return std::nullopt;
  return bytes;
}

static FailureOr<EntrySizes> entrySizes(func::FuncOp entry) {
  FunctionType type = entry.getFunctionType();
  if (type.getNumInputs() != kNumEntryArguments || type.getNumResults() != 0)
    return entry.emitError("an entry point must have the ")
           << static_cast<int64_t>(kNumEntryArguments)
           << " arguments of include/afm/kernel_abi.h and no results";
  auto tokens = dyn_cast<MemRefType>(type.getInput(kTokens));
  auto logits = dyn_cast<MemRefType>(type.getInput(kLogits));
  std::optional<int64_t> weights = memrefBytes(type.getInput(kWeights));
  std::optional<int64_t> arena = memrefBytes(type.getInput(kArena));
  if (!tokens || tokens.getRank() != 1 || !tokens.hasStaticShape() ||
      !tokens.getElementType().isInteger(32) || !logits ||
      logits.getRank() != 1 || !logits.hasStaticShape() ||
      !logits.getElementType().isF32() || !weights || !arena)
    return entry.emitError("an entry point's tokens, logits, weights and "
                           "arena must be static 1-D buffers (i32 tokens, "
                           "f32 logits)");
  return EntrySizes{tokens.getDimSize(0), *weights, *arena,
                    logits.getDimSize(0)};
}

namespace {
struct AFMExportModelFactsPass
    : afm::impl::AFMExportModelFactsPassBase<AFMExportModelFactsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto prefill = module.lookupSymbol<func::FuncOp>(AFM_PREFILL_SYMBOL);
    auto decode = module.lookupSymbol<func::FuncOp>(AFM_DECODE_SYMBOL);
    if (!prefill && !decode) {
      LLVM_DEBUG(llvm::dbgs() << "no entry points: not a model, no facts\n");
      return; // not a model (a graph run in the host process)
    }
    if (!prefill || !decode) {
      module.emitError("a model needs both entry points, afm_prefill and "
                       "afm_decode");
      return signalPassFailure();
    }
    FailureOr<EntrySizes> p = entrySizes(prefill), d = entrySizes(decode);
    if (failed(p) || failed(d))
      return signalPassFailure();
    // The optional verify entry writes one row of logits per token.
    int64_t verifyTokens = 0;
    if (auto verify = module.lookupSymbol<func::FuncOp>(AFM_VERIFY_SYMBOL)) {
      FailureOr<EntrySizes> v = entrySizes(verify);
      if (failed(v))
        return signalPassFailure();
      if (v->tokens < 2 || v->vocab != v->tokens * p->vocab ||
          v->weightsBytes != p->weightsBytes ||
          v->arenaBytes != p->arenaBytes) {
        verify.emitError("afm_verify must read at least 2 tokens and write "
                         "tokens x ")
            << p->vocab << " logits over afm_prefill's weights and arena; "
            << "it reads " << v->tokens << " tokens and writes " << v->vocab
            << " logits";
        return signalPassFailure();
      }
      verifyTokens = v->tokens;
    }
    if (p->vocab != d->vocab || p->weightsBytes != d->weightsBytes ||
        p->arenaBytes != d->arenaBytes) {
      module.emitError("afm_prefill and afm_decode disagree on the logits, "
                       "weights or arena they address");
      return signalPassFailure();
    }
    if (p->tokens < 1 || d->tokens != 1) {
      module.emitError("afm_prefill must read at least one token and "
                       "afm_decode exactly one, not ")
          << p->tokens << " and " << d->tokens;
      return signalPassFailure();
    }
    AFMDialect &afmAttrs = contracts(module);
    ModelAttr model = afmAttrs.getModelAttrHelper().getAttr(module);
    if (!model) {
      module.emitError("a model needs the afm.model attribute");
      return signalPassFailure();
    }
    // What the manifest will say, from afm.model, against the types. (The
    // dialect verified afm.model's own ranges.)
    auto check = [&](StringRef name, int64_t value, int64_t expected) {
      if (value == expected)
        return true;
      module.emitError("afm.model ")
          << name << " is " << value << ", but the entry points were built for "
          << expected;
      return false;
    };
    if (!check("vocab_size", model.getVocabSize(), p->vocab) ||
        !check("prefill_chunk", model.getPrefillChunk(), p->tokens))
      return signalPassFailure();
    int64_t context = model.getContextLength();
    if (failed(checkCaches(module, context, p->arenaBytes)) ||
        failed(checkAttribute(module, afmAttrs.getKvArenaBytesAttrHelper(),
                              p->arenaBytes)) ||
        failed(checkAttribute(module, afmAttrs.getWeightsBytesAttrHelper(),
                              p->weightsBytes)))
      return signalPassFailure();

    // The packager writes the manifest after the code is gone: it learns
    // of the verify entry from here.
    if (verifyTokens > 0)
      afmAttrs.getVerifyTokensAttrHelper().setAttr(
          module, IntegerAttr::get(IntegerType::get(module.getContext(), 64),
                                   verifyTokens));

    // The record, as kernel_abi.h lays it out: 8 u64.
    static_assert(sizeof(afm_model_facts) == 8 * sizeof(uint64_t));
    SmallVector<int64_t> facts = {AFM_KERNEL_ABI_VERSION,
                                  p->vocab,
                                  context,
                                  p->tokens,
                                  d->tokens,
                                  p->weightsBytes,
                                  p->arenaBytes,
                                  verifyTokens};
    LLVM_DEBUG({
      llvm::dbgs() << "facts: ";
      llvm::interleaveComma(facts, llvm::dbgs());
      llvm::dbgs() << "\n";
    });
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    Type i64 = b.getI64Type();
    exportTable(b, module.getLoc(), AFM_MODEL_FACTS_SYMBOL, facts);
    if (failed(exportAdapterSlots(module, b, p->arenaBytes)))
      return signalPassFailure();
    // The tracks per PT-MoE block, as afm-lower-tracks counted them.
    if (IntegerAttr tracks = afmAttrs.getTrackCountAttrHelper().getAttr(module))
      LLVM::GlobalOp::create(b, module.getLoc(), i64, /*isConstant=*/true,
                             LLVM::Linkage::External, AFM_TRACK_COUNT_SYMBOL,
                             b.getI64IntegerAttr(tracks.getInt()));
  }

  /// `afm_adapter_slots` (kernel_abi.h) from `afm.adapter_layout`, which
  /// afm-bind-entry-abi wrote with the views the code reads: each slot
  /// inside the arena.
  static LogicalResult exportAdapterSlots(ModuleOp module, OpBuilder &b,
                                          int64_t arenaBytes) {
    ArrayAttr layout =
        contracts(module).getAdapterLayoutAttrHelper().getAttr(module);
    if (!layout || layout.empty())
      return success();
    SmallVector<int64_t> table = {int64_t(layout.size())};
    for (auto slot : layout.getAsRange<AdapterSlotAttr>()) {
      int64_t end;
      if (llvm::AddOverflow(slot.getOffset(), slot.getBytes(), end) ||
          end > arenaBytes)
        return module.emitError("afm.adapter_layout entry ")
               << slot << " does not lie in the " << arenaBytes
               << "-byte arena";
      table.append({slot.getOffset(), slot.getRows(), slot.getCols()});
    }
    exportTable(b, module.getLoc(), AFM_ADAPTER_SLOTS_SYMBOL, table);
    return success();
  }

  /// The exported constant `name`: a u64 array of `values`.
  static void exportTable(OpBuilder &b, Location loc, StringRef name,
                          ArrayRef<int64_t> values) {
    Type i64 = b.getI64Type();
    auto value = DenseElementsAttr::get(
        RankedTensorType::get({int64_t(values.size())}, i64), values);
    LLVM::GlobalOp::create(b, loc, LLVM::LLVMArrayType::get(i64, values.size()),
                           /*isConstant=*/true, LLVM::Linkage::External, name,
                           value);
  }

  /// A module size attribute (when present) equals `expected`.
  template <typename Helper>
  static LogicalResult checkAttribute(ModuleOp module, Helper helper,
                                      int64_t expected) {
    IntegerAttr attr = helper.getAttr(module);
    if (!attr || attr.getInt() == expected)
      return success();
    return module.emitError(helper.getName().getValue())
           << " is " << attr.getInt()
                                  << ", but the entry points address "
                                  << expected << " bytes";
  }

  /// Every KV buffer of `afm.kv_layout` lies in the arena, and every
  /// global cache holds the whole context.
  static LogicalResult checkCaches(ModuleOp module, int64_t context,
                                   int64_t arenaBytes) {
    auto layout = contracts(module).getKvLayoutAttrHelper().getAttr(module);
    if (!layout)
      return success();
    for (auto slot : layout.getAsRange<KVSlotAttr>()) {
      int64_t end;
      if (llvm::AddOverflow(slot.getOffset(), slot.getBytes(), end) ||
          end > arenaBytes)
        return module.emitError("afm.kv_layout entry ")
               << slot << " does not lie in the " << arenaBytes
               << "-byte arena";
      int64_t capacity = getKVCacheShape(slot.getType())->capacity;
      if (slot.getAttention() == KVCacheAttention::Global &&
          capacity < context)
        return module.emitError("afm.model context_length ")
               << context << " is more than the " << capacity
               << " positions of the global KV cache " << slot;
    }
    return success();
  }
};
} // namespace
