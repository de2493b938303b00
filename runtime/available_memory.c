/*===- available_memory.c - the memory a process may still use ------------===*/

#include "afm/available_memory.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

/* The smallest cgroup v2 memory.max from this process's group up to the
 * root, less each level's memory.current when `lessUsage`; UINT64_MAX when
 * no level sets a limit. */
static uint64_t cgroupRoom(bool lessUsage) {
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
      if (!lessUsage || !readNumber(path, &current))
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

/* The physical memory in bytes; UINT64_MAX when the system does not say. */
static uint64_t physicalMemory(void) {
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || pageSize <= 0)
    return UINT64_MAX;
  return (uint64_t)pages * (uint64_t)pageSize;
}

/* This process's resident set in bytes (0 when unknown). */
static uint64_t residentBytes(void) {
  uint64_t resident = 0;
#if defined(__linux__)
  long pageSize = sysconf(_SC_PAGESIZE);
  FILE *statm = fopen("/proc/self/statm", "r");
  if (statm) {
    unsigned long long size = 0, pagesResident = 0;
    if (pageSize > 0 &&
        fscanf(statm, "%llu %llu", &size, &pagesResident) == 2)
      resident = (uint64_t)pagesResident * (uint64_t)pageSize;
    fclose(statm);
  }
#endif
  return resident;
}

static uint64_t smaller(uint64_t a, uint64_t b) { return a < b ? a : b; }

uint64_t afm_memory_limit(void) {
  uint64_t limit = physicalMemory();
#if defined(__linux__)
  limit = smaller(limit, cgroupRoom(false));
#endif
  return limit;
}

uint64_t afm_available_memory(void) {
  uint64_t room = physicalMemory();
  if (room != UINT64_MAX) {
    uint64_t resident = residentBytes();
    room = resident < room ? room - resident : 0;
  }
#if defined(__linux__)
  room = smaller(room, cgroupRoom(true));
#endif
  return room;
}
