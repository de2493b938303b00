// Probe: what is the "high" 2-thread read state of a Zen 4 VM? (2026-12-04,
// AMD EPYC family 25 model 17, 2 vCPUs under KVM.) A probe, not part of the
// build. Each round: the round trip of one cache line between two threads
// (pingpong), then 2-thread reads of 256 MiB, each the best of 3 alternated
// runs (the pool's of 3 calls back to back each): persistent threads
// ("pers"; a worker created per measurement and started at a spin
// barrier), and the runtime's own pool
// (runtime/thread_pool.c, afm_thread_pool_parallel_for) with 2 or 64
// indices; "spin": the same pool with its workers never sleeping
// (kSpinIterations = 1 << 30, functions renamed spin_pool_* by sed).
//
//   clang -O2 -Iruntime -Iinclude FILE spin_pool.c -o placement \
//     build/lib/libafm_runtime.a -lpthread -ldl -lprotobuf-c -lpcre2-8 \
//     -lutf8proc -lm
//
// Results, GB/s on 2 threads, means over the rounds of each kind:
//   round trip       rounds  pers  pers 2-bit+pf  pool/2  pool/64  spin/64  spin/2
//   28-75 ns (near)    60    33.9      31.6        34.3    34.8     34.7    34.5
//   307-349 ns (far)   20    52.8      43.6        53.3    53.8     53.8    52.8
// A second run (pool/64 only): pure loads, pure + prefetcht2 8 KiB ahead,
// 2-bit work (xor/shift/and + vpdpbusd per line), 2-bit + prefetcht2:
//   near (42 rounds) 36.1 / 35.9 / 37.4 / 35.1; far (38) 54.7 / 51.7 / 54.7 / 49.2
//
// Findings:
// - The high state is where the host put the vCPUs: 50-58 GB/s whenever a
//   cache line's round trip between the two threads took 310-340 ns
//   (distant cores, separate memory paths), 30-36 GB/s at 28-75 ns (cores
//   sharing a cache). It flipped between the two within seconds.
// - The runtime's pool reads as fast as bare threads in both states:
//   neither its sleeping nor its guided claims cost anything here. (A first
//   version of this probe kept a spinning thread alive while the pool ran,
//   which took a vCPU from it and made the pool look 40% slower in the far
//   state: a probe on 2 vCPUs must not leave a third thread spinning.)
// - Threads timed from their creation (std::thread, then the loop) read
//   18-51 GB/s in the far state against 52-58 started at a barrier; afm-bench
//   now starts its read limits' threads at one.
// - In the far state each thread must read at its 1-thread limit (27-29
//   GB/s) for the 2-thread rate to reach the state's. The compiled kernels
//   do not: afm-bench with the round trip beside each timing ("rt ns"),
//   far on both sides: 2-bit GEMV 2048x8192 (int8 act.) 41.0 GB/s on 2
//   threads, 25.1 on 1; the 4-bit LM head 37.3 on 2 (30/357 ns), 20.7 on 1.
//   Near: 25-31 GB/s on 2 threads. So the far state shows each kernel's
//   1-thread rate twice over, and the 2-thread roofline there is the
//   1-thread efficiency of the kernels (LM head 60-68%, 2-bit GEMV 68-83%).
// - The 3B decode (afm-run, 2 threads, 64 steps at context 128, bracketed by
//   this probe's measurement in separate processes): far on both sides 39.0
//   and 29.1 tokens/s (36.6 and 27.3 GB/s of weights and KV); near on both
//   sides 26.4-35.0 (24.8-32.9 GB/s).
// - The LM head on 1 thread: a row loop like the kernel's (24 code lines, 6
//   scale lines, 2 vpdpbusd per code line, one reduction per row) read
//   18-24 GB/s without software prefetch and 17.7-18.7 with prefetcht2 8 KiB
//   ahead, against 25-29 for a plain stream in the same rounds; scales
//   stored after each row's codes (1920 contiguous bytes) were no better.
//   The compiled kernel read 18-20 GB/s with its prefetch at 0, 2 or 8 KiB
//   (afm-bench, scratch build with the distance from the environment, 3
//   alternated rounds: 13.8-16.1 ms per call on 1 thread in all three).
#include <immintrin.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include "thread_pool.h"
void spin_pool_free(afm_thread_pool *);
afm_status spin_pool_create(int32_t, afm_thread_pool **);
void spin_pool_parallel_for(void *, int64_t, void (*)(void *, int64_t), void *);
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
static size_t total = (size_t)256 << 20;
static char *bufA, *bufB;
static _Alignas(64) atomic_long ping;
static _Alignas(64) atomic_long gen;
static _Alignas(64) atomic_long done;
static char *job_buf; static int job_kind;
static long long sinks[2];

