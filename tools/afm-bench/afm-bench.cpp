//===- afm-bench.cpp - kernels as fractions of this machine's limits ------===//
//
// Measures the machine's limits first (read bandwidth over a buffer far
// larger than the caches, FP32 FMA peak; one thread and all), then times
// afm kernels compiled by the real pipeline for this machine on one thread
// and on all, and prints every figure next to the limit on the same number
// of threads. A tool, not a test: no thresholds.
//
//===----------------------------------------------------------------------===//

#include "HostThreads.h"
#include "KernelBench.h"
#include "MachineLimits.h"
#include "ModelBench.h"
#include "Report.h"
#include "Roofline.h"

#include "afm/CodeGen/ObjectEmitter.h"
#include "afm/Compiler/InitAll.h"
#include "afm/available_memory.h"
#include "afm/Target/TargetDescription.h"

#include "mlir/IR/DialectRegistry.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"

#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <unistd.h>

using namespace afm_bench;
namespace cl = llvm::cl;

static cl::OptionCategory category("afm-bench options");
static cl::opt<bool> json("json", cl::desc("Print JSON instead of a table"),
                          cl::cat(category));
static cl::opt<std::string>
    plot("plot", cl::desc("Also write a roofline of the kernels (SVG)"),
         cl::value_desc("file.svg"), cl::cat(category));
static cl::opt<std::string> targetName(
    "target",
    cl::desc("Compile the kernels for this target (afm-compile "
             "--list-targets) instead of the host's; it must run on this "
             "machine, e.g. x86-64-v3 to measure the AVX2 kernels on an "
             "AVX-512 host (default: host)"),
    cl::init("host"), cl::cat(category));
static cl::opt<int> threads("bench-threads",
                            cl::desc("Threads N for the all-threads limits, "
                                     "kernels and models, at most 4 per "
                                     "hardware thread (default: the "
                                     "hardware's)"),
                            cl::init(0), cl::cat(category));
static cl::opt<unsigned> bandwidthMiB(
    "bandwidth-mib",
    cl::desc("Buffer read to measure bandwidth, in MiB, at most half of "
             "the memory this process may use (default 1024)"),
    cl::init(1024), cl::cat(category));
static cl::opt<unsigned> footprintMiB(
    "footprint-mib",
    cl::desc("Weight (or KV cache) copies a kernel rotates through, in "
             "MiB, so decode reads DRAM; at most half of the memory this "
             "process may use (default: 4x the last-level cache, at least "
             "256)"),
    cl::init(0), cl::cat(category));
static cl::opt<double> seconds("min-seconds",
                               cl::desc("Minimum time per kernel and thread "
                                        "count (default 1)"),
                               cl::init(1.0), cl::cat(category));
static cl::list<std::string>
    only("kernel", cl::desc("Run only kernels whose name contains this "
                            "(repeatable)"),
         cl::cat(category));
static cl::list<std::string>
    models("model",
           cl::desc("Also run this compiled model (.afmb) through the "
                    "runtime on 1 and all threads: time to first token and "
                    "decode tokens/s (repeatable)"),
           cl::value_desc("file.afmb"), cl::cat(category));
static cl::opt<int> promptTokens("prompt-tokens",
                                 cl::desc("Prompt length for --model "
                                          "(default 16)"),
                                 cl::init(16), cl::cat(category));
static cl::opt<int> decodeTokens("decode-tokens",
                                 cl::desc("Greedy steps for --model "
                                          "(default 64)"),
                                 cl::init(64), cl::cat(category));
static cl::list<std::string> readFiles(
    "read-file",
    cl::desc("Also measure the read limit over this file's own pages, "
             "mapped as afm-run maps a model (e.g. the .afmb whose decode "
             "is measured): on a VM a file's page cache can read slower or "
             "faster than a fresh buffer; at least 64 MiB and at most half "
             "of the memory this process may use (repeatable)"),
    cl::value_desc("file"), cl::cat(category));
static cl::opt<bool> limitsOnly("limits-only",
                                cl::desc("Measure the machine only"),
                                cl::cat(category));

