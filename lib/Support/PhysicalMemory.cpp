//===- PhysicalMemory.cpp - this machine's memory -------------------------===//

#include "afm/Support/PhysicalMemory.h"

#include <unistd.h>

std::optional<uint64_t> afm::physicalMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || pageSize <= 0)
    return std::nullopt;
  return uint64_t(pages) * uint64_t(pageSize);
}
