//===- ModelTestSupport.h - helpers for the model and reference tests -----===//
//
// In-memory weight files, small configs and error-text helpers shared by
// the AFMReferenceTests files.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_TEST_UNIT_MODELTESTSUPPORT_H
#define AFM_TEST_UNIT_MODELTESTSUPPORT_H

#include "afm/TestModels/ExampleModel.h"
#include "afm/Model/ModelConfig.h"
#include "afm/Model/ModelWeights.h"
#include "afm/Model/SafeTensors.h"
#include "afm/Reference/ReferenceModel.h"

#include "llvm/Support/Endian.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>

namespace mlir::afm::test {

/// The message of `err`, or "" for success.
inline std::string errorText(llvm::Error err) {
  return err ? llvm::toString(std::move(err)) : std::string();
}

/// The error message of `value`, or "" if it holds a value.
template <typename T> std::string errorText(llvm::Expected<T> &value) {
  return value ? std::string() : llvm::toString(value.takeError());
}

/// The JSON object `json` with `key` set to `value`, or removed when
/// `value` is nullopt.
inline std::string
withKey(llvm::StringRef json, llvm::StringRef key,
        std::optional<llvm::json::Value> value) {
  llvm::json::Object object =
      *llvm::cantFail(llvm::json::parse(json)).getAsObject();
  if (value)
    object[key] = std::move(*value);
  else
    object.erase(key);
  return llvm::formatv("{0}", llvm::json::Value(std::move(object))).str();
}

/// The error of parsing `json` as "config.json" ("" if it parses).
inline std::string parseError(llvm::StringRef json) {
  llvm::Expected<ModelConfig> config = parseModelConfig(json, "config.json");
  return config ? std::string() : llvm::toString(config.takeError());
}

/// A safetensors file held in memory, as if read from `name`.
inline llvm::Expected<SafeTensorsFile>
openBytes(llvm::StringRef bytes, llvm::StringRef name = "test.safetensors") {
  return SafeTensorsFile::fromBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(bytes, name));
}

/// The bytes of a safetensors file with a hand-written `header` and `data`.
inline std::string rawSafeTensors(llvm::StringRef header,
                                  llvm::StringRef data = "") {
  std::string bytes(8, '\0');
  llvm::support::endian::write64le(bytes.data(), header.size());
  return bytes + header.str() + data.str();
}

/// max_i |a_i|: the scale a relative tolerance is taken against.
inline double maxAbs(llvm::ArrayRef<float> a) {
  double m = 0;
  for (float x : a)
    m = std::max(m, std::abs(double(x)));
  return m;
}

/// The tensor called `name` in `tensors`, or null.
inline const ExpectedTensor *
findTensor(const std::vector<ExpectedTensor> &tensors, llvm::StringRef name) {
  for (const ExpectedTensor &tensor : tensors)
    if (tensor.name == name)
      return &tensor;
  return nullptr;
}

/// checkWeights' error for `tensors` against `config` ("" if they match).
inline std::string checkError(const ModelConfig &config,
                              llvm::ArrayRef<SafeTensor> tensors) {
  llvm::Expected<std::string> bytes = serializeSafeTensors(tensors);
  if (!bytes)
    return "serialize: " + errorText(bytes);
  llvm::Expected<SafeTensorsFile> file = openBytes(*bytes, "w.safetensors");
  if (!file)
    return "open: " + errorText(file);
  return errorText(checkWeights(config, *file));
}

/// The f32 values of the F32 `tensor`.
inline std::vector<float> valuesOf(const SafeTensor &tensor) {
  std::vector<float> values(tensor.data.size() / sizeof(float));
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = llvm::support::endian::read<float, llvm::endianness::little>(
        tensor.data.data() + i * sizeof(float));
  return values;
}

/// A tiny dense config: V = 32, d = 16, F = 24, H = 4, G = 2, hd = 4.
inline ModelConfig smallConfig(int64_t layers = 2) {
  ModelConfig config;
  config.vocabSize = 32;
  config.hiddenSize = 16;
  config.intermediateSize = 24;
  config.numHiddenLayers = layers;
  config.numAttentionHeads = 4;
  config.numKeyValueHeads = 2;
  config.headDim = 4;
  config.ropeTheta = 10000.0;
  config.maxPositionEmbeddings = 64;
  config.tieWordEmbeddings = true;
  return config;
}

/// A reference model of `config` with the weights `tensors`.
inline llvm::Expected<ReferenceModel>
modelWith(const ModelConfig &config, llvm::ArrayRef<SafeTensor> tensors) {
  llvm::Expected<std::string> bytes = serializeSafeTensors(tensors);
  if (!bytes)
    return bytes.takeError();
  llvm::Expected<SafeTensorsFile> file = openBytes(*bytes);
  if (!file)
    return file.takeError();
  return ReferenceModel::create(config, *file);
}

/// A reference model of `config` with the example weights of `seed`.
inline llvm::Expected<ReferenceModel> exampleModel(const ModelConfig &config,
                                                   uint64_t seed = 1) {
  return modelWith(config, generateExampleWeights(config, seed));
}

/// The last logits of `tokens` on a fresh model of `config` with the
/// weights `tensors` (empty, with a test failure, on error).
inline std::vector<float> logitsWith(const ModelConfig &config,
                                     llvm::ArrayRef<SafeTensor> tensors,
                                     llvm::ArrayRef<int32_t> tokens) {
  llvm::Expected<ReferenceModel> model = modelWith(config, tensors);
  if (!model) {
    ADD_FAILURE() << errorText(model);
    return {};
  }
  llvm::Expected<std::vector<float>> logits = model->forward(tokens);
  if (!logits) {
    ADD_FAILURE() << errorText(logits);
    return {};
  }
  return *logits;
}

/// The last logits of `tokens` on a fresh copy of `config`'s example model
/// (seed 1).
inline std::vector<float> freshLogits(const ModelConfig &config,
                                      llvm::ArrayRef<int32_t> tokens) {
  return logitsWith(config, generateExampleWeights(config, 1), tokens);
}

/// max_i |a_i - b_i| (infinity if the sizes differ).
inline double maxAbsDiff(llvm::ArrayRef<float> a, llvm::ArrayRef<float> b) {
  if (a.size() != b.size())
    return INFINITY;
  double diff = 0;
  for (size_t i = 0; i < a.size(); ++i)
    diff = std::max(diff, std::abs(double(a[i]) - b[i]));
  return diff;
}

/// The tensor called `name` in `tensors` (a test failure if there is none).
inline SafeTensor &tensorNamed(std::vector<SafeTensor> &tensors,
                               llvm::StringRef name) {
  for (SafeTensor &tensor : tensors)
    if (tensor.name == name)
      return tensor;
  ADD_FAILURE() << "no tensor " << name.str();
  static SafeTensor none;
  return none;
}

/// Replaces the values of the F32 tensor `tensor`, keeping name and shape.
inline void setValues(SafeTensor &tensor, llvm::ArrayRef<float> values) {
  tensor = SafeTensor::fromF32(tensor.name, tensor.shape, values);
}

} // namespace mlir::afm::test

#endif // AFM_TEST_UNIT_MODELTESTSUPPORT_H
