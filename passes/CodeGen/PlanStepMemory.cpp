//===- PlanStepMemory.cpp - temporaries of an entry point in the arena ----===//
//
// A decode step of a 3B model has hundreds of temporary buffers, some of
// megabytes; as heap allocations they cost a malloc/free pair each, and the
// large ones (mapped and unmapped by the C library every step) page faults
// on every touch. Here they become views of one scratch region of the
// session's arena, laid out once at compile time by their lifetimes.
//
// PT-MoE tracks run concurrently: an scf.forall over tracks whose body
// switches on the track (scf.index_switch, one case per track). Each case
// is planned like an entry's body, and the cases get disjoint parts of one
// region that lives while the forall runs.
//
//===----------------------------------------------------------------------===//

#include "passes/CodeGen/StorageBytes.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::afm {
#define GEN_PASS_DEF_AFMPLANSTEPMEMORYPASS
#include "passes/Passes.h.inc"
} // namespace mlir::afm

#define DEBUG_TYPE "afm-plan-step-memory"

using namespace mlir;

namespace {
/// Every argument the runtime passes an entry point (kernel_abi.h), in
/// order; the arena is the fifth.
constexpr unsigned kArenaArgument = 4;
constexpr uint64_t kAlignment = 64;

/// A buffer to place: its size and the op positions (in the entry's body)
/// between which it is live, inclusive.
struct Buffer {
  memref::AllocOp alloc;
  uint64_t bytes;
  unsigned first, last;
  /// The op of the planned block (entry body or track case) the view goes
  /// before.
  Operation *top;
  uint64_t offset = 0;
};

/// Calls `visit` with every use of `root` and of its aliases: the memref
/// results of any op that takes an alias (views, reshapes, casts, loops
/// carrying it) and the memref arguments of the regions such an op holds.
/// Conservative: a value wrongly taken for an alias only makes the buffer
/// live longer or stay where it is.
void forEachAliasUse(Value root, function_ref<void(OpOperand &)> visit) {
  SmallVector<Value> work = {root};
  llvm::DenseSet<Value> seen = {root};
  auto add = [&](Value v) {
    if (isa<BaseMemRefType>(v.getType()) && seen.insert(v).second)
      work.push_back(v);
  };
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      visit(use);
      Operation *user = use.getOwner();
      for (Value result : user->getResults())
        add(result);
      for (Region &region : user->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            add(arg);
    }
  }
}

/// The position in `body` of the last op that uses `root` or an alias.
unsigned lastUse(Value root, Block &body,
                 const llvm::DenseMap<Operation *, unsigned> &position) {
  unsigned last =
      position.lookup(body.findAncestorOpInBlock(*root.getDefiningOp()));
  forEachAliasUse(root, [&](OpOperand &use) {
    if (Operation *top = body.findAncestorOpInBlock(*use.getOwner()))
      last = std::max(last, position.lookup(top));
  });
  return last;
}

/// Whether an alias of `root` is yielded by a loop around it (carried from
/// one iteration into the next, so one buffer cannot serve every
/// iteration) or by any other op around it (the value leaves the region
/// the buffer was planned for). A loop nested inside, which hands the
/// buffer from its iterations back to the same iteration outside, is fine.
bool isCarriedAcrossIterations(Value root) {
  Operation *alloc = root.getDefiningOp();
  bool carried = false;
  forEachAliasUse(root, [&](OpOperand &use) {
    Operation *user = use.getOwner();
    if (isa<scf::YieldOp>(user) && user->getParentOp()->isProperAncestor(alloc))
      carried = true;
  });
  return carried;
}

/// Whether every op between `op` and `body` is a sequential scf.for: a
/// buffer allocated there can be allocated once, before the outermost loop.
bool isInSequentialLoops(Operation *op, Block &body) {
  for (Operation *parent = op->getParentOp(); parent;
       parent = parent->getParentOp()) {
    if (parent->getBlock() == &body)
      return isa<scf::ForOp>(parent);
    if (!isa<scf::ForOp>(parent))
      return false;
  }
  return false;
}

