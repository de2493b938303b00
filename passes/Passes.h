//===- Passes.h - afm passes ------------------------------------*- C++ -*-===//

#ifndef AFM_PASSES_PASSES_H
#define AFM_PASSES_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;

namespace afm {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

/// Patterns lowering afm ops on plain weights to linalg on tensors.
void populateAFMToLinalgPatterns(RewritePatternSet &patterns);

} // namespace afm
} // namespace mlir

#endif // AFM_PASSES_PASSES_H
