//===- ONNXModelReader.cpp - ONNX protobuf bytes -> ModelProto ------------===//

#include "ONNXImporter.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir::afm;

llvm::Expected<int64_t> onnx_import::readModel(llvm::StringRef bytes,
                                               llvm::StringRef modelPath,
                                               onnx::ModelProto &model) {
  // Protobuf accepts many byte strings as a message made of unknown
  // fields, so a successful parse alone does not make a model: a real one
  // has an IR version and a graph.
  if (bytes.size() > INT_MAX ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) ||
      !model.has_ir_version() || !model.has_graph())
    return llvm::createStringError(
        llvm::formatv("'{0}' is not a valid ONNX model", modelPath));

  std::optional<int64_t> opset;
  for (const onnx::OperatorSetIdProto &entry : model.opset_import())
    if (entry.domain().empty() || entry.domain() == "ai.onnx")
      opset = entry.version();
  if (!opset)
    return llvm::createStringError(llvm::formatv(
        "ONNX model '{0}' imports no default-domain opset", modelPath));
  if (*opset < kMinOpset || *opset > kMaxOpset)
    return llvm::createStringError(llvm::formatv(
        "ONNX model '{0}': opset version {1} is not supported (supported: "
        "{2} to {3})",
        modelPath, *opset, kMinOpset, kMaxOpset));
  return *opset;
}
