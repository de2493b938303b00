//===- AdapterPackage.cpp - compile a PEFT adapter for a base .afmb -------===//
//
// The base's slots are [R, in] (a) and [out, R] (b) for its slot rank R; an
// adapter of rank r <= R fills the first r rows of a and the first r
// columns of b and leaves the rest zero, which adds nothing: B A is the
// same product. Projections the adapter does not target stay zero too.
//
//===----------------------------------------------------------------------===//

#include "afm/Package/AdapterPackage.h"

#include "afm/Model/ModelWeights.h"
#include "afm/Model/PEFTAdapter.h"
#include "afm/Package/AdapterFile.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

using namespace mlir::afm;

llvm::Expected<AdapterPackageSummary>
mlir::afm::writeAdapterPackage(llvm::raw_ostream &os, llvm::StringRef peftDir,
                               llvm::StringRef basePath,
                               const ModelConfig &config) {
  auto base = ::afm::readBaseModelSlots(basePath);
  if (!base)
    return base.takeError();
  auto adapter = loadPEFTAdapter(peftDir, config);
  if (!adapter)
    return adapter.takeError();
  llvm::StringMap<const ::afm::BaseAdapterSlot *> slots;
  for (const ::afm::BaseAdapterSlot &slot : base->slots)
    slots[slot.name] = &slot;

  AdapterPackageSummary summary;
  summary.rank = adapter->rank;
  summary.slotRank = base->rank;
  summary.baseIdentity = base->identity;
  if (adapter->rank > int64_t(base->rank))
    return llvm::createStringError(llvm::formatv(
        "{0}: the adapter has rank {1}, more than the rank-{2} slots of {3} "
        "(compile the base with afm-compile --adapter-rank {1} or more)",
        peftDir, adapter->rank, base->rank, basePath));
  std::vector<::afm::AdapterFactor> factors;
  for (const LoRATensorPair &pair : adapter->pairs) {
    std::string stem = adapterSlotName(pair.weightName);
    auto a = slots.find(stem + ".lora_a"), b = slots.find(stem + ".lora_b");
    if (a == slots.end() || b == slots.end())
      return llvm::createStringError(llvm::formatv(
          "{0}: the adapter adapts {1}, for which {2} has no adapter slot",
          peftDir, pair.weightName, basePath));
    const ::afm::BaseAdapterSlot &slotA = *a->second, &slotB = *b->second;
    // Against the slots themselves, not the manifest's rank field: a base
    // whose manifest lies about its rank must not make the copies below
    // overrun the factors.
    int64_t r = adapter->rank, slotRank = slotA.rows;
    if (r > slotRank)
      return llvm::createStringError(llvm::formatv(
          "{0}: the adapter has rank {1}, more than the rank-{2} slot {3} of "
          "{4}",
          peftDir, r, slotRank, slotA.name, basePath));
    if (slotA.cols != pair.inFeatures || slotB.rows != pair.outFeatures ||
        slotB.cols != slotA.rows)
      return llvm::createStringError(llvm::formatv(
          "{0}: {1} is {2}x{3} in the adapter, but {4}'s slots are a {5}x{6} "
          "and b {7}x{8}",
          peftDir, pair.weightName, pair.outFeatures, pair.inFeatures,
          basePath, slotA.rows, slotA.cols, slotB.rows, slotB.cols));
    ::afm::AdapterFactor fa{slotA.name, slotA.rows, slotA.cols, {}};
    fa.values.assign(size_t(slotA.rows) * slotA.cols, 0.0f);
    std::copy(pair.a.begin(), pair.a.end(), fa.values.begin());
    ::afm::AdapterFactor fb{slotB.name, slotB.rows, slotB.cols, {}};
    fb.values.assign(size_t(slotB.rows) * slotB.cols, 0.0f);
    for (int64_t row = 0; row < pair.outFeatures; ++row)
      std::copy_n(pair.b.begin() + row * r, r,
                  fb.values.begin() + row * slotRank);
    summary.factorBytes += (fa.values.size() + fb.values.size()) * 4;
    factors.push_back(std::move(fa));
    factors.push_back(std::move(fb));
    ++summary.projections;
  }

  ::afm::manifest::AdapterManifest manifest;
  manifest.set_base_identity(base->identity);
  llvm::StringRef folder = peftDir;
  while (folder.size() > 1 && folder.ends_with("/"))
    folder = folder.drop_back();
  manifest.set_name(llvm::sys::path::filename(folder).str());
  manifest.set_producer("afm-compile --adapter (afm-compiler)");
  manifest.set_rank(uint32_t(adapter->rank));
  manifest.set_scale(adapter->scale);
  if (llvm::Error err = ::afm::writeAdapterFile(os, manifest, factors))
    return std::move(err);
  return summary;
}
