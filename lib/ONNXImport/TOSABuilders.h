//===- TOSABuilders.h - TOSA builders the ONNX lowerings share -*- C++ -*-===//
//
// Reshapes, splat constants, multiplications and ONNX broadcasting, used
// by the default-domain (ONNXToTOSA.cpp) and com.microsoft
// (ONNXMicrosoftOps.cpp) lowerings alike.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_LIB_ONNXIMPORT_TOSABUILDERS_H
#define AFM_LIB_ONNXIMPORT_TOSABUILDERS_H

#include "ONNXImporter.h"

#include <tuple>

namespace mlir::afm::onnx_import {

/// `input` reshaped to `shape` (no op when it already has that shape).
Value reshape(ONNXNode &node, Value input, llvm::ArrayRef<int64_t> shape);

/// A float tensor<1x..x1xT> of `rank` holding `value`: TOSA's scalar
/// operands (zero points) and rank-equal broadcast scalars.
Value splat(ONNXNode &node, Type elementType, double value, int64_t rank);

/// `lhs * rhs` as tosa.mul of result `type` (a zero shift: it only
/// applies to i32).
Value multiply(ONNXNode &node, Type type, Value lhs, Value rhs);

/// ONNX multidirectional broadcasting of the node's float inputs 0 and
/// 1: both reshaped to the larger rank (leading 1s), and the broadcast
/// result shape.
FailureOr<std::tuple<Value, Value, RankedTensorType>>
broadcastOperands(ONNXNode &node);

} // namespace mlir::afm::onnx_import

#endif // AFM_LIB_ONNXIMPORT_TOSABUILDERS_H
