//===- afm-bench.cpp - kernels as fractions of this machine's limits ------===//
//
// Measures the machine's limits first (read bandwidth over a buffer far
// larger than the caches, FP32 FMA peak; one thread and all), then times
// afm kernels compiled by the real pipeline for this machine, and prints
// every figure next to the limit it is a fraction of. A tool, not a test:
// no thresholds.
//
//===----------------------------------------------------------------------===//

#include "KernelBench.h"
#include "MachineLimits.h"
#include "ModelBench.h"
#include "Roofline.h"

#include "afm/CodeGen/ObjectEmitter.h"
#include "afm/InitAll.h"

#include "mlir/IR/DialectRegistry.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

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
static cl::opt<int> threads("bench-threads",
                            cl::desc("Threads for the all-threads limits "
                                     "(default: the hardware's)"),
                            cl::init(0), cl::cat(category));
static cl::opt<unsigned> bandwidthMiB(
    "bandwidth-mib",
    cl::desc("Buffer read to measure bandwidth, in MiB (default 1024)"),
    cl::init(1024), cl::cat(category));
static cl::opt<unsigned> footprintMiB(
    "footprint-mib",
    cl::desc("Weight copies a kernel rotates through, in MiB, so decode "
             "reads DRAM (default: 4x the last-level cache, at least 256)"),
    cl::init(0), cl::cat(category));
