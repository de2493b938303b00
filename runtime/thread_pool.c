/*===- thread_pool.c - threads for afm_host_api.parallel_for ---------------===*
 *
 * One job at a time: the dispatcher publishes it under the mutex with a new
 * generation number and wakes every worker; every thread, the dispatcher
 * included, then claims runs of indices from an atomic counter until none
 * is left, and each worker counts itself done.
 *
 * Claims are guided: each takes 1/(2 * threads) of what is left, at least
 * one index, so a job of n indices is handed out in about
 * 2 * threads * ln(n) runs, long ones first and single indices last. With
 * one fixed chunk per thread, a thread slowed by its VM (its memory path
 * shared, its core preempted) held the others up at the end of every job;
 * with 8 equal chunks per thread each thread still waited half a chunk on
 * average. On the 3B preset with 2 threads (Intel Emerald Rapids VM,
 * alternated runs, docs/bench/thread-pool-chunks-emerald-rapids.txt) the
 * pool's own CPU time per decode step went 5.0-5.8 ms (fixed) -> 4.3-5.3
 * (8 chunks) -> 2.7-4.4 (guided), and a 512-token prompt 6.5 -> 6.2 s with
 * 8 chunks. Each claim is a contiguous run, so a kernel's prefetch of its
 * next index mostly stays useful.
 *
 * A decode step dispatches many short jobs (a 2-bit GEMV is a few hundred
 * microseconds), so waking a sleeping thread for each would cost more than
 * the work. Workers and the dispatcher first spin briefly on the atomic
 * generation and pending count, and only then sleep on the condition
 * variables.
 *
 * The job itself is published without the mutex: the dispatcher writes it,
 * then increments the generation (release); a worker that sees the new
 * generation (acquire) reads it, and the dispatcher does not touch it
 * again until every worker has counted itself done. The mutex and the
 * condition variables serve only threads that sleep, and the other side
 * takes the mutex only when one does (`sleeping`, checked after the
 * generation or the count changes: seq_cst on both sides, so a sleeper
 * either sees the change before it waits or is seen and woken). A worker
 * that took the mutex after spinning on each new generation found it
 * held by the dispatcher and slept in the kernel until it was released:
 * microseconds per job, about 150 jobs a decode step.
 *
 *===----------------------------------------------------------------------===*/

#include "thread_pool.h"

#include "code_loader.h"
#include "error.h"

#include "afm/cpu_relax.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct job {
  int64_t n;
  void (*fn)(void *ctx, int64_t i);
  void *ctx;
} job;

typedef struct worker {
  afm_thread_pool *pool;
  pthread_t thread;
} worker;

struct afm_thread_pool {
  int64_t threads;
  worker *workers; /* threads - 1 */
  int64_t started;
  pthread_mutex_t mutex;
  pthread_cond_t wake;
  pthread_cond_t done;
  _Atomic uint64_t generation;
  _Atomic int64_t pending; /* workers still running the current job */
  _Atomic int64_t sleeping; /* workers waiting on `wake` (or about to) */
  _Atomic bool dispatcherSleeping; /* the dispatcher waits on `done` */
  _Atomic bool stopping;
  job current;
  _Atomic int64_t next; /* the current job's first index not handed out */
  atomic_flag busy; /* set while a job is dispatched */
};

enum { kSpinIterations = AFM_THREAD_POOL_SPIN_ITERATIONS };

/* Claims runs of `j`'s indices and runs them until none is left: each
 * claim takes 1/(2 * threads) of what is left, at least one index. */
AFM_CALLS_LOADED_CODE
static void runClaimedIndices(afm_thread_pool *pool, const job *j) {
  int64_t share = 2 * pool->threads;
  int64_t begin = atomic_load_explicit(&pool->next, memory_order_relaxed);
  while (begin < j->n) {
    int64_t size = (j->n - begin) / share;
    if (size < 1)
      size = 1;
    /* On failure `begin` is reloaded with the counter's current value. */
    if (!atomic_compare_exchange_weak_explicit(&pool->next, &begin,
                                               begin + size,
                                               memory_order_relaxed,
                                               memory_order_relaxed))
      continue;
    for (int64_t i = begin; i < begin + size; ++i)
      j->fn(j->ctx, i);
    begin = atomic_load_explicit(&pool->next, memory_order_relaxed);
  }
}

/* Touches the top `bytes` of the calling thread's stack once, so that the
 * first task needing a deep frame does not take page faults in the middle
 * of a decode step (a step should touch no new memory once warm). Not
 * inlined: the frame is its own, below the caller's. */
__attribute__((noinline)) static void touchStack(size_t bytes) {
  volatile char *frame = __builtin_alloca(bytes);
  for (size_t i = 0; i < bytes; i += 4096)
    frame[i] = 0;
}

enum { kTouchedStackBytes = 256 * 1024 };

