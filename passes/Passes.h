//===- Passes.h - afm passes ------------------------------------*- C++ -*-===//

#ifndef AFM_PASSES_PASSES_H
#define AFM_PASSES_PASSES_H

#include "passes/CodegenOptions.h"
#include "passes/Conversion/CompressedKernels.h"

#include "afm/Target/TargetDescription.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "dialects/afm/IR/AFMDialect.h"
#include "dialects/afm_cpu/IR/AFMCPUDialect.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;

namespace afm {


#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

/// The textual form of the pipelines' options (afm-opt
/// --afm-codegen="target=... min-parallel-work=..."): the target's name,
/// resolved once when the pipeline is built, and the CodegenOptions.
struct CodegenPipelineOptions
    : public PassPipelineOptions<CodegenPipelineOptions> {
  Option<std::string> target{*this, "target",
                             llvm::cl::desc("Target name (see afm-compile "
                                            "--list-targets)"),
                             llvm::cl::init("host")};
  Option<std::string> targetOS{
      *this, "target-os",
      llvm::cl::desc("Retarget to another OS: linux or macos"),
      llvm::cl::init("")};
  Option<bool> prefillBypass{
      *this, "prefill-bypass",
      llvm::cl::desc("Run the row-wise layers after the last KV-writing "
                     "attention for the last prompt row only"),
      llvm::cl::init(CodegenOptions().prefillBypass)};
  Option<bool> arenaTemporaries{
      *this, "arena-temporaries",
      llvm::cl::desc("Place entry points' temporary buffers in the "
                     "session's arena (afm-plan-step-memory); false leaves "
                     "them heap allocations"),
      llvm::cl::init(CodegenOptions().arenaTemporaries)};
  Option<bool> fuseMinShift{
      *this, "fuse-min-shift",
      llvm::cl::desc("Fold ASTC block offsets into the matmuls' accumulator "
                     "init; false materializes the reconstructed weights "
                     "(the unfused math, for testing)"),
      llvm::cl::init(CodegenOptions().fuseMinShift)};
  Option<bool> hostArgument{
      *this, "host-argument",
      llvm::cl::desc("afm-graph-codegen: public functions take a leading "
                     "afm_host_api pointer and run big tile loops on its "
                     "threads (afm-add-host-argument)"),
      llvm::cl::init(CodegenOptions().hostArgument)};
  Option<bool> int8Activations{
      *this, "int8-activations",
      llvm::cl::desc("Quantize the inputs of 2-bit and ASTC linear layers "
                     "and of a 4-bit LM head to int8 per row and multiply "
                     "with integer dot products"),
      llvm::cl::init(CodegenOptions().int8Activations)};
  Option<int64_t> minParallelWork{
      *this, "min-parallel-work",
      llvm::cl::desc("Run tile loops of ops with at least this many loop "
                     "iterations on the runtime's threads (0: never)"),
      llvm::cl::init(kDefaultMinParallelWork)};

  /// The options beside the target.
  CodegenOptions getCodegenOptions() const {
    CodegenOptions options;
    options.minParallelWork = minParallelWork;
    options.hostArgument = hostArgument;
    options.prefillBypass = prefillBypass;
    options.fuseMinShift = fuseMinShift;
    options.arenaTemporaries = arenaTemporaries;
    options.int8Activations = int8Activations;
    return options;
  }
};



/// afm entry functions -> LLVM dialect ready for translation to LLVM IR:
/// bind the ABI, lower afm ops, bufferize, tile and vectorize for the
/// target, and convert to the LLVM dialect.
void buildAFMCodegenPipeline(OpPassManager &pm,
                             const TargetDescription &target,
                             const CodegenOptions &options);

/// A graph of tensors (func.func over TOSA, e.g. an imported ONNX model)
/// -> LLVM dialect: TOSA to linalg, then the tensor-to-LLVM tail. Functions
/// take bare pointers to their inputs, then to their (caller-allocated)
/// results, and return nothing; with `hostArgument`, public functions take
/// a `const afm_host_api *` before all of them. Attention over KV caches
/// passed as memref arguments is lowered too.
void buildAFMGraphCodegenPipeline(OpPassManager &pm,
                                  const TargetDescription &target,
                                  const CodegenOptions &options);

/// The tail both pipelines share: linalg on tensors -> bufferize, tile and
/// vectorize for the target, LLVM dialect with bare-pointer signatures.
/// `bufferizeSignatures` bufferizes function arguments and results too
/// (graphs); afm entry points have memref signatures already.
void buildAFMTensorToLLVMPipeline(OpPassManager &pm,
                                  const TargetDescription &target,
                                  const CodegenOptions &options,
                                  bool bufferizeSignatures);

/// Registers the afm pass pipelines (`afm-codegen`, `afm-graph-codegen`).
void registerAFMPipelines();

/// Patterns lowering afm ops on plain weights to linalg on tensors.
void populateAFMToLinalgPatterns(RewritePatternSet &patterns,
                                 const LinearLowering &how = {});

} // namespace afm
} // namespace mlir

#endif // AFM_PASSES_PASSES_H