static cl::opt<double> seconds("min-seconds",
                               cl::desc("Minimum time per kernel (default "
                                        "1)"),
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
static cl::opt<bool> limitsOnly("limits-only",
                                cl::desc("Measure the machine only"),
                                cl::cat(category));

static size_t lastLevelCacheBytes() {
#ifdef _SC_LEVEL3_CACHE_SIZE
  long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (l3 > 0)
    return l3;
#endif
  return 32u << 20;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "afm-bench: this machine's limits, then afm kernels as fractions of "
      "them\n\n"
      "Limits: read bandwidth (1 and N threads, a buffer of "
      "--bandwidth-mib)\nand FP32 FMA peak (1 and N threads). Kernels: f32, "
      "2-bit and ASTC GEMV\n(4096x4096, 2048x8192) and GEMM (M = 512), "
      "compiled by afm-graph-codegen\nfor this machine, run on one thread "
      "with weights rotated through copies\nlarger than the last-level "
      "cache. GEMV figures are weight bytes per\nsecond against the "
      "one-thread read bandwidth; GEMM figures GFLOP/s\nagainst the "
      "one-thread FMA peak.\n");
  int n = threads > 0 ? threads.getValue()
                      : std::max(1u, std::thread::hardware_concurrency());
  MachineLimits limits =
      measureMachineLimits(size_t(bandwidthMiB) << 20, n, 3);

  std::vector<KernelResult> results;
  size_t footprint = footprintMiB ? size_t(footprintMiB) << 20
                                  : std::max<size_t>(4 * lastLevelCacheBytes(),
                                                     256u << 20);
  if (!limitsOnly) {
    mlir::DialectRegistry registry;
    mlir::afm::registerDialects(registry);
    mlir::afm::registerLLVMIRTranslations(registry);
    mlir::MLIRContext context(registry);
    context.loadAllAvailableDialects();
    for (const KernelSpec &spec : defaultKernels()) {
      if (!only.empty() &&
          llvm::none_of(only, [&](const std::string &part) {
            return llvm::StringRef(spec.name).contains(part);
          }))
        continue;
      auto result = runKernel(context, spec, footprint, seconds);
      if (!result) {
        llvm::WithColor::error(llvm::errs(), "afm-bench")
            << spec.name << ": " << llvm::toString(result.takeError())
            << "\n";
        return 1;
      }
      results.push_back(*result);
    }
  }

  std::vector<ModelResult> modelResults;
  for (const std::string &path : models)
    for (int t : {1, n}) {
      if (t == n && n == 1)
        continue;
      auto result = runModel(path, t, promptTokens, decodeTokens, 3);
      if (!result) {
        llvm::WithColor::error(llvm::errs(), "afm-bench")
            << llvm::toString(result.takeError()) << "\n";
        return 1;
      }
      modelResults.push_back(*result);
    }
  // Decode speed with all threads over one thread, per model.
  auto speedup = [&](const ModelResult &m) {
    for (const ModelResult &one : modelResults)
      if (one.path == m.path && one.threads == 1)
        return m.decodeTokensPerSecond / one.decodeTokensPerSecond;
    return 1.0;
  };

  double bw1 = limits.readBytesPerSecond1, peak1 = limits.fmaFlopsPerSecond1;
  if (json) {
    llvm::json::Array kernels;
    for (const KernelResult &k : results) {
      double bytesPerSecond = k.weightBytes / k.secondsPerCall;
      double flopsPerSecond = k.flops / k.secondsPerCall;
      kernels.push_back(llvm::json::Object{
          {"name", k.spec.name},
          {"m", k.spec.m},
          {"n", k.spec.n},
          {"k", k.spec.k},
          {"threads", 1},
          {"seconds_per_call", k.secondsPerCall},
          {"weight_bytes", k.weightBytes},
          {"weight_copies", k.copies},
          {"gbytes_per_second", bytesPerSecond / 1e9},
          {"fraction_of_read_bandwidth", bytesPerSecond / bw1},
          {"gflops", flopsPerSecond / 1e9},
          {"fraction_of_fma_peak", flopsPerSecond / peak1}});
    }
    llvm::json::Object root{
        {"machine",
         llvm::json::Object{
             {"threads", limits.threads},
             {"read_gbytes_per_second_1_thread", bw1 / 1e9},
             {"read_gbytes_per_second_all_threads",
              limits.readBytesPerSecondN / 1e9},
             {"fma_gflops_1_thread", peak1 / 1e9},
             {"fma_gflops_all_threads", limits.fmaFlopsPerSecondN / 1e9},
             {"fma_isa", limits.fmaISA},
             {"bandwidth_buffer_bytes", int64_t(limits.bandwidthBytes)}}},
        {"kernels", std::move(kernels)}};
    llvm::json::Array modelArray;
    for (const ModelResult &m : modelResults)
      modelArray.push_back(llvm::json::Object{
          {"model", m.path},
          {"target", m.target},
          {"threads", m.threads},
          {"prompt_tokens", m.promptTokens},
          {"decode_tokens", m.decodeTokens},
          {"ttft_ms", m.ttftSeconds * 1e3},
          {"decode_tokens_per_second", m.decodeTokensPerSecond},
          {"decode_speedup_over_1_thread", speedup(m)}});
    root["models"] = std::move(modelArray);
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(root)))
                 << "\n";
  } else {
    llvm::outs() << llvm::formatv(
        "machine: read {0:f1} GB/s (1 thread), {1:f1} GB/s ({2} threads); "
        "FP32 FMA peak {3:f1} GFLOP/s (1 thread), {4:f1} GFLOP/s ({2} "
        "threads), {5}\n",
        bw1 / 1e9, limits.readBytesPerSecondN / 1e9, limits.threads,
        peak1 / 1e9, limits.fmaFlopsPerSecondN / 1e9, limits.fmaISA);
    if (!results.empty())
      llvm::outs() << llvm::formatv(
          "{0,-28} {1,16} {2,10} {3,9} {4,8} {5,9} {6,8}\n", "kernel (1 "
          "thread)", "M x N x K", "ms/call", "GB/s", "% BW", "GFLOP/s",
          "% peak");
    for (const KernelResult &k : results) {
      double bytesPerSecond = k.weightBytes / k.secondsPerCall;
      double flopsPerSecond = k.flops / k.secondsPerCall;
      llvm::outs() << llvm::formatv(
          "{0,-28} {1,16} {2,10:f3} {3,9:f2} {4,7:f1}% {5,9:f2} {6,7:f1}%\n",
          k.spec.name,
          llvm::formatv("{0}x{1}x{2}", k.spec.m, k.spec.n, k.spec.k).str(),
          k.secondsPerCall * 1e3, bytesPerSecond / 1e9,
          100 * bytesPerSecond / bw1, flopsPerSecond / 1e9,
          100 * flopsPerSecond / peak1);
    }
  }
  if (!json && !modelResults.empty()) {
    llvm::outs() << llvm::formatv("{0,-40} {1,8} {2,10} {3,14} {4,9}\n",
                                  "model (prompt, decode tokens)", "threads",
                                  "TTFT ms", "decode tok/s", "speedup");
    for (const ModelResult &m : modelResults)
      llvm::outs() << llvm::formatv(
          "{0,-40} {1,8} {2,10:f2} {3,14:f1} {4,8:f2}x\n",
          llvm::formatv("{0} ({1}, {2})", m.path, m.promptTokens,
                        m.decodeTokens)
              .str(),
          m.threads, m.ttftSeconds * 1e3, m.decodeTokensPerSecond, speedup(m));
  }
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
