//===- ASTCEncoder.cpp - Weight matrices as 6x6 HDR ASTC blocks -----------===//

#include "afm/Compress/ASTC.h"
#include "afm/Compress/ASTCDecoder.h"
#include "afm/Compress/Bands.h"
#include "afm/Model/HalfFloat.h"

#include <astcenc.h>

#include <algorithm>
#include <cmath>
#include <memory>

using namespace mlir::afm;

/// The largest f16 value <= `value` (finite inputs within the f16 range).
static uint16_t f16RoundDown(float value) {
  uint16_t bits = f32ToF16(value);
  if (f16ToF32(bits) <= value)
    return bits;
  // One f16 step towards -infinity: magnitude up for negatives, down for
  // positives (+0 steps to the smallest negative subnormal).
  if (bits & 0x8000)
    return static_cast<uint16_t>(bits + 1);
  return bits == 0 ? uint16_t{0x8001} : static_cast<uint16_t>(bits - 1);
}

uint16_t mlir::afm::astcBlockOffset(const float *values, size_t n,
                                    ASTCOffsetMode mode) {
  float lo = *std::min_element(values, values + n);
  float hi = *std::max_element(values, values + n);
  if (mode == ASTCOffsetMode::Min)
    return f16RoundDown(lo);
  // A constant block still needs a nonzero binade: use the smallest normal
  // f16 so D = 2^-14 sits exactly on a binade boundary.
  float range = std::max(hi - lo, std::ldexp(1.0f, -14));
  float width = std::ldexp(1.0f, static_cast<int>(std::ceil(std::log2(range))));
  return f32ToF16(lo - width);
}

namespace {
struct ContextDeleter {
  void operator()(astcenc_context *context) const {
    astcenc_context_free(context);
  }
};
} // namespace

static llvm::Error astcError(const char *what, astcenc_error status) {
  return llvm::createStringError("libastcenc %s: %s", what,
                                 astcenc_get_error_string(status));
}

/// Encodes block rows [firstBlockRow, endBlockRow) of `w` into
/// `out.blocks` and `out.offsets` with `context`, staging the band's image
/// in `image`.
static llvm::Error encodeBand(astcenc_context *context, const float *w,
                              const ASTCEncodeOptions &options,
                              size_t firstBlockRow, size_t endBlockRow,
                              std::vector<float> &image, ASTCMatrix &out) {
  const size_t dim = kASTCBlockDim, rows = out.rows, cols = out.cols;
  // The band's image is the padded matrix minus each block's offset, in
  // RGBA f32; the loops below write every texel of it, padding included.
  size_t width = out.blockCols * dim,
         height = (endBlockRow - firstBlockRow) * dim;
  image.resize(width * height * 4);
  std::vector<float> blockValues;
  for (size_t nb = firstBlockRow; nb < endBlockRow; ++nb)
    for (size_t kb = 0; kb < out.blockCols; ++kb) {
      size_t rowEnd = std::min(rows, (nb + 1) * dim);
      size_t colEnd = std::min(cols, (kb + 1) * dim);
      blockValues.clear();
      for (size_t r = nb * dim; r < rowEnd; ++r)
        for (size_t c = kb * dim; c < colEnd; ++c)
          blockValues.push_back(w[r * cols + c]);
      uint16_t offsetBits = astcBlockOffset(
          blockValues.data(), blockValues.size(), options.offsetMode);
      out.offsets[nb * out.blockCols + kb] = offsetBits;
      float offset = f16ToF32(offsetBits);
      for (size_t y = nb * dim; y < (nb + 1) * dim; ++y)
        for (size_t x = kb * dim; x < (kb + 1) * dim; ++x) {
          // Padding cycles through the block's real values in order, so it
          // stays inside their range without making the block look like a
          // stripe pattern (which libastcenc answers with RGB endpoints).
          bool real = y < rowEnd && x < colEnd;
          size_t index = (y - nb * dim) * dim + (x - kb * dim);
          float v = (real ? w[y * cols + x]
                          : blockValues[index % blockValues.size()]) -
                    offset;
          float *texel = &image[((y - firstBlockRow * dim) * width + x) * 4];
          texel[0] = v;
          texel[1] = options.lumaInAllChannels ? v : 0.0f;
          texel[2] = options.lumaInAllChannels ? v : 0.0f;
          texel[3] = 1.0f;
        }
    }

  astcenc_image astcImage;
  astcImage.dim_x = static_cast<unsigned>(width);
  astcImage.dim_y = static_cast<unsigned>(height);
  astcImage.dim_z = 1;
  astcImage.data_type = ASTCENC_TYPE_F32;
  void *slices[1] = {image.data()};
  astcImage.data = slices;
  const astcenc_swizzle swizzle = {ASTCENC_SWZ_R, ASTCENC_SWZ_G,
                                   ASTCENC_SWZ_B, ASTCENC_SWZ_A};
  size_t firstBlock = firstBlockRow * out.blockCols,
         blocks = (endBlockRow - firstBlockRow) * out.blockCols;
  if (astcenc_error status = astcenc_compress_image(
          context, &astcImage, &swizzle,
          out.blocks.data() + firstBlock * kASTCBlockBytes,
          blocks * kASTCBlockBytes, 0))
    return astcError("compress", status);
  // The context encodes the next band as a new image.
  if (astcenc_error status = astcenc_compress_reset(context))
    return astcError("reset", status);
  return llvm::Error::success();
}

