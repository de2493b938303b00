//===- TargetDescription.cpp - the table of known targets -----------------===//
//
// Cache sizes are per core for L1/L2 on x86 and the performance cluster's
// shared L2 on Apple cores; "L3" is the last-level cache (system-level cache
// on Apple silicon). They only steer tile sizes, so round numbers suffice.
//
//===----------------------------------------------------------------------===//

#include "afm/Target/TargetDescription.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"

using llvm::StringRef;
#include "llvm/TargetParser/Triple.h"

using namespace mlir::afm;

static constexpr uint64_t KiB = 1024, MiB = 1024 * 1024;

static std::vector<TargetDescription> buildTable() {
  std::vector<TargetDescription> t;
  auto add = [&](TargetDescription d) { t.push_back(std::move(d)); };

  TargetDescription v3;
  v3.name = "x86-64-v3";
  v3.triple = "x86_64-unknown-linux-gnu";
  v3.cpu = "x86-64-v3";
  v3.features = "+avx2,+fma,+f16c,+bmi2";
  v3.vectorBits = 256;
  v3.vectorRegisters = 16;
  v3.l1dBytes = 32 * KiB;
  v3.l2Bytes = 512 * KiB;
  v3.l3Bytes = 32 * MiB;
  v3.int8Dot = Int8DotProduct::X86MaddUBSW;
  add(v3);

  TargetDescription v4 = v3;
  v4.name = "x86-64-v4";
  v4.cpu = "x86-64-v4";
  v4.features = "+avx512f,+avx512bw,+avx512dq,+avx512vl,+avx2,+fma,+f16c,+bmi2";
  v4.vectorBits = 512;
  v4.vectorRegisters = 32;
  v4.l1dBytes = 48 * KiB;
  v4.l2Bytes = 2 * MiB;
  add(v4);

  // AVX-512 with VNNI (Ice Lake, Sapphire Rapids, Zen 4 and later).
  TargetDescription vnni = v4;
  vnni.name = "x86-64-v4-vnni";
  vnni.features += ",+avx512vnni";
  vnni.hasDotProd = true;
  vnni.int8Dot = Int8DotProduct::X86VNNI;
  add(vnni);

  // AMD Zen 4: the same code as x86-64-v4-vnni but for software prefetch
  // hints. The GEMVs' weight rows are prefetched 8 KiB ahead into L2
  // (prefetcht2), not L1: with prefetcht0 software prefetch was a loss
  // there (2-bit GEMV 4096x4096 on int8 activations, 1 thread: 15.7-15.9
  // GB/s without, 13.0-13.3 at 8 KiB; the 3B's decode 19.1 tokens/s
  // without, 15.7 at 8 KiB), while four streams read with prefetcht2 8
  // KiB ahead reach 26-27 GB/s on 1 thread against 20-21 without or with
  // prefetcht0. The 3B's decode (afm-bench --model, 4 runs alternated,
  // 2026-11-28): 23.8-24.8 tokens/s without, 27.8-28.6 with prefetcht2 at
  // 8 KiB on 1 thread; on 2 threads 31.6-41.5 and 33.1-46.6, the 2-thread
  // memory's own state deciding (docs/bench/gemv-prefetch-zen4.txt). The
  // LLVM CPU and the cache sizes stay x86-64-v4-vnni's: only the prefetch
  // distance and hints were measured.
  //
  // Decode attention's prefetches of its next task's cache rows go with
  // the L2 hint (prefetcht2) rather than non-temporal (prefetchnta): int8
  // KV at 4096 positions, 24/8 heads (afm-bench, 6 rounds alternated,
  // medians): 0.517 -> 0.467 ms on 1 thread, 0.348 -> 0.303 on 2; 32/8
  // heads 0.564 -> 0.539 and 0.388 -> 0.320 (2026-11-28). On Zen 5 the
  // non-temporal hint was the faster by 3-10% on 1 thread.
  TargetDescription zen4 = vnni;
  zen4.name = "amd-zen4";
  zen4.streamPrefetchLocality = 1;
  zen4.readOncePrefetch.locality = 1;
  add(zen4);

  // Intel Sapphire Rapids, its refresh Emerald Rapids (the same cores) and
  // Granite Rapids (recognized by AMX when a VM misreports the model,
  // chooseHostTargetName): x86-64-v4-vnni but for decode attention's
  // prefetches of its next task's rows, which go into L2 (prefetcht2), as
  // on Zen 4. There the non-temporal hint tuned on Zen 5 made the step 2.5x
  // slower (2.4x on Granite Rapids): a task's next rows (64 KiB at 256
  // slots) outgrow the 48 KiB L1 before they are read, and lines
  // prefetched non-temporally into it go back to DRAM.
  // int8 KV at 4096 positions, 24/8 heads, int8 query (afm-bench, an
  // Emerald Rapids VM, 2026-12-02, 3 rounds alternated, medians):
  // prefetchnta 2.48-2.54 ms on 1 thread and 1.73-1.92 on 2; prefetcht2
  // 1.02 and 0.60; prefetcht0 1.13 and 0.61; no prefetch 1.22 and 0.90
  // (docs/bench/attention-decode-emerald-rapids.txt). The GEMVs' weight
  // prefetch (distance and hint) measured no different from noise there,
  // so it stays x86-64-v4-vnni's.
  //
  // Once a layer's filled keys and values reach 6 MiB (3072 slots of the
  // 3B's 8 KV heads of 128 int8), those next-task prefetches go one row
  // (its two lines) every 1 KiB of rows, not every row, the L2 streamer
  // they start fetching the lines between; each software prefetch likely
  // holds one of L1's few fill buffers until DRAM answers (not measured:
  // no PMU in the VM), which kept the step near 10-11 GB/s. Granite
  // Rapids VM, 2026-12-05, 24/8 heads, int8 query, ctx 4096, 2 rounds
  // alternated: every row 0.83-0.84 ms on 1 thread and 0.41 on 2 (53-55%
  // of the read limit); every 1 KiB 0.69-0.70 and 0.35 (64-66%). The 3B's
  // decode on 2 threads with every 1 KiB at any length against every row
  // (two .afmb, alternated pairs): at 4096 faster in 2 of 2 (+4-6%), at
  // 3072 in 1 of 2, at 2048 in 4 of 4 (+1-4%) that hour but slower in 6
  // of 6 (2-3%) on 2026-12-03; hence the threshold between them
  // (docs/bench/attention-decode-granite-rapids.txt).
  //
  // Its GEMVs run the rows of the two halves of a weight matrix in turn,
  // two read streams per thread (interleaveRowHalves): a stand-alone loop
  // doing the 2-bit GEMV's work per 64-byte line over a 1 GiB buffer read
  // 5-20% faster that way in every run, on 1 and 2 threads (e.g. rows of 2048
  // bytes, medians: 12.0 -> 12.9 GB/s on 1 thread, 20.1 -> 21.8 on 2). The
  // 3B preset's decode on 1 thread was faster in 6 of 8 alternated pairs
  // (two sets of 4, medians 10.45 -> 12.05 and 11.25 -> 12.15 tokens/s),
  // on 2 threads no different within the VM's spread
  // (docs/bench/gemv-row-halves-emerald-rapids.txt).
  //
  // Its GEMVs prefetch their weights 2 KiB ahead, not 8: on a Granite
  // Rapids VM the 2-bit GEMV over rows of 2 KiB (afm-bench's 2048x8192,
  // int8 activations; the 3B's down projection) read 71-79% of the limit
  // 8 KiB ahead (4 rows of each half) and 79-91% 1 row ahead, while rows
  // of 1 KiB and less read the same at either distance. The 3B preset's
  // decode (two .afmb of the same weights, their pages reading alike) was
  // faster in 4 of 4 alternated pairs on 2 threads (27.6-28.4 -> 28.8-29.1
  // tokens/s at context 128; 23.9-24.2 -> 25.4-25.5 at 2048) and in 3 of 4
  // on 1 (14.9-15.4 -> 15.2-16.2). The ASTC GEMVs, which the 3B does not
  // use, read 2-13% slower in one round, but the same within noise in
  // three more the next night (0-4% slower on 2 threads at 4096x4096)
  // (docs/bench/gemv-prefetch-distance-granite-rapids.txt). Measured on
  // Granite Rapids only; Sapphire and Emerald Rapids get it untried.
  TargetDescription spr = vnni;
  spr.name = "intel-sapphire-rapids";
  spr.prefetchBytes = 2 * KiB;
  spr.readOncePrefetch = {/*locality=*/1, /*spacing=*/1024,
                          /*sparseFromBytes=*/6 * MiB};
  spr.interleaveRowHalves = true;
  add(spr);

  TargetDescription arm;
  arm.name = "aarch64-generic";
  arm.triple = "aarch64-unknown-linux-gnu";
  arm.cpu = "generic";
  arm.features = "+neon";
  arm.vectorBits = 128;
  arm.vectorRegisters = 32;
  arm.l1dBytes = 64 * KiB;
  arm.l2Bytes = 1 * MiB;
  arm.l3Bytes = 8 * MiB;
  add(arm);

  TargetDescription m1 = arm;
  m1.name = "apple-m1";
  m1.triple = "arm64-apple-macosx13.0.0";
  m1.cpu = "apple-m1";
  m1.features = "+neon,+dotprod,+fullfp16";
  m1.objectFormat = ObjectFormat::MachO;
  m1.hasDotProd = true;
  m1.int8Dot = Int8DotProduct::ArmSDot;
  m1.l1dBytes = 128 * KiB;
  m1.l2Bytes = 12 * MiB;
  m1.l3Bytes = 8 * MiB;
  // Apple GPUs sample ASTC in hardware: packages keep the blocks.
  m1.gpuSamplesASTC = true;
  m1.cacheLineBytes = 128;
  add(m1);

  TargetDescription m2 = m1;
  m2.name = "apple-m2";
  m2.cpu = "apple-m2";
  m2.features = "+neon,+dotprod,+fullfp16,+i8mm,+bf16";
  m2.hasI8MM = true;
  m2.hasBF16 = true;
  m2.l2Bytes = 16 * MiB;
  add(m2);

  TargetDescription m3 = m2;
  m3.name = "apple-m3";
  m3.cpu = "apple-m3";
  add(m3);

  TargetDescription m4 = m2;
  m4.name = "apple-m4";
  m4.cpu = "apple-m4";
  m4.features = "+neon,+dotprod,+fullfp16,+i8mm,+bf16,+sme,+sme2";
  m4.hasSME = true;
  m4.smeVectorBits = 512;
  add(m4);
  return t;
}

