//===- OutlineParallelLoops.cpp - tile loops -> runtime thread tasks ------===//
//
// Compiled code never creates threads: a parallel loop becomes a task
// function and an afm_cpu.parallel_call, which the runtime's parallel_for runs
// on its own threads (include/afm/kernel_abi.h).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialects/afm/IR/AFMOps.h"
#include "dialects/afm_cpu/IR/AFMCPUDialect.h"

#include "mlir/Analysis/TopologicalSortUtils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

namespace mlir::afm {
#define GEN_PASS_DEF_AFMOUTLINEPARALLELLOOPSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::afm

#define DEBUG_TYPE "afm-outline-parallel-loops"

using namespace mlir;
using namespace mlir::afm;

/// Values a task can take as arguments: scalars, and memrefs the bare-
/// pointer calling convention can pass (static shape, identity layout).
static bool isCapturable(Value value) {
  Type type = value.getType();
  if (type.isIntOrIndexOrFloat())
    return true;
  auto memref = dyn_cast<MemRefType>(type);
  return memref && memref.hasStaticShape() && memref.getLayout().isIdentity();
}

/// Ops the task recomputes instead of capturing their results. Constants,
/// poison paddings and constant globals stay visible as such to LLVM in the
/// task (a captured shift table turns immediate shifts into variable ones).
/// Pure ops that make vectors (a tile's index vectors: vector.step,
/// broadcasts, transposes) are recomputed too: a task cannot take vectors
/// as arguments.
static bool isRematerializable(Operation *op) {
  if (!op || op->getNumRegions() != 0)
    return false;
  if (isa<arith::ConstantOp, ub::PoisonOp, memref::GetGlobalOp>(op) ||
      isa<memref::SubViewOp, memref::ViewOp, memref::ReinterpretCastOp,
          memref::ExpandShapeOp, memref::CollapseShapeOp, memref::CastOp>(op))
    return true;
  return isPure(op) && llvm::all_of(op->getResultTypes(), [](Type type) {
           return isa<VectorType>(type);
         });
}

namespace {
/// What the loop body needs from outside: arguments and ops to recompute.
struct TaskInputs {
  SmallVector<Value> captures;
  SmallVector<Operation *> recompute; // in a valid order
};
} // namespace

namespace {
/// A one-dimensional parallel loop: a marked scf.for or an scf.forall.
struct ParallelLoop {
  Operation *op;
  Region *region;
  Value iv;
  Value lb, ub, step; // materialized before the loop
};
} // namespace

/// The loop's bounds as values, or nullopt if it is not 1-D.
static std::optional<ParallelLoop> getParallelLoop(Operation *op) {
  if (auto loop = dyn_cast<scf::ForOp>(op))
    return ParallelLoop{op, &loop.getRegion(), loop.getInductionVar(),
                        loop.getLowerBound(), loop.getUpperBound(),
                        loop.getStep()};
  auto forall = dyn_cast<scf::ForallOp>(op);
  if (!forall || forall.getRank() != 1 || !forall.getOutputs().empty())
    return std::nullopt;
  OpBuilder b(op);
  auto value = [&](OpFoldResult ofr) {
    return getValueOrCreateConstantIndexOp(b, op->getLoc(), ofr);
  };
  return ParallelLoop{op, &forall.getRegion(), forall.getInductionVar(0),
                      value(forall.getMixedLowerBound()[0]),
                      value(forall.getMixedUpperBound()[0]),
                      value(forall.getMixedStep()[0])};
}

/// What a task needs from outside to compute `needed`, the values its body
/// uses; fails when one of them can be neither recomputed nor captured.
static FailureOr<TaskInputs>
collectInputs(Operation *loopOp, const llvm::SetVector<Value> &needed) {
  TaskInputs inputs;
  llvm::SetVector<Operation *> recompute;
  llvm::SetVector<Value> captures;
  SmallVector<Value> worklist(needed.begin(), needed.end());
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    Operation *def = value.getDefiningOp();
    if (isRematerializable(def)) {
      if (recompute.insert(def))
        worklist.append(def->operand_begin(), def->operand_end());
      continue;
    }
    if (!isCapturable(value)) {
      LLVM_DEBUG(llvm::dbgs() << loopOp->getName() << " at "
                              << loopOp->getLoc()
                              << " stays sequential: a task cannot take its "
                                 "input of type "
                              << value.getType() << "\n");
      return failure();
    }
    captures.insert(value);
  }
  inputs.captures.assign(captures.begin(), captures.end());
  // Entry arguments first, in their order: the task reads like its caller.
  llvm::stable_sort(inputs.captures, [](Value a, Value b) {
    auto argA = dyn_cast<BlockArgument>(a), argB = dyn_cast<BlockArgument>(b);
    if (argA && argB)
      return argA.getArgNumber() < argB.getArgNumber();
    return argA && !argB;
  });
  SmallVector<Operation *> ops(recompute.begin(), recompute.end());
  if (!computeTopologicalSorting(ops))
    return failure();
  inputs.recompute = std::move(ops);
  return inputs;
}

