/*===- arena.c - a session's KV memory, reserved but not touched -----------===*/

#include "arena.h"

#include "afm/available_memory.h"
#include "checked_math.h"
#include "error.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if !defined(MAP_ANONYMOUS) && defined(MAP_ANON)
#define MAP_ANONYMOUS MAP_ANON
#endif

afm_status afm_arena_create(uint64_t bytes, const char *what, afm_arena *out) {
  memset(out, 0, sizeof(*out));
  long pageSize = sysconf(_SC_PAGESIZE);
  uint64_t rounded;
  if (pageSize <= 0 ||
      !afm_checked_align(bytes ? bytes : 1, (uint64_t)pageSize, &rounded) ||
      rounded > SIZE_MAX / 2)
    return afm_error(AFM_ERR_MEMORY, "%s: %llu bytes of KV memory cannot be "
                     "addressed", what, (unsigned long long)bytes);
  uint64_t available = afm_available_memory();
  if (rounded > available)
    return afm_error(AFM_ERR_MEMORY,
                     "%s: the session needs %llu bytes of KV memory (its "
                     "caches at full context and scratch), more than the "
                     "%llu bytes this process can still use; compile the "
                     "model for a shorter context",
                     what, (unsigned long long)rounded,
                     (unsigned long long)available);
  void *data = mmap(NULL, (size_t)rounded, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (data == MAP_FAILED)
    return afm_error(AFM_ERR_MEMORY,
                     "%s: cannot reserve %llu bytes of KV memory",
                     what, (unsigned long long)rounded);
  out->data = (uint8_t *)data;
  out->size = (size_t)rounded;
  if (rounded <= AFM_ARENA_POPULATE_BYTES) {
    memset(out->data, 0, out->size);
    out->populated = true;
  }
  return AFM_OK;
}

void afm_advise_huge_pages(void *data, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  /* Advice only: a kernel without THP refuses it and nothing changes. */
  (void)madvise(data, bytes, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

void afm_arena_clear(afm_arena *arena) {
  if (!arena->data)
    return;
#if defined(__linux__)
  /* Private anonymous pages read as zeros again after MADV_DONTNEED (and
   * leave the resident set until touched again). */
  if (!arena->populated &&
      madvise(arena->data, arena->size, MADV_DONTNEED) == 0)
    return;
#endif
  memset(arena->data, 0, arena->size);
}

void afm_arena_free(afm_arena *arena) {
  if (arena->data)
    munmap(arena->data, arena->size);
  memset(arena, 0, sizeof(*arena));
}
