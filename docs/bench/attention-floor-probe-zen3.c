// Probe: how fast can decode attention's two hot loops run on an AVX2
// core (docs/bench/attention-floor-zen3-2026-12-06.txt)?
//   clang -O2 -mavx2 -mfma attention-floor-probe-zen3.c && ./a.out
// 1. Pass 3 (weighted values) as afm compiles it for x86-64-v3: a block of
//    256 slots of int8 value rows (128 bytes, in L1/L2), 3 query heads a
//    KV head, one 16-lane chunk a pass (6 ymm accumulators), 8 passes;
//    and two alternatives with more independent chains: two slots a step
//    (mul, fma, add: the accumulators' chain one add per two slots) and
//    3 ymm a pass (9 accumulators).
// 2. The same pass 3 loop while it also prefetches (prefetchnta, or t0)
//    two lines every 4 slots from a buffer in DRAM, as it prefetches the
//    next task's rows.
// 3. Throughput of the instructions of pass 1 (integer scores).
// Cycles assume 3.17 GHz: afm-bench's FP32 FMA peak on this VM (101.3
// GFLOP/s on 1 thread = 32 flops a cycle at 3.17 GHz).
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define SLOTS 256
#define GHZ 3.17
static int8_t vals[SLOTS * 128] __attribute__((aligned(64)));
static float probs[3][SLOTS] __attribute__((aligned(64)));
static float out[3][128];
static int8_t *far;
static size_t farBytes = 512u << 20, farAt = 0;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
static inline __m256 widen(const int8_t *v) {
  return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)v)));
}

// mode 0: no prefetch; 1: prefetchnta of far rows; 2: prefetcht0.
__attribute__((noinline)) static void onePerPass(int mode) {
  for (int c = 0; c < 8; c++) {
    __m256 a[6];
    for (int i = 0; i < 6; i++) a[i] = _mm256_setzero_ps();
    for (int s0 = 0; s0 < SLOTS; s0 += 16) {
#pragma clang loop unroll(disable)
      for (int s = s0; s < s0 + 16; s++) {
        const int8_t *v = vals + s * 128 + c * 16;
        __m256 v0 = widen(v), v1 = widen(v + 8);
        for (int r = 0; r < 3; r++) {
          __m256 p = _mm256_broadcast_ss(&probs[r][s]);
          a[2 * r] = _mm256_fmadd_ps(p, v0, a[2 * r]);
          a[2 * r + 1] = _mm256_fmadd_ps(p, v1, a[2 * r + 1]);
        }
        if (mode && (s & 3) == (c & 3)) {
          const char *p = (const char *)far + farAt;
          farAt = (farAt + 128) % farBytes;
          if (mode == 1) {
            _mm_prefetch(p, _MM_HINT_NTA);
            _mm_prefetch(p + 64, _MM_HINT_NTA);
          } else {
            _mm_prefetch(p, _MM_HINT_T0);
            _mm_prefetch(p + 64, _MM_HINT_T0);
          }
        }
      }
    }
    for (int r = 0; r < 3; r++) {
      _mm256_storeu_ps(&out[r][c * 16], a[2 * r]);
      _mm256_storeu_ps(&out[r][c * 16 + 8], a[2 * r + 1]);
    }
  }
}
static void noPrefetch(void) { onePerPass(0); }
static void nta(void) { onePerPass(1); }
static void t0(void) { onePerPass(2); }

__attribute__((noinline)) static void twoSlotsAStep(void) {
  for (int c = 0; c < 8; c++) {
    __m256 a[6];
    for (int i = 0; i < 6; i++) a[i] = _mm256_setzero_ps();
    for (int s = 0; s < SLOTS; s += 2) {
      const int8_t *v = vals + s * 128 + c * 16, *w = v + 128;
      __m256 v0 = widen(v), v1 = widen(v + 8), w0 = widen(w), w1 = widen(w + 8);
      for (int r = 0; r < 3; r++) {
        __m256 p = _mm256_broadcast_ss(&probs[r][s]);
        __m256 q = _mm256_broadcast_ss(&probs[r][s + 1]);
        a[2 * r] = _mm256_add_ps(a[2 * r], _mm256_fmadd_ps(q, w0, _mm256_mul_ps(p, v0)));
        a[2 * r + 1] = _mm256_add_ps(a[2 * r + 1], _mm256_fmadd_ps(q, w1, _mm256_mul_ps(p, v1)));
      }
    }
    for (int r = 0; r < 3; r++) {
      _mm256_storeu_ps(&out[r][c * 16], a[2 * r]);
      _mm256_storeu_ps(&out[r][c * 16 + 8], a[2 * r + 1]);
    }
  }
}

