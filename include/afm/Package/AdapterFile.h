//===- AdapterFile.h - adapter files and the base they belong to -*- C++ -*-===//
//
// The compiler's side of include/afm/adapter_format.h: what an adapter needs
// to know of its base .afmb (its slot table and identity), and the writer
// of adapter files.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_PACKAGE_ADAPTERFILE_H
#define AFM_PACKAGE_ADAPTERFILE_H

#include "runtime/proto/manifest.pb.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

namespace afm {

/// One adapter slot of a base model: an f32 factor [rows, cols].
struct BaseAdapterSlot {
  std::string name;
  uint32_t rows = 0, cols = 0;
};

/// What an adapter depends on in its base .afmb.
struct BaseModelSlots {
  std::vector<BaseAdapterSlot> slots; // in manifest order
  uint32_t rank = 0;
  /// include/afm/adapter_format.h: the weights checksum and the slots.
  uint64_t identity = 0;
};

/// Reads the header, section table and manifest of the .afmb at `path`
/// (checking the header's and the manifest's checksums; the weights are
/// not read). Fails with a message naming the path.
llvm::Expected<BaseModelSlots> readBaseModelSlots(llvm::StringRef path);

/// One factor of an adapter, shaped like its slot (padded with zeros when
/// the adapter's rank is below the slot's).
struct AdapterFactor {
  std::string slot;
  uint32_t rows = 0, cols = 0;
  std::vector<float> values; // rows x cols, row-major
};

/// Writes an adapter file: header, manifest, factors, checksum.
llvm::Error writeAdapterFile(llvm::raw_ostream &os,
                             const afm::manifest::AdapterManifest &manifest,
                             llvm::ArrayRef<AdapterFactor> factors);

} // namespace afm

#endif // AFM_PACKAGE_ADAPTERFILE_H
