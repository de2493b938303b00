//===- CodegenOptions.h - what the driver chooses for code generation ------===//
//
// The one options struct from the drivers (afm-compile, afm-translate,
// afm-bench) to the afm-codegen and afm-graph-codegen pipelines: every
// choice of the code generator that is not a property of the target. The
// target itself travels as a TargetDescription and is stamped on the module
// (`afm.target`) by the pipeline's first pass. Defaults live here only.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_PASSES_CODEGENOPTIONS_H
#define AFM_PASSES_CODEGENOPTIONS_H

#include <cstdint>

namespace mlir::afm {

/// Ops with at least this many loop iterations (multiply-adds for a
/// matmul) run their tile loops on the runtime's threads, by default.
inline constexpr int64_t kDefaultMinParallelWork = 262144;

struct CodegenOptions {
  /// Ops with at least this many loop iterations run their tile loops on
  /// the runtime's threads; 0 keeps everything on the calling thread.
  int64_t minParallelWork = kDefaultMinParallelWork;
  /// Graphs only (afm-graph-codegen): public functions take a leading
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
  /// Compressed linear layers quantize their inputs to int8 per row and
  /// multiply with the target's integer dot products (afm-lower-to-linalg
  /// int8-activations).
  bool int8Activations = false;
};

} // namespace mlir::afm

#endif // AFM_PASSES_CODEGENOPTIONS_H
