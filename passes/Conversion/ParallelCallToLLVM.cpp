//===- ParallelCallToLLVM.cpp - afm_cpu host calls -> afm_host_api ---------===//
//
// afm_cpu.parallel_call becomes host->parallel_for, afm_cpu.track_allreduce
// host->track_allreduce.
// Runs after conversion to the LLVM dialect, when the task is an llvm.func
// taking bare pointers. The call's memref and index operands still come
// through the unrealized casts the conversion left for this (unconverted)
// op; we read the converted values from behind them.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialects/afm/IR/AFMOps.h"
#include "dialects/afm_cpu/IR/AFMCPUDialect.h"
#include "passes/Conversion/HostAPI.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/Debug.h"

namespace mlir::afm {
#define GEN_PASS_DEF_AFMLOWERPARALLELCALLSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::afm

#define DEBUG_TYPE "afm-lower-parallel-calls"

using namespace mlir;
using namespace mlir::afm;

/// The LLVM value behind an operand of the unconverted op: a memref's
/// aligned pointer (the tasks take bare pointers), an index's i64.
static FailureOr<Value> toLLVMValue(OpBuilder &b, Location loc, Value value) {
  if (LLVM::isCompatibleType(value.getType()))
    return value;
  auto cast = value.getDefiningOp<UnrealizedConversionCastOp>();
  if (!cast || cast.getNumOperands() != 1)
    return failure();
  Value source = cast.getOperand(0);
  if (isa<MemRefType>(value.getType())) {
    if (!isa<LLVM::LLVMStructType>(source.getType()))
      return failure();
    return LLVM::ExtractValueOp::create(b, loc, source, ArrayRef<int64_t>{1})
        .getResult();
  }
  if (!LLVM::isCompatibleType(source.getType()))
    return failure();
  return source;
}

/// `void trampoline(ptr ctx, i64 i)`: unpacks the context, calls the task.
static LLVM::LLVMFuncOp buildTrampoline(ModuleOp module, LLVM::LLVMFuncOp task,
                                        LLVM::LLVMStructType context) {
  MLIRContext *ctx = module.getContext();
  OpBuilder b(ctx);
  b.setInsertionPoint(task);
  Location loc = task.getLoc();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto i64 = IntegerType::get(ctx, 64);
  auto type = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                          {ptr, i64});
  auto trampoline = LLVM::LLVMFuncOp::create(
      b, loc, (task.getSymName() + "_trampoline").str(), type,
      LLVM::Linkage::Internal);
  Block *body = trampoline.addEntryBlock(b);
  b.setInsertionPointToStart(body);
  SmallVector<Value> args = {body->getArgument(1)};
  for (auto [i, field] : llvm::enumerate(context.getBody())) {
    Value address = LLVM::GEPOp::create(
        b, loc, ptr, context, body->getArgument(0),
        ArrayRef<LLVM::GEPArg>{0, int32_t(i)});
    args.push_back(LLVM::LoadOp::create(b, loc, field, address));
  }
  LLVM::CallOp::create(b, loc, task, args);
  LLVM::ReturnOp::create(b, loc, ValueRange{});
  return trampoline;
}

