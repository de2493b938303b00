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

afm::BackgroundLibraryBuild
afm::BackgroundLibraryBuild::start(ModuleOp module,
                                   const TargetDescription &target) {
  using Result = llvm::Expected<std::string>;
  auto failed = [](llvm::Error error) {
    std::promise<Result> promise;
    promise.set_value(Result(std::move(error)));
    return afm::BackgroundLibraryBuild(promise.get_future());
  };
  auto machine = createTargetMachine(target);
  if (!machine)
    return failed(machine.takeError());
  // The context goes to the build's thread with the module: nothing else
  // uses it.
  auto context = std::make_unique<llvm::LLVMContext>();
  auto llvmModule = translateForTarget(module, *context, **machine);
  if (!llvmModule)
    return failed(llvmModule.takeError());
  return afm::BackgroundLibraryBuild(std::async(
      std::launch::async,
      [target, machine = std::move(*machine), context = std::move(context),
       llvmModule = std::move(*llvmModule)]() mutable -> Result {
        optimizeForTarget(*llvmModule, *machine);
        auto object = emitObject(*llvmModule, *machine);
        // The IR's memory goes back before linking.
        llvmModule.reset();
        context.reset();
        if (!object)
          return object.takeError();
        return linkSharedLibrary(*object, target);
      }));
}

llvm::Expected<std::string> afm::BackgroundLibraryBuild::take() {
  return result.get();
}

afm::BackgroundLibraryBuild::~BackgroundLibraryBuild() {
  if (result.valid())
    llvm::consumeError(result.get().takeError());
}
