//===- Greedy.h - greedy decoding protocol ----------------------*- C++ -*-===//
//
// The greedy protocol that afm-reference and the runtime's afm-run both
// follow, so that their tokens and logits can be compared step by step:
//   prefill(prompt) -> L0, t1 = argmax(L0)
//   for k = 1..N: decode(t_k) -> L_k, t_{k+1} = argmax(L_k)
//
//===----------------------------------------------------------------------===//

#ifndef AFM_REFERENCE_GREEDY_H
#define AFM_REFERENCE_GREEDY_H

#include "afm/Reference/ReferenceModel.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace mlir::afm {

/// The index of the largest value, the lowest index on ties; -1 for an
/// empty input. (A NaN compares false, so it never replaces an earlier
/// value.)
int32_t argmax(llvm::ArrayRef<float> values);

/// What a greedy run produced.
struct GreedyResult {
  /// t_1 .. t_{N+1}.
  std::vector<int32_t> tokens;
  /// L_0 .. L_N, each vocab_size floats, concatenated.
  std::vector<float> logits;
};

/// Runs the greedy protocol for `decodeSteps` = N steps from the model's
/// current context. Errors (empty prompt, bad token id, context too long)
/// are reported before any work is done.
llvm::Expected<GreedyResult> greedyDecode(ReferenceModel &model,
                                          llvm::ArrayRef<int32_t> prompt,
                                          int64_t decodeSteps);

/// Parses a comma-separated token list such as "1,2,3" (spaces around the
/// ids are allowed); an error for an empty list or item or a value that is
/// not an int32.
llvm::Expected<std::vector<int32_t>> parseTokenList(llvm::StringRef text);

} // namespace mlir::afm

#endif // AFM_REFERENCE_GREEDY_H