static FailureOr<TaskInputs> collectInputs(const ParallelLoop &loop) {
  llvm::SetVector<Value> needed;
  getUsedValuesDefinedAbove(*loop.region, needed);
  needed.insert(loop.lb);
  needed.insert(loop.step);
  return collectInputs(loop.op, needed);
}

/// What a task's name says it computes: the first name in its loop's
/// location (afm-tag-op-locations names it after the afm op the loop was
/// lowered from), kept to identifier characters; empty when there is none.
static std::string taskKind(Location loc) {
  std::string kind;
  loc->walk([&](Location inner) {
    auto named = dyn_cast<NameLoc>(inner);
    if (!named)
      return WalkResult::advance();
    for (char c : named.getName().getValue().take_front(32))
      kind += llvm::isAlnum(c) ? c : '_';
    return WalkResult::interrupt();
  });
  return kind;
}

/// Creates the private function `<parent><infix><N>[_<name>]` before
/// `parent`, taking `leading` and then `inputs`' captures, with the
/// recomputed ops cloned at its entry; `mapping` maps the captures to its
/// arguments and `b` is left at the end of its body.
static func::FuncOp createOutlinedFunction(OpBuilder &b, func::FuncOp parent,
                                           Location loc, StringRef infix,
                                           ArrayRef<Type> leading,
                                           const TaskInputs &inputs,
                                           SymbolTable &symbols,
                                           unsigned &counter,
                                           IRMapping &mapping) {
  SmallVector<Type> argTypes(leading);
  for (Value v : inputs.captures)
    argTypes.push_back(v.getType());
  b.setInsertionPoint(parent);
  std::string name = (parent.getSymName() + infix + Twine(counter++)).str();
  if (std::string kind = taskKind(loc); !kind.empty())
    name += "_" + kind;
  auto outlined =
      func::FuncOp::create(b, loc, name, b.getFunctionType(argTypes, {}));
  outlined.setPrivate();
  symbols.insert(outlined);
  Block *body = outlined.addEntryBlock();
  b.setInsertionPointToStart(body);
  for (auto [i, v] : llvm::enumerate(inputs.captures))
    mapping.map(v, body->getArgument(leading.size() + i));
  for (Operation *op : inputs.recompute)
    b.clone(*op, mapping);
  return outlined;
}