static void *workerMain(void *arg) {
  touchStack(kTouchedStackBytes);
  worker *self = arg;
  afm_thread_pool *pool = self->pool;
  uint64_t seen = 0;
  for (;;) {
    for (int spin = 0; spin < kSpinIterations &&
                       atomic_load_explicit(&pool->generation,
                                            memory_order_acquire) == seen;
         ++spin)
      afm_cpu_relax();
    if (atomic_load(&pool->generation) == seen) {
      /* Registered before the last check, so a dispatcher that publishes
       * after it sees `sleeping` and wakes us under the mutex. */
      pthread_mutex_lock(&pool->mutex);
      atomic_fetch_add(&pool->sleeping, 1);
      while (!atomic_load(&pool->stopping) &&
             atomic_load(&pool->generation) == seen)
        pthread_cond_wait(&pool->wake, &pool->mutex);
      atomic_fetch_sub(&pool->sleeping, 1);
      pthread_mutex_unlock(&pool->mutex);
    }
    if (atomic_load(&pool->stopping))
      break;
    seen = atomic_load(&pool->generation);
    job j = pool->current;
    runClaimedIndices(pool, &j);
    if (atomic_fetch_sub(&pool->pending, 1) == 1 &&
        atomic_load(&pool->dispatcherSleeping)) {
      /* Under the mutex, so the dispatcher cannot miss the signal between
       * its check of `pending` and its wait. */
      pthread_mutex_lock(&pool->mutex);
      pthread_cond_signal(&pool->done);
      pthread_mutex_unlock(&pool->mutex);
    }
  }
  return NULL;
}

afm_status afm_thread_pool_create(int32_t num_threads, afm_thread_pool **out) {
  *out = NULL;
  if (num_threads < 1)
    return afm_error(AFM_ERR_ARGUMENT,
                     "a thread pool needs at least 1 thread, got %d",
                     num_threads);
  afm_thread_pool *pool = calloc(1, sizeof(*pool));
  worker *workers =
      num_threads > 1 ? calloc((size_t)num_threads - 1, sizeof(worker)) : NULL;
  if (!pool || (num_threads > 1 && !workers)) {
    free(pool);
    free(workers);
    return afm_error(AFM_ERR_MEMORY, "out of memory for a pool of %d threads",
                     num_threads);
  }
  pool->threads = num_threads;
  pool->workers = workers;
  atomic_flag_clear(&pool->busy);
  pthread_mutex_init(&pool->mutex, NULL);
  pthread_cond_init(&pool->wake, NULL);
  pthread_cond_init(&pool->done, NULL);
  for (int64_t i = 0; i < num_threads - 1; ++i) {
    workers[i].pool = pool;
    int rc = pthread_create(&workers[i].thread, NULL, workerMain, &workers[i]);
    if (rc != 0) {
      afm_thread_pool_free(pool);
      return afm_error(AFM_ERR_MEMORY, "cannot start thread %lld of %d: %s",
                       (long long)i + 2, num_threads, strerror(rc));
    }
    pool->started = i + 1;
  }
  *out = pool;
  return AFM_OK;
}

void afm_thread_pool_free(afm_thread_pool *pool) {
  if (!pool)
    return;
  pthread_mutex_lock(&pool->mutex);
  atomic_store(&pool->stopping, true);
  pthread_cond_broadcast(&pool->wake);
  pthread_mutex_unlock(&pool->mutex);
  for (int64_t i = 0; i < pool->started; ++i)
    pthread_join(pool->workers[i].thread, NULL);
  pthread_cond_destroy(&pool->done);
  pthread_cond_destroy(&pool->wake);
  pthread_mutex_destroy(&pool->mutex);
  free(pool->workers);
  free(pool);
}

int64_t afm_thread_pool_size(const afm_thread_pool *pool) {
  return pool->threads;
}

void afm_thread_pool_parallel_for(void *opaque, int64_t n,
                                  void (*fn)(void *ctx, int64_t i), void *ctx) {
  afm_thread_pool *pool = opaque;
  if (n <= 0)
    return;
  job j = {n, fn, ctx};
  if (pool->threads == 1 || n == 1 || atomic_flag_test_and_set(&pool->busy)) {
    for (int64_t i = 0; i < n; ++i)
      fn(ctx, i);
    return;
  }
  pool->current = j;
  /* Published by the generation's increment below (seq_cst), as the job. */
  atomic_store_explicit(&pool->next, 0, memory_order_relaxed);
  atomic_store(&pool->pending, pool->threads - 1);
  atomic_fetch_add(&pool->generation, 1);
  if (atomic_load(&pool->sleeping) > 0) {
    pthread_mutex_lock(&pool->mutex);
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->mutex);
  }

  runClaimedIndices(pool, &j);

  for (int spin = 0; spin < kSpinIterations &&
                     atomic_load_explicit(&pool->pending,
                                          memory_order_acquire) > 0;
       ++spin)
    afm_cpu_relax();
  if (atomic_load(&pool->pending) > 0) {
    pthread_mutex_lock(&pool->mutex);
    atomic_store(&pool->dispatcherSleeping, true);
    /* The store must be visible before `pending` is read (the worker's
     * side: its decrement, then its read of `dispatcherSleeping`). C11's
     * seq_cst promises that, and AArch64 keeps an STLR before a later
     * LDAR, but qemu-user on an x86 host translates the pair into a plain
     * store and load, which the store buffer reorders: the last worker saw
     * `false` and did not signal, the dispatcher saw `pending` 1 and slept
     * for good (two afm-run processes hung so under qemu-aarch64 in a `make
     * test`). The fence (DMB ISH; MFENCE on x86) holds under every
     * translation and costs nothing next to going to sleep.
     * test/runtime/thread-pool-stress-aarch64.test aims jobs at this
     * moment: without the fence it hangs within a few hundred jobs. */
    atomic_thread_fence(memory_order_seq_cst);
    while (atomic_load(&pool->pending) > 0)
      pthread_cond_wait(&pool->done, &pool->mutex);
    atomic_store(&pool->dispatcherSleeping, false);
    pthread_mutex_unlock(&pool->mutex);
  }
  atomic_flag_clear(&pool->busy);
}
