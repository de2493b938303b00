//===- Bands.h - a matrix's block rows on several threads --------*- C++ -*-===//
//
// The packager encodes weights in parallel, one task per weight, on LLVM's
// thread pool, where a nested llvm::parallelFor runs serially. One weight
// can be most of the work (the paper's 150000 x 3072 LM head in ASTC), so
// encoders that work block row by block row spread a weight's rows over
// threads of their own with forEachBand.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_COMPRESS_BANDS_H
#define AFM_COMPRESS_BANDS_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <cstddef>

namespace mlir::afm {

/// Block rows per band of the ASTC encoder and transcode: 32 rows of 6x6
/// blocks of a 3072-column matrix are a 9 MB RGBA f32 image for
/// libastcenc, and a 150000-row matrix has 782 such bands.
inline constexpr size_t kBandBlockRows = 32;

/// The workers forEachBand runs for `count` items in bands of `bandSize`:
/// `threads` (0: one per hardware thread), never more than there are bands,
/// at least 1.
unsigned bandWorkers(size_t count, size_t bandSize, unsigned threads);

/// Runs `work(begin, end, worker)` over the bands [begin, end) of [0,
/// count), `bandSize` items each (the last may be shorter), claimed in
/// order by bandWorkers(...) workers; `worker` is in [0, workers) and the
/// calling thread is worker 0. Returns the first error; after one, each
/// worker stops once its band is done.
llvm::Error
forEachBand(size_t count, size_t bandSize, unsigned threads,
            llvm::function_ref<llvm::Error(size_t begin, size_t end,
                                           unsigned worker)>
                work);

} // namespace mlir::afm

#endif // AFM_COMPRESS_BANDS_H
