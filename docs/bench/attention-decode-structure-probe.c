// A probe, not part of the build: one int8-KV decode attention step at
// ctx 4096 (8 KV heads x 3 query heads, D 128, tasks of 256 slots, int8
// query as vpdpbusd against tiled keys), written in C with intrinsics to
// try task structures faster than in the compiler. The caches of 150
// steps' layers (1.3 GB, past the 480 MiB L3) are rotated so every step
// reads DRAM. Timing only: the keys, values and scales are random.
//
//   gcc -O3 -march=native -mamx-tile -mamx-int8 FILE -o attn -lpthread -lm
//   ./attn VARIANT THREADS PFV PFNEXT LAYERS PFPAGE PFALL
//
// VARIANT 0: per task, scores (pass 1), exponentials, weighted values in two
//   groups of chunks (the compiler's structure); PFV prefetches the step's
//   value rows into L1 in pass 1, PFNEXT the next task's rows from pass 3.
// VARIANT 1: software pipelined across a thread's tasks: one loop takes task
//   k+1's scores and task k's weighted values (both groups) 16 slots a step.
// VARIANT 2: variant 1 with AMX weighted values (values as VNNI tiles of 64
//   slots, the probabilities as three bytes of 24-bit fixed point, tdpbusd);
//   3: the same, not pipelined (AMX after the next task's scores).
// VARIANT 4: the step's reads alone, no arithmetic: PFALL 0 each task's keys
//   then its values, 3 both together, 4 both halves of both (4 streams),
//   5 eight streams.
// PFPAGE > 0: every line of the keys (into L1) and values (PFALL 1: into L2;
//   2: L1) prefetched PFPAGE bytes ahead from pass 1.
// With 2 threads the second persists across steps (two barriers a step).
// ADJACENT=1 in the environment stores each block's keys and values side
// by side instead of in two regions of a head; ADJACENT=N (N > 1, a
// divisor of 256 and a multiple of 16) each N slots' keys and values.
// SPARSE=N: variant 0 prefetches the next task's rows every N slots.
//
// Results: docs/bench/attention-decode-granite-rapids.txt (2026-12-03).
#include <immintrin.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>
enum { G = 8, R = 3, D = 128, CTX = 4096, B = 256, NB = CTX / B, NT = G * NB };
typedef struct { uint8_t *keys; float *kscale; int8_t *vals; float *vscale; } Head;
typedef struct { Head h[G]; } Layer;
static int nlayers, variant, nthreads, pfv = 1, pfnext = 1, pfpage = 0, pfall = 0;
// ADJACENT=1 (environment): each 256-slot block's keys and values side by
// side (keys 32 KiB, then values 32 KiB), not in two separate regions.
static size_t blockStride = (size_t)B * D;
static int unit = B, sparse = 1;
static inline const uint8_t *keyAt(const Head *h, int slot) { return h->keys + (slot / unit) * blockStride + (size_t)(slot % unit) * D; }
static inline const int8_t *valueAt(const Head *h, int slot) { return h->vals + (slot / unit) * blockStride + (size_t)(slot % unit) * D; }
static Layer *layers;
static int8_t query[R][D];
static float out[2][NT][R][D + 2];
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
static inline __m512 vexp(__m512 x) { // exp for x <= 0
  x = _mm512_max_ps(x, _mm512_set1_ps(-87.f));
  __m512 t = _mm512_mul_ps(x, _mm512_set1_ps(1.44269504f));
  __m512 n = _mm512_roundscale_ps(t, _MM_FROUND_TO_NEAREST_INT);
  __m512 f = _mm512_sub_ps(t, n);
  __m512 p = _mm512_set1_ps(1.3333558e-3f);
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(9.6181291e-3f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(5.5504109e-2f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(2.4022650e-1f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(6.9314718e-1f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.f));
  return _mm512_scalef_ps(p, n);
}
typedef struct { float s[R][B]; float m[R], sum[R]; } Scratch;
// Pass 1 for one 16-slot step of a task: scores into sc.
static inline void scoresStep(const Head *h, int blk, int st, Scratch *sc) {
  int slot0 = blk * B + st * 16;
  const uint8_t *k = keyAt(h, slot0); // tiled: per 16 slots, 32 words x 64 bytes
  __m512i acc[R];
  const char *kp = (const char *)keyAt(h, slot0 + pfpage / D), *vp = (const char *)valueAt(h, slot0 + pfpage / D);
  if (pfpage && pfall) {
    for (int l = 0; l < 32; ++l) { _mm_prefetch(kp + 64 * l, _MM_HINT_T0); if (pfall == 1) _mm_prefetch(vp + 64 * l, _MM_HINT_T2); else _mm_prefetch(vp + 64 * l, _MM_HINT_T0); }
  } else if (pfpage) {
    _mm_prefetch(kp, _MM_HINT_T2); _mm_prefetch(kp + 64, _MM_HINT_T2);
    _mm_prefetch(vp, _MM_HINT_T2); _mm_prefetch(vp + 64, _MM_HINT_T2);
  }
  for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_si512();
  for (int w = 0; w < D / 4; ++w) {
    __m512i kv = _mm512_load_si512((const void *)(k + 64 * w));
    for (int r = 0; r < R; ++r)
      acc[r] = _mm512_dpbusd_epi32(acc[r], kv, _mm512_set1_epi32(*(const int32_t *)&query[r][4 * w]));
  }
  if (pfv) for (int j = 0; j < 16; ++j) {
    const int8_t *v = valueAt(h, slot0 + j);
    _mm_prefetch((const char *)v, _MM_HINT_T0); _mm_prefetch((const char *)v + 64, _MM_HINT_T0);
  }
  __m512 ks = _mm512_loadu_ps(h->kscale + slot0);
  for (int r = 0; r < R; ++r)
    _mm512_storeu_ps(&sc->s[r][st * 16], _mm512_mul_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(acc[r]), ks), _mm512_set1_ps(1e-6f)));
}
static inline void expsTask(const Head *h, int blk, Scratch *sc) {
  for (int r = 0; r < R; ++r) {
    __m512 m = _mm512_set1_ps(-INFINITY);
    for (int i = 0; i < B; i += 16) m = _mm512_max_ps(m, _mm512_loadu_ps(&sc->s[r][i]));
    float mx = _mm512_reduce_max_ps(m);
    __m512 s = _mm512_setzero_ps();
    for (int i = 0; i < B; i += 16) {
      __m512 p = _mm512_mul_ps(vexp(_mm512_sub_ps(_mm512_loadu_ps(&sc->s[r][i]), _mm512_set1_ps(mx))), _mm512_loadu_ps(h->vscale + blk * B + i));
      s = _mm512_add_ps(s, p);
      _mm512_storeu_ps(&sc->s[r][i], p);
    }
    sc->m[r] = mx; sc->sum[r] = _mm512_reduce_add_ps(s);
  }
}
// Weighted values over 16 slots [st*16, st*16+16) for chunk group g (4 chunks).
static inline void valuesStep(const Head *h, int blk, int st, int grp, const Scratch *sc, __m512 acc[R][4]) {
  for (int j = st * 16; j < st * 16 + 16; ++j) {
    const int8_t *v = valueAt(h, blk * B + j) + 64 * grp;
    __m512 x[4];
    for (int c = 0; c < 4; ++c) x[c] = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(v + 16 * c))));
    for (int r = 0; r < R; ++r) {
      __m512 p = _mm512_set1_ps(sc->s[r][j]);
      for (int c = 0; c < 4; ++c) acc[r][c] = _mm512_fmadd_ps(p, x[c], acc[r][c]);
    }
  }
}
static void prefetchTask(const Head *h, int blk, int j) { // next task's rows, a slot at a time
  const char *k = (const char *)keyAt(h, blk * B + j);
  const char *v = (const char *)valueAt(h, blk * B + j);
  _mm_prefetch(k, _MM_HINT_T2); _mm_prefetch(k + 64, _MM_HINT_T2);
  _mm_prefetch(v, _MM_HINT_T2); _mm_prefetch(v + 64, _MM_HINT_T2);
}
static void writeOut(int tid, int task, const Scratch *sc, int grp, __m512 acc[R][4]) {
  for (int r = 0; r < R; ++r) for (int c = 0; c < 4; ++c) _mm512_storeu_ps(&out[tid][task][r][64 * grp + 16 * c], acc[r][c]);
  if (grp == 0) for (int r = 0; r < R; ++r) { out[tid][task][r][D] = sc->m[r]; out[tid][task][r][D + 1] = sc->sum[r]; }
}
typedef struct { int tid, lo, hi; Layer *L; } Job;
static void v0(Job *jb) {
  Scratch sc;
  for (int t = jb->lo; t < jb->hi; ++t) {
    const Head *h = &jb->L->h[t / NB]; int blk = t % NB;
    for (int st = 0; st < B / 16; ++st) scoresStep(h, blk, st, &sc);
    expsTask(h, blk, &sc);
    int tn = t + 1 < jb->hi ? t + 1 : -1;
    for (int grp = 0; grp < 2; ++grp) {
      __m512 acc[R][4];
      for (int r = 0; r < R; ++r) for (int c = 0; c < 4; ++c) acc[r][c] = _mm512_setzero_ps();
      for (int st = 0; st < B / 16; ++st) {
        valuesStep(h, blk, st, grp, &sc, acc);
        if (grp == 0 && tn >= 0 && pfnext) for (int j = 0; j < 16; j += sparse) prefetchTask(&jb->L->h[tn / NB], tn % NB, st * 16 + j);
      }
      writeOut(jb->tid, t, &sc, grp, acc);
    }
  }
}
// The pipelines' prologue: scores and exponentials of a thread's first task.
static void firstTask(Job *jb, Scratch *sc) {
  const Head *h = &jb->L->h[jb->lo / NB];
  for (int st = 0; st < B / 16; ++st) scoresStep(h, jb->lo % NB, st, sc);
  expsTask(h, jb->lo % NB, sc);
}
// Task t's head and block, and the next task of the thread (hn 0 at its last).
static void taskAndNext(Job *jb, int t, const Head **h, int *blk, const Head **hn, int *tn) {
  *h = &jb->L->h[t / NB]; *blk = t % NB;
  *tn = t + 1 < jb->hi ? t + 1 : -1;
  *hn = *tn >= 0 ? &jb->L->h[*tn / NB] : 0;
}
// V1: loop step st does task t+1's scores for step st and task t's weighted
// values of both groups for the slots of step st.
static void v1(Job *jb) {
  Scratch sc[2];
  int cur = 0;
  firstTask(jb, &sc[cur]);
  for (int t = jb->lo; t < jb->hi; ++t) {
    const Head *h, *hn; int blk, tn;
    taskAndNext(jb, t, &h, &blk, &hn, &tn);
    __m512 a0[R][4], a1[R][4];
    for (int r = 0; r < R; ++r) for (int c = 0; c < 4; ++c) a0[r][c] = a1[r][c] = _mm512_setzero_ps();
    for (int st = 0; st < B / 16; ++st) {
      if (hn) scoresStep(hn, tn % NB, st, &sc[cur ^ 1]);
      valuesStep(h, blk, st, 0, &sc[cur], a0);
      valuesStep(h, blk, st, 1, &sc[cur], a1);
    }
    writeOut(jb->tid, t, &sc[cur], 0, a0); writeOut(jb->tid, t, &sc[cur], 1, a1);
    if (hn) expsTask(hn, tn % NB, &sc[cur ^ 1]);
    cur ^= 1;
  }
}

