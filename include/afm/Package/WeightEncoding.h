//===- WeightEncoding.h - a weight's bytes in the package ------*- C++ -*-===//
//
// Turns one weight of a bound module (its type, its inline value or its
// float tensor in the weights file, and the annotations passes left on it)
// into the bytes of each buffer the compiled kernels read, and keeps what
// the compile report and the reference evaluator need: the float values the
// kernels compute with and how far they are from the float weights.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_COMPILER_WEIGHTENCODING_H
#define AFM_COMPILER_WEIGHTENCODING_H

#include "dialects/afm/IR/AFMDialect.h"
#include "afm/Compress/SVDSplit.h"
#include "afm/Model/WeightSource.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Types.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace mlir::afm {

/// One weight, encoded.
struct EncodedWeight {
  std::string name;
  /// "f32", "q2 per_tensor", "q4 group=32", "astc linear_segment", ...
  std::string format;
  /// The weight's shape; `rows x cols` is its matrix view (rows = first
  /// dimension, 1 for vectors).
  std::vector<int64_t> shape;
  int64_t rows = 0, cols = 0;
  /// Stored bits per weight of what the CPU kernels read, scales included.
  double bitsPerWeight = 32.0;
  /// SNR (dB) of `values` against the float weights, when they are known.
  std::optional<double> snrDb;
  /// For ASTC weights: the SNR and bits per weight of the ASTC blocks
  /// themselves (before the CPU transcode).
  std::optional<double> astcSnrDb;
  double astcBitsPerWeight = 0.0;
  /// What else happened to the weight ("svd residual of rank 32", ...).
  std::string note;
  /// Bytes of each bound part ("codes", "scales", "biases"; "" for plain).
  llvm::StringMap<std::vector<uint8_t>> parts;
  /// The values the kernels compute with, row-major `[rows, cols]`.
  std::vector<float> values;
  /// ASTC blocks (16 bytes each) and f16 offsets: the artifact packages
  /// for GPUs that sample ASTC keep.
  std::vector<uint8_t> astcBlocks;
  std::vector<uint16_t> astcOffsets;
  /// The LoRA adapter this weight's SVD split moved out of it: the report
  /// measures `values + (alpha/r) B A` against the float weights.
  bool isSVDFactor = false;
  std::string svdSource;
};

/// The shape an encoded weight of `type` (a tensor or a compressed weight
/// type) has as a float tensor.
std::vector<int64_t> encodedShape(Type type);

/// Encodes the weights of one module, each once, remembering SVD splits so
/// that a weight and its two adapter factors agree.
///
/// `encode` may run on several threads at once for different weights. A
/// large model is packaged weight by weight: `release` drops a weight's
/// bytes once they are in the package, and with `keepValues` false the
/// dequantized values are never kept (the SNR is measured as they are
/// made), so memory stays bounded by a few weights.
class WeightEncoder {
public:
  explicit WeightEncoder(const WeightSource *weights,
                         bool keepValues = true)
      : weights(weights), keepValues(keepValues) {}

  /// Encodes weight `name` of type `type` (a tensor or a compressed weight
  /// type) from `value` (inline payload, may be null) or the weights file.
  /// `factor` or `residual` (may be null) is the LoRA split afm-svd-split
  /// left on the weight.
  llvm::Expected<const EncodedWeight *> encode(llvm::StringRef name, Type type,
                                               Attribute value,
                                               SVDFactorAttr factor,
                                               SVDResidualAttr residual);

  /// Drops the bytes and values of weight `name` (keeping what the report
  /// reads: format, sizes, SNR), and its ASTC blocks unless
  /// `keepASTCBlocks`.
  void release(llvm::StringRef name, bool keepASTCBlocks);

  /// Every weight encoded so far, by name.
  const std::map<std::string, EncodedWeight> &encoded() const {
    return cache;
  }

  /// What a reference evaluator needs of weight `name` (encoded, not an
  /// adapter factor) to compute what the compiled model computes: its
  /// `values`, with a split-off adapter folded back in (`+ (alpha/r) B A`).
  /// Needs `keepValues`; the weight's values are dropped afterwards.
  std::vector<float> takeEffectiveValues(llvm::StringRef name);

  /// The float values of a weight in the weights file: read in place when
  /// the file holds F32, a widened copy otherwise.
  struct FloatSource {
    llvm::ArrayRef<float> values;
    std::vector<float> owned;
    const SafeTensorsFile *file = nullptr;
    const TensorInfo *info = nullptr;
    /// Lets the OS drop elements [begin, end) of an in-place source from
    /// memory (they will not be read again).
    void release(int64_t begin, int64_t end) const;
  };

private:
  llvm::Expected<FloatSource> floatSource(llvm::StringRef name,
                                          int64_t count);
  /// Encodes `w` into `e`; `needValues` keeps `e.values` (formats that
  /// measure their quality as they go may drop them).
  llvm::Error encodeFromFloat(EncodedWeight &e, Type type,
                              const FloatSource &w, bool needValues);
  llvm::Expected<const SVDSplit *> split(llvm::StringRef source, int64_t rows,
                                         int64_t cols, int64_t rank);

  const WeightSource *weights;
  bool keepValues;
  std::mutex mutex; // guards `cache` and `splits`
  std::map<std::string, EncodedWeight> cache;
  std::map<std::string, SVDSplit> splits;
};

} // namespace mlir::afm

#endif // AFM_COMPILER_WEIGHTENCODING_H
