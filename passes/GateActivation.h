//===- GateActivation.h - the FFN gate's nonlinearity ------------*- C++ -*-===//
//
// The gate activation of a SwiGLU / GeGLU FFN as arith and math ops, built
// where afm-lower-to-linalg lowers `afm.swiglu` (on scalars, in a generic's
// body) and where a pass splits the op into its linear layers (on whole
// tensors). One builder, so the two forms compute the same thing.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_PASSES_GATEACTIVATION_H
#define AFM_PASSES_GATEACTIVATION_H

#include "dialects/afm/IR/AFMOps.h"

namespace mlir::afm {

/// `activation(g)` for a float scalar or a tensor of floats `g`:
/// SiLU, g / (1 + exp(-g)); or GELU's tanh form (PyTorch's
/// approximate="tanh"), 0.5 g (1 + tanh(sqrt(2/pi) (g + 0.044715 g^3))).
Value buildGateActivation(OpBuilder &b, Location loc, Value g,
                          GateActivation activation);

} // namespace mlir::afm

#endif // AFM_PASSES_GATEACTIVATION_H
