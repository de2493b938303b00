//===- Compile.cpp - afm IR -> code for a target --------------------------===//

#include "afm/Compiler/Compile.h"

#include "afm/CodeGen/ObjectEmitter.h"
#include "passes/Passes.h"

#include "mlir/Pass/PassManager.h"

using namespace mlir;

/// Runs the pipeline `build` adds, with the options `settings` choose.
static LogicalResult runPipeline(
    ModuleOp module, const afm::TargetDescription &target,
    const afm::CodegenSettings &settings,
    void (*build)(OpPassManager &, const afm::CodegenPipelineOptions &)) {
  PassManager pm(module.getContext());
  afm::CodegenPipelineOptions options;
  options.target = target.name;
  options.minParallelWork = settings.minParallelWork;
  options.hostArgument = settings.hostArgument;
  options.prefillBypass = settings.prefillBypass;
  options.fuseMinShift = settings.fuseMinShift;
  options.arenaTemporaries = settings.arenaTemporaries;
  options.int8Activations = settings.int8Activations;
  build(pm, options);
  return pm.run(module);
}

LogicalResult afm::lowerToLLVMDialect(ModuleOp module,
                                      const TargetDescription &target,
                                      const CodegenSettings &settings) {
  return runPipeline(module, target, settings, buildAFMCodegenPipeline);
}

LogicalResult afm::lowerGraphToLLVMDialect(ModuleOp module,
                                           const TargetDescription &target,
                                           const CodegenSettings &settings) {
  return runPipeline(module, target, settings, buildAFMGraphCodegenPipeline);
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
