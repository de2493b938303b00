//===- Compile.h - afm IR -> code for a target ------------------*- C++ -*-===//
//
// The stages afm-compile and afm-translate share: run the afm-codegen
// pipeline over a module of entry points, then produce LLVM IR, an object
// file, or the shared library that goes into an .afmb.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_COMPILER_COMPILE_H
#define AFM_COMPILER_COMPILE_H

#include "afm/Target/TargetDescription.h"
#include "passes/CodegenOptions.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"

#include <future>

namespace mlir::afm {

/// Runs the afm-codegen pipeline on `module` in place. Afterwards it is in
/// the LLVM dialect and carries the weight and KV layouts as attributes
/// (see afm-bind-entry-abi) and `target` as `afm.target`. Diagnostics go to the context's handler.
LogicalResult lowerToLLVMDialect(ModuleOp module,
                                 const TargetDescription &target,
                                 const CodegenOptions &options = {});

/// Runs the afm-graph-codegen pipeline on `module` in place: a graph of
/// func.func over TOSA (e.g. an imported ONNX model) becomes LLVM dialect
/// functions taking bare pointers to their inputs, then to caller-allocated
/// results (with options.hostArgument, the host API pointer before them).
/// Diagnostics go to the context's handler.
LogicalResult lowerGraphToLLVMDialect(ModuleOp module,
                                      const TargetDescription &target,
                                      const CodegenOptions &options = {});

/// Optimized LLVM IR of a module already in the LLVM dialect.
llvm::Expected<std::unique_ptr<llvm::Module>>
toLLVMIR(ModuleOp module, llvm::LLVMContext &context,
         const TargetDescription &target);

/// Object file of a module already in the LLVM dialect.
llvm::Expected<std::string> toObject(ModuleOp module,
                                     const TargetDescription &target);

/// Shared library of a module already in the LLVM dialect.
llvm::Expected<std::string> toSharedLibrary(ModuleOp module,
                                            const TargetDescription &target);

/// The shared library of a module already in the LLVM dialect, built on a
/// thread of its own: `module` is translated to LLVM IR before this
/// returns (it may then change or go), while optimization, code generation
/// and linking run on, so that the caller can encode the weights
/// meanwhile. `take()` waits for the library; a build never taken is
/// waited for, and its result dropped, on destruction.
class BackgroundLibraryBuild {
public:
  static BackgroundLibraryBuild start(ModuleOp module,
                                      const TargetDescription &target);
  BackgroundLibraryBuild(BackgroundLibraryBuild &&) = default;
  ~BackgroundLibraryBuild();

  llvm::Expected<std::string> take();

private:
  explicit BackgroundLibraryBuild(
      std::future<llvm::Expected<std::string>> result)
      : result(std::move(result)) {}
  std::future<llvm::Expected<std::string>> result;
};

} // namespace mlir::afm

#endif // AFM_COMPILER_COMPILE_H
