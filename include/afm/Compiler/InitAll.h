//===- InitAll.h - register what afm tools understand -----------*- C++ -*-===//
//
// The dialects, passes and translations the afm tools expose. Tools call
// these instead of upstream's registerAll* so that they link only what the
// afm pipeline uses.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_INITALL_H
#define AFM_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::afm {

/// The afm dialect and the upstream dialects the pipeline produces.
void registerDialects(DialectRegistry &registry);

/// All afm passes and pipelines, plus the upstream passes they build on.
void registerPasses();

} // namespace mlir::afm

#endif // AFM_INITALL_H
