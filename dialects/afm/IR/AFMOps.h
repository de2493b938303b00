//===- AFMOps.h - afm operations --------------------------------*- C++ -*-===//

#ifndef AFM_DIALECT_AFM_IR_AFMOPS_H
#define AFM_DIALECT_AFM_IR_AFMOPS_H

#include "dialects/afm/IR/AFMDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "dialects/afm/IR/AFMOps.h.inc"

#endif // AFM_DIALECT_AFM_IR_AFMOPS_H
