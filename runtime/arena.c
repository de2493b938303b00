/*===- arena.c - a session's KV memory, reserved but not touched -----------===*/

#include "arena.h"

#include "checked_math.h"
#include "error.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if !defined(MAP_ANONYMOUS) && defined(MAP_ANON)
#define MAP_ANONYMOUS MAP_ANON
#endif

#if defined(__linux__)
/* A whole decimal number from the first line of `path`; false when the
 * file is missing or says something else ("max"). */
static bool readNumber(const char *path, uint64_t *value) {
  FILE *file = fopen(path, "r");
  if (!file)
    return false;
  unsigned long long number = 0;
  bool ok = fscanf(file, "%llu", &number) == 1;
  fclose(file);
  *value = number;
  return ok;
}

/* The smallest room left under a cgroup v2 memory.max, from this
 * process's group up to the root (each level's max minus its current
 * usage); UINT64_MAX when no level sets a limit. */
static uint64_t cgroupRoom(void) {
  char group[512] = {0};
  FILE *file = fopen("/proc/self/cgroup", "r");
  if (!file)
    return UINT64_MAX;
  char line[sizeof(group)];
  while (fgets(line, sizeof(line), file))
    if (strncmp(line, "0::", 3) == 0) {
      snprintf(group, sizeof(group), "%s", line + 3);
      group[strcspn(group, "\n")] = '\0';
      break;
    }
  fclose(file);
  uint64_t room = UINT64_MAX;
  for (;;) {
    char path[700];
    uint64_t max, current;
    snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.max", group);
    if (readNumber(path, &max)) {
      snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.current", group);
      if (!readNumber(path, &current))
        current = 0;
      uint64_t left = current < max ? max - current : 0;
      if (left < room)
        room = left;
    }
    char *slash = strrchr(group, '/');
    if (!slash || group[0] == '\0')
      break;
    *slash = '\0'; /* the parent; "" is the root */
  }
  return room;
}
#endif

uint64_t afm_available_memory(void) {
  uint64_t room = UINT64_MAX;
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  if (pages > 0 && pageSize > 0) {
    uint64_t physical = (uint64_t)pages * (uint64_t)pageSize, resident = 0;
#if defined(__linux__)
    FILE *statm = fopen("/proc/self/statm", "r");
    if (statm) {
      unsigned long long size = 0, pagesResident = 0;
      if (fscanf(statm, "%llu %llu", &size, &pagesResident) == 2)
        resident = (uint64_t)pagesResident * (uint64_t)pageSize;
      fclose(statm);
    }
#endif
    room = resident < physical ? physical - resident : 0;
  }
#if defined(__linux__)
  uint64_t group = cgroupRoom();
  if (group < room)
    room = group;
#endif
  return room;
}

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
