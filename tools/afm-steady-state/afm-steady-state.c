/*===- afm-steady-state.c - heap allocations and page faults of decoding --===*
 *
 * afm-steady-state MODEL.afmb [--threads T] [--warmup N] [--steps N]
 *
 * Loads a model, prefills a 3-token prompt, decodes `warmup` tokens (and
 * one more after a pause, so that sleeping workers wake up once), then
 * counts what `steps` more decode steps cost the process beyond compute:
 * calls of the C library's allocator (malloc, calloc, realloc,
 * aligned_alloc, posix_memalign, memalign, valloc; from any thread, the
 * model's code included), minor page faults (getrusage), and allocations
 * the steps did not free again (a leak grows the process every step).
 * Prints
 *   heap_allocations: N
 *   minor_page_faults: N
 *   heap_outstanding: N
 *   rss_growth_kb: N     (resident set after the steps minus before)
 * A decode step of a compiled model should cost neither once warm: its
 * temporaries live in the session's arena (afm-plan-step-memory).
 *
 * The allocator is counted by defining its entry points here, exported
 * (the executable links with --export-dynamic), so that the model library
 * the runtime dlopens binds to them; they forward to glibc's __libc_*.
 *===----------------------------------------------------------------------===*/

#define _GNU_SOURCE
#include "afm/runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static atomic_long allocations, releases;

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

void *malloc(size_t size) {
  atomic_fetch_add(&allocations, 1);
  return __libc_malloc(size);
}
void *calloc(size_t n, size_t size) {
  atomic_fetch_add(&allocations, 1);
  return __libc_calloc(n, size);
}
void *realloc(void *p, size_t size) {
  atomic_fetch_add(&allocations, 1);
  if (p)
    atomic_fetch_add(&releases, 1);
  return __libc_realloc(p, size);
}
void *memalign(size_t alignment, size_t size) {
  atomic_fetch_add(&allocations, 1);
  return __libc_memalign(alignment, size);
}
void *aligned_alloc(size_t alignment, size_t size) {
  return memalign(alignment, size);
}
void *valloc(size_t size) { return memalign(4096, size); }
int posix_memalign(void **out, size_t alignment, size_t size) {
  void *p = memalign(alignment, size);
  if (!p)
    return ENOMEM;
  *out = p;
  return 0;
}
void free(void *p) {
  if (p)
    atomic_fetch_add(&releases, 1);
  __libc_free(p);
}

static long minorFaults(void) {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

/* The resident set in KiB (/proc/self/statm), or -1 where there is none.
 * Read with open/read, not stdio, which would allocate. */
static long residentKiB(void) {
  char text[128];
  int fd = open("/proc/self/statm", O_RDONLY);
  if (fd < 0)
    return -1;
  ssize_t n = read(fd, text, sizeof(text) - 1);
  close(fd);
  long size = 0, resident = -1;
  if (n <= 0)
    return -1;
  text[n] = '\0';
  if (sscanf(text, "%ld %ld", &size, &resident) != 2)
    return -1;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static int fail(const char *what) {
  fprintf(stderr, "afm-steady-state: error: %s: %s\n", what, afm_last_error());
  return 1;
}

int main(int argc, char **argv) {
  const char *path = NULL;
  long threads = 1, warmup = 20, steps = 100;
  for (int i = 1; i < argc; ++i) {
    if (i + 1 < argc && strcmp(argv[i], "--threads") == 0)
      threads = atol(argv[++i]);
    else if (i + 1 < argc && strcmp(argv[i], "--warmup") == 0)
      warmup = atol(argv[++i]);
    else if (i + 1 < argc && strcmp(argv[i], "--steps") == 0)
      steps = atol(argv[++i]);
    else if (argv[i][0] != '-' && !path)
      path = argv[i];
    else {
      fprintf(stderr, "usage: afm-steady-state MODEL.afmb [--threads T] "
                      "[--warmup N] [--steps N]\n");
      return 2;
    }
  }
  if (!path || threads < 1 || warmup < 1 || steps < 1) {
    fprintf(stderr, "usage: afm-steady-state MODEL.afmb [--threads T] "
                    "[--warmup N] [--steps N]\n");
    return 2;
  }
  afm_model *model;
  if (afm_model_load(path, 0, &model) != AFM_OK)
    return fail("load");
  if (4 + warmup + steps > afm_model_context_length(model)) {
    fprintf(stderr, "afm-steady-state: error: 4 + %ld + %ld tokens exceed "
                    "the context of %d\n",
            warmup, steps, afm_model_context_length(model));
    return 1;
  }
  afm_session_options options = {0};
  options.num_threads = (int32_t)threads;
  afm_session *session;
  if (afm_session_create(model, &options, &session) != AFM_OK)
    return fail("session");
  const int32_t prompt[3] = {1, 2, 3};
  if (afm_session_prefill(session, prompt, 3) != AFM_OK)
    return fail("prefill");
  int32_t token;
  for (long i = 0; i < warmup; ++i)
    if (afm_session_argmax(session, &token) != AFM_OK ||
        afm_session_decode(session, token) != AFM_OK)
      return fail("decode");
  // Once more after a pause long enough for the thread pool's workers to
  // stop spinning and sleep: their wake-up path runs (and its code pages
  // are touched) in the warm-up too, not first inside the measured steps.
  struct timespec pause = {0, 50 * 1000 * 1000};
  nanosleep(&pause, NULL);
  if (afm_session_argmax(session, &token) != AFM_OK ||
      afm_session_decode(session, token) != AFM_OK)
    return fail("decode");
  long allocationsBefore = atomic_load(&allocations);
  long releasesBefore = atomic_load(&releases);
  long faultsBefore = minorFaults();
  long residentBefore = residentKiB();
  for (long i = 0; i < steps; ++i)
    if (afm_session_argmax(session, &token) != AFM_OK ||
        afm_session_decode(session, token) != AFM_OK)
      return fail("decode");
  long faults = minorFaults() - faultsBefore;
  long residentGrowth = residentKiB() - residentBefore;
  long allocated = atomic_load(&allocations) - allocationsBefore;
  long released = atomic_load(&releases) - releasesBefore;
  printf("heap_allocations: %ld\nminor_page_faults: %ld\n"
         "heap_outstanding: %ld\nrss_growth_kb: %ld\n",
         allocated, faults, allocated - released, residentGrowth);
  afm_session_free(session);
  afm_model_free(model);
  return 0;
}