llvm::ArrayRef<TargetDescription> mlir::afm::getKnownTargets() {
  static const std::vector<TargetDescription> table = buildTable();
  return table;
}

bool TargetDescription::isAArch64() const {
  return llvm::Triple(triple).isAArch64();
}

llvm::Expected<TargetDescription>
mlir::afm::lookupTarget(llvm::StringRef name, llvm::StringRef os) {
  TargetDescription target;
  if (name == "host") {
    target = getHostTarget();
  } else {
    const TargetDescription *found =
        llvm::find_if(getKnownTargets(), [&](const TargetDescription &d) {
          return d.name == name;
        });
    if (found == getKnownTargets().end()) {
      std::string known;
      for (const TargetDescription &d : getKnownTargets())
        known += (known.empty() ? "" : ", ") + d.name;
      return llvm::createStringError("unknown target '" + name.str() +
                                     "'; known targets: host, " + known);
    }
    target = *found;
  }
  if (os.empty())
    return target;
  llvm::Triple triple(target.triple);
  if (os == "linux") {
    triple = llvm::Triple(triple.getArchName(), "unknown", "linux", "gnu");
    if (triple.getArch() == llvm::Triple::aarch64)
      triple.setArchName("aarch64");
    target.objectFormat = ObjectFormat::ELF;
  } else if (os == "macos") {
    triple = llvm::Triple(target.isAArch64() ? "arm64" : "x86_64", "apple",
                          "macosx13.0.0");
    target.objectFormat = ObjectFormat::MachO;
  } else {
    return llvm::createStringError("unknown target OS '" + os.str() +
                                   "'; expected 'linux' or 'macos'");
  }
  target.triple = triple.str();
  target.os = os.str();
  return target;
}

