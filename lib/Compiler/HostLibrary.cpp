//===- HostLibrary.cpp - run a compiled graph in this process -------------===//

#include "afm/Compiler/HostLibrary.h"

#include "afm/Compiler/Compile.h"
#include "afm/available_memory.h"
#include "afm/Target/TargetDescription.h"
#include "afm/kernel_abi.h"

#include "mlir/IR/BuiltinOps.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif
#include <utility>

using namespace mlir::afm;

/// Buffers of at least a huge page are aligned to one and advised to use
/// them, as the runtime does with its weight mapping (runtime/arena.h:
/// afm_advise_huge_pages), so that afm-bench measures kernels, not TLB
/// misses.
static constexpr size_t kHugePageBytes = size_t(2) << 20;

llvm::Expected<HostBuffer> HostBuffer::allocate(size_t bytes) {
  auto refuse = [&](llvm::StringRef why) {
    return llvm::createStringError(
        llvm::formatv("cannot allocate a buffer of {0} bytes ({1:F1} MiB): "
                      "{2}",
                      bytes, double(bytes) / (1 << 20), why)
            .str());
  };
  // Every byte is written below, so a buffer past the memory this process
  // may use would not fail here but be killed by the OOM killer while
  // zeroing it. Asking reads several /proc and cgroup files (about 70 us),
  // so buffers too small to matter skip it; the allocator still refuses
  // what it cannot give.
  constexpr size_t kCheckedBytes = size_t(1) << 20;
  uint64_t available =
      bytes >= kCheckedBytes ? afm_available_memory() : UINT64_MAX;
  if (available != UINT64_MAX && bytes > available)
    return refuse(llvm::formatv("more than this process may still use "
                                "({0:F1} MiB)",
                                double(available) / (1 << 20))
                      .str());
  size_t alignment = bytes >= kHugePageBytes ? kHugePageBytes : 64;
  if (bytes > SIZE_MAX - alignment)
    return refuse("the size overflows");
  size_t rounded =
      std::max(alignment, (bytes + alignment - 1) / alignment * alignment);
  void *ptr = std::aligned_alloc(alignment, rounded);
  if (!ptr)
    return refuse("the allocator refused it");
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (alignment == kHugePageBytes)
    (void)madvise(ptr, rounded, MADV_HUGEPAGE);
#endif
  std::memset(ptr, 0, bytes);
  return HostBuffer(bytes, ptr);
}

HostBuffer::~HostBuffer() { std::free(ptr); }

HostLibrary::~HostLibrary() {
  if (handle)
    dlclose(handle);
  if (!path.empty())
    llvm::sys::fs::remove(path);
}

llvm::Error HostLibrary::load(llvm::StringRef bytes) {
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("afm-graph", "so", path))
    return llvm::createStringError(ec, "cannot create a temporary file");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec)
      return llvm::createStringError(ec, "cannot write " + path);
    os << bytes;
  }
  handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), dlerror());
  return llvm::Error::success();
}

llvm::Error HostLibrary::compileAndLoad(ModuleOp module,
                                        const TargetDescription &target,
                                        GraphThreads threads,
                                        CodegenOptions options) {
  options.hostArgument = threads == GraphThreads::Host;
  if (!options.hostArgument)
    options.minParallelWork = 0; // no host to hand tile loops to
  if (failed(lowerGraphToLLVMDialect(module, target, options)))
    return llvm::createStringError("cannot lower the graph");
  auto library = toSharedLibrary(module, target);
  if (!library)
    return library.takeError();
  return load(*library);
}

void *HostLibrary::lookup(const char *name) const {
  return handle ? dlsym(handle, name) : nullptr;
}

/// The graph's signature is only known at run time, so each arity is a
/// separately instantiated call, with UBSan's function check off
/// (AFM_CALLS_LOADED_CODE).
template <size_t... I>
AFM_CALLS_LOADED_CODE static void callWith(void *function, llvm::ArrayRef<void *> args,
                     std::index_sequence<I...>) {
  using Fn = void (*)(decltype((void)I, (void *)nullptr)...);
  reinterpret_cast<Fn>(function)(args[I]...);
}

template <size_t N = 1>
static bool callArity(void *function, llvm::ArrayRef<void *> args) {
  if constexpr (N > kMaxGraphArguments) {
    return false;
  } else {
    if (args.size() != N)
      return callArity<N + 1>(function, args);
    callWith(function, args, std::make_index_sequence<N>());
    return true;
  }
}

llvm::Error mlir::afm::callGraph(void *function, llvm::ArrayRef<void *> args) {
  if (!callArity(function, args))
    return llvm::createStringError(
        "cannot call a graph with " + llvm::Twine(args.size()) +
        " arguments (at most " + llvm::Twine(kMaxGraphArguments) + ")");
  return llvm::Error::success();
}
