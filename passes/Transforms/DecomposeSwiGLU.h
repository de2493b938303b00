//===- DecomposeSwiGLU.h - a fused FFN as its three linear layers -*- C++ -*-===//
//
// `afm.swiglu` multiplies its three weights inside one op. Passes that
// rewrite linear layers one by one (an adapter per layer, the ASTC offsets
// folded into a layer's accumulator) first split it into `afm.linear` ops
// and the gate's element-wise math on tensors, which afm-lower-to-linalg
// lowers as it lowers afm.swiglu's own (in f32).
//
//===----------------------------------------------------------------------===//

#ifndef AFM_PASSES_TRANSFORMS_DECOMPOSESWIGLU_H
#define AFM_PASSES_TRANSFORMS_DECOMPOSESWIGLU_H

#include "dialects/afm/IR/AFMOps.h"

namespace mlir::afm {

/// Replaces `op` by `down(act(gate(x)) * up(x))`: three `afm.linear` at
/// its location (carrying its `afm.int8_activations`, if any) and the
/// activation (SiLU, or GELU's tanh form) as arith and math ops on f32
/// tensors.
void decomposeSwiGLU(SwiGLUOp op);

} // namespace mlir::afm

#endif // AFM_PASSES_TRANSFORMS_DECOMPOSESWIGLU_H
