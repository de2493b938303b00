//===- Passes.h - afm passes ------------------------------------*- C++ -*-===//

#ifndef AFM_PASSES_PASSES_H
#define AFM_PASSES_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::afm {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace mlir::afm

#endif // AFM_PASSES_PASSES_H
