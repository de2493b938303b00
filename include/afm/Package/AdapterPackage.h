//===- AdapterPackage.h - compile a PEFT adapter for a base .afmb -*- C++ -*-===//
//
// `afm-compile --adapter`: a LoRA adapter in PEFT's layout becomes an
// adapter file (include/afm/adapter_format.h) for one base model, its
// factors shaped like the base's slots and its scale folded into B.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_PACKAGE_ADAPTERPACKAGE_H
#define AFM_PACKAGE_ADAPTERPACKAGE_H

#include "afm/Model/ModelConfig.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>

namespace mlir::afm {

/// What an adapter file holds.
struct AdapterPackageSummary {
  int64_t rank = 0;     // as trained
  int64_t slotRank = 0; // the base's slots
  size_t projections = 0;
  uint64_t factorBytes = 0;
  uint64_t baseIdentity = 0;
};

/// Reads the PEFT folder `peftDir` for the model `config` (the base's
/// config), checks it against the slots of the base .afmb at `basePath`
/// and writes the adapter file to `os`. Errors: a base without slots, a
/// projection the base has no slot for, a rank above the slots' rank, and
/// everything loadPEFTAdapter refuses.
llvm::Expected<AdapterPackageSummary>
writeAdapterPackage(llvm::raw_ostream &os, llvm::StringRef peftDir,
                    llvm::StringRef basePath, const ModelConfig &config);

} // namespace mlir::afm

#endif // AFM_PACKAGE_ADAPTERPACKAGE_H
