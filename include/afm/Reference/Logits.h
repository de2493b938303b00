//===- Logits.h - logits files and their comparison -------------*- C++ -*-===//
//
// A logits file is raw little-endian f32, the logits of consecutive greedy
// steps concatenated (vocab_size floats per step, no header). afm-reference
// and afm-run write it; afm-compare reads two and compares them step by
// step.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_REFERENCE_LOGITS_H
#define AFM_REFERENCE_LOGITS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace mlir::afm {

/// Writes `logits` to `path` as raw little-endian f32.
llvm::Error writeLogitsFile(llvm::StringRef path,
                            llvm::ArrayRef<float> logits);

/// Reads a raw little-endian f32 file; an error if its size is not a
/// multiple of 4 bytes.
llvm::Expected<std::vector<float>> readLogitsFile(llvm::StringRef path);

/// How far one step of actual logits is from the reference.
struct StepComparison {
  /// max_i |actual_i - reference_i|.
  double maxAbsDiff;
  /// max_i |reference_i|.
  double maxAbsReference;
  /// maxAbsDiff / maxAbsReference: the error relative to the logits'
  /// scale. 0 when both are 0, infinity when only the reference is all
  /// zeros, NaN when either side holds a NaN.
  double relativeError;
};

/// Splits `reference` and `actual` into steps of `vocabSize` floats and
/// compares each; an error if the sizes differ, are zero or are not a
/// multiple of `vocabSize`, or `vocabSize` is not positive.
llvm::Expected<std::vector<StepComparison>>
compareLogitSteps(llvm::ArrayRef<float> reference,
                  llvm::ArrayRef<float> actual, int64_t vocabSize);

/// Whether `step` is within `tolerance` (false for NaN).
inline bool withinTolerance(const StepComparison &step, double tolerance) {
  return step.relativeError <= tolerance;
}

} // namespace mlir::afm

#endif // AFM_REFERENCE_LOGITS_H
