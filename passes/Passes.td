//===- Passes.td - afm passes --------------------------------*- tablegen -*-===//
//
// One pass per file under passes/ (transformations) and passes/conversion/
// (lowerings out of the afm dialect).
//
//===----------------------------------------------------------------------===//

#ifndef AFM_PASSES_TD
#define AFM_PASSES_TD

include "mlir/Pass/PassBase.td"

def AFMLowerToLinalgPass : Pass<"afm-lower-to-linalg", "mlir::ModuleOp"> {
  let summary = "Lower afm layers on plain weights to linalg on tensors";
  let description = [{
    Rewrites the token-wise afm ops whose weights are plain tensors into
    `linalg` (named contractions and `linalg.generic`), `tensor`, `arith` and
    `math` ops with the semantics of DESIGN.md section 1: `afm.embedding`,
    `afm.rms_norm` (reduced in f32), `afm.rope`, `afm.linear`, `afm.lora`,
    `afm.swiglu`, `afm.lm_head`, and `afm.track_block` (tracks run one after
    another, then averaged; `a later track lowering makes them parallel).

    Ops this pass does not handle (attention with its KV cache, mixture of
    experts, compressed weights) are left in place for the passes that own
    them; the AOT pipeline reports any afm op that survives lowering.
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect",
    "mlir::linalg::LinalgDialect",
    "mlir::math::MathDialect",
    "mlir::tensor::TensorDialect",
  ];
}

#endif // AFM_PASSES_TD
