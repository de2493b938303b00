//===- TargetDescription.h - CPU targets as data ----------------*- C++ -*-===//
//
// Everything code generation needs to know about a target, as data: the
// LLVM triple/CPU/features, the vector register file and the cache sizes.
// Passes derive tile sizes and vector shapes from these numbers; there are
// no per-target code paths outside this table.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_TARGET_TARGETDESCRIPTION_H
#define AFM_TARGET_TARGETDESCRIPTION_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace mlir::afm {

enum class ObjectFormat { ELF, MachO };

/// The instruction that sums four u8 x s8 byte products into each i32 lane
/// (the int8-activation kernels' inner loop).
enum class Int8DotProduct {
  None,        ///< no such instruction: plain vector arithmetic
  X86MaddUBSW, ///< vpmaddubsw + vpmaddwd (AVX2, AVX-512BW): u8 < 128
  X86VNNI,     ///< vpdpbusd (AVX-512 VNNI)
  ArmSDot,     ///< sdot (Armv8.2 dotprod): u8 < 128
};

/// How a kernel prefetches data it reads once, a while later: decode
/// attention's next task's cache rows and scales (DecodeAttention.cpp).
struct ReadOncePrefetch {
  /// The locality hint (0-3, llvm.prefetch's). 0 is non-temporal
  /// (prefetchnta on x86), which measured best on Zen 5; 1 (prefetcht2) on
  /// Zen 4 and on Sapphire/Emerald Rapids, where non-temporal lines
  /// outgrow L1 unread.
  unsigned locality = 0;
  /// Bytes of cache rows per software prefetch once a step reads at least
  /// `sparseFromBytes` of a layer's cache (keys and values): one row's
  /// lines every this many bytes of rows, the lines between left to the L2
  /// streamer those prefetches start. Below that, and when 0, every row is
  /// prefetched. 1024 from 6 MiB on intel-sapphire-rapids
  /// (TargetDescription.cpp).
  unsigned spacing = 0;
  uint64_t sparseFromBytes = 0;
};

struct TargetDescription {
  std::string name;     ///< e.g. "x86-64-v3", "apple-m2"
  std::string triple;   ///< LLVM target triple
  std::string cpu;      ///< LLVM CPU name
  std::string features; ///< LLVM feature string
  /// The operating system lookupTarget retargeted the triple to ("linux",
  /// "macos"), or empty: the table's.
  std::string os;
  ObjectFormat objectFormat = ObjectFormat::ELF;
  unsigned vectorBits = 128;     ///< width of one SIMD register
  unsigned vectorRegisters = 16; ///< architectural SIMD registers
  bool hasFMA = true;
  bool hasDotProd = false; ///< int8 dot products (sdot/udot, VNNI)
  Int8DotProduct int8Dot = Int8DotProduct::None;
  bool hasI8MM = false;    ///< int8 matrix multiply (smmla)
  bool hasBF16 = false;
  bool hasSME = false;
  unsigned smeVectorBits = 0; ///< streaming vector length, when hasSME
  uint64_t l1dBytes = 32 * 1024;
  uint64_t l2Bytes = 512 * 1024;
  uint64_t l3Bytes = 8 * 1024 * 1024; ///< last-level cache (SLC on Apple)
  unsigned cacheLineBytes = 64;
  /// How far ahead of the tile a GEMV-like kernel prefetches its streamed
  /// weight rows in software (Prefetch.h), shared among the arrays it
  /// streams (the 4-bit head's codes and scales each get half;
  /// TileForTarget.cpp); 0 when the hardware prefetchers alone keep
  /// enough lines in flight and software prefetches only cost. 8 KiB by
  /// default; 2 KiB on intel-sapphire-rapids (TargetDescription.cpp).
  uint64_t prefetchBytes = 8 * 1024;
  /// The locality hint (0-3, llvm.prefetch's) of those prefetches: 3
  /// (prefetcht0, into L1) by default; 1 (prefetcht2, into L2) on Zen 4,
  /// where prefetcht0 lost to no prefetch and prefetcht2 beat both.
  unsigned streamPrefetchLocality = 3;
  /// Whether a GEMV-like kernel's parallel row loop runs rows from the two
  /// halves of its weights in turn (0, N/2, 1, N/2 + 1, ...), so that a
  /// thread reads two streams half the matrix apart instead of one. On
  /// Emerald Rapids two streams read 5-20% faster under the GEMV's
  /// arithmetic (TargetDescription.cpp).
  bool interleaveRowHalves = false;
  /// Decode attention's software prefetches of its next task's cache rows
  /// and scales.
  ReadOncePrefetch readOncePrefetch;
  /// The GPU decodes ASTC textures in hardware, so an `.afmb` for this
  /// target keeps ASTC weights' blocks as an artifact next to the CPU form.
  bool gpuSamplesASTC = false;

  /// f32 lanes in one vector register.
  unsigned f32Lanes() const { return vectorBits / 32; }
  bool isAArch64() const;
};

/// All known targets, in a stable order.
llvm::ArrayRef<TargetDescription> getKnownTargets();

/// The target called `name`. `os` may retarget it to another operating
/// system ("linux" or "macos"): e.g. `apple-m2` code paths linked for Linux
/// so they run under qemu-aarch64. Unknown names list the known ones.
llvm::Expected<TargetDescription> lookupTarget(llvm::StringRef name,
                                               llvm::StringRef os = "");

/// The name of the known target for a machine of this architecture, LLVM
/// CPU name and features (llvm::sys::getHostCPUFeatures' keys): the
/// choice getHostTarget makes, apart so that it can be tested.
llvm::StringRef chooseHostTargetName(bool isAArch64, llvm::StringRef cpu,
                                     const llvm::StringMap<bool> &features);

/// The target matching the machine this process runs on.
TargetDescription getHostTarget();

} // namespace mlir::afm

#endif // AFM_TARGET_TARGETDESCRIPTION_H
