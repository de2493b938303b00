//===- PhysicalMemory.h - this machine's memory -----------------*- C++ -*-===//
//
// The tools refuse work that would need more memory than the machine has,
// with a clear error, rather than be killed by the kernel's OOM killer
// half-way through (an allocation past RAM succeeds under overcommit and
// fails only when its pages are touched).
//
//===----------------------------------------------------------------------===//

#ifndef AFM_SUPPORT_PHYSICALMEMORY_H
#define AFM_SUPPORT_PHYSICALMEMORY_H

#include <cstdint>
#include <optional>

namespace afm {

/// This machine's physical memory in bytes; none when the system does not
/// say.
std::optional<uint64_t> physicalMemoryBytes();

} // namespace afm

#endif // AFM_SUPPORT_PHYSICALMEMORY_H
