//===- HostThreads.h - an afm_host_api over the runtime's pool --*- C++ -*-===//
//
// What a session hands compiled code (include/afm/kernel_abi.h), for the
// kernels afm-bench compiles with GraphThreads::Host: parallel_for on the
// C runtime's own thread pool, so kernels run on the threads models do.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_TOOLS_AFM_BENCH_HOSTTHREADS_H
#define AFM_TOOLS_AFM_BENCH_HOSTTHREADS_H

#include "afm/kernel_abi.h"

#include "llvm/Support/Error.h"

#include <atomic>
#include <memory>

struct afm_thread_pool;

namespace afm_bench {

class HostThreads {
public:
  /// A pool of `threads` threads, the caller's included.
  static llvm::Expected<std::unique_ptr<HostThreads>> create(int threads);
  HostThreads(const HostThreads &) = delete;
  HostThreads &operator=(const HostThreads &) = delete;
  ~HostThreads();

  /// The host API to pass as a kernel's first argument.
  const afm_host_api *api() const { return &host; }
  int threads() const { return static_cast<int>(host.num_threads); }
  /// parallel_for calls so far: zero after a kernel call means the kernel
  /// ran on the calling thread alone.
  int64_t parallelCalls() const { return calls.load(); }

private:
  HostThreads() = default;
  static void parallelFor(void *self, int64_t n,
                          void (*fn)(void *ctx, int64_t i), void *ctx);

  afm_thread_pool *pool = nullptr;
  afm_host_api host{};
  std::atomic<int64_t> calls{0};
};

} // namespace afm_bench

#endif // AFM_TOOLS_AFM_BENCH_HOSTTHREADS_H
