// Probe: does a 2-bit GEMV (int8 activations, AVX2, the shared-shift inner
// loop of afm-lower-dot-bytes) read faster from DRAM on a Zen 3 VM when a
// thread computes several rows at once from distant parts of the weights?
// 300 MiB of codes, K = 3072 (768-byte rows), huge pages. Variants:
//   seq   one row at a time, in order, each prefetched AHEAD bytes ahead
//   quad  rows r, r + N/4, r + N/2, r + 3N/4 at once, 64 bytes of each in
//         turn in one K loop (4 streams), each prefetched AHEAD/4 ahead
//   perm4 one row at a time, the four quarters' rows in turn
//   perm2 the same with halves
//   four  rows r .. r + 3 at once (one stream)
// and 2 threads (seq, quad over each thread's half, perm4), next to a
// plain read of 4 streams. Build: cc -O2 -mavx2 -mfma -pthread; run with
// AHEAD (bytes) as the argument. Results: gemv-jammed-rows-zen3-2026-12-06.txt.
#include <immintrin.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <pthread.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
#define K 3072
#define RB (K/4)
static long N;
static uint8_t *W;
static int8_t X[4][RB] __attribute__((aligned(64)));
static int32_t *Y;
static int AHEAD=8192;
#define BODY(w0,w1,g,acc,acc4) { \
      __m256i h0=_mm256_srli_epi16(w0,4), h1=_mm256_srli_epi16(w1,4); \
      __m256i a=_mm256_maddubs_epi16(_mm256_and_si256(w0,m3),_mm256_load_si256((void*)&X[0][g])); \
      __m256i b=_mm256_maddubs_epi16(_mm256_and_si256(w1,m3),_mm256_load_si256((void*)&X[0][g+32])); \
      __m256i c=_mm256_maddubs_epi16(_mm256_and_si256(w0,m12),_mm256_load_si256((void*)&X[1][g])); \
      __m256i d=_mm256_maddubs_epi16(_mm256_and_si256(w1,m12),_mm256_load_si256((void*)&X[1][g+32])); \
      __m256i e=_mm256_maddubs_epi16(_mm256_and_si256(h0,m3),_mm256_load_si256((void*)&X[2][g])); \
      __m256i f=_mm256_maddubs_epi16(_mm256_and_si256(h1,m3),_mm256_load_si256((void*)&X[2][g+32])); \
      __m256i h=_mm256_maddubs_epi16(_mm256_and_si256(h0,m12),_mm256_load_si256((void*)&X[3][g])); \
      __m256i i=_mm256_maddubs_epi16(_mm256_and_si256(h1,m12),_mm256_load_si256((void*)&X[3][g+32])); \
      acc=_mm256_add_epi32(acc,_mm256_madd_epi16(_mm256_add_epi16(_mm256_add_epi16(a,b),_mm256_add_epi16(e,f)),ones)); \
      acc4=_mm256_add_epi32(acc4,_mm256_madd_epi16(_mm256_add_epi16(_mm256_add_epi16(c,d),_mm256_add_epi16(h,i)),ones)); }