/// Outlines `loop` into a task and returns it; none if it must stay
/// sequential.
static func::FuncOp outline(const ParallelLoop &loop, Value host,
                            func::FuncOp parent, SymbolTable &symbols,
                            unsigned &counter) {
  FailureOr<TaskInputs> inputs = collectInputs(loop);
  if (failed(inputs))
    return {};
  Location loc = loop.op->getLoc();
  OpBuilder b(loop.op->getContext());

  // The task: (iteration, captures...) -> ().
  IRMapping mapping;
  func::FuncOp task =
      createOutlinedFunction(b, parent, loc, "_task", {b.getIndexType()},
                             *inputs, symbols, counter, mapping);
  Block *body = &task.getBody().front();
  // i = lb + iteration * step
  Value offset = arith::MulIOp::create(b, loc, body->getArgument(0),
                                       mapping.lookup(loop.step));
  Value iv = arith::AddIOp::create(b, loc, mapping.lookup(loop.lb), offset);
  mapping.map(loop.iv, iv);
  // (an scf.forall's terminator holds no parallel inserts on buffers)
  for (Operation &op : loop.region->front().without_terminator())
    b.clone(op, mapping);
  func::ReturnOp::create(b, loc);

  // The call: count = ceil((ub - lb) / step).
  b.setInsertionPoint(loop.op);
  Value span = arith::SubIOp::create(b, loc, loop.ub, loop.lb);
  Value count = arith::CeilDivSIOp::create(b, loc, span, loop.step);
  afm_cpu::ParallelCallOp::create(b, loc, task.getSymName(), count, host,
                         inputs->captures);
  LLVM_DEBUG(llvm::dbgs() << "outlined " << loop.op->getName() << " at " << loc
                          << " into @" << task.getSymName() << " ("
                          << inputs->captures.size() << " captures, "
                          << inputs->recompute.size() << " ops recomputed)\n");
  loop.op->erase();
  return task;
}

/// Loops with fewer ops than this stay in their function: a call would cost
/// more than it saves.
static constexpr int64_t kMinSerialLoopOps = 8;

/// Outlines the sequential loop `loop` (no results) of `parent` into a
/// private function `(captures...)` and a func.call of it; returns false if
/// it must stay. Merged by afm-merge-equivalent-tasks like the tasks, the
/// copies of a layer's serial code (norms, RoPE, the glue of its ops) then
/// compile once instead of once per layer.
static bool outlineSerial(scf::ForOp loop, func::FuncOp parent,
                          SymbolTable &symbols, unsigned &counter) {
  if (loop.getNumResults() != 0)
    return false;
  int64_t size = 0;
  loop->walk([&](Operation *) { ++size; });
  if (size < kMinSerialLoopOps)
    return false;
  llvm::SetVector<Value> needed;
  getUsedValuesDefinedAbove(loop.getRegion(), needed);
  needed.insert_range(loop->getOperands());
  FailureOr<TaskInputs> inputs = collectInputs(loop, needed);
  if (failed(inputs))
    return false;
  Location loc = loop.getLoc();
  OpBuilder b(loop.getContext());
  // Not "_task": profiles count this code as the serial code it is.
  IRMapping mapping;
  func::FuncOp outlined = createOutlinedFunction(
      b, parent, loc, "_loop", {}, *inputs, symbols, counter, mapping);
  // Internal in LLVM too: not exported from the library, and LLVM sees
  // every call (a private func.func otherwise becomes an external one).
  outlined->setAttr("llvm.linkage",
                    LLVM::LinkageAttr::get(b.getContext(),
                                           LLVM::Linkage::Internal));
  b.clone(*loop, mapping);
  func::ReturnOp::create(b, loc);

  b.setInsertionPoint(loop);
  func::CallOp::create(b, loc, outlined, inputs->captures);
  LLVM_DEBUG(llvm::dbgs() << "outlined the serial loop at " << loc
                          << " into @" << outlined.getSymName() << "\n");
  loop->erase();
  return true;
}

