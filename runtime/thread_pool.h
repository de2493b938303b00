/*===- thread_pool.h - threads for afm_host_api.parallel_for -------*- C -*-===*
 *
 * A fixed set of worker threads plus the calling thread. parallel_for gives
 * each thread (the caller included) an equal contiguous share of [0, n),
 * which it runs from the front in runs of a quarter of what is left; a
 * thread done with its share steals the back half of what is left of
 * another's, and so on until none is left. It returns when every index is
 * done. A pool of one thread runs everything inline. A call made while the
 * pool is busy (from inside an index, or from another thread) runs inline
 * too, so nesting never deadlocks.
 *
 *===----------------------------------------------------------------------===*/

#ifndef AFM_RUNTIME_THREAD_POOL_H
#define AFM_RUNTIME_THREAD_POOL_H

#include "afm/runtime.h"

#include <stdint.h>

typedef struct afm_thread_pool afm_thread_pool;

/* Spin-wait iterations (each a load and afm_cpu_relax()) before a waiting
 * thread sleeps: tens of microseconds. Public for the stress test, which
 * aims jobs at the moment the dispatcher's spin runs out. */
enum { AFM_THREAD_POOL_SPIN_ITERATIONS = 4096 };

/* Starts `num_threads - 1` workers (num_threads >= 1). */
afm_status afm_thread_pool_create(int32_t num_threads, afm_thread_pool **out);

/* Stops and joins the workers. */
void afm_thread_pool_free(afm_thread_pool *pool);

/* Threads the pool runs on, the caller included. */
int64_t afm_thread_pool_size(const afm_thread_pool *pool);

/* afm_host_api.parallel_for; `pool` is an afm_thread_pool. */
void afm_thread_pool_parallel_for(void *pool, int64_t n,
                                  void (*fn)(void *ctx, int64_t i), void *ctx);

#endif /* AFM_RUNTIME_THREAD_POOL_H */
