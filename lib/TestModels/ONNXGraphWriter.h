//===- ONNXGraphWriter.h - building ONNX graphs for tests -------*- C++ -*-===//
//
// What the ONNX test-model writers share: initializers, nodes with their
// attributes, and graph inputs and outputs, on top of the generated ONNX
// protobuf classes.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_TESTMODELS_ONNXGRAPHWRITER_H
#define AFM_TESTMODELS_ONNXGRAPHWRITER_H

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::afm {

/// Appends to one GraphProto.
class ONNXGraphWriter {
public:
  explicit ONNXGraphWriter(onnx::GraphProto &graph) : graph(graph) {}

  onnx::TensorProto &addInitializer(const std::string &name,
                                    const std::vector<int64_t> &dims,
                                    int32_t dataType);
  void addFloat(const std::string &name, const std::vector<int64_t> &dims,
                const std::vector<float> &values);
  /// INT64 or INT32 values.
  void addInt(const std::string &name, const std::vector<int64_t> &dims,
              const std::vector<int64_t> &values, int32_t dataType);
  void addBytes(const std::string &name, const std::vector<int64_t> &dims,
                const std::vector<uint8_t> &bytes);
  onnx::NodeProto &addNode(const std::string &opType, const std::string &name,
                           const std::vector<std::string> &inputs,
                           const std::vector<std::string> &outputs,
                           bool microsoft = false);
  /// A default-domain node `name` with the one output `name + "/out"`,
  /// which it returns.
  std::string apply(const std::string &opType, const std::string &name,
                    const std::vector<std::string> &inputs);

  static void setInt(onnx::NodeProto &node, const std::string &name,
                     int64_t value);
  static void setInts(onnx::NodeProto &node, const std::string &name,
                      const std::vector<int64_t> &values);
  static void setFloat(onnx::NodeProto &node, const std::string &name,
                       float value);

  /// A graph input or output of a tensor type with static dims; a
  /// non-empty `params[i]` writes dimension i as that symbolic dim_param
  /// instead.
  void addInput(const std::string &name, int32_t elementType,
                const std::vector<int64_t> &dims,
                const std::vector<std::string> &params = {});
  void addOutput(const std::string &name, int32_t elementType,
                 const std::vector<int64_t> &dims,
                 const std::vector<std::string> &params = {});

private:
  onnx::GraphProto &graph;
};

} // namespace mlir::afm

#endif // AFM_TESTMODELS_ONNXGRAPHWRITER_H
