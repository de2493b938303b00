//===- AFMCPUDialect.h - afm_cpu dialect and ops ----------------*- C++ -*-===//
//
// CPU-level ops of the afm code generator (AFMCPUOps.td).
//
//===----------------------------------------------------------------------===//

#ifndef AFM_DIALECT_AFMCPU_IR_AFMCPUDIALECT_H
#define AFM_DIALECT_AFMCPU_IR_AFMCPUDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/afm_cpu/IR/AFMCPUDialect.h.inc"

#define GET_OP_CLASSES
#include "dialects/afm_cpu/IR/AFMCPUOps.h.inc"

#endif // AFM_DIALECT_AFMCPU_IR_AFMCPUDIALECT_H
