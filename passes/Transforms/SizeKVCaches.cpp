//===- SizeKVCaches.cpp - local layers keep ring buffers of their window --===//

#include "passes/Passes.h"

#include "dialects/afm/IR/AFMOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Debug.h"

#include <map>

namespace mlir::afm {
#define GEN_PASS_DEF_AFMSIZEKVCACHESPASS
#include "passes/Passes.h.inc"
} // namespace mlir::afm

#define DEBUG_TYPE "afm-size-kv-caches"

using namespace mlir;
using namespace mlir::afm;

/// Positions the readers of one cache need, or nullopt for "all of them".
static std::optional<int64_t> neededPositions(BlockArgument cache) {
  int64_t needed = 0;
  for (Operation *user : cache.getUsers()) {
    std::optional<int64_t> window;
    int64_t extra = 0;
    if (auto attn = dyn_cast<AttentionOp>(user)) {
      if (attn.getKind() != AttentionKind::Local)
        return std::nullopt;
      window = attn.getWindow();
    } else if (auto shared = dyn_cast<SharedKVAttentionOp>(user)) {
      if (shared.getKind() != AttentionKind::Local)
        return std::nullopt;
      window = shared.getWindow();
      extra = shared.getQuery().getType().getDimSize(0) - 1;
    } else {
      return std::nullopt; // an unknown reader may look anywhere
    }
    if (!window || ShapedType::isDynamic(extra + 1))
      return std::nullopt;
    needed = std::max(needed, *window + extra);
  }
  return needed;
}

namespace {
struct AFMSizeKVCachesPass
    : afm::impl::AFMSizeKVCachesPassBase<AFMSizeKVCachesPass> {
  void runOnOperation() override {
    SmallVector<func::FuncOp> entries;
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (getEntryKind(func) && !func.isExternal())
        entries.push_back(func);

    // A verify entry of T rows may be rewound by up to T-1 positions
    // (speculative decoding drops rejected drafts): the rows it wrote past
    // the new position must not have overwritten a slot still needed, so
    // every ring keeps T-1 more slots than its readers' window.
    int64_t slack = 0;
    for (func::FuncOp func : entries)
      if (getEntryKind(func) == EntryKind::Verify)
        if (auto tokens = dyn_cast<RankedTensorType>(
                func.getFunctionType().getInput(0));
            tokens && tokens.hasStaticShape())
          slack = std::max(slack, tokens.getDimSize(0) - 1);

    // layer -> capacity every entry agrees on (nullopt: keep as is).
    std::map<int64_t, std::optional<int64_t>> capacity;
    auto forEachCache = [&](auto fn) {
      for (func::FuncOp func : entries)
        for (BlockArgument arg : func.getArguments())
          if (auto layer =
                  func.getArgAttrOfType<IntegerAttr>(
                      arg.getArgNumber(),
                      contracts(func).getLayerAttrHelper().getName());
              layer && isa<KVCacheType>(arg.getType()))
            fn(func, arg, layer.getInt());
    };
    forEachCache([&](func::FuncOp, BlockArgument arg, int64_t layer) {
      std::optional<int64_t> needed = neededPositions(arg);
      if (needed)
        *needed += slack;
      auto [it, inserted] = capacity.try_emplace(layer, needed);
      if (!inserted)
        it->second = (it->second && needed)
                         ? std::optional(std::max(*it->second, *needed))
                         : std::nullopt;
    });
    forEachCache([&](func::FuncOp func, BlockArgument arg, int64_t layer) {
      std::optional<int64_t> size = capacity[layer];
      auto type = cast<KVCacheType>(arg.getType());
      if (!size || *size >= type.getCapacity())
        return;
      LLVM_DEBUG(llvm::dbgs() << "@" << func.getSymName() << ": layer " << layer
                              << "'s KV cache shrinks from "
                              << type.getCapacity() << " to " << *size
                              << " positions (its readers' window)\n");
      arg.setType(KVCacheType::get(type.getContext(), type.getKvHeads(), *size,
                                   type.getHeadDim(), type.getElementType()));
      func.setFunctionType(FunctionType::get(
          func.getContext(), func.getBody().front().getArgumentTypes(),
          func.getFunctionType().getResults()));
    });
  }
};
} // namespace
