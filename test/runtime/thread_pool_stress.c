/*===- thread_pool_stress.c - the thread pool's hand-overs, many times ----===*
 *
 * afm-thread-pool-stress [THREADS [JOBS [SECONDS]]] (defaults 2, 4000, 60)
 * runs JOBS short parallel_for jobs through the runtime's pool in each of
 * two phases, under a watchdog:
 *
 * - mixed: 2-5 indices a job, each busy for a time drawn log-uniformly
 *   between 0.2 us and 500 us, with pauses of the same spread before one
 *   job in four, so workers see the next job while spinning or only after
 *   going to sleep;
 * - aimed: one index per thread; the dispatcher's lasts until a worker has
 *   claimed one, a worker's about as long as the pool's spin-wait, steered
 *   job by job (a staircase: shorter after a job the dispatcher slept
 *   through, longer after one it spun through) to where the last worker
 *   finishes just as the dispatcher stops spinning and goes to sleep. The
 *   two sides of the pool's Dekker pair (the dispatcher's
 *   `dispatcherSleeping` store, then its read of `pending`; the worker's
 *   decrement, then its read of the flag) then meet within nanoseconds.
 *
 * A hand-over that loses a wake-up hangs the pool: the watchdog (SIGALRM
 * after SECONDS) then prints the phase and job it hung in and exits 2, so
 * a memory-ordering slip fails a test instead of hanging it. An index that
 * runs twice or never exits 1.
 *
 * Built for the host and cross-built for AArch64 with the runtime: that
 * pair once needed an explicit fence that only qemu-user's translation of
 * AArch64 on an x86 host showed missing (STLR; LDAR run as a plain store
 * and load, which the host's store buffer reorders).
 *
 *===----------------------------------------------------------------------===*/

#define _POSIX_C_SOURCE 200809L /* clock_gettime, alarm */

#include "runtime/thread_pool.h"

#include "afm/cpu_relax.h"

#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { kMaxIndices = 5 };

typedef struct stress_job {
  int64_t busyNs[kMaxIndices]; /* mixed: every thread */
  int64_t workerNs;            /* aimed: an index's time on a worker */
  _Atomic bool workerStarted;   /* aimed: a worker has claimed an index */
  _Atomic int64_t workerDoneNs; /* aimed: when a worker finished one */
  _Atomic int hits[kMaxIndices];
} stress_job;

static _Thread_local bool onDispatcher;
static volatile sig_atomic_t currentJob = -1;
static const char *volatile currentPhase = "start";

