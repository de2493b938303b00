//===- NestingDepth.h - refuse MLIR text nested too deep ---------*- C++ -*-===//
//
// MLIR's parser, verifier and printer recurse once per nested region,
// attribute or type, so IR text nested some thousands deep overflows the
// stack. Real models nest a few dozen levels. The afm tools scan their
// input first, flat, and refuse anything deeper than kMaxIRNesting with a
// located error instead of crashing.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_NESTINGDEPTH_H
#define AFM_NESTINGDEPTH_H

#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

namespace mlir::afm {

/// Brackets ({ ( [ <) open at once in MLIR text, at most.
inline constexpr unsigned kMaxIRNesting = 512;

/// An error "NAME:LINE:COL: ..." when `buffer` nests its brackets (outside
/// strings and comments) deeper than kMaxIRNesting.
llvm::Error checkIRNesting(const llvm::MemoryBuffer &buffer);

} // namespace mlir::afm

#endif // AFM_NESTINGDEPTH_H
