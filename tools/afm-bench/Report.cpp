//===- Report.cpp - afm-bench's table and JSON ----------------------------===//

#include "Report.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/WithColor.h"

#include <algorithm>

using namespace afm_bench;

double afm_bench::readBytesPerSecond(const MachineLimits &limits,
                                     int threads) {
  return threads == 1 ? limits.readBytesPerSecond1
                      : limits.readBytesPerSecondN;
}

double afm_bench::fmaFlopsPerSecond(const MachineLimits &limits,
                                    int threads) {
  return threads == 1 ? limits.fmaFlopsPerSecond1 : limits.fmaFlopsPerSecondN;
}

/// Decode speed over the same model's on one thread.
static double speedup(const ModelResult &m,
                      llvm::ArrayRef<ModelResult> models) {
  for (const ModelResult &one : models)
    if (one.path == m.path && one.threads == 1)
      return m.decodeTokensPerSecond / one.decodeTokensPerSecond;
  return 1.0;
}

/// The kernel's f32 multiply-adds per second over the FMA peak on its
/// threads: only they are bounded by it, integer dot products (int8
/// activations, int8 attention scores) are not.
static double fmaPeakFraction(const MachineLimits &limits,
                              const KernelResult &k) {
  return k.fmaFlops / k.secondsPerCall / fmaFlopsPerSecond(limits, k.threads);
}

void afm_bench::warnAboutBeatenLimits(const MachineLimits &limits,
                                      llvm::ArrayRef<KernelResult> kernels,
                                      size_t footprintBytes,
                                      size_t lastLevelCacheBytes) {
  for (const KernelResult &k : kernels) {
    double read = k.bytesRead / k.secondsPerCall /
                  readBytesPerSecond(limits, k.threads);
    double flops = fmaPeakFraction(limits, k);
    double touched = std::max<double>(footprintBytes, k.bytesRead);
    if (read > 1 && touched < lastLevelCacheBytes)
      llvm::WithColor::note(llvm::errs(), "afm-bench")
          << llvm::formatv("{0} ({1}, {2} threads) reads at {3:f1}% of the "
                           "DRAM read limit from cache: its {4} MiB of "
                           "copies fit in the {5} MiB last-level cache "
                           "(--footprint-mib)\n",
                           k.spec.name, shapeLabel(k.spec), k.threads,
                           100 * read, touched / (1 << 20),
                           lastLevelCacheBytes >> 20);
    else if (read > 1)
      llvm::WithColor::warning(llvm::errs(), "afm-bench")
          << llvm::formatv("{0} ({1}, {2} threads) reads at {3:f1}% of the "
                           "read limit: the limit is wrong\n",
                           k.spec.name, shapeLabel(k.spec), k.threads,
                           100 * read);
    if (flops > 1)
      llvm::WithColor::warning(llvm::errs(), "afm-bench")
          << llvm::formatv("{0} ({1}, {2} threads) computes at {3:f1}% of "
                           "the FMA peak: the peak is wrong\n",
                           k.spec.name, shapeLabel(k.spec), k.threads,
                           100 * flops);
  }
}