StringRef
mlir::afm::chooseHostTargetName(bool isAArch64, StringRef cpu,
                                const llvm::StringMap<bool> &features) {
  if (isAArch64)
    return "aarch64-generic";
  bool avx512 = features.lookup("avx512f") && features.lookup("avx512bw") &&
                features.lookup("avx512vl") && features.lookup("avx512dq");
  bool vnni = avx512 && features.lookup("avx512vnni");
  // Sapphire Rapids and the server cores after it (Emerald and Granite
  // Rapids) by name, or, when a virtual machine reports another model
  // number, by AMX: no other x86 cores have its tiles. A Granite Rapids VM
  // (2026-12-02) reported family 6 model 167, which LLVM names
  // "rocketlake", a desktop core without AMX; its decode attention ran
  // 2.4x slower with x86-64-v4-vnni's non-temporal prefetches than with
  // this target's (docs/bench/attention-decode-granite-rapids.txt).
  bool sapphireRapidsCores =
      cpu == "sapphirerapids" || cpu == "emeraldrapids" ||
      cpu == "graniterapids" || cpu == "graniterapids-d" ||
      (features.lookup("amx-tile") && features.lookup("amx-int8"));
  return vnni && cpu == "znver4"       ? "amd-zen4"
         : vnni && sapphireRapidsCores ? "intel-sapphire-rapids"
         : vnni                        ? "x86-64-v4-vnni"
         : avx512                      ? "x86-64-v4"
                                       : "x86-64-v3";
}

TargetDescription mlir::afm::getHostTarget() {
  llvm::Triple host(llvm::sys::getProcessTriple());
  StringRef name =
      chooseHostTargetName(host.isAArch64(), llvm::sys::getHostCPUName(),
                           llvm::sys::getHostCPUFeatures());
  TargetDescription target =
      *llvm::find_if(getKnownTargets(), [&](const TargetDescription &d) {
        return d.name == name;
      });
  target.triple = host.str();
  return target;
}
