//===- DecoderModel.cpp - a small ONNX decoder with random weights --------===//

#include "afm/TestModels/DecoderModel.h"

#include "ONNXGraphWriter.h"

#include "afm/Model/Random.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

using namespace mlir::afm;

namespace {

/// Builds the graph: initializers, nodes and their attributes.
class DecoderBuilder {
public:
  explicit DecoderBuilder(const ONNXDecoderConfig &config)
      : config(config), rng(config.seed) {}

  std::string build();

private:
  /// Uniform in [-1, 1), the same bits on every machine.
  float uniform() { return static_cast<float>(rng.nextUniform() * 2 - 1); }
  std::vector<float> random(int64_t count, float scale, float offset = 0) {
    std::vector<float> values(count);
    for (float &value : values)
      value = offset + scale * uniform();
    return values;
  }

  // The graph writer's calls, on the graph being built.
  void addFloat(const std::string &name, std::vector<int64_t> dims,
                const std::vector<float> &values) {
    writer->addFloat(name, dims, values);
  }
  void addInt(const std::string &name, std::vector<int64_t> dims,
              const std::vector<int64_t> &values, int32_t dataType) {
    writer->addInt(name, dims, values, dataType);
  }
  void addBytes(const std::string &name, std::vector<int64_t> dims,
                const std::vector<uint8_t> &bytes) {
    writer->addBytes(name, dims, bytes);
  }
  onnx::NodeProto &addNode(const std::string &opType, const std::string &name,
                           std::vector<std::string> inputs,
                           std::vector<std::string> outputs,
                           bool microsoft = false) {
    return writer->addNode(opType, name, inputs, outputs, microsoft);
  }
  static void setInt(onnx::NodeProto &node, const std::string &name,
                     int64_t value) {
    ONNXGraphWriter::setInt(node, name, value);
  }
  static void setFloat(onnx::NodeProto &node, const std::string &name,
                       float value) {
    ONNXGraphWriter::setFloat(node, name, value);
  }

  /// x [.., k] times a random [k, n] weight: MatMul, or MatMulNBits of
  /// the same weight quantized.
  std::string linear(const std::string &name, const std::string &x, int64_t k,
                     int64_t n, bool symmetric = false);
  std::string rmsNormWeight(const std::string &name);

  const ONNXDecoderConfig &config;
  SplitMix64 rng;
  onnx::GraphProto *graph = nullptr;
  std::unique_ptr<ONNXGraphWriter> writer;
};

} // namespace

std::string DecoderBuilder::rmsNormWeight(const std::string &name) {
  addFloat(name, {config.hiddenSize}, random(config.hiddenSize, 0.2f, 1.0f));
  return name;
}

std::string DecoderBuilder::linear(const std::string &name,
                                   const std::string &x, int64_t k, int64_t n,
                                   bool symmetric) {
  // Uniform with variance 1/k keeps activations of order 1.
  std::vector<float> weight = random(k * n, std::sqrt(3.0f / k));
  std::string out = name + "/out";
  if (config.matmulBits == 0) {
    addFloat(name + ".weight", {k, n}, weight);
    addNode("MatMul", name, {x, name + ".weight"}, {out});
    return out;
  }

  // MatMulNBits stores W^T [n, k] in blocks of blockSize along k: codes
  // packed low bits first, one float scale and (unless symmetric) one
  // packed zero point per block.
  int64_t bits = config.matmulBits, blockSize = config.blockSize;
  int64_t blocks = (k + blockSize - 1) / blockSize;
  int64_t blobBytes = blockSize * bits / 8;
  int64_t maxCode = (int64_t{1} << bits) - 1;
  int64_t zpBytesPerRow = (blocks * bits + 7) / 8;
  std::vector<uint8_t> packed(n * blocks * blobBytes, 0);
  std::vector<float> scales(n * blocks);
  std::vector<uint8_t> zeroPoints(n * zpBytesPerRow, 0);
  for (int64_t row = 0; row < n; ++row) {
    for (int64_t block = 0; block < blocks; ++block) {
      int64_t begin = block * blockSize, end = std::min(k, begin + blockSize);
      float lo = 0, hi = 0;
      for (int64_t i = begin; i < end; ++i) {
        lo = std::min(lo, weight[i * n + row]);
        hi = std::max(hi, weight[i * n + row]);
      }
      float scale;
      int64_t zeroPoint;
      if (symmetric) {
        zeroPoint = int64_t{1} << (bits - 1);
        float absMax = std::max(-lo, hi);
        scale = absMax / static_cast<float>(zeroPoint);
      } else {
        scale = (hi - lo) / static_cast<float>(maxCode);
        zeroPoint = std::clamp<int64_t>(std::lround(-lo / scale), 0, maxCode);
      }
      scales[row * blocks + block] = scale;
      if (!symmetric)
        zeroPoints[row * zpBytesPerRow + block * bits / 8] |=
            static_cast<uint8_t>(zeroPoint << (block * bits % 8));
      for (int64_t i = begin; i < end; ++i) {
        int64_t code = std::clamp<int64_t>(
            std::lround(weight[i * n + row] / scale) + zeroPoint, 0, maxCode);
        int64_t index = i - begin;
        packed[(row * blocks + block) * blobBytes + index * bits / 8] |=
            static_cast<uint8_t>(code << (index * bits % 8));
      }
    }
  }
  addBytes(name + ".qweight", {n, blocks, blobBytes}, packed);
  addFloat(name + ".scales", {n * blocks}, scales);
  std::vector<std::string> inputs = {x, name + ".qweight", name + ".scales"};
  if (symmetric) {
    addFloat(name + ".bias", {n}, random(n, 0.5f));
    inputs.insert(inputs.end(), {"", "", name + ".bias"});
  } else {
    addBytes(name + ".zero_points", {n * zpBytesPerRow}, zeroPoints);
    inputs.push_back(name + ".zero_points");
  }
  onnx::NodeProto &node = addNode("MatMulNBits", name, inputs, {out}, true);
  setInt(node, "K", k);
  setInt(node, "N", n);
  setInt(node, "bits", bits);
  setInt(node, "block_size", blockSize);
  // Level 0: float activations and accumulation (level 4 would quantize
  // the activations to int8 inside ONNX Runtime).
  setInt(node, "accuracy_level", 0);
  return out;
}

