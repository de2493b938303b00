//===- ONNXMicrosoftOps.cpp - com.microsoft contrib ops -------------------===//
//
// The contrib ops ONNX Runtime's LLM exporters emit (SimplifiedLayer-
// Normalization, RotaryEmbedding, GroupQueryAttention, MatMulNBits, ...),
// with their semantics as ONNX Runtime's CPU kernels define them.
//
//===----------------------------------------------------------------------===//

#include "ONNXImporter.h"

using namespace mlir;
using namespace mlir::afm::onnx_import;

const llvm::StringMap<NodeLowering> &
mlir::afm::onnx_import::getMicrosoftLowerings() {
  static const llvm::StringMap<NodeLowering> lowerings = {};
  return lowerings;
}
