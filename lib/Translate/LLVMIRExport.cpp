//===- LLVMIRExport.cpp - afm IR -> optimized LLVM IR ---------------------===//
//
// `afm-translate --afm-to-llvmir` shows what the compiler hands to LLVM's
// code generator for a target: the afm-codegen pipeline, translation to
// LLVM IR and the O3 pipeline for the target CPU.
//
//===----------------------------------------------------------------------===//

#include "afm/Translate/Translations.h"

#include "afm/CodeGen/ObjectEmitter.h"
#include "afm/Package/Package.h"
#include "afm/Compiler/Compile.h"
#include "afm/Compiler/InitAll.h"

#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"

using namespace mlir;

static llvm::cl::OptionCategory exportCategory("afm export options");
static llvm::cl::opt<std::string>
    targetName("afm-target",
               llvm::cl::desc("Target of --afm-to-llvmir (default: host)"),
               llvm::cl::init("host"), llvm::cl::cat(exportCategory));
static llvm::cl::opt<std::string>
    targetOS("afm-target-os",
             llvm::cl::desc("Retarget --afm-target to linux or macos"),
             llvm::cl::init(""), llvm::cl::cat(exportCategory));

llvm::Expected<afm::TargetDescription> afm::getTranslationTarget() {
  return lookupTarget(targetName, targetOS);
}

/// The module and target of an export translation, or failure (reported).
static FailureOr<std::pair<ModuleOp, afm::TargetDescription>>
getExportInputs(Operation *op) {
  auto module = dyn_cast<ModuleOp>(op);
  if (!module)
    return op->emitError("expected a builtin.module");
  auto target = afm::getTranslationTarget();
  if (!target)
    return module.emitError(llvm::toString(target.takeError()));
  return std::make_pair(module, *target);
}

static llvm::cl::opt<std::string> packageWeights(
    "afm-package-weights",
    llvm::cl::desc("Weights for --afm-to-afmb (default: the module's "
                   "afm.weights_file)"),
    llvm::cl::init(""), llvm::cl::cat(exportCategory));

void afm::registerAFMBExportTranslation() {
  registerExportFromAFMIR(
      "afm-to-afmb",
      "compile afm entry points for --afm-target and package them with "
      "their weights into an .afmb binary",
      [](Operation *op, llvm::raw_ostream &os) -> LogicalResult {
        auto inputs = getExportInputs(op);
        if (failed(inputs))
          return failure();
        auto [module, target] = *inputs;
        // Before the compile, so a bad weights file fails fast.
        auto weights = openPackageWeights(module, packageWeights);
        if (!weights)
          return module.emitError(llvm::toString(weights.takeError()));
        if (failed(lowerToLLVMDialect(module, target)))
          return failure();
        auto library = toSharedLibrary(module, target);
        if (!library)
          return module.emitError(llvm::toString(library.takeError()));
        if (llvm::Error error =
                writePackage(os, module, *library, target,
                             *weights ? &**weights : nullptr))
          return module.emitError(llvm::toString(std::move(error)));
        return success();
      },
      [](DialectRegistry &registry) {
        registerDialects(registry);
        registerLLVMIRTranslations(registry);
      });
}

void afm::registerLLVMIRExportTranslation() {
  registerExportFromAFMIR(
      "afm-to-llvmir",
      "compile afm entry points to optimized LLVM IR for --afm-target",
      [](Operation *op, llvm::raw_ostream &os) -> LogicalResult {
        auto inputs = getExportInputs(op);
        if (failed(inputs))
          return failure();
        auto [module, target] = *inputs;
        if (failed(lowerToLLVMDialect(module, target)))
          return failure();
        llvm::LLVMContext context;
        auto llvmModule = toLLVMIR(module, context, target);
        if (!llvmModule)
          return module.emitError(llvm::toString(llvmModule.takeError()));
        (*llvmModule)->print(os, nullptr);
        return success();
      },
      [](DialectRegistry &registry) {
        registerDialects(registry);
        registerLLVMIRTranslations(registry);
      });
}
