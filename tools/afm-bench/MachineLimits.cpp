//===- MachineLimits.cpp - read bandwidth and FMA peak --------------------===//

#include "MachineLimits.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

using namespace afm_bench;
using Clock = std::chrono::steady_clock;

/// Runs `work(thread)` on `threads` threads at once; returns the seconds
/// from the first start to the last finish.
static double timeParallel(int threads, const std::function<void(int)> &work) {
  std::vector<std::thread> pool;
  auto start = Clock::now();
  for (int t = 1; t < threads; ++t)
    pool.emplace_back(work, t);
  work(0);
  for (std::thread &thread : pool)
    thread.join();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Sums a slice with eight independent accumulators (several load streams
/// in flight, as a GEMV over eight rows has), one 64-byte line per step,
/// prefetching 8 KiB ahead as the compiled GEMV kernels do (without it
/// the hardware prefetchers alone reach about 15% less here, and kernels
/// would beat the "limit"). The result is kept so the loads cannot be
/// removed.
static uint64_t sumSlice(const uint64_t *data, size_t count) {
  constexpr size_t kAhead = 8192 / sizeof(uint64_t);
  uint64_t a[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (size_t i = 0; i + 8 <= count; i += 8) {
    __builtin_prefetch(data + std::min(i + kAhead, count - 1));
    for (int j = 0; j < 8; ++j)
      a[j] += data[i + j];
  }
  uint64_t sum = 0;
  for (uint64_t v : a)
    sum += v;
  return sum;
}

static double readBandwidth(const uint64_t *data, size_t count, int threads,
                            int repeats) {
  double best = 0;
  std::vector<uint64_t> sums(threads);
  for (int r = 0; r < repeats; ++r) {
    size_t slice = count / threads / 8 * 8;
    double seconds = timeParallel(threads, [&](int t) {
      sums[t] = sumSlice(data + t * slice, slice);
    });
    best = std::max(best, slice * threads * sizeof(uint64_t) / seconds);
  }
  volatile uint64_t sink = 0;
  for (uint64_t s : sums)
    sink = sink + s;
  return best;
}

// The FMA loops: `kChains` independent vector accumulators, enough to
// cover the FMA latency on both FMA ports, in one function per ISA.
constexpr int kIterations = 1 << 26;

/// `Chains` independent FMA chains on vectors of `Lanes` floats; inlined
/// into a function per ISA, which decides the instructions.
template <int Lanes, int Chains>
__attribute__((always_inline)) static inline double fmaChains() {
  typedef float Vector __attribute__((ext_vector_type(Lanes)));
  Vector acc[Chains], x = 1.0001f, y = 0.9999f;
  for (int c = 0; c < Chains; ++c)
    acc[c] = static_cast<float>(c);
  for (int i = 0; i < kIterations; ++i)
    for (int c = 0; c < Chains; ++c)
      acc[c] = __builtin_elementwise_fma(acc[c], x, y);
  float sum = 0;
  for (int c = 0; c < Chains; ++c)
    sum += acc[c][0];
  volatile float sink = sum;
  (void)sink;
  return 2.0 * Lanes * Chains * static_cast<double>(kIterations);
}

#if defined(__x86_64__)
__attribute__((target("avx2,fma"))) static double fmaLoopAVX2() {
  return fmaChains<8, 12>();
}

__attribute__((target("avx512f"))) static double fmaLoopAVX512() {
  return fmaChains<16, 16>();
}
#endif

/// Other hosts: the compiler's baseline vectors.
static double fmaLoopGeneric() { return fmaChains<4, 16>(); }

static double (*selectFMALoop(std::string &isa))() {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f")) {
    isa = "avx512f";
    return fmaLoopAVX512;
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    isa = "avx2+fma";
    return fmaLoopAVX2;
  }
#endif
  isa = "generic";
  return fmaLoopGeneric;
}

static double fmaPeak(double (*loop)(), int threads, int repeats) {
  double best = 0;
  for (int r = 0; r < repeats; ++r) {
    std::vector<double> flops(threads);
    double seconds =
        timeParallel(threads, [&](int t) { flops[t] = loop(); });
    double total = 0;
    for (double f : flops)
      total += f;
    best = std::max(best, total / seconds);
  }
  return best;
}

MachineLimits afm_bench::measureMachineLimits(size_t bandwidthBytes,
                                              int threads, int repeats) {
  MachineLimits limits;
  limits.threads = threads;
  limits.bandwidthBytes = bandwidthBytes;
  size_t count = bandwidthBytes / sizeof(uint64_t);
  auto *data = static_cast<uint64_t *>(
      std::aligned_alloc(64, count * sizeof(uint64_t)));
  // Touch every page (from every thread's slice) before timing.
  for (size_t i = 0; i < count; ++i)
    data[i] = i;
  limits.readBytesPerSecond1 = readBandwidth(data, count, 1, repeats);
  limits.readBytesPerSecondN = readBandwidth(data, count, threads, repeats);
  std::free(data);
  double (*loop)() = selectFMALoop(limits.fmaISA);
  limits.fmaFlopsPerSecond1 = fmaPeak(loop, 1, repeats);
  limits.fmaFlopsPerSecondN = fmaPeak(loop, threads, repeats);
  return limits;
}
