//===- CompileReport.cpp - what compression did to each weight ------------===//
//
// The report of `afm-compile --report`: the compression error is measured
// and printed here, not hidden in a test tolerance.
//
//===----------------------------------------------------------------------===//

#include "afm/Package/Package.h"
#include "afm/Package/WeightEncoding.h"
#include "afm/Compress/Quality.h"

#include "dialects/afm/IR/AFMDialect.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace mlir::afm;

static std::string formatSNR(std::optional<double> snr) {
  if (!snr)
    return "-";
  if (std::isinf(*snr))
    return "exact";
  return llvm::formatv("{0:f2} dB", *snr).str();
}

void mlir::afm::printCompileReport(llvm::raw_ostream &os, ModuleOp lowered,
                                   const WeightEncoder &encoder) {
  os << "# afm-compile report\n";
  os << llvm::formatv("{0,-52} {1,-26} {2,11} {3,7} {4,10}  {5}\n", "tensor",
                      "format", "shape", "bits/w", "SNR", "notes");
  uint64_t storedBits = 0, floatBytes = 0;
  for (const auto &[name, w] : encoder.encoded()) {
    std::string shape = llvm::formatv("{0}x{1}", w.rows, w.cols).str();
    std::string notes = w.note;
    if (w.astcBitsPerWeight > 0) { // an ASTC weight
      double blockBits = astcBitsPerWeight(w.rows, w.cols, false);
      std::string astc =
          llvm::formatv("ASTC blocks: {0:f3} bits/w ({1:f3} + {2:f3} offset), "
                        "SNR {3}; CPU form: 4-bit block-affine transcode",
                        w.astcBitsPerWeight, blockBits,
                        w.astcBitsPerWeight - blockBits,
                        formatSNR(w.astcSnrDb))
              .str();
      notes = notes.empty() ? astc : astc + "; " + notes;
    }
    os << llvm::formatv("{0,-52} {1,-26} {2,11} {3,7:f3} {4,10}  {5}\n", name,
                        w.format, shape, w.bitsPerWeight, formatSNR(w.snrDb),
                        notes);
    storedBits += uint64_t(std::llround(w.bitsPerWeight * w.rows * w.cols));
    floatBytes += uint64_t(w.rows * w.cols) * 4;
  }
  AFMDialect &afmAttrs = contracts(lowered);
  auto section = afmAttrs.getWeightsBytesAttrHelper().getAttr(lowered);
  os << llvm::formatv("weights: {0} bytes stored ({1} bytes as f32, "
                      "{2:f2}x smaller); weights section {3} bytes\n",
                      storedBits / 8, floatBytes,
                      storedBits ? double(floatBytes) * 8 / storedBits : 0.0,
                      section ? section.getInt() : 0);
  uint64_t perToken = 0, arena = 0;
  if (auto layout = afmAttrs.getKvLayoutAttrHelper().getAttr(lowered)) {
    for (auto slot : layout.getAsRange<KVSlotAttr>()) {
      uint64_t bytes = slot.getBytes();
      perToken += bytes / getKVCacheShape(slot.getType())->capacity;
      arena += bytes;
    }
  }
  os << llvm::formatv("kv cache: {0} bytes per token (all caches, scales "
                      "included); arena {1} bytes\n",
                      perToken, arena);
  if (auto scratch = afmAttrs.getScratchBytesAttrHelper().getAttr(lowered))
    os << llvm::formatv("scratch: {0} bytes of temporaries in the session's "
                        "arena, after the caches\n",
                        scratch.getInt());
}
