/*===- thread_pool.c - threads for afm_host_api.parallel_for ---------------===*
 *
 * One job at a time: the dispatcher publishes it with a new generation
 * number and wakes every worker; every thread, the dispatcher included,
 * then claims runs of indices until none is left, and each worker counts
 * itself done.
 *
 * Each thread owns a share of the job, [t * n / T, (t + 1) * n / T) for
 * thread t of T, and claims runs from its front, each a quarter of what is
 * left of it (at least one index). A thread whose share is empty steals
 * the back half of what is left of another's and makes it its own share,
 * claimed the same way and open to thieves in turn (so a late steal of a
 * long stretch is split again rather than run alone while the others
 * wait). So a thread reads one contiguous stretch from its share's start
 * up to where a thief stopped it, and a kernel's prefetch of the rows
 * after its current one is used by the same thread (with runs claimed
 * from one counter shared by all, the other thread had claimed them in
 * between, about 27 times in a job of 3072 rows). A share's front and back
 * are one atomic word its owner mostly touches alone, instead of a counter
 * every claim moved between the cores. On the 3B preset with 2 threads
 * (Granite Rapids VM, 2026-12-04,
 * docs/bench/thread-pool-shares-granite-rapids.txt) decode ran 2.6-4.9%
 * faster at context 128 (5 alternated pairs) and 2.1-6.1% at 1024 and
 * 2048; prompts took the same time within 2.5%. The small GEMVs gained
 * most: split in fixed halves, the attention projections' (2.4 and 0.8
 * MB) took 10% and 19% less time than with claims from one counter.
 *
 * Stealing keeps what guided claims from one counter gave before it: a
 * thread slowed by its VM (its memory path shared, its core preempted)
 * does not hold the others up at the end of a job. With one fixed chunk
 * per thread it did (docs/bench/thread-pool-chunks-emerald-rapids.txt:
 * the pool's CPU time per decode step 5.0-5.8 ms fixed, 2.7-4.4 guided).
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

/* What is left of a thread's share of the current job: indices [front,
 * back), `front` in the low 32 bits, empty when front >= back. One word,
 * so that the owner's claim from the front and a thief's from the back
 * are each one compare-and-swap; only the owner writes an empty share (a
 * stolen range). Ranges are never handed out twice within a job, so a
 * stale compare-and-swap cannot succeed on a range that came back. On its
 * own cache line: the owner claims from it alone until a thief comes. */
typedef struct share {
  _Alignas(64) _Atomic uint64_t range;
} share;

typedef struct worker {
  afm_thread_pool *pool;
  pthread_t thread;
  int64_t index; /* its share: 1 .. threads - 1 (the dispatcher's is 0) */
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
  share *shares; /* threads, one per thread, the dispatcher's first */
  atomic_flag busy; /* set while a job is dispatched */
};

/* Shares hold 32-bit indices: larger jobs run as several of at most this
 * many indices (afm_thread_pool_parallel_for). */
static const int64_t kMaxJob = 0xffffffffll;

static uint64_t packRange(uint64_t front, uint64_t back) {
  return front | back << 32;
}

/* The first index of thread `t`'s share of a job of `n` indices. */
static uint64_t shareBegin(int64_t n, int64_t threads, int64_t t) {
  return (uint64_t)n * (uint64_t)t / (uint64_t)threads; /* n < 2^32 */
}

/* Takes a run from share `s`: from the front (its owner: a quarter of what
 * is left) or from the back (a thief: half of it), at least one index.
 * Returns false when the share is empty; else [*begin, *end). */
static bool claimFromShare(share *s, bool fromFront, int64_t *begin,
                           int64_t *end) {
  uint64_t range = atomic_load_explicit(&s->range, memory_order_relaxed);
  for (;;) {
    uint64_t front = range & 0xffffffffu, back = range >> 32;
    if (front >= back)
      return false;
    uint64_t left = back - front;
    uint64_t size = fromFront ? left / 4 : left / 2;
    if (size < 1)
      size = 1;
    uint64_t next = fromFront ? packRange(front + size, back)
                              : packRange(front, back - size);
    /* On failure `range` is reloaded with the share's current value. */
    if (atomic_compare_exchange_weak_explicit(&s->range, &range, next,
                                              memory_order_relaxed,
                                              memory_order_relaxed)) {
      *begin = (int64_t)(fromFront ? front : back - size);
      *end = (int64_t)(fromFront ? front + size : back);
      return true;
    }
  }
}

