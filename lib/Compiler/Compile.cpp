//===- Compile.cpp - afm IR -> code for a target --------------------------===//

#include "afm/Compiler/Compile.h"

#include "afm/CodeGen/ObjectEmitter.h"
#include "passes/Passes.h"

#include "mlir/Pass/PassManager.h"

using namespace mlir;

/// Runs the pipeline `build` adds for `target` with `options` on `module`.
static LogicalResult
runPipeline(ModuleOp module, const afm::TargetDescription &target,
            const afm::CodegenOptions &options,
            void (*build)(OpPassManager &, const afm::TargetDescription &,
                          const afm::CodegenOptions &)) {
  PassManager pm(module.getContext());
  build(pm, target, options);
  return pm.run(module);
}

LogicalResult afm::lowerToLLVMDialect(ModuleOp module,
                                      const TargetDescription &target,
                                      const CodegenOptions &options) {
  return runPipeline(module, target, options, buildAFMCodegenPipeline);
}

LogicalResult afm::lowerGraphToLLVMDialect(ModuleOp module,
                                           const TargetDescription &target,
                                           const CodegenOptions &options) {
  return runPipeline(module, target, options, buildAFMGraphCodegenPipeline);
}

llvm::Expected<std::unique_ptr<llvm::Module>>
afm::toLLVMIR(ModuleOp module, llvm::LLVMContext &context,
              const TargetDescription &target) {
  auto machine = createTargetMachine(target);
  if (!machine)
    return machine.takeError();
  return translateAndOptimize(module, context, **machine);
}

llvm::Expected<std::string> afm::toObject(ModuleOp module,
                                          const TargetDescription &target) {
  auto machine = createTargetMachine(target);
  if (!machine)
    return machine.takeError();
  llvm::LLVMContext context;
  auto llvmModule = translateAndOptimize(module, context, **machine);
  if (!llvmModule)
    return llvmModule.takeError();
  return emitObject(**llvmModule, **machine);
}

llvm::Expected<std::string>
afm::toSharedLibrary(ModuleOp module, const TargetDescription &target) {
  auto object = toObject(module, target);
  if (!object)
    return object.takeError();
  return linkSharedLibrary(*object, target);
}
