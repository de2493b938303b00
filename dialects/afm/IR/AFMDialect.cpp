//===- AFMDialect.cpp - afm dialect registration --------------------------===//

#include "dialects/afm/IR/AFMDialect.h"
#include "dialects/afm/IR/AFMOps.h"

using namespace mlir;
using namespace mlir::afm;

#include "dialects/afm/IR/AFMDialect.cpp.inc"

void AFMDialect::initialize() {
  registerAttributes();
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "dialects/afm/IR/AFMOps.cpp.inc"
      >();
}
