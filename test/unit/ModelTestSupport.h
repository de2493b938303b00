//===- ModelTestSupport.h - helpers for the model and reference tests -----===//
//
// In-memory weight files, small configs and error-text helpers shared by
// the AFMReferenceTests files.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_TEST_UNIT_MODELTESTSUPPORT_H
#define AFM_TEST_UNIT_MODELTESTSUPPORT_H

#include "afm/Model/ExampleModel.h"
#include "afm/Model/ModelConfig.h"
#include "afm/Model/ModelWeights.h"
#include "afm/Model/SafeTensors.h"
#include "afm/Reference/ReferenceModel.h"

#include "llvm/Support/Endian.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

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

/// A reference model of `config` with the example weights of `seed`.
inline llvm::Expected<ReferenceModel> exampleModel(const ModelConfig &config,
                                                   uint64_t seed = 1) {
  llvm::Expected<std::string> bytes =
      serializeSafeTensors(generateExampleWeights(config, seed));
  if (!bytes)
    return bytes.takeError();
  llvm::Expected<SafeTensorsFile> file = openBytes(*bytes);
  if (!file)
    return file.takeError();
  return ReferenceModel::create(config, *file);
}

} // namespace mlir::afm::test

#endif // AFM_TEST_UNIT_MODELTESTSUPPORT_H
