//===- KernelBench.cpp - time afm kernels compiled for this machine -------===//

#include "KernelBench.h"

#include "HostThreads.h"

#include "afm/Compiler/HostLibrary.h"
#include "afm/Target/TargetDescription.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <algorithm>
#include <chrono>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

using namespace afm_bench;
using namespace mlir;
using afm::HostBuffer;

namespace {
/// The buffers of every argument: one, or one per weight copy or index set.
struct KernelBuffers {
  std::vector<std::vector<HostBuffer>> arguments;
  HostBuffer output;

  static llvm::Expected<KernelBuffers> create(const KernelSource &source,
                                              int copies) {
    std::vector<std::vector<HostBuffer>> arguments;
    std::mt19937 random(7);
    for (const KernelArgument &argument : source.arguments) {
      int count = argument.rotation == Rotation::Weights   ? copies
                  : argument.rotation == Rotation::Indices ? copies + 1
                                                           : 1;
      auto &copiesOf = arguments.emplace_back();
      for (int i = 0; i < count; ++i) {
        auto buffer = HostBuffer::allocate(argument.bytes);
        if (!buffer)
          return buffer.takeError();
        argument.fill(buffer->data<uint8_t>(), argument.bytes, random);
        copiesOf.push_back(std::move(*buffer));
      }
    }
    auto output = HostBuffer::allocate(source.outputBytes);
    if (!output)
      return output.takeError();
    return KernelBuffers{std::move(arguments), std::move(*output)};
  }

  /// `main`'s arguments for call number `call`.
  std::vector<void *> forCall(const afm_host_api *host, int64_t call) const {
    std::vector<void *> args = {const_cast<afm_host_api *>(host)};
    for (const auto &buffers : arguments)
      args.push_back(buffers[call % buffers.size()].data());
    args.push_back(output.data());
    return args;
  }
};
} // namespace

/// The kernels are graphs compiled without the runtime's arena: each call
/// mallocs its temporaries (the LM head's 600 KB of partial logits among
/// them) and frees them on return. glibc gives memory at the top of the
/// heap back to the system once 128 KiB or more is free there, so a call
/// could fault those pages in again (afm-bench's LM head: 669 brk calls
/// over about 190 calls, a few per call; in a process that only calls the
/// LM head, 0.75 ms of 13 ms a call went to the glue, 0.12 ms without
/// trimming). A model's temporaries live in its session's arena and are
/// never given back, so the bench keeps freed memory too.
static void keepFreedHeap() {
#if defined(__GLIBC__)
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_MMAP_THRESHOLD, 32 << 20); // glibc's largest
#endif
}

/// Times `function` on `host` for at least `minSeconds` (and 3 calls).
static llvm::Expected<KernelResult> timeOn(void *function,
                                           const KernelBuffers &buffers,
                                           HostThreads &host,
                                           double minSeconds) {
  // A first call outside the timing: page faults, lazy binding.
  if (llvm::Error error =
          afm::callGraph(function, buffers.forCall(host.api(), 0)))
    return std::move(error);
  using Clock = std::chrono::steady_clock;
  int64_t parallelBefore = host.parallelCalls();
  auto start = Clock::now();
  int64_t calls = 0;
  double elapsed = 0;
  while (elapsed < minSeconds || calls < 3) {
    if (llvm::Error error =
            afm::callGraph(function, buffers.forCall(host.api(), calls + 1)))
      return std::move(error);
    ++calls;
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  }
  KernelResult result;
  result.threads = host.threads();
  result.secondsPerCall = elapsed / calls;
  result.parallelCallsPerCall =
      double(host.parallelCalls() - parallelBefore) / calls;
  return result;
}

llvm::Expected<std::vector<KernelResult>>
afm_bench::runKernel(MLIRContext &context, const KernelSpec &spec,
                     const afm::TargetDescription &target,
                     size_t footprintBytes, double minSeconds,
                     llvm::ArrayRef<HostThreads *> hosts,
                     const AdjacentReadProbe &probe) {
  KernelSource source = buildKernelSource(spec);
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(source.mlir, &context);
  if (!module)
    return llvm::createStringError("cannot parse the " + spec.name +
                                   " kernel");
  afm::HostLibrary library;
  afm::CodegenOptions options;
  options.int8Activations = spec.int8Activations;
  if (llvm::Error error =
          library.compileAndLoad(*module, target,
                                 afm::GraphThreads::Host, options))
    return std::move(error);
  void *function = library.lookup("main");
  if (!function)
    return llvm::createStringError("the kernel library has no main");

  size_t copyBytes = 0;
  for (const KernelArgument &argument : source.arguments)
    if (argument.rotation == Rotation::Weights)
      copyBytes += argument.bytes;
  int copies = std::max<size_t>(
      1, (footprintBytes + copyBytes - 1) / std::max<size_t>(copyBytes, 1));
  auto buffers = KernelBuffers::create(source, copies);
  if (!buffers)
    return buffers.takeError();

  keepFreedHeap();
  std::vector<KernelResult> results;
  for (HostThreads *host : hosts) {
    AdjacentReadProbe::Reading before = probe.measure(host->threads());
    auto result = timeOn(function, *buffers, *host, minSeconds);
    if (!result)
      return result.takeError();
    AdjacentReadProbe::Reading after = probe.measure(host->threads());
    const AdjacentReadProbe::Reading &better =
        after.readBytesPerSecond > before.readBytesPerSecond ? after : before;
    result->adjacentReadBytesPerSecond = better.readBytesPerSecond;
    result->adjacentReadPattern = better.readPattern;
    result->adjacentCoreRoundTripBefore = before.coreRoundTripSeconds;
    result->adjacentCoreRoundTripAfter = after.coreRoundTripSeconds;
    result->spec = spec;
    result->flops = source.flops;
    result->fmaFlops = source.fmaFlops;
    result->bytesRead = source.bytesRead;
    result->copies = copies;
    results.push_back(*result);
  }
  return results;
}
