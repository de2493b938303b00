// Probe: does arithmetic between the loads of a read stream keep 2 threads
// out of the VM's high-bandwidth state? Each thread reads its half of a
// 1 GiB buffer (huge pages), one 64-byte line at a time; after each line,
// W vpdpbusd on four independent accumulators (W 0: a pure stream). Optional
// prefetcht2 8 KiB ahead (PF 1). Variants alternate within a round. A
// probe, not part of the build.
//
//   clang -O2 FILE -o streamwork -lpthread && ./streamwork
//
// Results on a Zen 4 VM (AMD EPYC family 25 model 17, 2 cores), 2026-12-03
// 23:30, GB/s; W = vpdpbusd per 64-byte line, "p" = prefetcht2 8 KiB ahead:
//   round  threads  w0   w4   w8   w16  w32 | w0p  w4p  w8p  w16p w32p
//   0      1       17.7 27.4 23.3 11.1  6.2 | 18.4 24.6 21.4 12.0  6.3
//   0      2       53.2 48.7 41.9 24.2 12.6 | 35.4 43.1 43.0 24.9 12.7
//   1      2       45.0 41.9 33.2 21.7 12.7 | 25.3 30.8 32.0 24.3 12.3
//   2      2       48.5 47.7 44.3 14.3  7.9 | 31.3 29.5 30.4 25.0 10.5
//   3      2       29.8 30.4 31.6 24.8 12.8 | 28.6 29.6 29.3 24.7 12.7
//   4      2       28.5 30.5 27.6 17.8 13.3 | 28.3 29.6 30.1 25.4 13.5
//   5      2       28.5 29.5 29.7 23.0 11.2 | 29.9 28.1 28.2 23.9 12.2
//   (1 thread in rounds 1-5: w0 24.7-28.3, w4 17.9-28.6, w8 20.6-22.7;
//   with the prefetch w0p 18.1-28.6, w4p 24.4-27.0, w8p 21.6-24.7.)
// A stream with light work (w4, w8) reaches the high 2-thread state (42-49
// GB/s) without software prefetch and mostly not with it (29-43); in the
// low state (rounds 3-5) the two are equal. The compiled kernels did not
// follow the probe: afm-bench with the GEMVs' weight prefetch off (scratch
// build, AFM_PF_BYTES=0) against on (8 KiB, prefetcht2, kept), 4 rounds
// alternated, each timing against the read rate measured right before and
// after it on as many threads:
//   2-bit GEMV (int8 act.) 1 thread   on 81-89%          off 60-76%
//                          2 threads  on 28.2-34.7 GB/s  off 25.2-31.8 GB/s
//   4-bit LM head (int8)   1 thread   on 65-74%          off 61-76%
//                          2 threads  on 28.8-41.3 GB/s  off 28.7-31.5 GB/s
// So the prefetch stays: it wins on 1 thread and is no worse on 2, where
// neither variant reaches the high state more than now and then.
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
static char *buf; static size_t total = (size_t)1 << 30;
typedef struct { int work, pf, t, n; long long sink; } arg;
#define BODY(W) \
  __attribute__((target("avx512f,avx512bw,avx512vnni"))) \
  static void *run##W(void *p) { \
    arg *a = p; size_t half = total / a->n; const char *b = buf + a->t * half; \
    __m512i acc0 = _mm512_setzero_si512(), acc1 = acc0, acc2 = acc0, acc3 = acc0; \
    __m512i one = _mm512_set1_epi8(1); \
    for (size_t o = 0; o < half; o += 64) { \
      if (a->pf) _mm_prefetch(b + o + 8192, _MM_HINT_T2); \
      __m512i v = _mm512_load_si512((const void *)(b + o)); \
      _Pragma("clang loop unroll(full)") \
      for (int w = 0; w < W; w += 4) { \
        acc0 = _mm512_dpbusd_epi32(acc0, v, one); acc1 = _mm512_dpbusd_epi32(acc1, v, one); \
        acc2 = _mm512_dpbusd_epi32(acc2, v, one); acc3 = _mm512_dpbusd_epi32(acc3, v, one); } \
      acc0 = _mm512_add_epi32(acc0, v); \
    } \
    a->sink = _mm512_reduce_add_epi32(_mm512_add_epi32(_mm512_add_epi32(acc0, acc1), _mm512_add_epi32(acc2, acc3))); \
    return 0; }
BODY(0) BODY(4) BODY(8) BODY(16) BODY(32)
static void *(*runs[])(void *) = {run0, run4, run8, run16, run32};
static double gbs(int n, int work, int pf) {
  int k = work == 0 ? 0 : work == 4 ? 1 : work == 8 ? 2 : work == 16 ? 3 : 4;
  pthread_t th[2]; arg a[2];
  double t0 = now();
  for (int t = 0; t < n; ++t) { a[t] = (arg){work, pf, t, n, 0}; pthread_create(&th[t], 0, runs[k], &a[t]); }
  for (int t = 0; t < n; ++t) pthread_join(th[t], 0);
  return total / (now() - t0) / 1e9;
}
int main(int argc, char **argv) {
  buf = aligned_alloc(2 << 20, total); madvise(buf, total, MADV_HUGEPAGE); memset(buf, 1, total);
  int works[] = {0, 4, 8, 16, 32};
  for (int r = 0; r < 6; ++r) {
    for (int n = 1; n <= 2; ++n) {
      printf("round %d, %d thread(s):", r, n);
      for (int pf = 0; pf < 2; ++pf)
        for (int i = 0; i < 5; ++i) printf(" w%d%s %.1f", works[i], pf ? "p" : "", gbs(n, works[i], pf));
      printf("\n"); fflush(stdout);
    }
  }
}
