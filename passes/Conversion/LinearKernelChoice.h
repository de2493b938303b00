//===- LinearKernelChoice.h - which kernel a linear layer runs --*- C++ -*-===//
//
// The policy half of lowering `afm.linear` (and the FFN's linears): from
// the shapes and the weight format alone, which kernel computes
// `acc + x * W^T`. buildLinear (CompressedKernels.cpp) builds what this
// chooses; nothing here creates IR.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_PASSES_CONVERSION_LINEARKERNELCHOICE_H
#define AFM_PASSES_CONVERSION_LINEARKERNELCHOICE_H

#include "passes/Conversion/CompressedKernels.h"

namespace mlir::afm {

enum class LinearKernel {
  /// A compressed weight that is not bound to its buffers: an error.
  NeedsBinding,
  /// Plain f32 weights: split-K partial sums for one row, else the GEMM
  /// that afm-pack-gemm blocks.
  DenseSplitKGEMV,
  DenseGEMM,
  /// `afm.astc_decode` of a bound ASTC weight, decoded block by block in
  /// the kernel: integer products with int8 activations, or f32.
  ASTCInt8Blocks,
  ASTCBlocks,
  /// A bound 2-bit weight: integer GEMV or GEMM with int8 activations, or
  /// the f32 GEMV.
  Q2Int8GEMV,
  Q2Int8GEMM,
  Q2F32GEMV,
  /// A bound 4-bit table (the tied head): interleaved codes, one group per
  /// lane; plain-order codes as a split-K GEMV or row by row.
  Q4Interleaved,
  Q4SplitKGEMV,
  Q4Rows,
  /// Many rows: the ASTC blocks decoded once (offsets left to the
  /// accumulator), then a plain-weight kernel.
  DecodedBlocks,
  /// The reconstructed weight materialized, then a plain-weight kernel
  /// (2-bit over many rows, odd 4-bit groups).
  Dequantized,
};

struct LinearChoice {
  LinearKernel kernel;
  /// Round the activations to int8 and back first: the kernel computes in
  /// f32 on what an int8 kernel would see, so every row has the same
  /// numerics (LinearLowering::int8Activations).
  bool roundActivations = false;
};

/// Rows from which a compressed weight is decoded to f32 once per call and
/// multiplied by the blocked f32 GEMM instead of its fused kernel.
inline constexpr int64_t kMinRowsForDecodedGEMM = 32;

/// The kernel for `x [T, K]` times the layer's weight operand of type
/// `operandType` (a tensor or a compressed weight type). `decodedFrom` is
/// the ASTC weight when the operand is its `afm.astc_decode` or the bound
/// weight itself (either way, its offsets are in the accumulator), else
/// null; `bound`: the compressed weight's buffers are bound;
/// `hasAccumulator`: the layer adds into an accumulator.
LinearChoice chooseLinearKernel(RankedTensorType x, Type operandType,
                                ASTCWeightType decodedFrom, bool bound,
                                bool hasAccumulator,
                                const LinearLowering &how);

} // namespace mlir::afm

#endif // AFM_PASSES_CONVERSION_LINEARKERNELCHOICE_H
