//===- HostLibrary.h - run a compiled graph in this process -----*- C++ -*-===//
//
// A graph compiled for the host (toSharedLibrary after
// lowerGraphToLLVMDialect) is a shared library whose `main` takes one
// bare pointer per input, then one per caller-allocated output; compiled
// for GraphThreads::Host, a `const afm_host_api *` comes before them. These
// helpers load it and call it, for the tools that run ONNX models and for
// afm-bench.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_COMPILER_HOSTLIBRARY_H
#define AFM_COMPILER_HOSTLIBRARY_H

#include "afm/Compiler/Compile.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Error.h"

#include <cstddef>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace mlir::afm {

struct TargetDescription;

/// Zeroed bytes aligned like the compiler's own allocations, so the
/// generated code may use aligned vector accesses on arguments too.
class HostBuffer {
public:
  /// `bytes` zeroed bytes (every page touched). An error, not an
  /// out-of-memory kill, when they exceed this machine's memory or the
  /// allocator refuses them.
  static llvm::Expected<HostBuffer> allocate(size_t bytes);

  HostBuffer(HostBuffer &&other) noexcept
      : bytes(other.bytes), ptr(other.ptr) {
    other.ptr = nullptr;
  }
  HostBuffer(const HostBuffer &) = delete;
  HostBuffer &operator=(const HostBuffer &) = delete;
  ~HostBuffer();

  size_t size() const { return bytes; }
  void *data() const { return ptr; }
  template <typename T> T *data() const { return static_cast<T *>(ptr); }

private:
  HostBuffer(size_t bytes, void *ptr) : bytes(bytes), ptr(ptr) {}

  size_t bytes;
  void *ptr;
};

/// Where a compiled graph runs its tile loops.
enum class GraphThreads {
  /// `main(inputs..., outputs...)`, everything on the calling thread.
  CallingThread,
  /// `main(const afm_host_api *host, inputs..., outputs...)`: the tile
  /// loops of big ops (CodegenOptions::minParallelWork, the afm-compile
  /// default) run as `host->parallel_for` calls (include/afm/kernel_abi.h);
  /// `host` must not be null. The pointer is first because bufferization
  /// appends the outputs after the existing arguments, so it is argument 0
  /// whatever the number of inputs and outputs.
  Host,
};

/// A shared library written to a temporary file and loaded; unloads and
/// deletes it on destruction.
class HostLibrary {
public:
  HostLibrary() = default;
  HostLibrary(const HostLibrary &) = delete;
  HostLibrary &operator=(const HostLibrary &) = delete;
  ~HostLibrary();

  /// Writes `bytes` (a shared library) to a temporary file and loads it.
  llvm::Error load(llvm::StringRef bytes);
  /// Lowers `module` (func.func over TOSA, e.g. an imported ONNX model)
  /// in place with the afm-graph-codegen pipeline for `target` (the
  /// host), links it and loads it; `threads` chooses the signature of its
  /// functions (by default it runs on the calling thread) and overrides
  /// `options`' thread fields. Lowering diagnostics go to the context's
  /// handler.
  llvm::Error compileAndLoad(ModuleOp module, const TargetDescription &target,
                             GraphThreads threads = GraphThreads::CallingThread,
                             CodegenOptions options = {});
  /// The address of `name`, or null.
  void *lookup(const char *name) const;

private:
  llvm::SmallString<128> path;
  void *handle = nullptr;
};

/// The most pointer arguments callGraph supports.
constexpr size_t kMaxGraphArguments = 16;

/// Calls `function` (a graph's `main`) with `args` as its pointer
/// arguments; fails when there are more than kMaxGraphArguments.
llvm::Error callGraph(void *function, llvm::ArrayRef<void *> args);

} // namespace mlir::afm

#endif // AFM_COMPILER_HOSTLIBRARY_H
