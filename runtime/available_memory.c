/*===- available_memory.c - the memory a process may still use ------------===*/

#include "afm/available_memory.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

/* Whether `controllers` (a /proc/self/cgroup line's middle field, comma
 * separated) names the v1 memory controller. */
static bool namesMemory(const char *controllers, size_t length) {
  while (length > 0) {
    size_t name = 0;
    while (name < length && controllers[name] != ',')
      ++name;
    if (name == 6 && strncmp(controllers, "memory", 6) == 0)
      return true;
    if (name == length)
      break;
    controllers += name + 1;
    length -= name + 1;
  }
  return false;
}

/* Lowers `room` to the limit less the usage (when `lessUsage`) of each
 * level from `group` (a path below `mount`, "" or starting with '/') up to
 * the mount itself. A level without a limit file, or whose limit is not a
 * number ("max"), does not limit. */
static uint64_t roomUpTo(const char *mount, const char *group,
                         const char *limitFile, const char *usageFile,
                         bool lessUsage, uint64_t room) {
  char level[512];
  snprintf(level, sizeof(level), "%s", group);
  for (;;) {
    char path[1200];
    uint64_t limit, usage;
    snprintf(path, sizeof(path), "%s%s/%s", mount, level, limitFile);
    if (readNumber(path, &limit)) {
      snprintf(path, sizeof(path), "%s%s/%s", mount, level, usageFile);
      if (!lessUsage || !readNumber(path, &usage))
        usage = 0;
      uint64_t left = usage < limit ? limit - usage : 0;
      if (left < room)
        room = left;
    }
    char *slash = strrchr(level, '/');
    if (!slash)
      break;
    *slash = '\0'; /* the parent; "" is the mount itself */
  }
  return room;
}

uint64_t afm_cgroup_room(const char *procCgroup, const char *root,
                         bool lessUsage) {
  FILE *file = fopen(procCgroup, "r");
  if (!file)
    return UINT64_MAX;
  uint64_t room = UINT64_MAX;
  char line[600];
  while (fgets(line, sizeof(line), file)) {
    size_t length = strcspn(line, "\n");
    if (line[length] != '\n' && !feof(file)) {
      /* Longer than any path we could open: skip the rest of it. */
      int c;
      while ((c = fgetc(file)) != EOF && c != '\n')
        ;
      continue;
    }
    line[length] = '\0';
    /* hierarchy-id:controllers:path */
    char *first = strchr(line, ':');
    char *second = first ? strchr(first + 1, ':') : NULL;
    if (!second)
      continue;
    const char *group = second + 1;
    if (strcmp(group, "/") == 0)
      group = "";
    char mount[700];
    if (strncmp(line, "0::", 3) == 0) {
      /* cgroup v2: mounted at the root, or beside the v1 hierarchies
       * under unified/ (a hybrid system). */
      room = roomUpTo(root, group, "memory.max", "memory.current",
                      lessUsage, room);
      snprintf(mount, sizeof(mount), "%s/unified", root);
      room = roomUpTo(mount, group, "memory.max", "memory.current",
                      lessUsage, room);
    } else if (namesMemory(first + 1, (size_t)(second - first - 1))) {
      /* cgroup v1's memory controller: no limit reads as a number near
       * 2^63, which the physical memory undercuts. */
      snprintf(mount, sizeof(mount), "%s/memory", root);
      room = roomUpTo(mount, group, "memory.limit_in_bytes",
                      "memory.usage_in_bytes", lessUsage, room);
    }
  }
  fclose(file);
  return room;
}

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

/* Where Linux describes this process's groups and mounts their
 * hierarchies; elsewhere the first is missing and nothing limits. */
static const char kProcCgroup[] = "/proc/self/cgroup";
static const char kCgroupRoot[] = "/sys/fs/cgroup";

uint64_t afm_memory_limit(void) {
  return smaller(physicalMemory(),
                 afm_cgroup_room(kProcCgroup, kCgroupRoot, false));
}

uint64_t afm_available_memory(void) {
  uint64_t room = physicalMemory();
  if (room != UINT64_MAX) {
    uint64_t resident = residentBytes();
    room = resident < room ? room - resident : 0;
  }
  return smaller(room, afm_cgroup_room(kProcCgroup, kCgroupRoot, true));
}