__attribute__((target("avx512f,avx512bw,avx512vnni")))
static long long stream(const char *b, size_t bytes, int kind) {
  __m512i acc0 = _mm512_setzero_si512(), acc1 = acc0, acc2 = acc0, acc3 = acc0;
  __m512i act = _mm512_set1_epi8(3), mask = _mm512_set1_epi8(3);
  if (kind == 0) {
    for (size_t o = 0; o < bytes; o += 256) {
      acc0 = _mm512_add_epi32(acc0, _mm512_load_si512(b + o));
      acc1 = _mm512_add_epi32(acc1, _mm512_load_si512(b + o + 64));
      acc2 = _mm512_add_epi32(acc2, _mm512_load_si512(b + o + 128));
      acc3 = _mm512_add_epi32(acc3, _mm512_load_si512(b + o + 192));
    }
  } else {
    // 2-bit: each byte holds 4 weights; 4 planes, each masked and dotted
    // against int8 activations (from L1), prefetcht2 8 KiB ahead.
    for (size_t o = 0; o < bytes; o += 64) {
      _mm_prefetch(b + o + 8192, _MM_HINT_T2);
      __m512i v = _mm512_load_si512(b + o);
      __m512i p0 = _mm512_and_si512(v, mask);
      __m512i p1 = _mm512_and_si512(_mm512_srli_epi16(v, 2), mask);
      __m512i p2 = _mm512_and_si512(_mm512_srli_epi16(v, 4), mask);
      __m512i p3 = _mm512_and_si512(_mm512_srli_epi16(v, 6), mask);
      acc0 = _mm512_dpbusd_epi32(acc0, p0, act);
      acc1 = _mm512_dpbusd_epi32(acc1, p1, act);
      acc2 = _mm512_dpbusd_epi32(acc2, p2, act);
      acc3 = _mm512_dpbusd_epi32(acc3, p3, act);
    }
  }
  return _mm512_reduce_add_epi32(_mm512_add_epi32(_mm512_add_epi32(acc0, acc1), _mm512_add_epi32(acc2, acc3)));
}
static void *fresh(void *p) { long t = (long)p; sinks[t] = stream(bufA + t * (total / 2), total / 2, 0); return 0; }
static void *pinger(void *p) {
  for (long i = 0; i < 200000; ++i) { while (atomic_load_explicit(&ping, memory_order_acquire) != 2 * i + 1) _mm_pause(); atomic_store_explicit(&ping, 2 * i + 2, memory_order_release); }
  return 0; }
static double pingpong(void) {
  atomic_store(&ping, 0); pthread_t th; pthread_create(&th, 0, pinger, 0);
  double t0 = now();
  for (long i = 0; i < 200000; ++i) { atomic_store_explicit(&ping, 2 * i + 1, memory_order_release); while (atomic_load_explicit(&ping, memory_order_acquire) != 2 * i + 2) _mm_pause(); }
  double t = now() - t0; pthread_join(th, 0); return t / 200000 * 1e9; }
