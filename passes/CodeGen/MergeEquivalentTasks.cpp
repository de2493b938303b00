//===- MergeEquivalentTasks.cpp - one task per distinct loop body ---------===//
//
// A model repeats its layers, and afm-outline-parallel-loops outlines every
// layer's tile loops into tasks of their own: the paper's 3B model has about
// 1,700 of them, most of which differ only in integer constants (the byte
// offsets of their layer's buffers in the arena). Merging such tasks into one
// that takes the differing constants as arguments leaves a few dozen, and
// everything after outlining (vector lowering, conversion to LLVM, LLVM's O3
// and code generation) compiles each body once instead of once per layer.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialects/afm_cpu/IR/AFMCPUDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Debug.h"

namespace mlir::afm {
#define GEN_PASS_DEF_AFMMERGEEQUIVALENTTASKSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::afm

#define DEBUG_TYPE "afm-merge-equivalent-tasks"

using namespace mlir;

/// A scalar integer or index constant: the only kind of difference a merge
/// turns into an argument. Float and vector constants must be equal.
static bool isIntegerConstant(Operation *op) {
  auto constant = dyn_cast_if_present<arith::ConstantOp>(op);
  return constant && constant.getType().isIntOrIndex();
}

namespace {
/// A task's body with its integer constants taken out: two tasks with equal
/// `code` compute the same thing up to the values in `constants`.
struct TaskShape {
  /// The body's ops in walk order: names, attributes, types and operands
  /// (numbered values, or constant slots), and the region structure.
  SmallVector<uintptr_t> code;
  /// The uses of integer constants, one slot each, in walk order. A slot
  /// per use, not per constant: CSE shares one constant between the uses
  /// that happen to agree (an MoE expert's index with a loop step of the
  /// same value), so which uses share one differs between otherwise equal
  /// bodies.
  SmallVector<OpOperand *> constants;
};

/// Encodes a function body into a TaskShape; fails on a use it cannot
/// number (a value defined after its use in walk order), which only costs
/// the merge.
class ShapeEncoder {
public:
  FailureOr<TaskShape> encode(func::FuncOp func) {
    shape.code.push_back(
        reinterpret_cast<uintptr_t>(func.getFunctionType().getAsOpaquePointer()));
    if (failed(encodeRegion(func.getBody())))
      return failure();
    return std::move(shape);
  }

private:
  // Tags keep a value number from reading as a constant slot.
  enum : uintptr_t { ValueTag = 1, SlotTag = 2 };

  LogicalResult encodeRegion(Region &region) {
    shape.code.push_back(region.getBlocks().size());
    for (Block &block : region)
      blocks.try_emplace(&block, blocks.size());
    for (Block &block : region) {
      shape.code.push_back(block.getNumArguments());
      for (BlockArgument arg : block.getArguments())
        define(arg);
      for (Operation &op : block)
        if (!isIntegerConstant(&op) && failed(encodeOp(op)))
          return failure();
    }
    return success();
  }

  LogicalResult encodeOp(Operation &op) {
    shape.code.append(
        {reinterpret_cast<uintptr_t>(op.getName().getAsOpaquePointer()),
         reinterpret_cast<uintptr_t>(op.getAttrDictionary().getAsOpaquePointer()),
         op.getNumOperands(), op.getNumResults(), op.getNumRegions(),
         op.getNumSuccessors()});
    for (OpOperand &use : op.getOpOperands()) {
      Value operand = use.get();
      if (isIntegerConstant(operand.getDefiningOp())) {
        shape.constants.push_back(&use);
        shape.code.append(
            {SlotTag,
             reinterpret_cast<uintptr_t>(operand.getType().getAsOpaquePointer())});
        continue;
      }
      auto number = values.find(operand);
      if (number == values.end())
        return failure();
      shape.code.append({ValueTag, number->second});
    }
    for (Value result : op.getResults())
      define(result);
    for (Block *successor : op.getSuccessors())
      shape.code.push_back(blocks.lookup(successor));
    for (Region &region : op.getRegions())
      if (failed(encodeRegion(region)))
        return failure();
    return success();
  }

  void define(Value value) {
    shape.code.push_back(
        reinterpret_cast<uintptr_t>(value.getType().getAsOpaquePointer()));
    values.try_emplace(value, values.size());
  }

