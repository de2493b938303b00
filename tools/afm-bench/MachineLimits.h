//===- MachineLimits.h - this machine's read bandwidth and FMA peak -*- C++ -*-===//
//
// The limits every afm-bench figure is a fraction of, measured here and
// now rather than taken from a data sheet: a VM's neighbours move them.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_TOOLS_AFM_BENCH_MACHINELIMITS_H
#define AFM_TOOLS_AFM_BENCH_MACHINELIMITS_H

#include "afm/Compiler/HostLibrary.h"

#include "llvm/Support/Error.h"

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace afm_bench {

/// The read limit over the pages of a file, mapped as afm-run maps a
/// model (runtime/map_file.h: read-only, private, huge pages advised), so
/// a model's roofline can be taken over the memory its weights are in. On
/// a VM the physical pages behind a file's page cache stay where they were
/// first read, and they can read at another rate than a fresh buffer: on a
/// Granite Rapids VM one .afmb's pages read 23-27% slower than byte-equal
/// copies', and the 3B decoded 21-22 tokens/s from the one and 28-31 from
/// the copies (docs/bench/weight-pages-granite-rapids.txt).
struct FileReadLimit {
  std::string path;
  size_t bytes = 0;
  double readBytesPerSecond1 = 0, readBytesPerSecondN = 0;
  std::string readPattern1, readPatternN;
};

struct MachineLimits {
  int threads = 1;
  /// Bytes per second reading a buffer far larger than the caches: one
  /// thread, and `threads` threads on disjoint slices.
  double readBytesPerSecond1 = 0, readBytesPerSecondN = 0;
  /// The read pattern that reached each (the limit is the best of several:
  /// scalar or vector loads, one or several streams, with and without
  /// software prefetch).
  std::string readPattern1, readPatternN;
  /// FP32 FLOP/s (an FMA is 2) of independent FMA chains in registers.
  double fmaFlopsPerSecond1 = 0, fmaFlopsPerSecondN = 0;
  /// The vector ISA the FMA loop ran on ("avx512f", "avx2+fma", ...).
  std::string fmaISA;
  size_t bandwidthBytes = 0;
  /// How many times the limits were measured (before and after the
  /// kernels and models): each figure above is the best of them, and the
  /// lowest read bandwidth seen is kept to show the spread.
  int measurements = 1;
  /// Of the read figures, how many were taken next to kernels
  /// (AdjacentReadProbe, folded in by keepBestAdjacentRead).
  int measurementsNextToKernels = 0;
  double lowestReadBytesPerSecond1 = 0, lowestReadBytesPerSecondN = 0;
  /// The shortest and longest round trip of a cache line between two
  /// threads seen over the measurements (coreRoundTripSeconds); 0 with one
  /// thread.
  double coreRoundTripLow = 0, coreRoundTripHigh = 0;
  /// Read limits over files' own pages (afm-bench --read-file), in the
  /// order given; measured once, before the first limits.
  std::vector<FileReadLimit> fileReads;
};

/// Seconds for a cache line to go from one thread to another and back
/// (the best of a few runs of many round trips), 0 when `threads` < 2. On
/// a VM it says where the vCPUs sit now: tens of nanoseconds between cores
/// that share a cache, hundreds between distant ones. On a Zen 4 VM the
/// 2-thread read rate was 30-35 GB/s at 28-70 ns and 50-58 GB/s at 310-340
/// ns (the two cores then draw on separate memory paths), and it moved
/// between the two within seconds as the host moved the vCPUs.
double coreRoundTripSeconds(int threads);

/// Measures the limits with a `bandwidthBytes` buffer on `threads`
/// threads; each figure is the best of `repeats` runs. An error when the
/// buffer cannot be had.
llvm::Expected<MachineLimits> measureMachineLimits(size_t bandwidthBytes,
                                                   int threads, int repeats);

/// Maps `path`, reads every page once (into the page cache), then
/// measures every read pattern over it on 1 and `threads` threads, each
/// figure the best of `repeats` rounds. An error naming the file when it
/// cannot be mapped, is smaller than `minBytes` (the caches would answer)
/// or larger than `maxBytes` (the disk would).
llvm::Expected<FileReadLimit> measureFileRead(const std::string &path,
                                              int threads, int repeats,
                                              uint64_t minBytes,
                                              uint64_t maxBytes);

/// Folds a later measurement into `best`: each figure the better of the
/// two (with the pattern that reached it), the lowest reads kept apart. A
/// VM's bandwidth moves between measurements, so a limit measured once can
/// dip below what a kernel sustains a minute later.
void keepBestLimits(MachineLimits &best, const MachineLimits &again);

/// Folds a read rate measured next to a kernel (AdjacentReadProbe: the
/// same patterns over another buffer past the caches) into the read limit
/// on `threads` threads: it too is what this machine's memory gave in this
/// run. Without it a kernel timed while the VM's memory read faster than
/// at either measurement of the limits could beat the limit (a 2-bit GEMV
/// at 101% of the limit, 97% of the probe next to it, on a Granite Rapids
/// VM), which is the limit's error, not the kernel's.
void keepBestAdjacentRead(MachineLimits &best, int threads,
                          double readBytesPerSecond,
                          const std::string &pattern);

/// The read bandwidth measured right next to a kernel's timing: every read
/// pattern once over a buffer kept for the purpose. On a VM the memory's
/// state can change within seconds (on a Zen 4 VM the 2-thread read rate
/// moved between about 30 and 50-60 GB/s from one kernel to the next), so
/// a kernel's fraction of the run's best limit can mostly measure when it
/// ran; its fraction of the read rate just before and after it does not.
class AdjacentReadProbe {
public:
  /// A probe over `bytes` (past the last-level cache, so it reads DRAM).
  static llvm::Expected<AdjacentReadProbe> create(size_t bytes);

  struct Reading {
    double readBytesPerSecond = 0; // the best pattern on the threads
    std::string readPattern;         // which pattern that was
    double coreRoundTripSeconds = 0; // coreRoundTripSeconds(threads)
  };
  /// The read rate and the cores' round trip on `threads` threads, now.
  Reading measure(int threads) const;

private:
  explicit AdjacentReadProbe(mlir::afm::HostBuffer buffer)
      : buffer(std::move(buffer)) {}

  mlir::afm::HostBuffer buffer;
};

} // namespace afm_bench

#endif // AFM_TOOLS_AFM_BENCH_MACHINELIMITS_H
