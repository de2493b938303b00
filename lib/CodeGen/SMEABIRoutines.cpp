//===- SMEABIRoutines.cpp - the SME support routines a model needs --------===//
//
// Functions that use ZA (ArmSME code is compiled `aarch64_new_za`) call the
// AAPCS64 SME support routines: `__arm_tpidr2_save` and `__arm_za_disable`
// in their prologue when a caller left a lazy save pending, and
// `__arm_tpidr2_restore` / `__arm_sme_state` around calls, plus
// `__arm_get_current_vg` (unwind info) and the streaming-compatible
// `__arm_sc_memset/memcpy/memmove` LLVM calls in streaming code. They live in
// compiler-rt's builtins, which Debian does not ship for AArch64 and which
// a model's shared library must not depend on. So every model with ZA code
// carries its own copies, hidden, as module assembly. Each follows the
// AAPCS64 "SME support routines" contract: it touches only X14-X17 (and
// its results), so callers' registers survive the custom calling
// conventions LLVM assumes for them; a TPIDR2 block with nonzero reserved
// bytes traps (the platform-defined abort).
//
//===----------------------------------------------------------------------===//

#include "afm/CodeGen/ObjectEmitter.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/IR/Module.h"
#include "llvm/TargetParser/Triple.h"

#include <string>

using namespace mlir;

/// Whether a function of `module` has its own ZA state or shares its
/// caller's: those make the back end call the support routines.
static bool usesZA(const llvm::Module &module) {
  for (const llvm::Function &f : module)
    for (llvm::StringRef attr :
         {"aarch64_new_za", "aarch64_inout_za", "aarch64_in_za",
          "aarch64_out_za", "aarch64_preserves_za", "aarch64_pstate_sm_body",
          "aarch64_pstate_sm_enabled", "aarch64_pstate_sm_compatible"})
      if (f.hasFnAttribute(attr))
        return true;
  return false;
}

/// The routines' assembly; `$` stands for the symbol prefix.
static constexpr llvm::StringLiteral kRoutines = R"(
$__arm_tpidr2_save:
  // TPIDR2_EL0 null: no lazy save pending.
  mrs x16, TPIDR2_EL0
  cbz x16, 1f
  ldrh w14, [x16, #10]
  cbnz w14, 2f
  ldr w14, [x16, #12]
  cbnz w14, 2f
  // num_za_save_slices rows of ZA to za_save_buffer, one SVL apart.
  ldrh w14, [x16, #8]
  cbz w14, 1f
  ldr x16, [x16]
  cbz x16, 1f
  mov w15, #0
0:
  str za[w15, 0], [x16]
  addsvl x16, x16, #1
  add w15, w15, #1
  cmp w14, w15
  b.ne 0b
1:
  ret
2:
  brk #1

$__arm_za_disable:
  stp x29, x30, [sp, #-16]!
  mov x29, sp
  bl $__arm_tpidr2_save
  msr TPIDR2_EL0, xzr
  smstop za
  ldp x29, x30, [sp], #16
  ret

$__arm_tpidr2_restore:
  // X0: the TPIDR2 block. TPIDR2_EL0 must be null and PSTATE.ZA set.
  mrs x16, TPIDR2_EL0
  cbnz x16, 2f
  ldrh w14, [x0, #10]
  cbnz w14, 2f
  ldr w14, [x0, #12]
  cbnz w14, 2f
  ldrh w14, [x0, #8]
  cbz w14, 1f
  ldr x16, [x0]
  cbz x16, 1f
  mov w15, #0
0:
  ldr za[w15, 0], [x16]
  addsvl x16, x16, #1
  add w15, w15, #1
  cmp w14, w15
  b.ne 0b
1:
  ret
2:
  brk #1

$__arm_sme_state:
  // X0: bit 63 SME present, bit 62 TPIDR2_EL0 accessible, bits 1:0
  // PSTATE.ZA and PSTATE.SM (SVCR); X1: TPIDR2_EL0.
  mov x0, #0xc000000000000000
  mrs x16, SVCR
  bfxil x0, x16, #0, #2
  mrs x1, TPIDR2_EL0
  ret

$__arm_get_current_vg:
  // VG for unwind info: the streaming vector length in 64-bit granules
  // in streaming mode, else 0 (SME targets here have no non-streaming SVE).
  mrs x0, SVCR
  tbz x0, #0, 1f
  cntd x0
  ret
1:
  mov x0, #0
  ret

$__arm_sc_memset:
  // Streaming-compatible memset(x0, w1, x2): scalar code only.
  mov x16, x0
  add x17, x0, x2
  cbz x2, 1f
0:
  strb w1, [x16], #1
  cmp x16, x17
  b.ne 0b
1:
  ret

$__arm_sc_memcpy:
  // Streaming-compatible memcpy(x0, x1, x2).
  mov x16, #0
  cbz x2, 1f
0:
  ldrb w17, [x1, x16]
  strb w17, [x0, x16]
  add x16, x16, #1
  cmp x16, x2
  b.ne 0b
1:
  ret

$__arm_sc_memmove:
  // Streaming-compatible memmove(x0, x1, x2): backwards if dst > src,
  // otherwise forwards. (Its own forward loop: Mach-O allows no conditional
  // branch to an external symbol such as __arm_sc_memcpy.)
  cmp x0, x1
  b.ls 2f
  mov x16, x2
  cbz x16, 1f
0:
  sub x16, x16, #1
  ldrb w17, [x1, x16]
  strb w17, [x0, x16]
  cbnz x16, 0b
1:
  ret
2:
  mov x16, #0
  cbz x2, 1b
3:
  ldrb w17, [x1, x16]
  strb w17, [x0, x16]
  add x16, x16, #1
  cmp x16, x2
  b.ne 3b
  ret
)";

void afm::addSMEABIRoutines(llvm::Module &module) {
  if (!usesZA(module))
    return;
  llvm::Triple triple(module.getTargetTriple());
  bool macho = triple.isOSBinFormatMachO();
  std::string prefix = macho ? "_" : "";
  std::string text = "  .text\n  .p2align 2\n";
  for (llvm::StringRef name :
       {"__arm_tpidr2_save", "__arm_za_disable", "__arm_tpidr2_restore",
        "__arm_sme_state", "__arm_get_current_vg", "__arm_sc_memset",
        "__arm_sc_memcpy", "__arm_sc_memmove"}) {
    std::string symbol = prefix + name.str();
    text += "  .globl " + symbol + "\n";
    text += (macho ? "  .private_extern " : "  .hidden ") + symbol + "\n";
    if (!macho)
      text += "  .type " + symbol + ",%function\n";
  }
  for (char c : kRoutines)
    text += c == '$' ? prefix : std::string(1, c);
  module.appendModuleInlineAsm(text);
}
