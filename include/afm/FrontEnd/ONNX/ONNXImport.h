//===- ONNXImport.h - ONNX model -> func + TOSA -----------------*- C++ -*-===//
//
// Imports an ONNX model into one `func.func @main` whose arguments and
// results are the graph's inputs and outputs, with initializers as
// `arith.constant` and nodes as upstream TOSA ops (docs/onnx-import.md).
//
//===----------------------------------------------------------------------===//

#ifndef AFM_IMPORT_ONNXIMPORT_H
#define AFM_IMPORT_ONNXIMPORT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlir::afm {

/// Compile-time specialization of a model. Shapes are static here, so an
/// operand that decides a shape (Reshape's shape, Slice's starts, ...)
/// must be a constant; when a graph feeds one as an input, the caller may
/// bind that input to a value, which turns it into an initializer.
struct ONNXImportOptions {
  /// Graph inputs to import as constants, by name.
  llvm::StringMap<DenseElementsAttr> boundInputs;
  /// Sizes of the symbolic dimensions (dim_param) of the graph's inputs and
  /// outputs, by name. Each must name a dimension the graph has.
  llvm::StringMap<int64_t> boundDims;
  /// Raise recognized decoder-layer pieces to afm ops, so the afm passes
  /// and kernels apply: (Skip)SimplifiedLayerNormalization over the last
  /// axis becomes afm.rms_norm; a one-token MatMul by a constant 2-D f32
  /// weight becomes afm.linear (the decode GEMV kernel). Off: every node
  /// maps to TOSA/linalg as written.
  bool raiseToAFM = true;
  /// When set, receives the graph inputs that some node needed as a
  /// constant (whether or not the import succeeded), in graph order.
  std::vector<std::string> *inputsNeededAsConstants = nullptr;
};

/// Imports the serialized ONNX model `bytes` read from `modelPath`. The
/// path names the model in locations and anchors external tensor data.
/// On failure emits an error (at the offending node when there is one)
/// and returns null.
OwningOpRef<ModuleOp> importONNXModel(MLIRContext *context,
                                      llvm::StringRef bytes,
                                      llvm::StringRef modelPath,
                                      const ONNXImportOptions &options = {});

/// Reads a serialized ONNX TensorProto (a backend test's input_0.pb, ...)
/// as a dense attribute of the type the importer gives that tensor.
/// Sets `isUnsigned` for ONNX's unsigned integer types.
llvm::Expected<DenseElementsAttr> readONNXTensor(MLIRContext *context,
                                                 llvm::StringRef bytes,
                                                 llvm::StringRef name,
                                                 bool *isUnsigned = nullptr);

/// The names of a model's graph inputs that are not initializers, in
/// order: the arguments of the imported `@main` before any binding.
llvm::Expected<std::vector<std::string>>
getONNXGraphInputNames(llvm::StringRef modelBytes, llvm::StringRef modelPath);

/// A graph input's or output's declared type: its ONNX element type name
/// ("FLOAT", "INT64", ...) and each dimension, a size or a symbolic name.
struct ONNXValueSignature {
  struct Dim {
    int64_t size = -1; ///< -1 when symbolic or unknown
    std::string param; ///< the dim_param, when symbolic
  };
  std::string name;
  std::string elementType; ///< empty when not a tensor
  bool hasShape = false;
  std::vector<Dim> dims;
};

/// The inputs (without initializers) and outputs of a model's graph, and
/// the operators its top level uses ("GroupQueryAttention", ...).
struct ONNXGraphSignature {
  std::vector<ONNXValueSignature> inputs, outputs;
  std::vector<std::string> opTypes;
  /// The fewest positions a com.microsoft RotaryEmbedding's cos_cache
  /// initializer covers (its rows); -1 without one. Positions past the
  /// table are clamped to its last row.
  int64_t rotaryTablePositions = -1;
};

llvm::Expected<ONNXGraphSignature>
getONNXGraphSignature(llvm::StringRef modelBytes, llvm::StringRef modelPath);

} // namespace mlir::afm

#endif // AFM_IMPORT_ONNXIMPORT_H
