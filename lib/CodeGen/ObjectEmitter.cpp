//===- ObjectEmitter.cpp - LLVM dialect -> shared library -----------------===//

#include "afm/CodeGen/ObjectEmitter.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/ArmSME/ArmSMEToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/ArmSVE/ArmSVEToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Triple.h"

#include <mutex>

using namespace mlir;

#ifndef AFM_LLVM_TOOLS_DIR
#error "AFM_LLVM_TOOLS_DIR must name the directory holding ld.lld"
#endif

void afm::registerLLVMIRTranslations(DialectRegistry &registry) {
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  // SME code (targets with hasSME) keeps ArmSME/ArmSVE intrinsic ops.
  registerArmSMEDialectTranslation(registry);
  registerArmSVEDialectTranslation(registry);
}

static void initializeTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
    // Module assembly (the SME support routines) is parsed when emitting.
    llvm::InitializeAllAsmParsers();
  });
}

llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
afm::createTargetMachine(const TargetDescription &target) {
  initializeTargets();
  llvm::Triple triple(target.triple);
  std::string error;
  const llvm::Target *llvmTarget =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!llvmTarget)
    return llvm::createStringError("no LLVM back end for triple '" +
                                   target.triple + "': " + error);
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> machine(
      llvmTarget->createTargetMachine(triple, target.cpu, target.features,
                                      options, llvm::Reloc::PIC_,
                                      std::nullopt,
                                      llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    return llvm::createStringError("cannot create a target machine for '" +
                                   target.triple + "' (cpu " + target.cpu +
                                   ")");
  return machine;
}

llvm::Expected<std::unique_ptr<llvm::Module>>
afm::translateAndOptimize(ModuleOp module, llvm::LLVMContext &context,
                          llvm::TargetMachine &machine) {
  auto llvmModule = translateForTarget(module, context, machine);
  if (llvmModule)
    optimizeForTarget(**llvmModule, machine);
  return llvmModule;
}

llvm::Expected<std::unique_ptr<llvm::Module>>
afm::translateForTarget(ModuleOp module, llvm::LLVMContext &context,
                        llvm::TargetMachine &machine) {
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, context, "afm-model");
  if (!llvmModule)
    return llvm::createStringError(
        "translation to LLVM IR failed (is everything in the LLVM dialect?)");
  llvmModule->setTargetTriple(machine.getTargetTriple());
  llvmModule->setDataLayout(machine.createDataLayout());
  if (llvm::Error error = linkStringRoutines(*llvmModule))
    return std::move(error);
  // Pin CPU and features on every function so O3 vectorizes for them.
  for (llvm::Function &f : *llvmModule) {
    if (f.isDeclaration())
      continue;
    f.addFnAttr("target-cpu", machine.getTargetCPU());
    f.addFnAttr("target-features", machine.getTargetFeatureString());
  }
  return llvmModule;
}

void afm::optimizeForTarget(llvm::Module &llvmModule,
                            llvm::TargetMachine &machine) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder builder(&machine);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager passes =
      builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  passes.run(llvmModule, mam);
  addSMEABIRoutines(llvmModule);
}

llvm::Expected<std::string> afm::emitObject(llvm::Module &module,
                                            llvm::TargetMachine &machine) {
  llvm::SmallVector<char, 0> bytes;
  llvm::raw_svector_ostream out(bytes);
  llvm::legacy::PassManager passes;
  if (machine.addPassesToEmitFile(passes, out, nullptr,
                                  llvm::CodeGenFileType::ObjectFile))
    return llvm::createStringError("the target cannot emit object files");
  passes.run(module);
  return std::string(bytes.begin(), bytes.end());
}

llvm::Expected<std::string>
afm::linkSharedLibrary(llvm::StringRef object,
                       const TargetDescription &target) {
  bool macho = target.objectFormat == ObjectFormat::MachO;
  llvm::SmallString<128> objectPath, libraryPath;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("afm-model", "o", objectPath))
    return llvm::createStringError(ec, "cannot create a temporary file");
  auto removeObject =
      llvm::scope_exit([&] { llvm::sys::fs::remove(objectPath); });
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
          "afm-model", macho ? "dylib" : "so", libraryPath))
    return llvm::createStringError(ec, "cannot create a temporary file");
  auto removeLibrary =
      llvm::scope_exit([&] { llvm::sys::fs::remove(libraryPath); });
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(objectPath, ec);
    if (ec)
      return llvm::createStringError(ec, "cannot write " + objectPath);
    os << object;
  }

  std::string linker = std::string(AFM_LLVM_TOOLS_DIR) +
                       (macho ? "/ld64.lld" : "/ld.lld");
  SmallVector<std::string> args = {linker};
  if (macho) {
    args.append({"-dylib", "-arch",
                 target.isAArch64() ? "arm64" : "x86_64", "-platform_version",
                 "macos", "13.0", "13.0", "-undefined", "dynamic_lookup",
                 "-install_name", "@rpath/afm-model.dylib"});
  } else {
    args.append({"-shared", "--build-id=none", "-z", "noexecstack",
                 "--hash-style=both"});
  }
  args.append({"-o", std::string(libraryPath), std::string(objectPath)});
  SmallVector<llvm::StringRef> argRefs(args.begin(), args.end());

  llvm::SmallString<128> logPath;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("afm-link", "log", logPath))
    return llvm::createStringError(ec, "cannot create a temporary file");
  auto removeLog = llvm::scope_exit([&] { llvm::sys::fs::remove(logPath); });
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, logPath.str(),
                                                logPath.str()};
  std::string error;
  int status = llvm::sys::ExecuteAndWait(linker, argRefs, std::nullopt,
                                         redirects, 0, 0, &error);
  if (status != 0) {
    std::string log;
    if (auto buffer = llvm::MemoryBuffer::getFile(logPath))
      log = (*buffer)->getBuffer().str();
    return llvm::createStringError("linking with " + linker + " failed" +
                                   (error.empty() ? "" : ": " + error) +
                                   (log.empty() ? "" : "\n" + log));
  }
  auto library = llvm::MemoryBuffer::getFile(libraryPath);
  if (!library)
    return llvm::createStringError(library.getError(),
                                   "cannot read " + libraryPath);
  return (*library)->getBuffer().str();
}
