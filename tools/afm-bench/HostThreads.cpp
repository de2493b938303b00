//===- HostThreads.cpp - an afm_host_api over the runtime's pool ----------===//

#include "HostThreads.h"

extern "C" {
#include "runtime/thread_pool.h"
}

using namespace afm_bench;

llvm::Expected<std::unique_ptr<HostThreads>>
HostThreads::create(int threads) {
  std::unique_ptr<HostThreads> result(new HostThreads());
  if (afm_thread_pool_create(threads, &result->pool) != AFM_OK)
    return llvm::createStringError(llvm::Twine("cannot start ") +
                                   llvm::Twine(threads) +
                                   " threads: " + afm_last_error());
  result->host = {parallelFor,
                  result.get(),
                  afm_thread_pool_size(result->pool),
                  /*track_begin=*/0,
                  /*track_end=*/INT64_MAX,
                  afm_track_allreduce_local,
                  /*track_ctx=*/nullptr};
  return std::move(result);
}

HostThreads::~HostThreads() { afm_thread_pool_free(pool); }

void HostThreads::parallelFor(void *self, int64_t n,
                              void (*fn)(void *ctx, int64_t i), void *ctx) {
  auto *threads = static_cast<HostThreads *>(self);
  threads->calls.fetch_add(1, std::memory_order_relaxed);
  afm_thread_pool_parallel_for(threads->pool, n, fn, ctx);
}
