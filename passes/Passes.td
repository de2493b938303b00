//===- Passes.td - afm passes --------------------------------*- tablegen -*-===//

#ifndef AFM_PASSES_TD
#define AFM_PASSES_TD

include "mlir/Pass/PassBase.td"

#endif // AFM_PASSES_TD
