// A probe, not part of the build: decode attention's weighted values for
// one 256-slot block (3 query heads per KV head, D = 128, int8 values), the
// committed way (f32 FMAs on converted value rows, two groups of 4 chunks,
// as pass 3 of passes/Conversion/DecodeAttention.cpp) against AMX: values
// stored per 64 slots as [D][64] (the lhs of tdpbsud, one tileload per 16
// dimensions) times the weights as 24-bit fixed point, three unsigned
// bytes per head (the rhs, VNNI rows of 4 slots), 4 i32 accumulator tiles
// per half of D. Checks the AMX sums against double precision, then times
// both from cache. Linux grants the tile state on request (arch_prctl).
//
//   gcc -O3 -march=native -mamx-tile -mamx-int8 FILE -o probe -lm && ./probe
//   SKIP=1 ./probe   # AMX without building the digits (their share)
//
// Results: docs/bench/attention-decode-granite-rapids.txt.
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <stdlib.h>
enum { S = 256, D = 128, R = 3, J = 9 };
static int8_t rows[S][D];            // slot-major, as the cache is today
static int8_t tiles[S / 64][D][64];  // per 64 slots: dims by slots
static float w[R][S];
static float outF[R][D], outA[R][D];
static double now() { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }

__attribute__((noinline)) void f32way(void) {
  for (int g = 0; g < 2; ++g) {
    __m512 acc[R][4];
    for (int r = 0; r < R; ++r) for (int c = 0; c < 4; ++c) acc[r][c] = _mm512_setzero_ps();
    for (int s = 0; s < S; ++s) {
      __m512 v[4];
      for (int c = 0; c < 4; ++c)
        v[c] = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)&rows[s][64 * g + 16 * c])));
      for (int r = 0; r < R; ++r) {
        __m512 p = _mm512_set1_ps(w[r][s]);
        for (int c = 0; c < 4; ++c) acc[r][c] = _mm512_fmadd_ps(p, v[c], acc[r][c]);
      }
    }
    for (int r = 0; r < R; ++r) for (int c = 0; c < 4; ++c) _mm512_storeu_ps(&outF[r][64 * g + 16 * c], acc[r][c]);
  }
}

struct cfg { uint8_t palette, start; uint8_t r[14]; uint16_t colsb[16]; uint8_t rows[16]; } __attribute__((packed));
static uint8_t digits[S / 64][16][64]; // VNNI: row k = slots 4k..4k+3, column j = 4 bytes
static int32_t cOut[4][16][16];

static int skipDigits;
__attribute__((noinline)) void amxway(void) {
  // Digits: 24-bit fixed point of w against the bound 1 (w in [0, 1]).
  const float scale = 16777215.0f;
  if (!skipDigits)
  for (int r = 0; r < R; ++r)
    for (int s0 = 0; s0 < S; s0 += 16) {
      __m512i x = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(&w[r][s0]), _mm512_set1_ps(scale)));
      for (int k = 0; k < 3; ++k) {
        __m128i bytes = _mm512_cvtepi32_epi8(_mm512_srli_epi32(x, 16 - 8 * k));
        // slot s = s0 + i goes to digits[s / 64][(s % 64) / 4][4 * (3r + k) + s % 4]
        uint8_t tmp[16]; _mm_storeu_si128((__m128i *)tmp, bytes);
        for (int q = 0; q < 4; ++q)
          memcpy(&digits[s0 / 64][(s0 % 64) / 4 + q][4 * (3 * r + k)], &tmp[4 * q], 4);
      }
    }
  for (int h = 0; h < 2; ++h) {
    _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
    for (int b = 0; b < S / 64; ++b) {
      _tile_loadd(5, digits[b], 64);
      _tile_loadd(4, tiles[b][64 * h + 0], 64);  _tile_dpbsud(0, 4, 5);
      _tile_loadd(6, tiles[b][64 * h + 16], 64); _tile_dpbsud(1, 6, 5);
      _tile_loadd(4, tiles[b][64 * h + 32], 64); _tile_dpbsud(2, 4, 5);
      _tile_loadd(6, tiles[b][64 * h + 48], 64); _tile_dpbsud(3, 6, 5);
    }
    _tile_stored(0, cOut[0], 64); _tile_stored(1, cOut[1], 64);
    _tile_stored(2, cOut[2], 64); _tile_stored(3, cOut[3], 64);
    for (int t = 0; t < 4; ++t)
      for (int d = 0; d < 16; ++d)
        for (int r = 0; r < R; ++r)
          outA[r][64 * h + 16 * t + d] = ((float)cOut[t][d][3 * r] * 65536.0f + (float)cOut[t][d][3 * r + 1] * 256.0f + (float)cOut[t][d][3 * r + 2]) / scale;
  }
}

int main(void) {
  syscall(SYS_arch_prctl, 0x1023, 18);
  struct cfg c; memset(&c, 0, sizeof c); c.palette = 1;
  for (int i = 0; i < 4; ++i) { c.rows[i] = 16; c.colsb[i] = 4 * J; }      // C: 16 dims x 9 columns
  c.rows[4] = 16; c.colsb[4] = 64; c.rows[6] = 16; c.colsb[6] = 64;         // A: 16 dims x 64 slots
  c.rows[5] = 16; c.colsb[5] = 4 * J;                                       // B: 16 rows x 9 columns x 4
  _tile_loadconfig(&c);
  unsigned seed = 1;
  for (int s = 0; s < S; ++s) for (int d = 0; d < D; ++d) { seed = seed * 1103515245 + 12345; rows[s][d] = (int8_t)((seed >> 16) % 255 - 127); tiles[s / 64][d][s % 64] = rows[s][d]; }
  for (int r = 0; r < R; ++r) for (int s = 0; s < S; ++s) { seed = seed * 1103515245 + 12345; w[r][s] = expf(-(float)((seed >> 16) % 1000) / 100.0f); }
  f32way(); amxway();
  double worst = 0;
  for (int r = 0; r < R; ++r) for (int d = 0; d < D; ++d) {
    double exact = 0, mag = 0; for (int s = 0; s < S; ++s) { exact += (double)w[r][s] * rows[s][d]; mag += fabs((double)w[r][s] * rows[s][d]); }
    double e = fabs(outA[r][d] - exact) / mag; if (e > worst) worst = e;
  }
  printf("AMX digits: worst |error| / sum|terms| = %.2e\n", worst);
  skipDigits = getenv("SKIP") != 0;
  for (int round = 0; round < 3; ++round) {
    int n = 200000; double t0 = now(); for (int i = 0; i < n; ++i) { f32way(); __asm__ volatile("" ::: "memory"); } double t1 = now();
    for (int i = 0; i < n; ++i) { amxway(); __asm__ volatile("" ::: "memory"); } double t2 = now();
    printf("per 256-slot block: f32 FMAs %.3f us, AMX %.3f us (reads of the block's 64 KiB at 17.9 GB/s: 3.66 us)\n", (t1 - t0) / n * 1e6, (t2 - t1) / n * 1e6);
  }
  _tile_release();
}