/// Places `buffers` (first fit, largest first) and returns the bytes used.
uint64_t place(MutableArrayRef<Buffer> buffers) {
  SmallVector<Buffer *> order;
  for (Buffer &b : buffers)
    order.push_back(&b);
  // Largest first; equal sizes in program order (pointers into `buffers`
  // compare in that order).
  llvm::sort(order, [](Buffer *a, Buffer *b) {
    return a->bytes != b->bytes ? a->bytes > b->bytes : a < b;
  });
  SmallVector<Buffer *> placed;
  uint64_t end = 0;
  for (Buffer *b : order) {
    // Bytes taken by placed buffers live at the same time, by offset.
    SmallVector<std::pair<uint64_t, uint64_t>> taken;
    for (Buffer *p : placed)
      if (p->first <= b->last && b->first <= p->last)
        taken.push_back({p->offset, p->offset + p->bytes});
    llvm::sort(taken);
    uint64_t offset = 0;
    for (auto [begin, stop] : taken) {
      if (offset + b->bytes <= begin)
        break;
      offset = std::max(offset, llvm::alignTo(stop, kAlignment));
    }
    b->offset = offset;
    end = std::max(end, offset + b->bytes);
    placed.push_back(b);
  }
  return end;
}

/// The buffers of a block that runs sequentially (an entry's body, or one
/// track's case of a track loop), placed.
struct BlockPlan {
  std::vector<Buffer> buffers;
  /// Where the plan starts in the arena's scratch region; its buffers'
  /// offsets are relative to it.
  uint64_t base = 0;
  /// A track's case only: the stand-in buffer of the entry's plan that
  /// holds the loop's cases side by side.
  size_t standIn = 0;
};

/// The position of each op of `body`.
llvm::DenseMap<Operation *, unsigned> positionsIn(Block &body) {
  llvm::DenseMap<Operation *, unsigned> position;
  for (auto [i, op] : llvm::enumerate(body))
    position[&op] = i;
  return position;
}

/// The buffers of `body` that can be placed, in program order:
/// allocations in the block itself, or in sequential loops there (the
/// attention's loop over KV blocks) when no iteration hands the buffer to
/// the next one.
std::vector<Buffer>
collectBuffers(Block &body,
               const llvm::DenseMap<Operation *, unsigned> &position) {
  SmallVector<memref::AllocOp> allocs;
  for (Operation &op : body)
    op.walk([&](memref::AllocOp alloc) {
      if (alloc->getBlock() == &body ||
          (isInSequentialLoops(alloc, body) &&
           !isCarriedAcrossIterations(alloc)))
        allocs.push_back(alloc);
    });
  std::vector<Buffer> buffers;
  for (memref::AllocOp alloc : allocs) {
    MemRefType type = alloc.getType();
    if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
        type.getMemorySpace() || !type.getElementType().isIntOrIndexOrFloat())
      continue;
    uint64_t bytes = afm::storageBytes(type, alloc);
    Operation *top = body.findAncestorOpInBlock(*alloc);
    buffers.push_back(Buffer{alloc, std::max<uint64_t>(bytes, 1),
                             position.lookup(top),
                             lastUse(alloc, body, position), top});
  }
  return buffers;
}

/// The blocks of a track loop that run concurrently, each at most once at
/// a time: an scf.forall over [0, n) of one dimension whose body switches
/// (scf.index_switch) on its induction variable, with distinct case values
/// in [0, n); the default region too when it is left exactly one value
/// (TracksToForall gives the last track the default region). The switch
/// may sit in the then-block of an scf.if (tracks split between
/// processes: the if runs the switch only for this process's tracks).
/// Empty for any other op.
SmallVector<Block *> trackCases(Operation *op) {
  auto forall = dyn_cast<scf::ForallOp>(op);
  if (!forall || forall.getRank() != 1 || forall.getNumResults() != 0)
    return {};
  std::optional<int64_t> lower = getConstantIntValue(forall.getMixedLowerBound()[0]);
  std::optional<int64_t> upper = getConstantIntValue(forall.getMixedUpperBound()[0]);
  std::optional<int64_t> step = getConstantIntValue(forall.getMixedStep()[0]);
  if (lower != 0 || !upper || step != 1)
    return {};
  SmallVector<scf::IndexSwitchOp> switches;
  for (Operation &inner : forall.getBody()->without_terminator()) {
    if (auto sw = dyn_cast<scf::IndexSwitchOp>(&inner))
      switches.push_back(sw);
    if (auto ifOp = dyn_cast<scf::IfOp>(&inner))
      for (Operation &nested : ifOp.getThenRegion().front())
        if (auto sw = dyn_cast<scf::IndexSwitchOp>(&nested))
          switches.push_back(sw);
  }
  SmallVector<Block *> cases;
  for (scf::IndexSwitchOp sw : switches) {
    if (sw.getArg() != forall.getInductionVar(0))
      continue;
    llvm::DenseSet<int64_t> values;
    for (int64_t value : sw.getCases())
      if (value < 0 || value >= *upper || !values.insert(value).second)
        return {};
    for (Region &region : sw.getCaseRegions())
      cases.push_back(&region.front());
    if (int64_t(values.size()) + 1 == *upper)
      cases.push_back(&sw.getDefaultBlock());
  }
  return cases;
}

