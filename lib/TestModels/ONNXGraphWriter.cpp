//===- ONNXGraphWriter.cpp - building ONNX graphs for tests ---------------===//

#include "ONNXGraphWriter.h"

using namespace mlir::afm;

onnx::TensorProto &
ONNXGraphWriter::addInitializer(const std::string &name,
                                const std::vector<int64_t> &dims,
                                int32_t dataType) {
  onnx::TensorProto *tensor = graph.add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(dataType);
  for (int64_t dim : dims)
    tensor->add_dims(dim);
  return *tensor;
}

void ONNXGraphWriter::addFloat(const std::string &name,
                               const std::vector<int64_t> &dims,
                               const std::vector<float> &values) {
  addInitializer(name, dims, onnx::TensorProto::FLOAT)
      .set_raw_data(values.data(), values.size() * sizeof(float));
}

void ONNXGraphWriter::addInt(const std::string &name,
                             const std::vector<int64_t> &dims,
                             const std::vector<int64_t> &values,
                             int32_t dataType) {
  onnx::TensorProto &tensor = addInitializer(name, dims, dataType);
  for (int64_t value : values) {
    if (dataType == onnx::TensorProto::INT64)
      tensor.add_int64_data(value);
    else
      tensor.add_int32_data(static_cast<int32_t>(value));
  }
}

void ONNXGraphWriter::addBytes(const std::string &name,
                               const std::vector<int64_t> &dims,
                               const std::vector<uint8_t> &bytes) {
  addInitializer(name, dims, onnx::TensorProto::UINT8)
      .set_raw_data(bytes.data(), bytes.size());
}

onnx::NodeProto &ONNXGraphWriter::addNode(
    const std::string &opType, const std::string &name,
    const std::vector<std::string> &inputs,
    const std::vector<std::string> &outputs, bool microsoft) {
  onnx::NodeProto *node = graph.add_node();
  node->set_op_type(opType);
  node->set_name(name);
  if (microsoft)
    node->set_domain("com.microsoft");
  for (const std::string &input : inputs)
    node->add_input(input);
  for (const std::string &output : outputs)
    node->add_output(output);
  return *node;
}

std::string ONNXGraphWriter::apply(const std::string &opType,
                                   const std::string &name,
                                   const std::vector<std::string> &inputs) {
  std::string out = name + "/out";
  addNode(opType, name, inputs, {out});
  return out;
}

void ONNXGraphWriter::setInt(onnx::NodeProto &node, const std::string &name,
                             int64_t value) {
  onnx::AttributeProto *attr = node.add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::INT);
  attr->set_i(value);
}

void ONNXGraphWriter::setInts(onnx::NodeProto &node, const std::string &name,
                              const std::vector<int64_t> &values) {
  onnx::AttributeProto *attr = node.add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::INTS);
  for (int64_t value : values)
    attr->add_ints(value);
}

void ONNXGraphWriter::setFloat(onnx::NodeProto &node, const std::string &name,
                               float value) {
  onnx::AttributeProto *attr = node.add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::FLOAT);
  attr->set_f(value);
}

static void describe(onnx::ValueInfoProto *info, const std::string &name,
                     int32_t elementType, const std::vector<int64_t> &dims,
                     const std::vector<std::string> &params) {
  info->set_name(name);
  auto *tensorType = info->mutable_type()->mutable_tensor_type();
  tensorType->set_elem_type(elementType);
  for (size_t i = 0; i < dims.size(); ++i) {
    auto *dim = tensorType->mutable_shape()->add_dim();
    if (i < params.size() && !params[i].empty())
      dim->set_dim_param(params[i]);
    else
      dim->set_dim_value(dims[i]);
  }
}

void ONNXGraphWriter::addInput(const std::string &name, int32_t elementType,
                               const std::vector<int64_t> &dims,
                               const std::vector<std::string> &params) {
  describe(graph.add_input(), name, elementType, dims, params);
}

void ONNXGraphWriter::addOutput(const std::string &name, int32_t elementType,
                                const std::vector<int64_t> &dims,
                                const std::vector<std::string> &params) {
  describe(graph.add_output(), name, elementType, dims, params);
}
