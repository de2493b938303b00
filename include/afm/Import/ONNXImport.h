//===- ONNXImport.h - ONNX model -> func + TOSA -----------------*- C++ -*-===//
//
// Imports an ONNX model into one `func.func @main` whose arguments and
// results are the graph's inputs and outputs, with initializers as
// `arith.constant` and nodes as upstream TOSA ops (docs/onnx-import.md).
//
//===----------------------------------------------------------------------===//

#ifndef AFM_IMPORT_ONNXIMPORT_H
#define AFM_IMPORT_ONNXIMPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace mlir::afm {

/// Imports the serialized ONNX model `bytes` read from `modelPath`. The
/// path names the model in locations and anchors external tensor data.
/// On failure emits an error (at the offending node when there is one)
/// and returns null.
OwningOpRef<ModuleOp> importONNXModel(MLIRContext *context,
                                      llvm::StringRef bytes,
                                      llvm::StringRef modelPath);

} // namespace mlir::afm

#endif // AFM_IMPORT_ONNXIMPORT_H