/// The last-level cache of CPU 0 as Linux describes it (the highest
/// level in /sys/devices/system/cpu/cpu0/cache), else sysconf's level 3,
/// else 32 MiB. sysfs first: on a Zen 4 VM glibc's sysconf said 320 MiB
/// where the kernel (and lscpu) said 32.
static size_t lastLevelCacheBytes() {
  unsigned bestLevel = 0;
  size_t best = 0;
  for (int index = 0; index < 16; ++index) {
    std::string dir =
        "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
    std::ifstream levelFile(dir + "/level"), sizeFile(dir + "/size");
    unsigned level = 0;
    size_t size = 0;
    std::string unit;
    if (!(levelFile >> level) || !(sizeFile >> size))
      continue;
    sizeFile >> unit; // "K" or "M" right after the number
    size <<= unit == "M" ? 20 : unit == "K" ? 10 : 0;
    if (level > bestLevel && size > 0)
      bestLevel = level, best = size;
  }
  if (best)
    return best;
#ifdef _SC_LEVEL3_CACHE_SIZE
  long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (l3 > 0)
    return l3;
#endif
  return 32u << 20;
}

/// Compiles and times the selected kernels on each of `hosts`.
static llvm::Expected<std::vector<KernelResult>>
runKernels(const mlir::afm::TargetDescription &target, size_t footprint,
           llvm::ArrayRef<HostThreads *> hosts,
           const AdjacentReadProbe &probe) {
  mlir::DialectRegistry registry;
  mlir::afm::registerDialects(registry);
  mlir::afm::registerLLVMIRTranslations(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  std::vector<KernelResult> results;
  for (const KernelSpec &spec : defaultKernels()) {
    if (!only.empty() && llvm::none_of(only, [&](const std::string &part) {
          return llvm::StringRef(spec.name).contains(part);
        }))
      continue;
    auto timed =
        runKernel(context, spec, target, footprint, seconds, hosts, probe);
    if (!timed)
      return llvm::createStringError(spec.name + ": " +
                                     llvm::toString(timed.takeError()));
    llvm::append_range(results, *timed);
  }
  return results;
}

/// The target the kernels are compiled for: `name` with this process's
/// triple, when this machine has every feature it needs (afm-bench runs
/// the kernels here).
static llvm::Expected<mlir::afm::TargetDescription>
kernelTarget(llvm::StringRef name) {
  auto target = mlir::afm::lookupTarget(name);
  if (!target)
    return target.takeError();
  mlir::afm::TargetDescription host = mlir::afm::getHostTarget();
  if (target->isAArch64() != host.isAArch64())
    return llvm::createStringError(
        "--target " + name.str() +
        ": afm-bench runs the kernels on this machine, which is of another "
        "architecture");
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  llvm::SmallVector<llvm::StringRef> wanted;
  llvm::StringRef(target->features).split(wanted, ',', -1, false);
  for (llvm::StringRef feature : wanted)
    if (feature.consume_front("+") && !features.lookup(feature))
      return llvm::createStringError("--target " + name.str() +
                                     ": this machine lacks '" + feature.str() +
                                     "', so the kernels could not run here");
  target->triple = host.triple;
  return target;
}

/// Measures the limits again and keeps the best of each.
static llvm::Error measureAgain(MachineLimits &limits, int n) {
  auto again = measureMachineLimits(size_t(bandwidthMiB) << 20, n, 10);
  if (!again)
    return again.takeError();
  keepBestLimits(limits, *again);
  return llvm::Error::success();
}

/// The hardware's threads (at least 1 when it does not say): the default
/// of --bench-threads.
static int hardwareThreads() {
  return int(std::max(1u, std::thread::hardware_concurrency()));
}

/// The most threads --bench-threads takes: 4 per hardware thread. More
/// measure only the scheduler, and each limit then takes minutes (the
/// FMA loop runs every thread for its own time slice).
static int maxBenchThreads() { return 4 * hardwareThreads(); }

/// Rejects options that would measure nothing, crash or exhaust memory,
/// before any measurement starts.
static llvm::Error checkOptions() {
  auto bad = [](const llvm::Twine &message) {
    return llvm::createStringError(message.str());
  };
  if (threads < 0 || threads > maxBenchThreads())
    return bad("--bench-threads " + llvm::Twine(threads.getValue()) +
               ": give 1 to " + llvm::Twine(maxBenchThreads()) +
               " threads (4 per hardware thread), or 0 for the hardware's");
  if (bandwidthMiB == 0)
    return bad("--bandwidth-mib 0: the read limit needs a buffer of at "
               "least 1 MiB (default 1024)");
  if (!(seconds >= 0) || seconds > 3600)
    return bad("--min-seconds " + llvm::formatv("{0}", seconds.getValue()) +
               ": give 0 to 3600 seconds");
  if (promptTokens < 1)
    return bad("--prompt-tokens " + llvm::Twine(promptTokens.getValue()) +
               ": a prompt needs at least 1 token");
  if (decodeTokens < 1)
    return bad("--decode-tokens " + llvm::Twine(decodeTokens.getValue()) +
               ": decode needs at least 1 step to be timed");
  // The buffers are allocated and zeroed whole, so a size past memory
  // would end in the OOM killer; half of it leaves room for the rest.
  if (uint64_t available = afm_available_memory(); available != UINT64_MAX) {
    uint64_t halfMiB = available / 2 >> 20;
    for (auto [name, mib] :
         {std::pair{"--bandwidth-mib", bandwidthMiB.getValue()},
          std::pair{"--footprint-mib", footprintMiB.getValue()}})
      if (mib > halfMiB)
        return bad(llvm::Twine(name) + " " + llvm::Twine(mib) +
                   ": more than half of the memory this process may use (" +
                   llvm::Twine(available >> 20) + " MiB)");
  }
  return llvm::Error::success();
}

static int fail(llvm::Error error) {
  llvm::WithColor::error(llvm::errs(), "afm-bench")
      << llvm::toString(std::move(error)) << "\n";
  return 1;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "afm-bench: this machine's limits, then afm kernels as fractions of "
      "them\n\n"
      "Limits: read bandwidth (1 and N threads, a buffer of "
      "--bandwidth-mib in huge\npages where Linux grants them, as the "
      "kernels' buffers are) and FP32 FMA\npeak (1 and N threads).\n\n"
      "Kernels, compiled by afm-graph-codegen for this machine with a host\n"
      "API argument, run on 1 and on N threads of the runtime's thread pool\n"
      "with weights rotated through copies larger than the last-level "
      "cache:\n"
      "  f32, 2-bit and ASTC GEMV (4096x4096, 2048x8192) and GEMM (M = 512);\n"
      "  4-bit embedding gather (1 and 512 random rows of a 32768x4096 "
      "table,\n  group 32: one decode step's row, a prefill chunk's rows);\n"
      "  4-bit LM head (150000x3072, group 32: the paper's tied head), f32\n"
      "  and int8 activations, and 151936x896 (Qwen2 0.5B's: codes in plain\n"
      "  order, not 16 groups a row); 2-bit and ASTC LM heads of the\n"
      "  paper's shape (an untied head in the linear layers' formats), f32\n"
      "  and int8;\n"
      "  int8-KV attention decode step (1 query token, 4096 positions, 32\n"
      "  query and 8 KV heads of 128), f32 and int8-rounded query, and with\n"
      "  the 3B preset's 24 query and 8 KV heads (int8-rounded query);\n"
      "  f16-KV attention decode step (the same, 24 query and 8 KV heads);\n"
      "  f32-KV attention decode step (the same);\n"
      "  int8-KV attention prefill chunk (128 query rows at the end of a\n"
      "  1024-token prompt, 24 query and 8 KV heads of 128: the 3B preset).\n"
      "GB/s counts the weight bytes read (embedding: rows and scales;\n"
      "attention: the KV cache, with an i8 cache's scales), GFLOP/s 2 per\n"
      "multiply-add; each is a fraction of the limit on the same number\n"
      "of threads. GB/s is also a fraction of the read rate measured just\n"
      "before and just after the kernel (% adj): a VM's memory can change\n"
      "state within seconds. With them, the round trip of a cache line\n"
      "between two of the threads (rt ns) says where the vCPUs sat: tens\n"
      "of ns on cores sharing a cache, hundreds on distant cores, whose\n"
      "separate memory paths can read up to twice as fast together.\n\n"
      "The limits are measured before the kernels and again after them (and\n"
      "after the models); the read rates measured next to each kernel count\n"
      "too. Each limit is the best measurement, and the table shows the\n"
      "lowest of the full measurements. A kernel that still beats a limit is\n"
      "reported on stderr: that limit is wrong.\n");
  if (llvm::Error error = checkOptions())
    return fail(std::move(error));
  auto target = kernelTarget(targetName);
  if (!target)
    return fail(target.takeError());
  int n = threads > 0 ? threads.getValue() : hardwareThreads();
  // The files first, so that one it cannot measure is refused before
  // anything else is (as checkOptions refuses options). At least 64 MiB,
  // as the kernels' read probe: past most caches.
  std::vector<FileReadLimit> fileReads;
  uint64_t available = afm_available_memory();
  for (const std::string &path : readFiles) {
    auto file = measureFileRead(path, n, 5, uint64_t(64) << 20,
                                available == UINT64_MAX ? UINT64_MAX
                                                        : available / 2);
    if (!file)
      return fail(file.takeError());
    fileReads.push_back(std::move(*file));
  }
  auto measured = measureMachineLimits(size_t(bandwidthMiB) << 20, n, 10);
  if (!measured)
    return fail(measured.takeError());
  MachineLimits limits = *measured;
  limits.fileReads = std::move(fileReads);
  std::vector<int> threadCounts = {1};
  if (n > 1)
    threadCounts.push_back(n);

  std::vector<KernelResult> results;
  size_t cacheBytes = lastLevelCacheBytes();
  size_t footprint = footprintMiB
                         ? size_t(footprintMiB) << 20
                         : std::max<size_t>(4 * cacheBytes, 256u << 20);
  if (!limitsOnly) {
    std::vector<std::unique_ptr<HostThreads>> pools;
    for (int t : threadCounts) {
      auto pool = HostThreads::create(t);
      if (!pool)
        return fail(pool.takeError());
      pools.push_back(std::move(*pool));
    }
    std::vector<HostThreads *> hosts;
    for (auto &pool : pools)
      hosts.push_back(pool.get());
    // Past the last-level caches, as the limit's buffer; a quarter of it
    // (at least 64 MiB) keeps each measurement near a tenth of a second.
    // 4x the cache a thread sees: 2 threads on distant cores of a VM each
    // have a last-level cache of that size (a Zen 4 VM's 2-thread probe of
    // 2x its 32 MiB read 88 GB/s, against 53-58 past both caches).
    size_t probeBytes = std::min<size_t>(
        size_t(bandwidthMiB) << 20,
        std::max<size_t>({4 * cacheBytes, size_t(bandwidthMiB) << 18,
                          size_t(64) << 20}));
    auto probe = AdjacentReadProbe::create(probeBytes);
    if (!probe)
      return fail(probe.takeError());
    auto timed = runKernels(*target, footprint, hosts, *probe);
    if (!timed)
      return fail(timed.takeError());
    results = std::move(*timed);
    for (const KernelResult &k : results)
      keepBestAdjacentRead(limits, k.threads, k.adjacentReadBytesPerSecond,
                           k.adjacentReadPattern);
    if (llvm::Error error = measureAgain(limits, n))
      return fail(std::move(error));
  }

  std::vector<ModelResult> modelResults;
  for (const std::string &path : models)
    for (int t : threadCounts) {
      auto result = runModel(path, t, promptTokens, decodeTokens, 3);
      if (!result)
        return fail(result.takeError());
      modelResults.push_back(*result);
    }
  if (!models.empty())
    if (llvm::Error error = measureAgain(limits, n))
      return fail(std::move(error));
  warnAboutBeatenLimits(limits, results, footprint, cacheBytes);

  if (json)
    printJSON(llvm::outs(), limits, results, modelResults);
  else
    printTable(llvm::outs(), limits, results, modelResults);
  if (!plot.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream os(plot, ec);
    if (ec) {
      llvm::WithColor::error(llvm::errs(), "afm-bench")
          << "cannot write '" << plot << "': " << ec.message() << "\n";
      return 1;
    }
    writeRooflineSVG(os, limits, results);
  }
  return 0;
}