void afm_bench::printTable(llvm::raw_ostream &os, const MachineLimits &limits,
                           llvm::ArrayRef<KernelResult> kernels,
                           llvm::ArrayRef<ModelResult> models) {
  os << llvm::formatv(
      "machine: read {0:f1} GB/s (1 thread), {1:f1} GB/s ({2} threads); "
      "FP32 FMA peak {3:f1} GFLOP/s (1 thread), {4:f1} GFLOP/s ({2} "
      "threads), {5}\n"
      "read limit: best of several patterns; reached by '{6}' (1 thread), "
      "'{7}' ({2} threads); best of {8} measurements{11} (lowest of the "
      "{8}: {9:f1} and {10:f1} GB/s)\n",
      limits.readBytesPerSecond1 / 1e9, limits.readBytesPerSecondN / 1e9,
      limits.threads, limits.fmaFlopsPerSecond1 / 1e9,
      limits.fmaFlopsPerSecondN / 1e9, limits.fmaISA, limits.readPattern1,
      limits.readPatternN, limits.measurements,
      limits.lowestReadBytesPerSecond1 / 1e9,
      limits.lowestReadBytesPerSecondN / 1e9,
      limits.measurementsNextToKernels
          ? llvm::formatv(" and {0} next to kernels",
                          limits.measurementsNextToKernels)
                .str()
          : std::string());
  if (limits.coreRoundTripHigh > 0)
    os << llvm::formatv("cores: a cache line's round trip between 2 threads "
                        "took {0:f0}-{1:f0} ns over the measurements (on a "
                        "VM: where the vCPUs sat)\n",
                        limits.coreRoundTripLow * 1e9,
                        limits.coreRoundTripHigh * 1e9);
  for (const FileReadLimit &file : limits.fileReads)
    os << llvm::formatv("file read: {0:f1} GB/s (1 thread), {1:f1} GB/s ({2} "
                        "threads) over the pages of {3} ({4} MB, mapped as "
                        "afm-run maps a model; '{5}', '{6}')\n",
                        file.readBytesPerSecond1 / 1e9,
                        file.readBytesPerSecondN / 1e9, limits.threads,
                        file.path, file.bytes / 1000000, file.readPattern1,
                        file.readPatternN);
  if (!kernels.empty())
    os << llvm::formatv("{0,-28} {1,-20} {2,7} {3,10} {4,9} {5,8} {6,8} "
                        "{7,11} {8,9} {9,8}\n",
                        "kernel", "shape", "threads", "ms/call", "GB/s",
                        "% BW", "% adj", "rt ns", "GFLOP/s", "% peak");
  for (const KernelResult &k : kernels) {
    double bytesPerSecond = k.bytesRead / k.secondsPerCall;
    double flopsPerSecond = k.flops / k.secondsPerCall;
    // Integer dot products are not bounded by the FP32 FMA peak: their
    // operations are counted in GFLOP/s, but only the f32 multiply-adds
    // are compared with it.
    std::string arithmetic =
        k.fmaFlops > 0
            ? llvm::formatv("{0,9:f2} {1,7:f1}%", flopsPerSecond / 1e9,
                            100 * fmaPeakFraction(limits, k))
                  .str()
        : k.flops > 0
            ? llvm::formatv("{0,9:f2} {1,8}", flopsPerSecond / 1e9, "-").str()
            : llvm::formatv("{0,9} {1,8}", "-", "-").str();
    std::string adjacent =
        k.adjacentReadBytesPerSecond > 0
            ? llvm::formatv("{0,7:f1}%",
                            100 * bytesPerSecond / k.adjacentReadBytesPerSecond)
                  .str()
            : llvm::formatv("{0,8}", "-").str();
    std::string roundTrip =
        k.adjacentCoreRoundTripBefore > 0
            ? llvm::formatv("{0:f0}/{1:f0}", k.adjacentCoreRoundTripBefore * 1e9,
                            k.adjacentCoreRoundTripAfter * 1e9)
                  .str()
            : "-";
    os << llvm::formatv(
        "{0,-28} {1,-20} {2,7} {3,10:f3} {4,9:f2} {5,7:f1}% {6} {7,11} {8}\n",
        k.spec.name, shapeLabel(k.spec), k.threads, k.secondsPerCall * 1e3,
        bytesPerSecond / 1e9,
        100 * bytesPerSecond / readBytesPerSecond(limits, k.threads), adjacent,
        roundTrip, arithmetic);
  }
  if (!kernels.empty())
    os << "GB/s: weight bytes read per second (embedding: the gathered rows "
          "and their scales; attention: the KV cache, with an i8 "
          "cache's scales); % BW and % peak against the limit on the same "
          "number of threads; % adj: "
          "against the better of the read rates measured on as many "
          "threads right before and right after the kernel (a VM's memory "
          "can change state between the limit's measurement and the "
          "kernel's); rt ns: a cache line's round trip between 2 of its "
          "threads right before / after it (on a VM: near or distant "
          "vCPUs, whose read rates differ); % peak: "
          "the f32 multiply-adds only (integer dot products count in "
          "GFLOP/s, not against the FMA peak)\n";
  if (models.empty())
    return;
  os << llvm::formatv("{0,-40} {1,8} {2,10} {3,14} {4,9}\n",
                      "model (prompt, decode tokens)", "threads", "TTFT ms",
                      "decode tok/s", "speedup");
  for (const ModelResult &m : models)
    os << llvm::formatv(
        "{0,-40} {1,8} {2,10:f2} {3,14:f1} {4,8:f2}x\n",
        llvm::formatv("{0} ({1}, {2})", m.path, m.promptTokens,
                      m.decodeTokens)
            .str(),
        m.threads, m.ttftSeconds * 1e3, m.decodeTokensPerSecond,
        speedup(m, models));
}