static LogicalResult lower(afm_cpu::ParallelCallOp call, SymbolTable &symbols,
                           llvm::StringMap<LLVM::LLVMFuncOp> &trampolines) {
  MLIRContext *ctx = call.getContext();
  Location loc = call.getLoc();
  auto task = symbols.lookup<LLVM::LLVMFuncOp>(call.getTask());
  if (!task)
    return call.emitOpError("task '")
           << call.getTask()
           << "' is not an llvm.func: run after conversion to LLVM";
  auto parent = call->getParentOfType<LLVM::LLVMFuncOp>();
  if (!parent)
    return call.emitOpError("must be inside an llvm.func");
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto i64 = IntegerType::get(ctx, 64);
  ArrayRef<Type> params = task.getFunctionType().getParams();
  auto context = LLVM::LLVMStructType::getLiteral(ctx, params.drop_front());

  OpBuilder b(call);
  SmallVector<Value> captures;
  for (Value operand : call.getCaptures()) {
    FailureOr<Value> value = toLLVMValue(b, loc, operand);
    if (failed(value))
      return call.emitOpError("cannot find the LLVM value of capture of type ")
             << operand.getType();
    captures.push_back(*value);
  }
  FailureOr<Value> count = toLLVMValue(b, loc, call.getCount());
  if (failed(count))
    return call.emitOpError("cannot find the LLVM value of the count");

  LLVM::LLVMFuncOp &trampoline = trampolines[task.getSymName()];
  LLVM_DEBUG(llvm::dbgs() << "@" << parent.getSymName() << " runs @"
                          << task.getSymName() << " on the host's threads with "
                          << captures.size() << " captures"
                          << (trampoline ? " (trampoline already built)" : "")
                          << "\n");
  if (!trampoline) {
    // Only the trampoline's address leaves the library, never a symbol.
    task.setLinkage(LLVM::Linkage::Internal);
    task->removeAttr(SymbolTable::getVisibilityAttrName());
    trampoline = buildTrampoline(call->getParentOfType<ModuleOp>(), task,
                                 context);
  }

  // The context lives in the caller's frame: allocate it once, up front.
  Value frame;
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&parent.getBody().front());
    Value one = LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(1));
    frame = LLVM::AllocaOp::create(b, loc, ptr, context, one, 8);
  }
  for (auto [i, value] : llvm::enumerate(captures)) {
    Value address = LLVM::GEPOp::create(b, loc, ptr, context, frame,
                                        ArrayRef<LLVM::GEPArg>{0, int32_t(i)});
    LLVM::StoreOp::create(b, loc, value, address);
  }
  Value host = call.getHost();
  Value parallelFor =
      loadHostField(b, loc, host, HostField::ParallelFor, ptr);
  Value pool = loadHostField(b, loc, host, HostField::Pool, ptr);
  Value function = LLVM::AddressOfOp::create(b, loc, ptr,
                                             trampoline.getSymName());
  auto calleeType = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                                {ptr, i64, ptr, ptr});
  LLVM::CallOp::create(b, loc, calleeType,
                       ValueRange{parallelFor, pool, *count, function, frame});
  call.erase();
  return success();
}

/// `host->track_allreduce(host->track_ctx, data, count)` over the
/// buffer's elements.
static LogicalResult lower(afm_cpu::TrackAllReduceOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  MLIRContext *ctx = b.getContext();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto i64 = b.getI64Type();
  FailureOr<Value> data = toLLVMValue(b, loc, op.getBuffer());
  if (failed(data))
    return op.emitOpError("buffer was not converted to the LLVM dialect");
  auto type = cast<MemRefType>(op.getBuffer().getType());
  Value count = LLVM::ConstantOp::create(
      b, loc, i64, b.getI64IntegerAttr(type.getNumElements()));
  Value host = op.getHost();
  Value reduce = loadHostField(b, loc, host, HostField::TrackAllReduce, ptr);
  Value context = loadHostField(b, loc, host, HostField::TrackContext, ptr);
  auto calleeType = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                                {ptr, ptr, i64});
  LLVM::CallOp::create(b, loc, calleeType,
                       ValueRange{reduce, context, *data, count});
  op.erase();
  return success();
}

namespace {
struct AFMLowerParallelCallsPass
    : afm::impl::AFMLowerParallelCallsPassBase<AFMLowerParallelCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    llvm::StringMap<LLVM::LLVMFuncOp> trampolines;
    SmallVector<afm_cpu::ParallelCallOp> calls;
    module.walk([&](afm_cpu::ParallelCallOp call) { calls.push_back(call); });
    for (afm_cpu::ParallelCallOp call : calls)
      if (failed(lower(call, symbols, trampolines)))
        return signalPassFailure();
    SmallVector<afm_cpu::TrackAllReduceOp> reductions;
    module.walk(
        [&](afm_cpu::TrackAllReduceOp op) { reductions.push_back(op); });
    for (afm_cpu::TrackAllReduceOp op : reductions)
      if (failed(lower(op)))
        return signalPassFailure();
  }
};
} // namespace
