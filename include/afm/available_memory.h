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

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The most memory any process here may hold: the physical memory, or less
 * when a cgroup limit on the way to the root is lower (Linux; cgroup v2's
 * memory.max, or v1's memory.limit_in_bytes). UINT64_MAX when unknown. */
uint64_t afm_memory_limit(void);

/* The bytes this process may still add: the physical memory minus this
 * process's resident set, or less when a cgroup limit on the way to the
 * root leaves less room (its limit minus its usage: v2's memory.max and
 * memory.current, v1's memory.limit_in_bytes and memory.usage_in_bytes;
 * Linux). UINT64_MAX when unknown. */
uint64_t afm_available_memory(void);

/* The smallest cgroup limit (less its usage when `lessUsage`) over the
 * groups that `procCgroup` (a /proc/self/cgroup) names and their parents,
 * in the hierarchies mounted at `root` (/sys/fs/cgroup): v2 at the root or
 * at root/unified (hybrid), v1's memory controller at root/memory.
 * UINT64_MAX when nothing limits. The two paths are parameters so tests can
 * describe a machine with files. */
uint64_t afm_cgroup_room(const char *procCgroup, const char *root,
                         bool lessUsage);

#ifdef __cplusplus
}
#endif

#endif /* AFM_AVAILABLE_MEMORY_H */