void afm_bench::printJSON(llvm::raw_ostream &os, const MachineLimits &limits,
                          llvm::ArrayRef<KernelResult> kernels,
                          llvm::ArrayRef<ModelResult> models) {
  llvm::json::Array kernelArray;
  for (const KernelResult &k : kernels) {
    double bytesPerSecond = k.bytesRead / k.secondsPerCall;
    llvm::json::Object kernel{
        {"name", k.spec.name},
        {"shape", shapeLabel(k.spec)},
        {"m", k.spec.m},
        {"n", k.spec.n},
        {"k", k.spec.k},
        {"threads", k.threads},
        {"seconds_per_call", k.secondsPerCall},
        {"bytes_read", k.bytesRead},
        {"weight_copies", k.copies},
        {"parallel_for_calls_per_call", k.parallelCallsPerCall},
        {"gbytes_per_second", bytesPerSecond / 1e9},
        {"fraction_of_read_bandwidth",
         bytesPerSecond / readBytesPerSecond(limits, k.threads)}};
    if (k.adjacentReadBytesPerSecond > 0) {
      kernel["adjacent_read_gbytes_per_second"] =
          k.adjacentReadBytesPerSecond / 1e9;
      kernel["fraction_of_adjacent_read_bandwidth"] =
          bytesPerSecond / k.adjacentReadBytesPerSecond;
    }
    if (k.adjacentCoreRoundTripBefore > 0)
      kernel["adjacent_core_round_trip_ns"] =
          llvm::json::Array{k.adjacentCoreRoundTripBefore * 1e9,
                            k.adjacentCoreRoundTripAfter * 1e9};
    if (k.spec.heads) {
      kernel["heads"] = k.spec.heads;
      kernel["kv_heads"] = k.spec.kvHeads;
    }
    if (k.flops > 0) {
      double flopsPerSecond = k.flops / k.secondsPerCall;
      kernel["gflops"] = flopsPerSecond / 1e9;
      // Of those, the f32 multiply-adds' share (the rest: integer dots).
      kernel["fma_share"] = k.fmaFlops / k.flops;
      if (k.fmaFlops > 0)
        kernel["fraction_of_fma_peak"] = fmaPeakFraction(limits, k);
    }
    kernelArray.push_back(std::move(kernel));
  }
  llvm::json::Array modelArray;
  for (const ModelResult &m : models)
    modelArray.push_back(llvm::json::Object{
        {"model", m.path},
        {"target", m.target},
        {"threads", m.threads},
        {"prompt_tokens", m.promptTokens},
        {"decode_tokens", m.decodeTokens},
        {"ttft_ms", m.ttftSeconds * 1e3},
        {"decode_tokens_per_second", m.decodeTokensPerSecond},
        {"decode_speedup_over_1_thread", speedup(m, models)}});
  llvm::json::Array fileArray;
  for (const FileReadLimit &file : limits.fileReads)
    fileArray.push_back(llvm::json::Object{
        {"path", file.path},
        {"bytes", int64_t(file.bytes)},
        // Names of their own: scripts find the machine's figures by key.
        {"file_read_gbytes_per_second_1_thread",
         file.readBytesPerSecond1 / 1e9},
        {"file_read_gbytes_per_second_all_threads",
         file.readBytesPerSecondN / 1e9},
        {"file_read_pattern_1_thread", file.readPattern1},
        {"file_read_pattern_all_threads", file.readPatternN}});
  llvm::json::Object root{
      {"machine",
       llvm::json::Object{
           {"threads", limits.threads},
           {"read_gbytes_per_second_1_thread",
            limits.readBytesPerSecond1 / 1e9},
           {"read_gbytes_per_second_all_threads",
            limits.readBytesPerSecondN / 1e9},
           {"read_pattern_1_thread", limits.readPattern1},
           {"read_pattern_all_threads", limits.readPatternN},
           {"limit_measurements", limits.measurements},
           {"limit_measurements_next_to_kernels",
            limits.measurementsNextToKernels},
           {"lowest_read_gbytes_per_second_1_thread",
            limits.lowestReadBytesPerSecond1 / 1e9},
           {"lowest_read_gbytes_per_second_all_threads",
            limits.lowestReadBytesPerSecondN / 1e9},
           {"core_round_trip_ns_lowest", limits.coreRoundTripLow * 1e9},
           {"core_round_trip_ns_highest", limits.coreRoundTripHigh * 1e9},
           {"fma_gflops_1_thread", limits.fmaFlopsPerSecond1 / 1e9},
           {"fma_gflops_all_threads", limits.fmaFlopsPerSecondN / 1e9},
           {"fma_isa", limits.fmaISA},
           {"bandwidth_buffer_bytes", int64_t(limits.bandwidthBytes)}}},
      {"file_reads", std::move(fileArray)},
      {"kernels", std::move(kernelArray)},
      {"models", std::move(modelArray)}};
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
}