static int64_t nowNs(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void busyFor(int64_t ns) {
  for (int64_t end = nowNs() + ns; nowNs() < end;)
    ;
}

/* xorshift64: the same durations every run. */
static uint64_t nextRandom(uint64_t *state) {
  uint64_t x = *state;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return *state = x;
}

static double unitRandom(uint64_t *state) {
  return (double)(nextRandom(state) >> 11) / (double)(1ull << 53);
}

/* Log-uniform between 200 ns and 500 us: every decade around the pool's
 * spin length (tens of microseconds on a host, more under qemu) is hit. */
static int64_t drawNs(uint64_t *state) {
  return (int64_t)(200.0 * exp(unitRandom(state) * log(500000.0 / 200.0)));
}

/* The pool's spin-wait as it runs on this machine: its iterations of an
 * acquire load and a pause, best of a few. */
static int64_t timeSpinNs(void) {
  _Atomic int64_t flag = 0;
  int64_t best = INT64_MAX;
  for (int round = 0; round < 5; ++round) {
    int64_t start = nowNs();
    for (int spin = 0; spin < AFM_THREAD_POOL_SPIN_ITERATIONS &&
                       atomic_load_explicit(&flag, memory_order_acquire) == 0;
         ++spin)
      afm_cpu_relax();
    int64_t took = nowNs() - start;
    best = took < best ? took : best;
  }
  return best;
}

static void runMixedIndex(void *ctx, int64_t i) {
  stress_job *job = ctx;
  busyFor(job->busyNs[i]);
  atomic_fetch_add(&job->hits[i], 1);
}

/* The dispatcher's index lasts until a worker has claimed one (at most
 * 1 ms), so that the dispatcher starts spinning as the worker starts. */
static void runAimedIndex(void *ctx, int64_t i) {
  stress_job *job = ctx;
  if (onDispatcher) {
    for (int64_t end = nowNs() + 1000000;
         !atomic_load(&job->workerStarted) && nowNs() < end;)
      ;
  } else {
    atomic_store(&job->workerStarted, true);
    busyFor(job->workerNs);
    atomic_store(&job->workerDoneNs, nowNs());
  }
  atomic_fetch_add(&job->hits[i], 1);
}

static void onAlarm(int sig) {
  (void)sig;
  char message[128];
  int length = snprintf(message, sizeof message,
                        "afm-thread-pool-stress: the pool hung in %s job %ld\n",
                        currentPhase, (long)currentJob);
  if (length > 0)
    (void)!write(2, message, (size_t)length);
  _exit(2);
}

static long parseArg(const char *text, const char *what, long min, long max) {
  char *end;
  long value = strtol(text, &end, 10);
  if (*text == '\0' || *end != '\0' || value < min || value > max) {
    fprintf(stderr, "afm-thread-pool-stress: %s must be %ld..%ld, got '%s'\n",
            what, min, max, text);
    exit(64);
  }
  return value;
}

/* Runs `job` and checks that each of its `n` indices ran once. */
static bool runJob(afm_thread_pool *pool, stress_job *job, int64_t n,
                   void (*fn)(void *, int64_t), long index) {
  currentJob = (sig_atomic_t)index;
  afm_thread_pool_parallel_for(pool, n, fn, job);
  for (int64_t i = 0; i < n; ++i) {
    int hits = atomic_load(&job->hits[i]);
    if (hits != 1) {
      fprintf(stderr,
              "afm-thread-pool-stress: %s job %ld index %lld ran %d times\n",
              currentPhase, index, (long long)i, hits);
      return false;
    }
  }
  return true;
}

int main(int argc, char **argv) {
  if (argc > 4 || (argc > 1 && strcmp(argv[1], "--help") == 0)) {
    fprintf(stderr, "usage: afm-thread-pool-stress [THREADS [JOBS "
                    "[SECONDS]]]\n");
    return 64;
  }
  long threads = argc > 1 ? parseArg(argv[1], "THREADS", 2, 64) : 2;
  long jobs = argc > 2 ? parseArg(argv[2], "JOBS", 1, 100000000) : 4000;
  long seconds = argc > 3 ? parseArg(argv[3], "SECONDS", 1, 86400) : 60;

  afm_thread_pool *pool;
  if (afm_thread_pool_create((int32_t)threads, &pool) != AFM_OK) {
    fprintf(stderr, "afm-thread-pool-stress: cannot start %ld threads\n",
            threads);
    return 1;
  }
  onDispatcher = true;
  signal(SIGALRM, onAlarm);
  alarm((unsigned)seconds);

  uint64_t state = 0x9e3779b97f4a7c15ull;
  long indices = 0;
  currentPhase = "mixed";
  for (long j = 0; j < jobs; ++j) {
    stress_job job = {0};
    int64_t n = 2 + (int64_t)(nextRandom(&state) % (kMaxIndices - 1));
    for (int64_t i = 0; i < n; ++i)
      job.busyNs[i] = drawNs(&state);
    if (nextRandom(&state) % 4 == 0)
      busyFor(drawNs(&state));
    if (!runJob(pool, &job, n, runMixedIndex, j))
      return 1;
    indices += (long)n;
  }

  /* The staircase's step is 1/256 of the spin-wait (with as much random
   * jitter); the dispatcher slept through a job when it returned more than
   * 3 us after the worker finished (a futex wake-up; spinning, it sees the
   * worker's count within a microsecond). Jobs whose indices all ran on
   * the dispatcher (its worker preempted) leave the staircase alone. */
  int64_t spinNs = timeSpinNs();
  int64_t step = spinNs / 256 + 1, workerNs = spinNs;
  currentPhase = "aimed";
  for (long j = 0; j < jobs; ++j) {
    stress_job job = {0};
    job.workerNs = workerNs + (int64_t)(nextRandom(&state) % (uint64_t)step);
    if (!runJob(pool, &job, threads, runAimedIndex, j))
      return 1;
    int64_t doneNs = atomic_load(&job.workerDoneNs);
    if (doneNs != 0) {
      workerNs += nowNs() - doneNs > 3000 ? -step : step;
      workerNs = workerNs < step ? step : workerNs;
    }
    indices += threads;
  }
  alarm(0);
  afm_thread_pool_free(pool);
  printf("%ld mixed and %ld aimed jobs, %ld indices on %ld threads: every "
         "index ran once\n",
         jobs, jobs, indices, threads);
  return 0;
}
