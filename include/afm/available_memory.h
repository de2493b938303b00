/*===- available_memory.h - the memory a process may still use ---*- C -*-===*
 *
 * The runtime refuses a session arena, and the tools refuse a buffer, larger
 * than the memory the process may use, with a clear error. Asking first
 * matters because under overcommit an allocation past it succeeds and fails
 * only when its pages are touched, as an OOM kill. One implementation for
 * the C runtime and the C++ tools (runtime/available_memory.c).
 *
 *===----------------------------------------------------------------------===*/

#ifndef AFM_AVAILABLE_MEMORY_H
#define AFM_AVAILABLE_MEMORY_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The most memory any process here may hold: the physical memory, or less
 * when a cgroup v2 memory.max on the way to the root is lower (Linux).
 * UINT64_MAX when unknown. */
uint64_t afm_memory_limit(void);

/* The bytes this process may still add: the physical memory minus this
 * process's resident set, or less when a cgroup v2 memory.max on the way to
 * the root leaves less room (its max minus its memory.current; Linux).
 * UINT64_MAX when unknown. */
uint64_t afm_available_memory(void);

#ifdef __cplusplus
}
#endif

#endif /* AFM_AVAILABLE_MEMORY_H */
