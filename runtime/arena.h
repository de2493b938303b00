/*===- arena.h - a session's KV memory, reserved but not touched ---*- C -*-===*
 *
 * A session's arena holds the KV caches at full context plus the entries'
 * scratch memory: gigabytes for a long context. It is mapped anonymous and
 * left untouched, so it costs only the pages a sequence actually reaches,
 * and it reads as zeros without a memset (kernel_abi.h promises a zeroed
 * arena at session start and reset). An arena larger than the memory the
 * process may use is refused up front with AFM_ERR_MEMORY, instead of an
 * OOM kill when the sequence grows into it.
 *
 * An arena of at most AFM_ARENA_POPULATE_BYTES is touched at once instead
 * (and cleared by memset): its RSS cost is bounded, and a decode step then
 * takes no page fault at all. A larger one takes a page fault the first
 * time the sequence reaches each page of its caches, and nothing after.
 *
 *===----------------------------------------------------------------------===*/

#ifndef AFM_RUNTIME_ARENA_H
#define AFM_RUNTIME_ARENA_H

#include "afm/runtime.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Arenas up to this size are touched when created (64 MiB). */
#define AFM_ARENA_POPULATE_BYTES ((uint64_t)64 << 20)

typedef struct afm_arena {
  uint8_t *data;  /* 64-byte aligned (page aligned), zeroed */
  size_t size;    /* mapped bytes: the request rounded up to whole pages */
  bool populated; /* touched at creation, cleared by memset */
} afm_arena;

/* Maps an arena of at least `bytes` (at least one page). AFM_ERR_MEMORY,
 * naming `what` and the limit, when the process cannot have that much
 * memory or the mapping fails. */
afm_status afm_arena_create(uint64_t bytes, const char *what, afm_arena *out);

/* Zeroes the arena again, returning its pages to the system. */
void afm_arena_clear(afm_arena *arena);

/* Unmaps the arena (a zeroed or empty one is a no-op). */
void afm_arena_free(afm_arena *arena);

/* Asks for transparent huge pages over a mapping the runtime streams
 * through every step (the weights), where the kernel supports it
 * (Linux madvise; a no-op elsewhere and on failure). With 4 KiB pages a
 * decode step's gigabyte is a quarter million TLB misses; under some
 * virtual machines each is costly (afm-bench measured a 150000x3072 4-bit
 * LM head at 15-20 ms with huge pages and 60-200 ms without, on one
 * thread). */
void afm_advise_huge_pages(void *data, size_t bytes);

#endif /* AFM_RUNTIME_ARENA_H */