/// The `afm_host_api` pointer `func` hands its tasks: the argument
/// `afm.host_argument` names (graphs), else the last argument of an entry
/// point (include/afm/kernel_abi.h); null when it has none.
static Value getHostArgument(func::FuncOp func) {
  if (func.isExternal() || func.getNumArguments() == 0)
    return {};
  int64_t index = -1;
  if (auto attr = contracts(func).getHostArgumentAttrHelper().getAttr(func))
    index = attr.getInt();
  else if (getEntryKind(func))
    index = func.getNumArguments() - 1;
  if (index < 0 || index >= func.getNumArguments())
    return {};
  Value host = func.getArgument(index);
  return isa<LLVM::LLVMPointerType>(host.getType()) ? host : Value();
}

/// Moves the statically shaped stack buffers of `func`'s loop bodies (a
/// decode-attention task's, DecodeAttention.cpp) to its entry block. The
/// loops left in `func` are sequential, so their iterations can share one
/// buffer; left in the body, an alloca takes new stack on every iteration,
/// which a long loop overflows. A task's own buffers are already at its
/// entry: its body is the loop body, one iteration per call.
static void hoistLoopAllocas(func::FuncOp func) {
  if (func.isExternal())
    return;
  Block &entry = func.getBody().front();
  SmallVector<memref::AllocaOp> nested;
  func.walk([&](memref::AllocaOp alloca) {
    if (alloca->getBlock() != &entry && alloca.getType().hasStaticShape() &&
        alloca->getNumOperands() == 0 &&
        !alloca->getParentOfType<memref::AllocaScopeOp>())
      nested.push_back(alloca);
  });
  for (memref::AllocaOp alloca : nested) {
    LLVM_DEBUG(llvm::dbgs() << "hoisting " << alloca.getType()
                            << " to the entry of " << func.getSymName()
                            << "\n");
    alloca->moveBefore(&entry, entry.begin());
  }
}

namespace {
struct AFMOutlineParallelLoopsPass
    : afm::impl::AFMOutlineParallelLoopsPassBase<AFMOutlineParallelLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<std::pair<func::FuncOp, Value>> entries;
    for (auto func : module.getOps<func::FuncOp>())
      if (Value host = getHostArgument(func))
        entries.push_back({func, host});
    for (auto [func, host] : entries) {
      // Every scf.forall is parallel by construction; an scf.for only when
      // marked. Nested parallel loops run inside their enclosing task.
      SmallVector<Operation *> loops;
      func.walk<WalkOrder::PreOrder>([&](Operation *op) {
        if (!isa<scf::ForallOp>(op) &&
            !(isa<scf::ForOp>(op) &&
              contracts(op).getParallelAttrHelper().isAttrPresent(op)))
          return WalkResult::advance();
        loops.push_back(op);
        return WalkResult::skip();
      });
      unsigned counter = 0;
      SmallVector<func::FuncOp> tasks;
      for (Operation *op : loops) {
        std::optional<ParallelLoop> loop = getParallelLoop(op);
        func::FuncOp task;
        if (loop)
          task = outline(*loop, host, func, symbols, counter);
        if (task)
          tasks.push_back(task);
        else
          op->removeAttr(contracts(op).getParallelAttrHelper().getName());
      }
      if (!outlineSerialLoops)
        continue;
      // The outermost sequential loops left, now that the parallel ones
      // are tasks; and those of the tasks themselves. A PT track's task
      // holds its whole layer stack, every expert of every MoE layer
      // inlined: outlined, they merge like an entry point's loops, and LLVM
      // no longer optimizes one function of 100K operations per track.
      tasks.insert(tasks.begin(), func);
      for (func::FuncOp parent : tasks) {
        SmallVector<scf::ForOp> serial;
        parent.walk<WalkOrder::PreOrder>([&](scf::ForOp loop) {
          serial.push_back(loop);
          return WalkResult::skip();
        });
        unsigned serialCounter = 0;
        for (scf::ForOp loop : serial)
          outlineSerial(loop, parent, symbols, serialCounter);
      }
    }
    for (auto func : module.getOps<func::FuncOp>())
      hoistLoopAllocas(func);
  }
};
} // namespace