/* Runs the indices of thread `self`'s share from its front; when it is
 * empty, steals the back half of another's (the next thread's first) into
 * it and goes on, until every share is empty. */
AFM_CALLS_LOADED_CODE
static void runClaimedIndices(afm_thread_pool *pool, const job *j,
                              int64_t self) {
  int64_t threads = pool->threads, begin, end;
  share *own = &pool->shares[self];
  for (;;) {
    while (claimFromShare(own, /*fromFront=*/true, &begin, &end))
      for (int64_t i = begin; i < end; ++i)
        j->fn(j->ctx, i);
    bool stole = false;
    for (int64_t k = 1; k < threads && !stole; ++k)
      stole = claimFromShare(&pool->shares[(self + k) % threads],
                             /*fromFront=*/false, &begin, &end);
    if (!stole)
      return;
    /* Ours is empty, so no other thread writes it: a plain store. */
    atomic_store_explicit(&own->range,
                          packRange((uint64_t)begin, (uint64_t)end),
                          memory_order_relaxed);
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
    for (int spin = 0; spin < AFM_THREAD_POOL_SPIN_ITERATIONS &&
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
    runClaimedIndices(pool, &j, self->index);
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
  share *shares = aligned_alloc(_Alignof(share),
                                (size_t)num_threads * sizeof(share));
  if (!pool || (num_threads > 1 && !workers) || !shares) {
    free(pool);
    free(workers);
    free(shares);
    return afm_error(AFM_ERR_MEMORY, "out of memory for a pool of %d threads",
                     num_threads);
  }
  pool->threads = num_threads;
  pool->workers = workers;
  pool->shares = shares;
  for (int64_t t = 0; t < num_threads; ++t)
    atomic_init(&shares[t].range, 0);
  atomic_flag_clear(&pool->busy);
  pthread_mutex_init(&pool->mutex, NULL);
  pthread_cond_init(&pool->wake, NULL);
  pthread_cond_init(&pool->done, NULL);
  for (int64_t i = 0; i < num_threads - 1; ++i) {
    workers[i].pool = pool;
    workers[i].index = i + 1;
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
  free(pool->shares);
  free(pool);
}

int64_t afm_thread_pool_size(const afm_thread_pool *pool) {
  return pool->threads;
}

/* A part of a job too large for 32-bit shares: its indices from `first`. */
typedef struct offset_job {
  int64_t first;
  void (*fn)(void *ctx, int64_t i);
  void *ctx;
} offset_job;

AFM_CALLS_LOADED_CODE
static void runOffsetIndex(void *ctx, int64_t i) {
  const offset_job *o = ctx;
  o->fn(o->ctx, o->first + i);
}

void afm_thread_pool_parallel_for(void *opaque, int64_t n,
                                  void (*fn)(void *ctx, int64_t i), void *ctx) {
  afm_thread_pool *pool = opaque;
  if (n <= 0)
    return;
  if (pool->threads == 1 || n == 1 || atomic_flag_test_and_set(&pool->busy)) {
    for (int64_t i = 0; i < n; ++i)
      fn(ctx, i);
    return;
  }
  if (n > kMaxJob) {
    /* Shares count in 32 bits: a larger job runs as several. (No model
     * comes near: a row per index.) */
    atomic_flag_clear(&pool->busy);
    for (int64_t done = 0; done < n;) {
      int64_t part = n - done < kMaxJob ? n - done : kMaxJob;
      offset_job o = {done, fn, ctx};
      afm_thread_pool_parallel_for(pool, part, runOffsetIndex, &o);
      done += part;
    }
    return;
  }
  job j = {n, fn, ctx};
  pool->current = j;
  /* Published by the generation's increment below (seq_cst), as the job. */
  for (int64_t t = 0; t < pool->threads; ++t)
    atomic_store_explicit(&pool->shares[t].range,
                          packRange(shareBegin(n, pool->threads, t),
                                    shareBegin(n, pool->threads, t + 1)),
                          memory_order_relaxed);
  atomic_store(&pool->pending, pool->threads - 1);
  atomic_fetch_add(&pool->generation, 1);
  if (atomic_load(&pool->sleeping) > 0) {
    pthread_mutex_lock(&pool->mutex);
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->mutex);
  }

  runClaimedIndices(pool, &j, 0);

  for (int spin = 0; spin < AFM_THREAD_POOL_SPIN_ITERATIONS &&
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