static int32_t red(__m256i acc,__m256i acc4){acc=_mm256_add_epi32(acc,_mm256_srai_epi32(acc4,2)); __m128i v=_mm_add_epi32(_mm256_castsi256_si128(acc),_mm256_extracti128_si256(acc,1)); v=_mm_add_epi32(v,_mm_shuffle_epi32(v,0xee)); v=_mm_add_epi32(v,_mm_shuffle_epi32(v,0x55)); return _mm_cvtsi128_si32(v);}
/* one row at a time, the rows of `parts` equal parts in turn */
static void permParts(long r0,long r1,long parts){
  const __m256i m3=_mm256_set1_epi8(3), m12=_mm256_set1_epi8(12), ones=_mm256_set1_epi16(1);
  long q=(r1-r0)/parts;
  for(long k=0;k<r1-r0;k++){
    long r=r0+(k%parts)*q+k/parts;
    const uint8_t*row=W+r*RB; __m256i acc=_mm256_setzero_si256(), acc4=acc;
    for(int g=0;g<RB;g+=64){
      _mm_prefetch((const char*)row+g+AHEAD,_MM_HINT_T0);
      __m256i w0=_mm256_loadu_si256((void*)(row+g)), w1=_mm256_loadu_si256((void*)(row+g+32));
      BODY(w0,w1,g,acc,acc4)
    }
    Y[r]=red(acc,acc4);
  }
}
__attribute__((noinline)) void seq(long r0,long r1){ permParts(r0,r1,1); }
__attribute__((noinline)) void perm(long r0,long r1){ permParts(r0,r1,4); }
__attribute__((noinline)) void perm2(long r0,long r1){ permParts(r0,r1,2); }
/* rows p[0..3] at once, 64 bytes of each in turn, each prefetched `ahead` */
static void fourRows(const uint8_t*const p[4],int ahead,int32_t*const y[4]){
  const __m256i m3=_mm256_set1_epi8(3), m12=_mm256_set1_epi8(12), ones=_mm256_set1_epi16(1);
  __m256i s1[4],s4[4];
  for(int j=0;j<4;j++) s1[j]=s4[j]=_mm256_setzero_si256();
  for(int g=0;g<RB;g+=64){
    for(int j=0;j<4;j++) _mm_prefetch((const char*)p[j]+g+ahead,_MM_HINT_T0);
    for(int j=0;j<4;j++){ __m256i w0=_mm256_loadu_si256((void*)(p[j]+g)), w1=_mm256_loadu_si256((void*)(p[j]+g+32)); BODY(w0,w1,g,s1[j],s4[j]) }
  }
  for(int j=0;j<4;j++) *y[j]=red(s1[j],s4[j]);
}
/* 4 contiguous rows at once */
__attribute__((noinline)) void four(long r0,long r1){
  for(long r=r0;r<r1;r+=4){
    const uint8_t*const p[4]={W+r*RB,W+(r+1)*RB,W+(r+2)*RB,W+(r+3)*RB};
    int32_t*const y[4]={Y+r,Y+r+1,Y+r+2,Y+r+3};
    fourRows(p,AHEAD,y);
  }
}
/* plain read, 4 streams, for reference */
__attribute__((noinline)) long rd(void){ __m256i s=_mm256_setzero_si256(); long q=N*RB/4/32; const __m256i*p=(const __m256i*)W;
  for(long i=0;i<q;i+=2){ s=_mm256_add_epi8(s,_mm256_loadu_si256(p+i)); s=_mm256_add_epi8(s,_mm256_loadu_si256(p+i+q)); s=_mm256_add_epi8(s,_mm256_loadu_si256(p+i+2*q)); s=_mm256_add_epi8(s,_mm256_loadu_si256(p+i+3*q));
   s=_mm256_add_epi8(s,_mm256_loadu_si256(p+i+1)); s=_mm256_add_epi8(s,_mm256_loadu_si256(p+i+1+q)); s=_mm256_add_epi8(s,_mm256_loadu_si256(p+i+1+2*q)); s=_mm256_add_epi8(s,_mm256_loadu_si256(p+i+1+3*q)); }
  return _mm256_extract_epi64(s,0);}
typedef void(*fn)(long,long);
struct arg{fn f; long a,b;}; static void*thr(void*p){struct arg*x=p; x->f(x->a,x->b); return 0;}
static void two(fn f){ pthread_t t; struct arg a={f,N/2,N}; pthread_create(&t,0,thr,&a); f(0,N/2); pthread_join(t,0);}
/* 4 rows from the 4 quarters of [r0, r1) at once, 64 bytes of each in turn */
__attribute__((noinline)) void quad(long r0,long r1){
  long q=(r1-r0)/4;
  for(long r=r0;r<r0+q;r++){
    const uint8_t*const p[4]={W+r*RB,W+(r+q)*RB,W+(r+2*q)*RB,W+(r+3*q)*RB};
    int32_t*const y[4]={Y+r,Y+r+q,Y+r+2*q,Y+r+3*q};
    fourRows(p,AHEAD/4,y);
  }
}
int main(int argc,char**argv){
  N=((300L<<20)/RB)&~15L; if(argc>1) AHEAD=atoi(argv[1]);
  W=mmap(0,N*RB+65536,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS,-1,0); madvise(W,N*RB,MADV_HUGEPAGE);
  Y=malloc(N*4);
  uint32_t s=1; for(long k=0;k<N*RB;k++){s=s*1103515245+12345;W[k]=s>>13;}
  for(int j=0;j<4;j++)for(int k=0;k<RB;k++){s=s*1103515245+12345;X[j][k]=(int8_t)((s>>13)%255-127);}
  int32_t*ref=malloc(N*4); seq(0,N); memcpy(ref,Y,N*4); quad(0,N); if(memcmp(ref,Y,N*4)){puts("MISMATCH quad");return 1;} four(0,N); if(memcmp(ref,Y,N*4)){puts("MISMATCH four");return 1;}
  fn fs[]={seq,quad,perm,perm2}; const char*nm[]={"seq","quad","perm4","perm2"};
  for(int round=0;round<4;round++){
    double t=now(); long x=rd(); double sec=now()-t; printf("read4 %.2f GB/s (%ld) | ", N*RB/sec/1e9, x&1);
    for(int v=0;v<4;v++){ double t=now(); fs[v](0,N); double sec=now()-t; printf("%s %.2f  ", nm[v], N*RB/sec/1e9); }
    double t2=now(); two(seq); double s2=now()-t2; t=now(); two(quad); double s3=now()-t; double t4=now(); two(perm); double s4=now()-t4; printf("| 2t seq %.2f quad %.2f perm4 %.2f", N*RB/s2/1e9, N*RB/s3/1e9, N*RB/s4/1e9);
    puts("");
  }
}
