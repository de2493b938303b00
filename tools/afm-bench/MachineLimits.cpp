//===- MachineLimits.cpp - read bandwidth and FMA peak --------------------===//

#include "MachineLimits.h"

#include "afm/Compiler/HostLibrary.h"
#include "afm/cpu_relax.h"
#include "afm/runtime.h"

extern "C" {
#include "runtime/map_file.h"
}

#include "llvm/ADT/ScopeExit.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <sys/mman.h>

using namespace afm_bench;
using Clock = std::chrono::steady_clock;

/// Spins until `flag` holds `value` (a cheap wait for a few microseconds).
static void spinUntil(const std::atomic<int> &flag, int value) {
  while (flag.load(std::memory_order_acquire) != value)
    afm_cpu_relax();
}

/// Runs `work(thread)` on `threads` threads at once; returns the seconds
/// from the common start to the last finish. The threads are started
/// first and released together: timed from before their creation, a new
/// thread could begin on its creator's core and spread out only later,
/// and on a Zen 4 VM whose 2-thread read rate was 52-58 GB/s so, the same
/// loop timed from creation read 18-51.
static double timeParallel(int threads, const std::function<void(int)> &work) {
  std::atomic<int> ready = 0, go = 0;
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t)
    pool.emplace_back([&, t] {
      ready.fetch_add(1, std::memory_order_acq_rel);
      spinUntil(go, 1);
      work(t);
    });
  spinUntil(ready, threads - 1);
  auto start = Clock::now();
  go.store(1, std::memory_order_release);
  work(0);
  for (std::thread &thread : pool)
    thread.join();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double afm_bench::coreRoundTripSeconds(int threads) {
  if (threads < 2)
    return 0;
  // The caller writes 2 i + 1, the other thread answers 2 i + 2, on one
  // cache line: each round trip moves the line there and back. At most
  // 20000 round trips or 20 ms a run, whichever comes first: sharing one
  // core (more threads than cores, or a busy machine), each round trip
  // waits for a time slice, and 20000 of them would take minutes. Then -1
  // tells the other thread to stop.
  constexpr int64_t kRoundTrips = 20000;
  constexpr double kMaxSeconds = 0.02;
  alignas(64) std::atomic<int64_t> line = 0;
  double best = 0;
  for (int run = 0; run < 3; ++run) {
    line.store(0);
    std::atomic<int> ready = 0;
    std::thread other([&] {
      ready.store(1, std::memory_order_release);
      for (int64_t i = 0;; ++i) {
        int64_t seen;
        while ((seen = line.load(std::memory_order_acquire)) != 2 * i + 1) {
          if (seen < 0)
            return;
          afm_cpu_relax();
        }
        line.store(2 * i + 2, std::memory_order_release);
      }
    });
    spinUntil(ready, 1);
    auto start = Clock::now();
    int64_t done = 0;
    double elapsed = 0;
    while (done < kRoundTrips && elapsed < kMaxSeconds) {
      line.store(2 * done + 1, std::memory_order_release);
      while (line.load(std::memory_order_acquire) != 2 * done + 2)
        afm_cpu_relax();
      // The clock every 16 round trips: reading it is not free beside a
      // round trip of 30 ns.
      if (++done % 16 == 0 || done == kRoundTrips)
        elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    }
    double seconds =
        std::chrono::duration<double>(Clock::now() - start).count() / done;
    line.store(-1, std::memory_order_release);
    other.join();
    if (run == 0 || seconds < best)
      best = seconds;
  }
  return best;
}

