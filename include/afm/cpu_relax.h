/*===- cpu_relax.h - the pause inside a spin-wait -------------*- C -*-===*
 *
 * One definition for the runtime's thread pool and afm-bench's probes. On
 * x86 `pause` frees the core for its other hyperthread and keeps a spinning
 * load from flooding the memory-order machinery when the awaited store
 * arrives; on AArch64 `yield` is the hint for the same.
 *
 *===----------------------------------------------------------------------===*/

#ifndef AFM_CPU_RELAX_H
#define AFM_CPU_RELAX_H

static inline void afm_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

#endif /* AFM_CPU_RELAX_H */
