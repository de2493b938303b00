//===- Translations.h - afm-translate registrations -------------*- C++ -*-===//

#ifndef AFM_TRANSLATE_TRANSLATIONS_H
#define AFM_TRANSLATE_TRANSLATIONS_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::afm {

/// Writes one line per `afm.weight` in `module`: name, format, shape, bits
/// per weight, bytes and where the data lives, then the totals.
mlir::LogicalResult writeWeightTable(mlir::ModuleOp module,
                                     llvm::raw_ostream &os);

/// Registers `--afm-to-weight-table`.
void registerWeightTableTranslation();

} // namespace mlir::afm

#endif // AFM_TRANSLATE_TRANSLATIONS_H