/// Read patterns: the limit is the best of all of them, so that no kernel
/// can beat it by reading in a way the limit did not try. Each sums a
/// slice (the result is kept so the loads cannot be removed).
///
/// Scalar: eight independent 8-byte accumulators, one 64-byte line per
/// step, prefetching 8 KiB ahead as the compiled GEMV kernels do.
static uint64_t sumScalarPrefetch(const uint64_t *data, size_t count) {
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

/// How a vector read pattern prefetches each stream (8 KiB ahead unless
/// said): not at all, one line of each two-line step into L1 (prefetcht0
/// on x86: the adjacent-line prefetcher may bring the other), or both
/// lines into L2 (locality 1, prefetcht2 on x86; on Zen 4 four streams read
/// so reach 26-27 GB/s on 1 thread, against 20-21 every other way).
enum class Prefetch { None, L1, L2 };

/// Vector loads of whole 64-byte lines from `Streams` places of the slice
/// at once (as a GEMV reads several weight rows), prefetched as `Mode` says
/// `Ahead` lines ahead.
template <int Streams, Prefetch Mode, int Ahead = 128>
__attribute__((always_inline)) static inline uint64_t
sumVectorStreams(const uint64_t *data, size_t count) {
  typedef uint64_t Line __attribute__((ext_vector_type(8)));
  const Line *lines = reinterpret_cast<const Line *>(data);
  size_t perStream = count / 8 / Streams;
  Line acc[Streams][2] = {};
  for (size_t i = 0; i + 2 <= perStream; i += 2)
    for (int s = 0; s < Streams; ++s) {
      const Line *line = lines + s * perStream + i;
      if (Mode == Prefetch::L1)
        __builtin_prefetch(line + Ahead);
      if (Mode == Prefetch::L2) {
        __builtin_prefetch(line + Ahead, 0, 1);
        __builtin_prefetch(line + Ahead + 1, 0, 1);
      }
      acc[s][0] += line[0];
      acc[s][1] += line[1];
    }
  uint64_t sum = 0;
  for (int s = 0; s < Streams; ++s)
    for (int j = 0; j < 8; ++j)
      sum += acc[s][0][j] + acc[s][1][j];
  return sum;
}

// One function per pattern and ISA (the target attribute decides the
// instructions of the inlined loop).
#if defined(__x86_64__)
#define AFM_VECTOR_TARGET __attribute__((target("avx512f")))
#define AFM_VECTOR_TARGET2 __attribute__((target("avx2")))
#else
#define AFM_VECTOR_TARGET
#endif
#define AFM_READ_PATTERN(NAME, TARGET, STREAMS, MODE, ...)                     \
  TARGET static uint64_t NAME(const uint64_t *d, size_t n) {                  \
    return sumVectorStreams<STREAMS, Prefetch::MODE, ##__VA_ARGS__>(d, n);     \
  }
AFM_READ_PATTERN(sum1, AFM_VECTOR_TARGET, 1, None)
AFM_READ_PATTERN(sum1P, AFM_VECTOR_TARGET, 1, L1)
// The intel-sapphire-rapids GEMVs' own way (TargetDescription: rows from
// the two halves in turn, 2 KiB ahead): a 2-bit GEMV read at 101-104% of
// the limit without it on a Granite Rapids VM; this pattern reads within
// 2% of the best there (33-35 GB/s on 2 threads against 34-36).
AFM_READ_PATTERN(sum2P2K, AFM_VECTOR_TARGET, 2, L1, 32)
AFM_READ_PATTERN(sum4, AFM_VECTOR_TARGET, 4, None)
AFM_READ_PATTERN(sum4P, AFM_VECTOR_TARGET, 4, L1)
AFM_READ_PATTERN(sum4L2, AFM_VECTOR_TARGET, 4, L2)
AFM_READ_PATTERN(sum8, AFM_VECTOR_TARGET, 8, None)
AFM_READ_PATTERN(sum8L2, AFM_VECTOR_TARGET, 8, L2)
#if defined(__x86_64__)
AFM_READ_PATTERN(sum4AVX2, AFM_VECTOR_TARGET2, 4, None)
AFM_READ_PATTERN(sum4PAVX2, AFM_VECTOR_TARGET2, 4, L1)
#endif
#undef AFM_READ_PATTERN

struct ReadPattern {
  const char *name;
  uint64_t (*sum)(const uint64_t *, size_t);
  bool (*supported)();
};

static bool always() { return true; }
#if defined(__x86_64__)
static bool hasAVX512() { return __builtin_cpu_supports("avx512f"); }
static bool hasAVX2() { return __builtin_cpu_supports("avx2"); }
#endif

static const ReadPattern kPatterns[] = {
    {"scalar x8, prefetch", sumScalarPrefetch, always},
#if defined(__x86_64__)
    {"avx512 1 stream", sum1, hasAVX512},
    {"avx512 1 stream, prefetch", sum1P, hasAVX512},
    {"avx512 2 streams, prefetch 2 KiB ahead", sum2P2K, hasAVX512},
    {"avx512 4 streams", sum4, hasAVX512},
    {"avx512 4 streams, prefetch", sum4P, hasAVX512},
    {"avx512 4 streams, L2 prefetch", sum4L2, hasAVX512},
    {"avx512 8 streams", sum8, hasAVX512},
    {"avx512 8 streams, L2 prefetch", sum8L2, hasAVX512},
    {"avx2 4 streams", sum4AVX2, hasAVX2},
    {"avx2 4 streams, prefetch", sum4PAVX2, hasAVX2},
#else
    {"vector 1 stream", sum1, always},
    {"vector 1 stream, prefetch", sum1P, always},
    {"vector 2 streams, prefetch 2 KiB ahead", sum2P2K, always},
    {"vector 4 streams", sum4, always},
    {"vector 4 streams, prefetch", sum4P, always},
    {"vector 4 streams, L2 prefetch", sum4L2, always},
    {"vector 8 streams", sum8, always},
    {"vector 8 streams, L2 prefetch", sum8L2, always},
#endif
};

/// The best bytes per second of any pattern on `threads` threads (each on
/// its own slice), over `repeats` rounds of every pattern in turn (so a
/// slow moment of the machine does not fall on one pattern only).
static double readBandwidth(const uint64_t *data, size_t count, int threads,
                            int repeats, std::string &bestPattern) {
  double best = 0;
  std::vector<uint64_t> sums(threads);
  size_t slice = count / threads / 64 * 64;
  for (int r = 0; r < repeats; ++r)
    for (const ReadPattern &pattern : kPatterns) {
      if (!pattern.supported())
        continue;
      double seconds = timeParallel(threads, [&](int t) {
        sums[t] += pattern.sum(data + t * slice, slice);
      });
      double rate = slice * threads * sizeof(uint64_t) / seconds;
      if (rate > best) {
        best = rate;
        bestPattern = pattern.name;
      }
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

llvm::Expected<MachineLimits>
afm_bench::measureMachineLimits(size_t bandwidthBytes, int threads,
                                int repeats) {
  MachineLimits limits;
  limits.threads = threads;
  limits.bandwidthBytes = bandwidthBytes;
  size_t count = bandwidthBytes / sizeof(uint64_t);
  {
    // Allocated as the kernels' buffers are (HostBuffer: huge pages where
    // Linux grants them), so that no kernel beats the limit by taking
    // fewer TLB misses: in 4 KiB pages the best pattern read 7-10% less
    // on a Granite Rapids VM (README, afm-bench).
    // HostBuffer zeroes it, so every page is touched before timing.
    auto buffer = mlir::afm::HostBuffer::allocate(count * sizeof(uint64_t));
    if (!buffer)
      return buffer.takeError();
    auto *data = buffer->data<uint64_t>();
    limits.readBytesPerSecond1 =
        readBandwidth(data, count, 1, repeats, limits.readPattern1);
    limits.readBytesPerSecondN =
        readBandwidth(data, count, threads, repeats, limits.readPatternN);
  }
  double (*loop)() = selectFMALoop(limits.fmaISA);
  limits.fmaFlopsPerSecond1 = fmaPeak(loop, 1, repeats);
  limits.fmaFlopsPerSecondN = fmaPeak(loop, threads, repeats);
  limits.lowestReadBytesPerSecond1 = limits.readBytesPerSecond1;
  limits.lowestReadBytesPerSecondN = limits.readBytesPerSecondN;
  limits.coreRoundTripLow = limits.coreRoundTripHigh =
      coreRoundTripSeconds(threads);
  return limits;
}

llvm::Expected<FileReadLimit>
afm_bench::measureFileRead(const std::string &path, int threads, int repeats,
                           uint64_t minBytes, uint64_t maxBytes) {
  void *map = nullptr;
  size_t size = 0;
  if (afm_map_file(path.c_str(), &map, &size) != AFM_OK)
    return llvm::createStringError(llvm::Twine("--read-file: ") +
                                   afm_last_error());
  llvm::scope_exit unmap([&] {
    if (map)
      munmap(map, size);
  });
  if (size < minBytes)
    return llvm::createStringError(
        "--read-file " + path + ": " + llvm::Twine(uint64_t(size)) +
        " bytes; a read limit needs at least " + llvm::Twine(minBytes >> 20) +
        " MiB, past the caches");
  if (size > maxBytes)
    return llvm::createStringError(
        "--read-file " + path + ": " + llvm::Twine(uint64_t(size) >> 20) +
        " MiB, more than half of the memory this process may use (" +
        llvm::Twine(maxBytes >> 19) + " MiB): its pages would not stay in "
        "memory");
  FileReadLimit limit;
  limit.path = path;
  // Whole 64-byte lines per thread slice: readBandwidth rounds down.
  size_t count = size / sizeof(uint64_t);
  limit.bytes = count * sizeof(uint64_t);
  const auto *data = static_cast<const uint64_t *>(map);
  // Every page read once first, so the patterns time memory, not the
  // disk or the page faults that map it.
  volatile uint64_t sink = 0;
  for (size_t i = 0; i < count; i += 4096 / sizeof(uint64_t))
    sink = sink + data[i];
  limit.readBytesPerSecond1 =
      readBandwidth(data, count, 1, repeats, limit.readPattern1);
  limit.readBytesPerSecondN =
      readBandwidth(data, count, threads, repeats, limit.readPatternN);
  return limit;
}

llvm::Expected<AdjacentReadProbe>
AdjacentReadProbe::create(size_t bytes) {
  auto buffer = mlir::afm::HostBuffer::allocate(bytes);
  if (!buffer)
    return buffer.takeError();
  return AdjacentReadProbe(std::move(*buffer));
}

AdjacentReadProbe::Reading AdjacentReadProbe::measure(int threads) const {
  Reading reading;
  reading.coreRoundTripSeconds = coreRoundTripSeconds(threads);
  reading.readBytesPerSecond =
      readBandwidth(buffer.data<uint64_t>(), buffer.size() / sizeof(uint64_t),
                    threads, 1, reading.readPattern);
  return reading;
}

/// Raises `figure` to `other` if that is higher, and with it the pattern
/// it was reached by (`pattern`, when the figure has one).
static void keepHigher(double &figure, std::string *pattern, double other,
                       const std::string &otherPattern = std::string()) {
  if (other <= figure)
    return;
  figure = other;
  if (pattern)
    *pattern = otherPattern;
}

void afm_bench::keepBestLimits(MachineLimits &best,
                               const MachineLimits &again) {
  keepHigher(best.readBytesPerSecond1, &best.readPattern1,
             again.readBytesPerSecond1, again.readPattern1);
  keepHigher(best.readBytesPerSecondN, &best.readPatternN,
             again.readBytesPerSecondN, again.readPatternN);
  keepHigher(best.fmaFlopsPerSecond1, nullptr, again.fmaFlopsPerSecond1);
  keepHigher(best.fmaFlopsPerSecondN, nullptr, again.fmaFlopsPerSecondN);
  best.lowestReadBytesPerSecond1 =
      std::min(best.lowestReadBytesPerSecond1, again.readBytesPerSecond1);
  best.lowestReadBytesPerSecondN =
      std::min(best.lowestReadBytesPerSecondN, again.readBytesPerSecondN);
  best.measurements += again.measurements;
  best.coreRoundTripLow = std::min(best.coreRoundTripLow, again.coreRoundTripLow);
  best.coreRoundTripHigh =
      std::max(best.coreRoundTripHigh, again.coreRoundTripHigh);
}

void afm_bench::keepBestAdjacentRead(MachineLimits &best, int threads,
                                     double readBytesPerSecond,
                                     const std::string &pattern) {
  if (!(readBytesPerSecond > 0))
    return;
  std::string named = pattern + ", next to a kernel";
  // With --bench-threads 1 both figures are one thread's.
  if (threads == 1)
    keepHigher(best.readBytesPerSecond1, &best.readPattern1,
               readBytesPerSecond, named);
  if (threads == best.threads)
    keepHigher(best.readBytesPerSecondN, &best.readPatternN,
               readBytesPerSecond, named);
  ++best.measurementsNextToKernels;
}