// Chunks c..c+N-1 of 8 lanes, N accumulators a head.
#define THREE_OR_ONE(N)                                                         \
  for (int s = 0; s < SLOTS; s++) {                                             \
    const int8_t *v = vals + s * 128 + c * 8;                                   \
    __m256 x[N];                                                                \
    for (int i = 0; i < N; i++) x[i] = widen(v + 8 * i);                        \
    for (int r = 0; r < 3; r++) {                                               \
      __m256 p = _mm256_broadcast_ss(&probs[r][s]);                             \
      for (int i = 0; i < N; i++) a[3 * r + i] = _mm256_fmadd_ps(p, x[i], a[3 * r + i]); \
    }                                                                           \
  }
__attribute__((noinline)) static void threeYmmAPass(void) {
  for (int c = 0; c < 16; c += 3) { // 5 passes of 3 ymm, 1 of 1
    int n = c + 3 <= 16 ? 3 : 16 - c;
    __m256 a[9];
    for (int i = 0; i < 9; i++) a[i] = _mm256_setzero_ps();
    if (n == 3) {
      THREE_OR_ONE(3)
    } else {
      THREE_OR_ONE(1)
    }
    for (int r = 0; r < 3; r++)
      for (int i = 0; i < n; i++) _mm256_storeu_ps(&out[r][c * 8 + 8 * i], a[3 * r + i]);
  }
}

#define N 100000000L
#define THROUGHPUT(name, OP)                                                    \
  {                                                                             \
    __m256i a0 = _mm256_set1_epi16(1), a1 = a0, a2 = a0, a3 = a0, a4 = a0,      \
            a5 = a0, a6 = a0, a7 = a0, a8 = a0, a9 = a0, b = a0;                \
    double t = now();                                                           \
    for (long i = 0; i < N; i++) {                                              \
      a0 = OP(a0, b); a1 = OP(a1, b); a2 = OP(a2, b); a3 = OP(a3, b);           \
      a4 = OP(a4, b); a5 = OP(a5, b); a6 = OP(a6, b); a7 = OP(a7, b);           \
      a8 = OP(a8, b); a9 = OP(a9, b);                                           \
      __asm__ volatile("" ::"x"(a0), "x"(a1), "x"(a2), "x"(a3), "x"(a4),        \
                       "x"(a5), "x"(a6), "x"(a7), "x"(a8), "x"(a9));            \
    }                                                                           \
    printf("%-11s %.2f cycles an instruction (10 independent chains)\n", name,  \
           (now() - t) * GHZ * 1e9 / (N * 10.0));                               \
  }

int main(void) {
  far = aligned_alloc(4096, farBytes);
  for (size_t i = 0; i < farBytes; i += 4096) far[i] = 1;
  for (int i = 0; i < SLOTS * 128; i++) vals[i] = (int8_t)((i * 37) % 255 - 127);
  for (int r = 0; r < 3; r++)
    for (int s = 0; s < SLOTS; s++) probs[r][s] = 1.0f / (1 + s + r);
  struct { const char *name; void (*run)(void); } loops[] = {
      {"pass 3, 1 chunk (afm, x86-64-v3)", noPrefetch},
      {"  + prefetchnta 2 DRAM lines / 4 slots", nta},
      {"  + prefetcht0 2 DRAM lines / 4 slots", t0},
      {"pass 3, two slots a step", twoSlotsAStep},
      {"pass 3, 3 ymm a pass", threeYmmAPass}};
  for (int round = 0; round < 2; round++)
    for (int k = 0; k < 5; k++) {
      double best = 1e9;
      for (int t = 0; t < 100; t++) {
        double start = now();
        for (int i = 0; i < 100; i++) loops[k].run();
        double d = now() - start;
        if (d < best) best = d;
      }
      double perSlotPass = best / 100 / (SLOTS * 8.0); // 16 lanes x 3 heads
      printf("%-40s %.2f ns, %.2f cycles a slot and 16 lanes (out %g)\n",
             loops[k].name, perSlotPass * 1e9, perSlotPass * GHZ * 1e9, out[1][37]);
    }
  THROUGHPUT("vpmaddubsw", _mm256_maddubs_epi16)
  THROUGHPUT("vpmaddwd", _mm256_madd_epi16)
  THROUGHPUT("vpsignb", _mm256_sign_epi8)
  THROUGHPUT("vpaddd", _mm256_add_epi32)
  return 0;
}
