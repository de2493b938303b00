//===- ASTCForCPU.cpp - An ASTC weight encoded for the CPU kernels --------===//

#include "afm/Compress/ASTCForCPU.h"

#include "afm/Compress/ASTCTranscode.h"

#include <algorithm>

using namespace mlir::afm;

template <typename T>
static void append(std::vector<T> &to, const std::vector<T> &from) {
  to.insert(to.end(), from.begin(), from.end());
}

llvm::Expected<ASTCForCPU>
mlir::afm::encodeASTCForCPU(const float *w, size_t rows, size_t cols,
                            const ASTCEncodeOptions &options,
                            bool keepValues, size_t bandBlockRows,
                            llvm::function_ref<void(size_t)> done) {
  if (bandBlockRows == 0)
    return llvm::createStringError("ASTC bands need at least one block row");
  const size_t dim = kASTCBlockDim, bandRows = bandBlockRows * dim;
  ASTCForCPU out;
  if (keepValues)
    out.values.reserve(rows * cols);
  for (size_t first = 0; first < rows; first += bandRows) {
    size_t count = std::min(bandRows, rows - first);
    const float *band = w + first * cols;
    llvm::Expected<ASTCMatrix> m = encodeASTC(band, count, cols, options);
    if (!m)
      return m.takeError();
    append(out.blocks, m->blocks);
    append(out.offsets, m->offsets);
    out.astcQuality.add(band, m->weights.data(), count * cols);
    ASTCTranscoded t = transcodeASTC(*m);
    ASTCKernelCodes k =
        packASTCKernelCodes(t.codes.data(), t.blockRows, t.storedBlockCols);
    append(out.kernelCodes.codes, k.codes);
    append(out.kernelCodes.tailCodes, k.tailCodes);
    append(out.scales, t.scales);
    append(out.biases, t.biases);
    std::vector<float> values = dequantizeTranscoded(t);
    out.transcodeQuality.add(band, values.data(), values.size());
    if (keepValues)
      append(out.values, values);
    if (done)
      done(first + count);
  }
  return out;
}