// ---- V2: V1's pipeline with AMX weighted values ----
// Values read as tiles: per 64 slots and 16 dims, 1 KiB in tdpbusd's VNNI
// layout (16 quads of slots x 16 dims x 4 slots). The digits' scale assumes
// every probability times value scale is at most 0.02 (the scales here).
typedef struct { uint8_t d[4][16][64]; int32_t c[2][4][16][16]; } AmxScratch;
// C = digits (A: 9 rows = head x digit, 64 slots, u8) x values (B: 16 slot
// quads x 16 dims x 4 slots, s8): rows head x digit, columns dims.
struct cfg { uint8_t palette, start; uint8_t r[14]; uint16_t colsb[16]; uint8_t rows[16]; } __attribute__((packed));
static void amxConfig(void) {
  static __thread int done; if (done) return; done = 1;
  struct cfg c; memset(&c, 0, sizeof c); c.palette = 1;
  for (int i = 0; i < 4; ++i) { c.rows[i] = 9; c.colsb[i] = 64; }
  c.rows[4] = 16; c.colsb[4] = 64; c.rows[6] = 16; c.colsb[6] = 64; c.rows[5] = 9; c.colsb[5] = 64;
  _tile_loadconfig(&c);
}
static inline void digitsStep(const Scratch *sc, int st, float scale, AmxScratch *ax) {
  for (int r = 0; r < 3; ++r) {
    __m512i x = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(&sc->s[r][st * 16]), _mm512_set1_ps(scale)));
    for (int k = 0; k < 3; ++k)
      _mm_store_si128((__m128i *)&ax->d[st / 4][3 * r + k][16 * (st % 4)], _mm512_cvtepi32_epi8(_mm512_srli_epi32(x, 16 - 8 * k)));
  }
}
static inline void amxGroup(const Head *h, int blk, int q, AmxScratch *ax) {
  const int8_t *base = valueAt(h, blk * B + 64 * q);
  _tile_loadd(5, ax->d[q], 64);
  for (int hh = 0; hh < 2; ++hh) {
    if (q == 0) { _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3); }
    else { _tile_loadd(0, ax->c[hh][0], 64); _tile_loadd(1, ax->c[hh][1], 64); _tile_loadd(2, ax->c[hh][2], 64); _tile_loadd(3, ax->c[hh][3], 64); }
    _tile_loadd(4, base + (4 * hh + 0) * 1024, 64); _tile_dpbusd(0, 5, 4);
    _tile_loadd(6, base + (4 * hh + 1) * 1024, 64); _tile_dpbusd(1, 5, 6);
    _tile_loadd(4, base + (4 * hh + 2) * 1024, 64); _tile_dpbusd(2, 5, 4);
    _tile_loadd(6, base + (4 * hh + 3) * 1024, 64); _tile_dpbusd(3, 5, 6);
    _tile_stored(0, ax->c[hh][0], 64); _tile_stored(1, ax->c[hh][1], 64); _tile_stored(2, ax->c[hh][2], 64); _tile_stored(3, ax->c[hh][3], 64);
  }
}
static void amxOut(int tid, int task, const Scratch *sc, AmxScratch *ax, float scale) {
  __m512 inv = _mm512_set1_ps(1.f / scale);
  for (int hh = 0; hh < 2; ++hh) for (int t = 0; t < 4; ++t) for (int r = 0; r < R; ++r) {
    __m512 v = _mm512_cvtepi32_ps(_mm512_load_si512(ax->c[hh][t][3 * r]));
    v = _mm512_fmadd_ps(v, _mm512_set1_ps(256.f), _mm512_cvtepi32_ps(_mm512_load_si512(ax->c[hh][t][3 * r + 1])));
    v = _mm512_fmadd_ps(v, _mm512_set1_ps(256.f), _mm512_cvtepi32_ps(_mm512_load_si512(ax->c[hh][t][3 * r + 2])));
    _mm512_storeu_ps(&out[tid][task][r][64 * hh + 16 * t], _mm512_mul_ps(v, inv));
  }
  for (int r = 0; r < R; ++r) { out[tid][task][r][D] = sc->m[r]; out[tid][task][r][D + 1] = sc->sum[r]; }
}
static int amxPipelined = 1;
static void v2(Job *jb) {
  amxConfig();
  Scratch sc[2]; static __thread AmxScratch ax __attribute__((aligned(64)));
  const float scale = 16777215.0f / 0.02f;
  int cur = 0;
  firstTask(jb, &sc[cur]);
  for (int t = jb->lo; t < jb->hi; ++t) {
    const Head *h, *hn; int blk, tn;
    taskAndNext(jb, t, &h, &blk, &hn, &tn);
    if (!amxPipelined) {
      for (int st = 0; st < B / 16; ++st) digitsStep(&sc[cur], st, scale, &ax);
      for (int q = 0; q < 4; ++q) amxGroup(h, blk, q, &ax);
      if (hn) for (int st = 0; st < B / 16; ++st) scoresStep(hn, tn % NB, st, &sc[cur ^ 1]);
    } else
    for (int st = 0; st < B / 16; ++st) {
      if (hn) scoresStep(hn, tn % NB, st, &sc[cur ^ 1]);
      digitsStep(&sc[cur], st, scale, &ax);
      if (st % 4 == 3) amxGroup(h, blk, st / 4, &ax);
    }
    amxOut(jb->tid, t, &sc[cur], &ax, scale);
    if (hn) expsTask(hn, tn % NB, &sc[cur ^ 1]);
    cur ^= 1;
  }
}
static void vmem(Job *jb) { // the step's reads alone: per task its 32 KiB of keys then 32 KiB of values
  __m512i acc = _mm512_setzero_si512();
  for (int t = jb->lo; t < jb->hi; ++t) {
    const Head *h = &jb->L->h[t / NB]; int blk = t % NB;
    const char *k = (const char *)keyAt(h, blk * B), *v = (const char *)valueAt(h, blk * B);
    if (pfall == 4) { // 4 streams: both halves of keys and values
      for (int o = 0; o < B * D / 2; o += 64) acc = _mm512_or_si512(acc, _mm512_or_si512(_mm512_or_si512(_mm512_load_si512(k + o), _mm512_load_si512(v + o)), _mm512_or_si512(_mm512_load_si512(k + o + B * D / 2), _mm512_load_si512(v + o + B * D / 2))));
    } else if (pfall == 5) { // 8 streams
      for (int o = 0; o < B * D / 4; o += 64) for (int qq = 0; qq < 4; ++qq) acc = _mm512_or_si512(acc, _mm512_or_si512(_mm512_load_si512(k + o + qq * B * D / 4), _mm512_load_si512(v + o + qq * B * D / 4)));
    } else if (pfall == 3) { // keys and values interleaved
      for (int o = 0; o < B * D; o += 64) acc = _mm512_or_si512(acc, _mm512_or_si512(_mm512_load_si512(k + o), _mm512_load_si512(v + o)));
    } else {
      for (int o = 0; o < B * D; o += 64) acc = _mm512_or_si512(acc, _mm512_load_si512(k + o));
      for (int o = 0; o < B * D; o += 64) acc = _mm512_or_si512(acc, _mm512_load_si512(v + o));
    }
    acc = _mm512_or_si512(acc, _mm512_loadu_si512(h->kscale + blk * B));
  }
  out[jb->tid][0][0][0] = _mm512_reduce_or_epi32(acc);
}
static pthread_barrier_t start, done;
static int helperSteps;
static Job helperJob;
static void *run(void *a);
static void *helperMain(void *unused) {
  for (int s = 0; s < helperSteps; ++s) { pthread_barrier_wait(&start); run(&helperJob); pthread_barrier_wait(&done); }
  return unused;
}
static void *run(void *a) { Job *jb = a; if (variant == 0) v0(jb); else if (variant == 1) v1(jb); else if (variant == 4) vmem(jb); else v2(jb); return 0; }
int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: %s VARIANT THREADS [PFV PFNEXT LAYERS PFPAGE PFALL]\n", argv[0]); return 2; }
  int requested = atoi(argv[1]);
  variant = requested; nthreads = atoi(argv[2]);
  if (variant == 3) { variant = 2; amxPipelined = 0; }
  syscall(SYS_arch_prctl, 0x1023, 18);
  if (argc > 3) pfv = atoi(argv[3]);
  if (argc > 4) pfnext = atoi(argv[4]);
  nlayers = argc > 5 ? atoi(argv[5]) : 150;
  pfpage = argc > 6 ? atoi(argv[6]) : 0;
  pfall = argc > 7 ? atoi(argv[7]) : 0;
  int adjacent = getenv("ADJACENT") ? atoi(getenv("ADJACENT")) : 0;
  if (getenv("SPARSE")) sparse = atoi(getenv("SPARSE"));
  if (adjacent) { unit = adjacent == 1 ? B : adjacent; blockStride = 2 * (size_t)unit * D; }
  size_t perHead = (size_t)CTX * D * 2 + CTX * 8;
  size_t total = perHead * G * nlayers;
  char *p = mmap(0, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) { perror("mmap"); return 1; }
  madvise(p, total, MADV_HUGEPAGE);
  layers = calloc(nlayers, sizeof(Layer));
  srand(1);
  for (int r = 0; r < R; ++r) for (int d = 0; d < D; ++d) query[r][d] = rand() % 255 - 127;
  for (int l = 0; l < nlayers; ++l) for (int g = 0; g < G; ++g) {
    Head *h = &layers[l].h[g];
    h->keys = (uint8_t *)p; h->vals = (int8_t *)p + (adjacent ? unit * D : CTX * D); p += 2 * CTX * D;
    h->kscale = (float *)p; p += CTX * 4; h->vscale = (float *)p; p += CTX * 4;
    for (int i = 0; i < 2 * CTX * D; ++i) h->keys[i] = rand();
    for (int i = 0; i < CTX; ++i) { h->kscale[i] = 0.01f; h->vscale[i] = 0.02f; }
  }
  double bytes = (double)perHead * G;
  for (int round = 0; round < 3; ++round) {
    int steps = 600; double t0 = now();
    // The second thread persists across steps (two barriers a step, as a
    // runtime's pool): creating it per step cost 40 us here.
    pthread_t helper;
    if (nthreads > 1) {
      pthread_barrier_init(&start, 0, 2); pthread_barrier_init(&done, 0, 2);
      helperSteps = steps;
      pthread_create(&helper, 0, helperMain, &helperJob);
    }
    for (int s = 0; s < steps; ++s) {
      Layer *L = &layers[s % nlayers];
      Job job0 = {0, 0, NT / nthreads, L};
      if (nthreads > 1) { helperJob = (Job){1, NT / 2, NT, L}; pthread_barrier_wait(&start); }
      run(&job0);
      if (nthreads > 1) pthread_barrier_wait(&done);
    }
    if (nthreads > 1) { pthread_join(helper, 0); pthread_barrier_destroy(&start); pthread_barrier_destroy(&done); }
    double dt = (now() - t0) / steps;
    printf("variant %d threads %d pfv %d pfnext %d layers %d pfpage %d: %.3f ms/step, %.2f GB/s\n", requested, nthreads, pfv, pfnext, nlayers, pfpage, dt * 1e3, bytes / dt / 1e9);
  }
  printf("check %f\n", out[0][5][1][7]);
}
