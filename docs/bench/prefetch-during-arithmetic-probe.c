// A probe, not part of the build: does a software prefetch issued during
// arithmetic that touches no memory fetch from DRAM meanwhile? Per 64 KiB
// block of a 1.5 GiB buffer (huge pages): FMAS steps of 8 independent FMAs
// per cache line with the next block's 1024 lines prefetched evenly across
// them (HINT 0 none, 1 t0, 2 t1, 3 t2, 4 nta), then the block read (READ 1).
//
//   gcc -O3 -march=native FILE -o pfc && ./pfc HINT FMAS READ
//
// Results: docs/bench/attention-decode-granite-rapids.txt (2026-12-03).
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
enum { BLK = 64 << 10, LINES = BLK / 64 };
volatile float sinkf;
int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: %s HINT FMAS [READ]\n", argv[0]); return 2; }
  int hint = atoi(argv[1]);     // 0 none, 1 t0, 2 t1, 3 t2, 4 nta
  int fmas = atoi(argv[2]);     // FMA steps per line (8 independent zmm chains each)
  int read = argc > 3 ? atoi(argv[3]) : 1;
  size_t total = (size_t)1536 << 20;
  char *buf = mmap(0, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (buf == MAP_FAILED) { perror("mmap"); return 1; }
  madvise(buf, total, MADV_HUGEPAGE); memset(buf, 1, total);
  size_t nblk = total / BLK;
  for (int round = 0; round < 3; ++round) {
    __m512 a[8]; for (int i = 0; i < 8; ++i) a[i] = _mm512_set1_ps(i);
    __m512 m = _mm512_set1_ps(0.999f); __m512i acc = _mm512_setzero_si512();
    double t0 = now();
    for (size_t b = 0; b < nblk; ++b) {
      const char *next = buf + ((b + 1) % nblk) * BLK, *cur = buf + b * BLK;
      for (int l = 0; l < LINES; ++l) {
        switch (hint) {
        case 1: _mm_prefetch(next + 64 * l, _MM_HINT_T0); break;
        case 2: _mm_prefetch(next + 64 * l, _MM_HINT_T1); break;
        case 3: _mm_prefetch(next + 64 * l, _MM_HINT_T2); break;
        case 4: _mm_prefetch(next + 64 * l, _MM_HINT_NTA); break;
        }
        for (int f = 0; f < fmas; ++f) for (int i = 0; i < 8; ++i) a[i] = _mm512_fmadd_ps(a[i], m, m);
      }
      if (read) for (int l = 0; l < LINES; ++l) acc = _mm512_or_si512(acc, _mm512_load_si512(cur + 64 * l));
    }
    double dt = now() - t0;
    __m512 s = a[0]; for (int i = 1; i < 8; ++i) s = _mm512_add_ps(s, a[i]);
    sinkf = _mm512_reduce_add_ps(s) + _mm512_reduce_or_epi32(acc);
    printf("hint %d fmas/line %d read %d: %.3f us per 64 KiB block, %.2f GB/s\n", hint, fmas, read, dt / nblk * 1e6, total / dt / 1e9);
  }
}
