//===- LinearKernelChoice.cpp - which kernel a linear layer runs ----------===//

#include "passes/Conversion/LinearKernelChoice.h"

#include "afm/Layout/PackedWeights.h"

using namespace mlir;
using namespace mlir::afm;

LinearChoice afm::chooseLinearKernel(RankedTensorType x, Type weightType,
                                     ASTCWeightType decodedFrom, bool bound,
                                     bool hasAccumulator,
                                     const LinearLowering &how) {
  // Many rows (a prompt): decoding each weight once into f32 and running
  // the blocked f32 GEMM (afm-pack-gemm) beats decoding it per row tile.
  int64_t rows = x.getDimSize(0);
  bool decodeOnce =
      !ShapedType::isDynamic(rows) && rows >= kMinRowsForDecodedGEMM;
  bool int8 = how.int8Activations;
  auto plain = [&](bool round) -> LinearChoice {
    auto w = dyn_cast<RankedTensorType>(weightType);
    return {w && canBuildGemvSplitK(x, w) ? LinearKernel::DenseSplitKGEMV
                                          : LinearKernel::DenseGEMM,
            round};
  };
  if (decodedFrom) {
    if (int8 && !decodeOnce && bound)
      return {LinearKernel::ASTCInt8Blocks};
    if (decodeOnce)
      return {LinearKernel::DecodedBlocks, int8};
    if (bound)
      return {LinearKernel::ASTCBlocks, int8};
    // Unbound: the decode's own lowering materializes it.
    return plain(int8);
  }
  if (isa<RankedTensorType>(weightType))
    return plain(false);
  if (!bound)
    return {LinearKernel::NeedsBinding};
  if (auto q2 = dyn_cast<Q2WeightType>(weightType)) {
    // Several rows in tiles of four (a prompt, or a verify step of
    // speculative decoding): integer GEMM tiles, exact like the GEMV, which
    // read each code once per four rows where the GEMV reads it per row.
    if (int8 && rows > 1 && canBuildQ2Int8Gemm(x, q2))
      return {LinearKernel::Q2Int8GEMM};
    if (int8 && !decodeOnce && supportsQ2Int8Matmul(q2))
      return {LinearKernel::Q2Int8GEMV};
    if (!int8 && !decodeOnce)
      return {LinearKernel::Q2F32GEMV};
    return {LinearKernel::Dequantized, int8};
  }
  if (auto q4 = dyn_cast<Q4WeightType>(weightType); q4 && !hasAccumulator) {
    if (canBuildQ4InterleavedMatmul(x, q4))
      return {LinearKernel::Q4Interleaved};
    // Plain-order codes, or interleaved ones under rows of dynamic count
    // (the materialized table): the activations the interleaved kernel
    // would multiply.
    if (!q4HasInterleavedCodes(q4.getCols(), q4.getGroup()) &&
        q4.getGroup() % 2 == 0)
      return {canBuildQ4GemvSplitK(x, q4) ? LinearKernel::Q4SplitKGEMV
                                          : LinearKernel::Q4Rows,
              int8};
    return {LinearKernel::Dequantized, int8};
  }
  return {LinearKernel::Dequantized};
}