static void *worker(void *p) {
  long seen = 0; atomic_store(&ping, 1);
  for (;;) { long g; while ((g = atomic_load_explicit(&gen, memory_order_acquire)) == seen) _mm_pause();
    if (g < 0) return 0; seen = g;
    sinks[1] = stream(job_buf + total / 2, total / 2, job_kind);
    atomic_fetch_add_explicit(&done, 1, memory_order_release); } }
static double persistent(char *b, int kind) {
  job_buf = b; job_kind = kind; atomic_store(&done, 0); atomic_store(&gen, 0);
  pthread_t w; pthread_create(&w, 0, worker, 0);
  atomic_store(&ping, 0);
  while (atomic_load(&ping) == 0) _mm_pause(); // the worker runs
  double t0 = now(); atomic_fetch_add_explicit(&gen, 1, memory_order_release);
  sinks[0] = stream(b, total / 2, kind);
  while (atomic_load_explicit(&done, memory_order_acquire) == 0) _mm_pause();
  double x = total / (now() - t0) / 1e9;
  atomic_store(&gen, -1); pthread_join(w, 0); return x; }
typedef struct { char *b; size_t chunk; int kind; } poolctx;
static long long poolsink[1 << 16];
static void poolfn(void *c, int64_t i) { poolctx *p = c; poolsink[i & 0xffff] = stream(p->b + i * p->chunk, p->chunk, p->kind); }
static int use_spin;
static double pooled(afm_thread_pool *pool, char *b, int n, int kind) {
  poolctx c = {b, total / n, kind}; double best = 0;
  for (int k = 0; k < 3; ++k) { // back to back: the worker spins between
    double t0 = now(); (use_spin ? spin_pool_parallel_for : afm_thread_pool_parallel_for)(pool, n, poolfn, &c);
    double x = total / (now() - t0) / 1e9; if (x > best) best = x; }
  return best; }
int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 30;
  bufA = aligned_alloc(2 << 20, total); madvise(bufA, total, MADV_HUGEPAGE); memset(bufA, 1, total);
  bufB = aligned_alloc(2 << 20, total); madvise(bufB, total, MADV_HUGEPAGE); memset(bufB, 1, total);
  afm_thread_pool *pool, *spool; afm_thread_pool_create(2, &pool);
  printf("round  pingpong_ns  one_A  fresh_A  pers_A  pers_A_2bit  pool2  pool64  spin64  spin2 (GB/s; one_A 1 thread, the rest 2)\n");
  for (int r = 0; r < rounds; ++r) {
    double pp = pingpong();
    double o0 = now(); sinks[0] = stream(bufA, total, 0); double one = total / (now() - o0) / 1e9;
    pthread_t th[2]; double t0 = now();
    for (long t = 0; t < 2; ++t) pthread_create(&th[t], 0, fresh, (void *)t);
    for (int t = 0; t < 2; ++t) pthread_join(th[t], 0);
    double fa = total / (now() - t0) / 1e9;
    
    double pa = 0, pk = 0, q2 = 0, q64 = 0, q1k = 0, q64k = 0;
    for (int k = 0; k < 3; ++k) { double x;
      x = persistent(bufA, 0); if (x > pa) pa = x;
      x = pooled(pool, bufB, 2, 0); if (x > q2) q2 = x;
      x = pooled(pool, bufB, 64, 0); if (x > q64) q64 = x;
      spin_pool_create(2, &spool); use_spin = 1;
      x = pooled(spool, bufB, 64, 0); if (x > q1k) q1k = x;
      x = pooled(spool, bufB, 2, 0); if (x > q64k) q64k = x;
      use_spin = 0; spin_pool_free(spool);
      x = persistent(bufA, 1); if (x > pk) pk = x; }
    printf("%5d  %11.0f  %5.1f  %7.1f  %6.1f  %11.1f  %5.1f  %6.1f  %8.1f  %11.1f\n", r, pp, one, fa, pa, pk, q2, q64, q1k, q64k); fflush(stdout);
  }
  return (int)(sinks[0] + sinks[1]) & 0;
}
