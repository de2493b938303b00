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

#include "mlir/IR/BuiltinOps.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"

namespace mlir::afm {

/// Choices of the code generator that are not properties of the target.
struct CodegenSettings {
  /// Ops with at least this many loop iterations run their tile loops on
  /// the runtime's threads; 0 keeps everything on the calling thread.
  int64_t minParallelWork = 262144;
  /// Graphs only (lowerGraphToLLVMDialect): public functions take a leading
  /// `const afm_host_api *` (include/afm/kernel_abi.h) whose parallel_for
  /// runs their big tile loops. Without it a graph has no threads to use.
  /// Entry points always take theirs last, as afm_entry_fn says.
  bool hostArgument = false;
  /// Prefill computes the trailing row-wise layers (Block 2 of the
  /// on-device model) for the last prompt row only.
  bool prefillBypass = true;
  /// ASTC offsets are folded into the matmuls (afm-fuse-min-shift); false
  /// materializes the reconstructed weights instead (for testing).
  bool fuseMinShift = true;
  /// Entry points' temporaries live in the session's arena
  /// (afm-plan-step-memory) instead of the heap.
  bool arenaTemporaries = true;
  /// 2-bit linear layers quantize their inputs to int8 per row and
  /// multiply with the target's integer dot products (afm-lower-to-linalg
  /// int8-activations).
  bool int8Activations = false;
};

/// Runs the afm-codegen pipeline on `module` in place. Afterwards it is in
/// the LLVM dialect and carries the weight and KV layouts as attributes
/// (see afm-bind-entry-abi). Diagnostics go to the context's handler.
LogicalResult lowerToLLVMDialect(ModuleOp module,
                                 const TargetDescription &target,
                                 const CodegenSettings &settings = {});

/// Runs the afm-graph-codegen pipeline on `module` in place: a graph of
/// func.func over TOSA (e.g. an imported ONNX model) becomes LLVM dialect
/// functions taking bare pointers to their inputs, then to caller-allocated
/// results (with settings.hostArgument, the host API pointer before them).
/// Diagnostics go to the context's handler.
LogicalResult lowerGraphToLLVMDialect(ModuleOp module,
                                      const TargetDescription &target,
                                      const CodegenSettings &settings = {});

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

} // namespace mlir::afm

#endif // AFM_COMPILER_COMPILE_H
