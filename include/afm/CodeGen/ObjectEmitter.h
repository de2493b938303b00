//===- ObjectEmitter.h - LLVM dialect -> shared library ---------*- C++ -*-===//
//
// The back end of afm-compile: translate a module in the LLVM dialect to
// LLVM IR, optimize it at O3 for the target CPU, emit an object file with
// LLVM's TargetMachine, and link it into the shared library the runtime
// loads (ELF .so for Linux triples, Mach-O .dylib for Apple ones).
//
//===----------------------------------------------------------------------===//

#ifndef AFM_CODEGEN_OBJECTEMITTER_H
#define AFM_CODEGEN_OBJECTEMITTER_H

#include "afm/Target/TargetDescription.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"

#include <memory>
#include <string>

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::afm {

/// Registers the translations from the LLVM dialect to LLVM IR.
void registerLLVMIRTranslations(DialectRegistry &registry);

/// A TargetMachine for `target` (PIC, O3), or an error naming the triple.
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(const TargetDescription &target);

/// Translates `module` (LLVM dialect only) to LLVM IR for `machine` and
/// optimizes it at O3: translateForTarget, then optimizeForTarget.
llvm::Expected<std::unique_ptr<llvm::Module>>
translateAndOptimize(ModuleOp module, llvm::LLVMContext &context,
                     llvm::TargetMachine &machine);

/// Translates `module` (LLVM dialect only) to LLVM IR for `machine`: its
/// triple and data layout, the string routines it uses linked in, the CPU
/// and features pinned on every function.
llvm::Expected<std::unique_ptr<llvm::Module>>
translateForTarget(ModuleOp module, llvm::LLVMContext &context,
                   llvm::TargetMachine &machine);

/// Optimizes a translated module at O3 for `machine`, then adds the SME
/// support routines it needs. Touches nothing but `module`'s context.
void optimizeForTarget(llvm::Module &module, llvm::TargetMachine &machine);

/// Appends hidden copies of the AAPCS64 SME support routines
/// (`__arm_tpidr2_save`, `__arm_za_disable`, `__arm_tpidr2_restore`,
/// `__arm_sme_state`, `__arm_get_current_vg`, `__arm_sc_mem{set,cpy,move}`)
/// to `module` when a function of it uses ZA or
/// streaming mode; does nothing otherwise.
void addSMEABIRoutines(llvm::Module &module);

/// Links the routines that parse and print numbers for ONNX STRING casts
/// (`afm_rt_string_to_f32`, ...; lib/CodeGen/StringRoutines.cpp) into
/// `module` when it declares one; does nothing otherwise.
llvm::Error linkStringRoutines(llvm::Module &module);

/// Object file bytes of `module`.
llvm::Expected<std::string> emitObject(llvm::Module &module,
                                       llvm::TargetMachine &machine);

/// Links an object into a shared library for `target` with lld; returns the
/// library's bytes. Undefined symbols (malloc, free) resolve at load time.
llvm::Expected<std::string> linkSharedLibrary(llvm::StringRef object,
                                              const TargetDescription &target);

} // namespace mlir::afm

#endif // AFM_CODEGEN_OBJECTEMITTER_H