llvm::Expected<ASTCMatrix>
mlir::afm::encodeASTC(const float *w, size_t rows, size_t cols,
                      const ASTCEncodeOptions &options) {
  const unsigned dim = kASTCBlockDim;
  ASTCMatrix out;
  out.rows = rows;
  out.cols = cols;
  out.blockRows = (rows + dim - 1) / dim;
  out.blockCols = (cols + dim - 1) / dim;
  size_t blockCount = out.blockRows * out.blockCols;
  if (rows == 0 || cols == 0)
    return out;
  out.offsets.resize(blockCount);
  out.blocks.resize(blockCount * kASTCBlockBytes);

  astcenc_config config;
  if (astcenc_error status = astcenc_config_init(
          ASTCENC_PRF_HDR, dim, dim, 1, options.quality, 0, &config))
    return astcError("config", status);
  config.cw_r_weight = 1.0f;
  config.cw_g_weight = options.greenBlueWeight;
  config.cw_b_weight = options.greenBlueWeight;
  config.cw_a_weight = 0.0f;
  config.tune_partition_count_limit = options.partitionLimit;

  // Bands of block rows on several threads, each with its own context and
  // image (a context encodes one image at a time).
  unsigned workers =
      bandWorkers(out.blockRows, options.bandBlockRows, options.threads);
  std::vector<std::unique_ptr<astcenc_context, ContextDeleter>> contexts(
      workers);
  for (auto &context : contexts) {
    astcenc_context *raw = nullptr;
    if (astcenc_error status = astcenc_context_alloc(&config, 1, &raw))
      return astcError("context", status);
    context.reset(raw);
  }
  std::vector<std::vector<float>> images(workers);
  if (llvm::Error error = forEachBand(
          out.blockRows, options.bandBlockRows, options.threads,
          [&](size_t begin, size_t end, unsigned worker) {
            return encodeBand(contexts[worker].get(), w, options, begin, end,
                              images[worker], out);
          }))
    return std::move(error);

  // Dequantize with our own decoder: what the compiler will embed.
  if (llvm::Error err = decodeASTCWeights(out))
    return std::move(err);
  return out;
}

llvm::Error mlir::afm::decodeASTCWeights(ASTCMatrix &matrix) {
  const size_t dim = kASTCBlockDim, rows = matrix.rows, cols = matrix.cols;
  size_t blocks = matrix.blockRows * matrix.blockCols;
  if (matrix.blocks.size() != blocks * kASTCBlockBytes ||
      matrix.offsets.size() != blocks)
    return llvm::createStringError(
        "%zux%zu ASTC weight needs %zu blocks and offsets, got %zu bytes of "
        "blocks and %zu offsets",
        rows, cols, blocks, matrix.blocks.size(), matrix.offsets.size());
  matrix.weights.assign(rows * cols, 0.0f);
  uint16_t decoded[dim * dim];
  for (size_t nb = 0; nb < matrix.blockRows; ++nb)
    for (size_t kb = 0; kb < matrix.blockCols; ++kb) {
      size_t index = nb * matrix.blockCols + kb;
      if (llvm::Error err =
              decodeASTCBlock(&matrix.blocks[index * kASTCBlockBytes], dim,
                              dim, decoded))
        return llvm::createStringError("block (%zu, %zu): %s", nb, kb,
                                       llvm::toString(std::move(err)).c_str());
      float offset = f16ToF32(matrix.offsets[index]);
      for (size_t y = 0; y < dim && nb * dim + y < rows; ++y)
        for (size_t x = 0; x < dim && kb * dim + x < cols; ++x)
          matrix.weights[(nb * dim + y) * cols + kb * dim + x] =
              f16ToF32(decoded[y * dim + x]) + offset;
    }
  return llvm::Error::success();
}