struct AFMPlanStepMemoryPass
    : afm::impl::AFMPlanStepMemoryPassBase<AFMPlanStepMemoryPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    afm::AFMDialect &afmAttrs = afm::contracts(module);
    auto arenaAttr = afmAttrs.getKvArenaBytesAttrHelper().getAttr(module);
    SmallVector<func::FuncOp> entries;
    for (auto func : module.getOps<func::FuncOp>())
      if (afm::getEntryKind(func) && !func.isExternal())
        entries.push_back(func);
    if (!arenaAttr || entries.empty())
      return;
    uint64_t base = llvm::alignTo(uint64_t(arenaAttr.getInt()), kAlignment);

    // Plan each entry; they share the region.
    uint64_t scratch = 0;
    SmallVector<std::pair<func::FuncOp, std::vector<BlockPlan>>> plans;
    for (func::FuncOp func : entries) {
      Block &body = func.getBody().front();
      if (body.getNumArguments() <= kArenaArgument)
        continue;
      auto arenaType =
          dyn_cast<MemRefType>(body.getArgument(kArenaArgument).getType());
      if (!arenaType || arenaType.getRank() != 1 ||
          !arenaType.getElementType().isInteger(8))
        continue;
      llvm::DenseMap<Operation *, unsigned> position = positionsIn(body);
      std::vector<Buffer> entryBuffers = collectBuffers(body, position);
      size_t firstStandIn = entryBuffers.size();
      // Each track's case is planned alone; the cases of a track loop lie
      // side by side in a stand-in buffer of the entry's plan (no alloc to
      // replace), live while the loop runs.
      std::vector<BlockPlan> blocks;
      for (Operation &op : body) {
        SmallVector<Block *> cases = trackCases(&op);
        if (cases.empty())
          continue;
        uint64_t bytes = 0;
        for (Block *caseBlock : cases) {
          BlockPlan plan{collectBuffers(*caseBlock, positionsIn(*caseBlock)),
                         bytes, entryBuffers.size()};
          bytes += llvm::alignTo(place(plan.buffers), kAlignment);
          blocks.push_back(std::move(plan));
        }
        entryBuffers.push_back(Buffer{nullptr, std::max<uint64_t>(bytes, 1),
                                      position[&op], position[&op], &op});
      }
      scratch = std::max(scratch, place(entryBuffers));
      for (BlockPlan &plan : blocks)
        plan.base += entryBuffers[plan.standIn].offset;
      entryBuffers.resize(firstStandIn);
      blocks.push_back(BlockPlan{std::move(entryBuffers)});
      plans.push_back({func, std::move(blocks)});
    }
    if (plans.empty())
      return;

    uint64_t arenaBytes = base + scratch;
    LLVM_DEBUG(llvm::dbgs() << "arena: " << base << " bytes of KV caches, "
                            << scratch << " bytes of scratch\n");
    OpBuilder b(module.getContext());
    for (auto &[func, blocks] : plans) {
      Block &body = func.getBody().front();
      BlockArgument arena = body.getArgument(kArenaArgument);
      auto arenaType =
          MemRefType::get({int64_t(arenaBytes)}, b.getIntegerType(8));
      arena.setType(arenaType);
      SmallVector<Type> inputs(func.getArgumentTypes());
      inputs[kArenaArgument] = arenaType;
      func.setType(b.getFunctionType(inputs, func.getResultTypes()));
      for (BlockPlan &plan : blocks)
        for (Buffer &buffer : plan.buffers) {
          LLVM_DEBUG(llvm::dbgs()
                     << "@" << func.getSymName() << ": "
                     << buffer.alloc.getType() << " at arena offset "
                     << base + plan.base + buffer.offset << ", live over ops "
                     << buffer.first << ".." << buffer.last << "\n");
          b.setInsertionPoint(buffer.top);
          Location loc = buffer.alloc.getLoc();
          Value offset = arith::ConstantIndexOp::create(
              b, loc, int64_t(base + plan.base + buffer.offset));
          Value view = memref::ViewOp::create(b, loc, buffer.alloc.getType(),
                                              arena, offset, ValueRange{});
          buffer.alloc.replaceAllUsesWith(view);
          buffer.alloc.erase();
        }
    }
    afmAttrs.getKvArenaBytesAttrHelper().setAttr(
        module, b.getI64IntegerAttr(int64_t(arenaBytes)));
    afmAttrs.getScratchBytesAttrHelper().setAttr(
        module, b.getI64IntegerAttr(int64_t(scratch)));
  }
};
} // namespace
