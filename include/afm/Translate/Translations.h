//===- Translations.h - afm-translate registrations -------------*- C++ -*-===//

#ifndef AFM_TRANSLATE_TRANSLATIONS_H
#define AFM_TRANSLATE_TRANSLATIONS_H

#include "mlir/IR/BuiltinOps.h"
#include "afm/Target/TargetDescription.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::afm {

/// The target named by afm-translate's --afm-target / --afm-target-os.
llvm::Expected<TargetDescription> getTranslationTarget();

/// Writes one line per `afm.weight` in `module`: name, format, shape, bits
/// per weight, bytes and where the data lives, then the totals.
mlir::LogicalResult writeWeightTable(mlir::ModuleOp module,
                                     llvm::raw_ostream &os);

/// Registers an export from afm IR as TranslateFromMLIRRegistration does
/// (parse with an implicit module, verify, call `function`), except that
/// the input's nesting is checked first (NestingDepth.h): IR nested deeper
/// than the parser's stack allows is an error, not a crash.
void registerExportFromAFMIR(llvm::StringRef name, llvm::StringRef description,
                             const TranslateFromMLIRFunction &function,
                             const DialectRegistrationFunction &dialects);

/// All afm-translate translations (imports and exports).
void registerTranslations();

/// Registers `--afm-to-weight-table`.
void registerWeightTableTranslation();

/// Registers `--import-afm-config`.
void registerConfigImportTranslation();

/// Registers `--import-onnx`.
void registerONNXImportTranslation();

/// Registers `--afm-to-llvmir`.
void registerLLVMIRExportTranslation();

/// Registers `--afm-to-afmb`.
void registerAFMBExportTranslation();

} // namespace mlir::afm

#endif // AFM_TRANSLATE_TRANSLATIONS_H