  TaskShape shape;
  DenseMap<Value, unsigned> values;
  DenseMap<Block *, unsigned> blocks;
};

/// Tasks that can share one body: same parent, same kind, same shape.
struct TaskGroup {
  SmallVector<func::FuncOp> tasks;
  SmallVector<TaskShape> shapes;
};
} // namespace

/// What the task computes, as its name says after `<parent>_task<N>` (or
/// `_loop<N>` for an outlined serial loop): tasks of different ops stay
/// apart even when their code agrees, so profiles keep attributing time to
/// the op.
static StringRef taskKind(func::FuncOp task, func::FuncOp parent) {
  StringRef name = task.getSymName();
  if (!name.consume_front(parent.getSymName()))
    return name;
  if (!name.consume_front("_task"))
    name.consume_front("_loop");
  return name.ltrim("0123456789");
}

static TypedAttr valueOf(OpOperand *use) {
  return cast<arith::ConstantOp>(use->get().getDefiningOp()).getValue();
}

/// Rewrites the calls of every task of `group` to call its first task, which
/// takes the constants that differ within the group as trailing arguments:
/// one per distinct column of values, so uses that agree in every task
/// (a layer's arena offset used by several ops) share one.
static void merge(
    TaskGroup &group,
    const llvm::MapVector<func::FuncOp, SmallVector<Operation *>> &callsOf) {
  func::FuncOp canonical = group.tasks.front();
  ArrayRef<OpOperand *> first = group.shapes.front().constants;
  // Read every value before the canonical body gives up its constants.
  SmallVector<SmallVector<TypedAttr>> columns; // per argument, per task
  SmallVector<std::pair<OpOperand *, unsigned>> reads; // use -> argument
  for (unsigned slot = 0; slot < first.size(); ++slot) {
    SmallVector<TypedAttr> column =
        llvm::map_to_vector(group.shapes, [&](const TaskShape &shape) {
          return valueOf(shape.constants[slot]);
        });
    if (llvm::all_equal(column))
      continue;
    auto same = llvm::find(columns, column);
    reads.push_back({first[slot], unsigned(same - columns.begin())});
    if (same == columns.end())
      columns.push_back(std::move(column));
  }

  // The canonical body reads the varying constants from new arguments.
  unsigned firstArgument = canonical.getNumArguments();
  for (ArrayRef<TypedAttr> column : columns)
    if (failed(canonical.insertArgument(canonical.getNumArguments(),
                                        column.front().getType(), {},
                                        canonical.getLoc())))
      llvm_unreachable("appending an argument to a func.func cannot fail");
  for (auto [use, argument] : reads) {
    Operation *constant = use->get().getDefiningOp();
    use->set(canonical.getArgument(firstArgument + argument));
    if (constant->use_empty())
      constant->erase();
  }

  for (auto [index, task] : llvm::enumerate(group.tasks)) {
    for (Operation *call : callsOf.lookup(task)) {
      OpBuilder b(call);
      SmallVector<Value> extra;
      for (ArrayRef<TypedAttr> column : columns)
        extra.push_back(
            arith::ConstantOp::create(b, call->getLoc(), column[index]));
      if (auto parallel = dyn_cast<afm_cpu::ParallelCallOp>(call)) {
        parallel.getCapturesMutable().append(extra);
        parallel.setTask(canonical.getSymName());
      } else {
        auto serial = cast<func::CallOp>(call);
        serial.getOperandsMutable().append(extra);
        serial.setCallee(canonical.getSymName());
      }
    }
    if (task != canonical)
      task.erase();
  }
  LLVM_DEBUG(llvm::dbgs() << "@" << canonical.getSymName() << " runs "
                          << group.tasks.size() << " tasks, taking "
                          << columns.size() << " constants as arguments\n");
}

namespace {
struct AFMMergeEquivalentTasksPass
    : afm::impl::AFMMergeEquivalentTasksPassBase<AFMMergeEquivalentTasksPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    // Tasks (and outlined serial loops) are private functions used only by
    // parallel calls (func.calls) in one parent.
    llvm::MapVector<func::FuncOp, SmallVector<Operation *>> calls;
    DenseMap<func::FuncOp, func::FuncOp> parentOf;
    DenseSet<func::FuncOp> excluded;
    module.walk([&](Operation *call) {
      StringRef callee;
      if (auto parallel = dyn_cast<afm_cpu::ParallelCallOp>(call))
        callee = parallel.getTask();
      else if (auto serial = dyn_cast<func::CallOp>(call))
        callee = serial.getCallee();
      else
        return;
      auto task = symbols.lookup<func::FuncOp>(callee);
      if (!task)
        return;
      auto parent = call->getParentOfType<func::FuncOp>();
      auto [it, inserted] = parentOf.try_emplace(task, parent);
      if (!parent || (!inserted && it->second != parent))
        excluded.insert(task);
      calls[task].push_back(call);
    });
    // Any other use of a task's symbol (a func.call, a reference in an
    // attribute) would dangle after the merge: leave such tasks alone.
    llvm::StringMap<size_t> useCount;
    if (auto uses = SymbolTable::getSymbolUses(&module.getBodyRegion()))
      for (const SymbolTable::SymbolUse &use : *uses)
        ++useCount[use.getSymbolRef().getRootReference()];
    for (auto &[task, taskCalls] : calls)
      if (!task.isPrivate() || task.isExternal() ||
          useCount.lookup(task.getSymName()) != taskCalls.size())
        excluded.insert(task);

    SmallVector<TaskGroup> groups;
    DenseMap<llvm::hash_code, SmallVector<unsigned>> byHash;
    for (func::FuncOp task : llvm::make_first_range(calls)) {
      if (excluded.contains(task))
        continue;
      FailureOr<TaskShape> shape = ShapeEncoder().encode(task);
      if (failed(shape))
        continue;
      func::FuncOp parent = parentOf.lookup(task);
      llvm::hash_code hash = llvm::hash_combine(
          parent.getOperation(), taskKind(task, parent),
          llvm::hash_combine_range(shape->code.begin(), shape->code.end()));
      SmallVector<unsigned> &candidates = byHash[hash];
      auto same = llvm::find_if(candidates, [&](unsigned group) {
        func::FuncOp other = groups[group].tasks.front();
        return parentOf.lookup(other) == parent &&
               taskKind(other, parent) == taskKind(task, parent) &&
               groups[group].shapes.front().code == shape->code;
      });
      if (same == candidates.end()) {
        candidates.push_back(groups.size());
        groups.emplace_back();
        same = std::prev(candidates.end());
      }
      groups[*same].tasks.push_back(task);
      groups[*same].shapes.push_back(std::move(*shape));
    }
    for (TaskGroup &group : groups)
      if (group.tasks.size() > 1)
        merge(group, calls);
  }
};
} // namespace