std::string DecoderBuilder::build() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("afm-gen-onnx-decoder");
  onnx::OperatorSetIdProto *opset = model.add_opset_import();
  opset->set_version(17);
  opset = model.add_opset_import();
  opset->set_domain("com.microsoft");
  opset->set_version(1);
  graph = model.mutable_graph();
  graph->set_name("decoder");
  writer = std::make_unique<ONNXGraphWriter>(*graph);

  const int64_t seq = config.seqLen, hidden = config.hiddenSize;
  const int64_t qSize = config.numHeads * config.headDim;
  const int64_t kvSize = config.numKVHeads * config.headDim;

  auto int64 = onnx::TensorProto::INT64, f32 = onnx::TensorProto::FLOAT;
  if (config.kvCache) {
    writer->addInput("input_ids", int64, {0, 0},
                     {"batch_size", "sequence_length"});
    writer->addInput("attention_mask", int64, {0, 0},
                     {"batch_size", "total_sequence_length"});
    writer->addInput("position_ids", int64, {0, 0},
                     {"batch_size", "sequence_length"});
    for (int64_t layer = 0; layer < config.numLayers; ++layer)
      for (const char *part : {".key", ".value"})
        writer->addInput("past_key_values." + std::to_string(layer) + part,
                         f32, {0, config.numKVHeads, 0, config.headDim},
                         {"batch_size", "", "past_sequence_length", ""});
    writer->addOutput("logits", f32, {0, 0, config.vocabSize},
                      {"batch_size", "sequence_length", ""});
    for (int64_t layer = 0; layer < config.numLayers; ++layer)
      for (const char *part : {".key", ".value"})
        writer->addOutput("present." + std::to_string(layer) + part, f32,
                          {0, config.numKVHeads, 0, config.headDim},
                          {"batch_size", "", "total_sequence_length", ""});
  } else {
    writer->addInput("input_ids", int64, {1, seq});
    writer->addOutput("logits", f32, {1, seq, config.vocabSize});
  }

  // Rotary tables (theta 10000) for the positions, the positions
  // themselves, and GroupQueryAttention's lengths: without a cache, one
  // prompt filling the whole static sequence; with one, what the builder
  // computes from the attention mask: seqlens_k = sum - 1 per sequence,
  // total_sequence_length = its width.
  int64_t half = config.headDim / 2;
  int64_t positionCount = config.kvCache ? config.maxPositions : seq;
  std::vector<float> cosCache(positionCount * half),
      sinCache(positionCount * half);
  for (int64_t pos = 0; pos < positionCount; ++pos)
    for (int64_t i = 0; i < half; ++i) {
      double angle = pos * std::pow(10000.0, -2.0 * i / config.headDim);
      cosCache[pos * half + i] = static_cast<float>(std::cos(angle));
      sinCache[pos * half + i] = static_cast<float>(std::sin(angle));
    }
  addFloat("cos_cache", {positionCount, half}, cosCache);
  addFloat("sin_cache", {positionCount, half}, sinCache);
  if (config.kvCache) {
    addInt("axes_1", {1}, {1}, int64);
    addInt("one", {}, {1}, int64);
    setInt(addNode("ReduceSum", "mask_sum", {"attention_mask", "axes_1"},
                   {"mask_sum/out"}),
           "keepdims", 0);
    addNode("Sub", "mask_sum_minus_1", {"mask_sum/out", "one"},
            {"mask_sum_minus_1/out"});
    setInt(addNode("Cast", "seqlens_k", {"mask_sum_minus_1/out"},
                   {"seqlens_k"}),
           "to", onnx::TensorProto::INT32);
    addNode("Shape", "mask_shape", {"attention_mask"}, {"mask_shape/out"});
    setInt(addNode("Gather", "mask_width", {"mask_shape/out", "one"},
                   {"mask_width/out"}),
           "axis", 0);
    setInt(addNode("Cast", "total_sequence_length", {"mask_width/out"},
                   {"total_sequence_length"}),
           "to", onnx::TensorProto::INT32);
  } else {
    std::vector<int64_t> positions(seq);
    for (int64_t pos = 0; pos < seq; ++pos)
      positions[pos] = pos;
    addInt("position_ids", {1, seq}, positions, int64);
    addInt("seqlens_k", {1}, {seq - 1}, onnx::TensorProto::INT32);
    addInt("total_sequence_length", {}, {seq}, onnx::TensorProto::INT32);
  }

  addFloat("embed_tokens.weight", {config.vocabSize, hidden},
           random(config.vocabSize * hidden, 1.0f));
  addNode("Gather", "embed_tokens", {"embed_tokens.weight", "input_ids"},
          {"embeds"});

  std::string residual = "embeds", pending;
  auto norm = [&](const std::string &name, const std::string &weight) {
    std::string out = name + "/out";
    if (pending.empty()) {
      // ONNX Runtime defines this one in the default domain.
      onnx::NodeProto &node = addNode("SimplifiedLayerNormalization", name,
                                      {residual, weight}, {out});
      setInt(node, "axis", -1);
      setFloat(node, "epsilon", config.epsilon);
      setInt(node, "stash_type", 1);
    } else {
      std::string sum = name + "/sum";
      onnx::NodeProto &node =
          addNode("SkipSimplifiedLayerNormalization", name,
                  {pending, residual, weight}, {out, "", "", sum}, true);
      setFloat(node, "epsilon", config.epsilon);
      residual = sum;
    }
    return out;
  };

  for (int64_t layer = 0; layer < config.numLayers; ++layer) {
    std::string prefix = "layers." + std::to_string(layer) + ".";
    std::string x = norm(prefix + "input_layernorm",
                         rmsNormWeight(prefix + "input_layernorm.weight"));
    std::string q = linear(prefix + "attn.q_proj", x, hidden, qSize);
    std::string k = linear(prefix + "attn.k_proj", x, hidden, kvSize);
    std::string v = linear(prefix + "attn.v_proj", x, hidden, kvSize);
    bool interleaved = layer % 2 == 1;
    auto rotary = [&](const std::string &name, const std::string &input) {
      std::string out = name + "/out";
      onnx::NodeProto &node = addNode(
          "RotaryEmbedding", name,
          {input, "position_ids", "cos_cache", "sin_cache"}, {out}, true);
      setInt(node, "interleaved", interleaved);
      return out;
    };
    q = rotary(prefix + "attn.q_rotary", q);
    k = rotary(prefix + "attn.k_rotary", k);
    std::string attn = prefix + "attn/out";
    std::string past = "past_key_values." + std::to_string(layer),
                present = "present." + std::to_string(layer);
    onnx::NodeProto &gqa =
        config.kvCache
            ? addNode("GroupQueryAttention", prefix + "attn",
                      {q, k, v, past + ".key", past + ".value", "seqlens_k",
                       "total_sequence_length"},
                      {attn, present + ".key", present + ".value"}, true)
            : addNode("GroupQueryAttention", prefix + "attn",
                      {q, k, v, "", "", "seqlens_k", "total_sequence_length"},
                      {attn, prefix + "attn/present_key",
                       prefix + "attn/present_value"},
                      true);
    setInt(gqa, "num_heads", config.numHeads);
    setInt(gqa, "kv_num_heads", config.numKVHeads);
    // Odd layers scale by a non-default factor.
    if (layer % 2 == 1)
      setFloat(gqa, "scale", 0.2f);
    pending = linear(prefix + "attn.o_proj", attn, qSize, hidden);

    x = norm(prefix + "post_attention_layernorm",
             rmsNormWeight(prefix + "post_attention_layernorm.weight"));
    std::string gate =
        linear(prefix + "mlp.gate_proj", x, hidden, config.ffnSize);
    std::string up = linear(prefix + "mlp.up_proj", x, hidden, config.ffnSize);
    addNode("Sigmoid", prefix + "mlp.sigmoid", {gate},
            {prefix + "mlp.sigmoid/out"});
    addNode("Mul", prefix + "mlp.silu", {gate, prefix + "mlp.sigmoid/out"},
            {prefix + "mlp.silu/out"});
    addNode("Mul", prefix + "mlp.gated", {prefix + "mlp.silu/out", up},
            {prefix + "mlp.gated/out"});
    pending = linear(prefix + "mlp.down_proj", prefix + "mlp.gated/out",
                     config.ffnSize, hidden);
  }
  std::string x = norm("final_norm", rmsNormWeight("final_norm.weight"));
  std::string logits =
      linear("lm_head", x, hidden, config.vocabSize, /*symmetric=*/true);
  addNode("Identity", "logits", {logits}, {"logits"});
  return model.SerializeAsString();
}

std::string mlir::afm::buildONNXDecoder(const ONNXDecoderConfig &config) {
  return DecoderBuilder(config).build();
}
