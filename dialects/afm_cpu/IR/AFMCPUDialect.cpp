//===- AFMCPUDialect.cpp - afm_cpu dialect and op verifiers ---------------===//

#include "dialects/afm_cpu/IR/AFMCPUDialect.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::afm_cpu;

#include "dialects/afm_cpu/IR/AFMCPUDialect.cpp.inc"

void AFMCPUDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/afm_cpu/IR/AFMCPUOps.cpp.inc"
      >();
}

#define GET_OP_CLASSES
#include "dialects/afm_cpu/IR/AFMCPUOps.cpp.inc"

//===----------------------------------------------------------------------===//
// ParallelCallOp
//===----------------------------------------------------------------------===//

LogicalResult
ParallelCallOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto task = symbolTable.lookupNearestSymbolFrom<FunctionOpInterface>(
      *this, getTaskAttr());
  if (!task)
    return emitOpError("task '") << getTask() << "' is not a function";
  ArrayRef<Type> inputs = task.getArgumentTypes();
  if (inputs.size() != getCaptures().size() + 1)
    return emitOpError("task '")
           << getTask() << "' must take (index, captures...), got "
           << task.getFunctionType();
  // Between the conversion of the task to the LLVM dialect and the lowering
  // of this op, the task takes (i64, converted captures...): nothing more to
  // compare.
  if (!inputs[0].isIndex())
    return success();
  for (auto [i, pair] :
       llvm::enumerate(llvm::zip(inputs.drop_front(), getCaptures())))
    if (std::get<0>(pair) != std::get<1>(pair).getType())
      return emitOpError("capture ")
             << i << " has type " << std::get<1>(pair).getType()
             << " but the task takes " << std::get<0>(pair);
  if (!isa<LLVM::LLVMPointerType>(getHost().getType()))
    return emitOpError("host must be an !llvm.ptr to the runtime's "
                       "afm_host_api, got ")
           << getHost().getType();
  return success();
}

//===----------------------------------------------------------------------===//
// TrackAllReduceOp
//===----------------------------------------------------------------------===//

LogicalResult TrackAllReduceOp::verify() {
  auto buffer = cast<MemRefType>(getBuffer().getType());
  if (!buffer.hasStaticShape() || !buffer.getLayout().isIdentity())
    return emitOpError("buffer must be a static, contiguous memref (the host "
                       "reduces it as one array), got ")
           << buffer;
  if (!isa<LLVM::LLVMPointerType>(getHost().getType()))
    return emitOpError("host must be an !llvm.ptr to the runtime's "
                       "afm_host_api, got ")
           << getHost().getType();
  return success();
}
