//===- HFDecoderONNX.cpp - a model folder as a plain ONNX graph -----------===//
//
// The graph follows transformers' modeling code for the families, written
// in standard ops only: RMSNorm as ReduceMean/Sqrt/Div, rotate-half RoPE
// with Slice/Neg/Concat over cos/sin tables, GQA by expanding the KV heads,
// attention as MatMul + additive mask + Softmax, MoE as TopK + Softmax
// scattered into a dense [S, E] weight over every expert's output. Nothing
// here calls the compiler's or the reference evaluator's code.
//
// The cache form is written the way exporters write a decoder with a KV
// cache (transformers' modeling code traced by torch.onnx / optimum): every
// dimension symbolic, the rotary tables computed from position_ids with
// Cos and Sin, the mask built from the shapes with Range, Greater, Not and
// And and the attention_mask input, each layer's keys and values the
// Concat of its past input and the new rows, returned as present outputs.
//
//===----------------------------------------------------------------------===//

#include "afm/TestModels/HFDecoderONNX.h"

#include "ONNXGraphWriter.h"

#include "afm/Model/ModelWeights.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <limits>

using namespace mlir::afm;

namespace {

class HFGraphBuilder {
public:
  /// `seqLen` 0 writes the cache form.
  HFGraphBuilder(const ModelConfig &config, const WeightSource &weights,
                 int64_t seqLen, std::string seqDimParam,
                 onnx::GraphProto &graph)
      : cfg(config), weights(weights), seq(seqLen),
        seqDimParam(std::move(seqDimParam)), w(graph), cache(seqLen == 0) {}

  void build();

private:
  std::vector<float> load(const std::string &name) {
    WeightTensor tensor = weights.lookup(name);
    return tensor.file->toF32(*tensor.info);
  }
  /// A fresh node name.
  std::string fresh(const std::string &what) {
    return what + "." + std::to_string(counter++);
  }
  std::string apply(const std::string &op,
                    const std::vector<std::string> &inputs) {
    return w.apply(op, fresh(op), inputs);
  }
  std::string scalar(float value) {
    std::string name = fresh("const");
    w.addFloat(name, {}, {value});
    return name;
  }
  std::string shape(const std::vector<int64_t> &dims) {
    std::string name = fresh("shape");
    w.addInt(name, {int64_t(dims.size())}, dims, onnx::TensorProto::INT64);
    return name;
  }
  std::string reshape(const std::string &x, const std::vector<int64_t> &dims) {
    return apply("Reshape", {x, shape(dims)});
  }
  /// x[..., begin:end] along the last axis.
  std::string lastAxisSlice(const std::string &x, int64_t begin,
                            int64_t end) {
    std::string starts = fresh("starts"), ends = fresh("ends"),
                axes = fresh("axes");
    w.addInt(starts, {1}, {begin}, onnx::TensorProto::INT64);
    w.addInt(ends, {1}, {end}, onnx::TensorProto::INT64);
    w.addInt(axes, {1}, {-1}, onnx::TensorProto::INT64);
    return apply("Slice", {x, starts, ends, axes});
  }
  std::string transpose(const std::string &x,
                        const std::vector<int64_t> &perm) {
    std::string name = fresh("Transpose");
    onnx::NodeProto &node = w.addNode("Transpose", name, {x}, {name + "/out"});
    ONNXGraphWriter::setInts(node, "perm", perm);
    return name + "/out";
  }
  /// x [..., in] times the [out, in] weight `name`, plus its bias.
  std::string linear(const std::string &x, const std::string &name,
                     const std::string &biasName = "");
  /// RMSNorm over the last axis with the gain `name` (plus Gemma's offset).
  std::string rmsNorm(const std::string &x, const std::string &name);
  std::string rope(const std::string &x, bool local);
  std::string attention(const std::string &x, const LayerTensorNames &n,
                        int64_t layer);
  std::string gatedMLP(const std::string &x, const std::string &gate,
                       const std::string &up, const std::string &down);
  std::string moe(const std::string &x, const LayerTensorNames &n);
  /// The inverse frequencies of transformers' default, linear and llama3
  /// RoPE.
  std::vector<double> inverseFrequencies(double theta,
                                         const RopeScaling &scaling) const;
  void addRopeTables(const std::string &prefix, double theta,
                     const RopeScaling &scaling);
  /// 0 where position j is visible from i, -1e30 elsewhere.
  void addMask(const std::string &name, int64_t window);
  /// The cache form's tables: cos/sin [B, 1, S, hd] from position_ids.
  void addComputedRopeTables(const std::string &prefix, double theta,
                             const RopeScaling &scaling);
  /// The cache form's additive mask [B, 1, S, T] (0 or the lowest float):
  /// key j is visible from query i when j <= past + i, attention_mask[j]
  /// is 1 and, with a window, j > past + i - window.
  void addComputedMask(const std::string &name, int64_t window);
  std::string node(const std::string &op,
                   const std::vector<std::string> &inputs,
                   const std::string &attribute, int64_t value) {
    std::string name = fresh(op);
    onnx::NodeProto &n = w.addNode(op, name, inputs, {name + "/out"});
    ONNXGraphWriter::setInt(n, attribute, value);
    return name + "/out";
  }
  std::string ints(const std::vector<int64_t> &values) {
    std::string name = fresh("ints");
    w.addInt(name, {int64_t(values.size())}, values, onnx::TensorProto::INT64);
    return name;
  }
  std::string scalarInt(int64_t value) {
    std::string name = fresh("int");
    w.addInt(name, {}, {value}, onnx::TensorProto::INT64);
    return name;
  }
  /// Shape(x)[axis] as an int64 scalar.
  std::string dimOf(const std::string &x, int64_t axis) {
    return node("Gather", {apply("Shape", {x}), scalarInt(axis)}, "axis", 0);
  }

  const ModelConfig &cfg;
  const WeightSource &weights;
  int64_t seq;
  std::string seqDimParam;
  ONNXGraphWriter w;
  bool cache;
  int64_t counter = 0;
};

} // namespace

std::string HFGraphBuilder::linear(const std::string &x,
                                   const std::string &name,
                                   const std::string &biasName) {
  WeightTensor tensor = weights.lookup(name);
  int64_t out = tensor.info->shape[0], in = tensor.info->shape[1];
  std::vector<float> weight = load(name), transposed(weight.size());
  for (int64_t o = 0; o < out; ++o)
    for (int64_t i = 0; i < in; ++i)
      transposed[i * out + o] = weight[o * in + i];
  std::string init = fresh(name);
  w.addFloat(init, {in, out}, transposed);
  std::string y = apply("MatMul", {x, init});
  if (biasName.empty())
    return y;
  std::string bias = fresh(biasName);
  w.addFloat(bias, {out}, load(biasName));
  return apply("Add", {y, bias});
}

std::string HFGraphBuilder::rmsNorm(const std::string &x,
                                    const std::string &name) {
  std::vector<float> gain = load(name);
  std::string g = fresh(name);
  w.addFloat(g, {int64_t(gain.size())}, gain);
  if (cfg.rmsNormWeightOffset != 0.0)
    g = apply("Add", {g, scalar(float(cfg.rmsNormWeightOffset))});
  std::string meanName = fresh("ReduceMean");
  onnx::NodeProto &mean = w.addNode("ReduceMean", meanName,
                                    {apply("Mul", {x, x})},
                                    {meanName + "/out"});
  ONNXGraphWriter::setInts(mean, "axes", {-1});
  ONNXGraphWriter::setInt(mean, "keepdims", 1);
  std::string rms = apply(
      "Sqrt", {apply("Add", {meanName + "/out", scalar(float(cfg.rmsNormEps))})});
  return apply("Mul", {apply("Div", {x, rms}), g});
}

std::vector<double>
HFGraphBuilder::inverseFrequencies(double theta,
                                   const RopeScaling &scaling) const {
  int64_t hd = cfg.headDim;
  std::vector<double> freqs;
  for (int64_t i = 0; i < hd; i += 2) {
    double f = std::pow(theta, -double(i) / double(hd));
    if (scaling.type == RopeScalingType::Linear) {
      f /= scaling.factor;
    } else if (scaling.type == RopeScalingType::Llama3) {
      double context = double(scaling.originalMaxPositionEmbeddings);
      double wavelength = 2 * M_PI / f;
      if (wavelength > context / scaling.lowFreqFactor) {
        f /= scaling.factor;
      } else if (wavelength >= context / scaling.highFreqFactor) {
        double s = (context / wavelength - scaling.lowFreqFactor) /
                   (scaling.highFreqFactor - scaling.lowFreqFactor);
        f = (1 - s) * f / scaling.factor + s * f;
      }
    }
    freqs.push_back(f);
  }
  return freqs;
}

void HFGraphBuilder::addRopeTables(const std::string &prefix, double theta,
                                   const RopeScaling &scaling) {
  // emb = cat(freqs, freqs) per position, as [1, S, 1, hd] to broadcast
  // over [1, S, heads, hd].
  std::vector<double> freqs = inverseFrequencies(theta, scaling);
  int64_t hd = cfg.headDim, half = hd / 2;
  std::vector<float> cosTable(seq * hd), sinTable(seq * hd);
  for (int64_t p = 0; p < seq; ++p)
    for (int64_t i = 0; i < hd; ++i) {
      double angle = double(p) * freqs[i % half];
      cosTable[p * hd + i] = float(std::cos(angle));
      sinTable[p * hd + i] = float(std::sin(angle));
    }
  w.addFloat(prefix + "cos", {1, seq, 1, hd}, cosTable);
  w.addFloat(prefix + "sin", {1, seq, 1, hd}, sinTable);
}

void HFGraphBuilder::addMask(const std::string &name, int64_t window) {
  std::vector<float> mask(seq * seq, -1e30f);
  for (int64_t i = 0; i < seq; ++i)
    for (int64_t j = 0; j <= i; ++j)
      if (window == 0 || j > i - window)
        mask[i * seq + j] = 0.0f;
  w.addFloat(name, {seq, seq}, mask);
}

void HFGraphBuilder::addComputedRopeTables(const std::string &prefix,
                                           double theta,
                                           const RopeScaling &scaling) {
  std::vector<double> freqs = inverseFrequencies(theta, scaling);
  std::string inverse = prefix + "inv_freq";
  w.addFloat(inverse, {int64_t(freqs.size())},
             std::vector<float>(freqs.begin(), freqs.end()));
  std::string positions = node("Cast", {"position_ids"}, "to",
                               onnx::TensorProto::FLOAT); // [B, S]
  std::string angles = apply(
      "Mul", {apply("Unsqueeze", {positions, ints({2})}), inverse});
  std::string emb = node("Concat", {angles, angles}, "axis", -1);
  w.addNode("Unsqueeze", prefix + "cos",
            {apply("Cos", {emb}), ints({1})}, {prefix + "cos"});
  w.addNode("Unsqueeze", prefix + "sin",
            {apply("Sin", {emb}), ints({1})}, {prefix + "sin"});
}

void HFGraphBuilder::addComputedMask(const std::string &name,
                                     int64_t window) {
  std::string past = dimOf("past_key_values.0.key", 2);
  std::string queries = apply(
      "Range", {past, apply("Add", {past, dimOf("input_ids", 1)}),
                scalarInt(1)}); // [S]
  std::string keys = apply(
      "Range", {scalarInt(0), dimOf("attention_mask", 1), scalarInt(1)});
  std::string keyRow = apply("Unsqueeze", {keys, ints({0})});       // [1, T]
  std::string queryColumn = apply("Unsqueeze", {queries, ints({1})}); // [S, 1]
  std::string visible =
      apply("Not", {apply("Greater", {keyRow, queryColumn})}); // [S, T]
  if (window != 0)
    visible = apply(
        "And", {visible,
                apply("Greater",
                      {keyRow, apply("Sub", {queryColumn,
                                             scalarInt(window)})})});
  std::string padding = apply(
      "Unsqueeze", {node("Cast", {"attention_mask"}, "to",
                         onnx::TensorProto::BOOL),
                    ints({1, 2})}); // [B, 1, 1, T]
  visible = apply("And", {padding, visible}); // [B, 1, S, T]
  w.addNode("Where", name,
            {visible, scalar(0.0f),
             scalar(-std::numeric_limits<float>::max())},
            {name});
}

std::string HFGraphBuilder::rope(const std::string &x, bool local) {
  // rotate_half(x) = cat(-x2, x1); x * cos + rotate_half(x) * sin.
  int64_t half = cfg.headDim / 2;
  std::string x1 = lastAxisSlice(x, 0, half);
  std::string x2 = lastAxisSlice(x, half, 2 * half);
  std::string name = fresh("Concat");
  onnx::NodeProto &concat = w.addNode(
      "Concat", name, {apply("Neg", {x2}), x1}, {name + "/out"});
  ONNXGraphWriter::setInt(concat, "axis", -1);
  std::string prefix = local ? "rope_local." : "rope_global.";
  return apply("Add", {apply("Mul", {x, prefix + "cos"}),
                       apply("Mul", {name + "/out", prefix + "sin"})});
}

std::string HFGraphBuilder::attention(const std::string &x,
                                      const LayerTensorNames &n,
                                      int64_t layer) {
  int64_t h = cfg.numAttentionHeads, g = cfg.numKeyValueHeads,
          hd = cfg.headDim;
  bool bias = cfg.attentionBias;
  // The cache form keeps every dimension as the inputs give it (Reshape's
  // 0 copies one) and applies RoPE after the transpose, as transformers
  // does, with tables [B, 1, S, hd].
  int64_t rows = cache ? 0 : seq;
  std::string q = reshape(linear(x, n.qProj, bias ? n.qBias : ""),
                          {cache ? 0 : 1, rows, h, hd});
  std::string k = reshape(linear(x, n.kProj, bias ? n.kBias : ""),
                          {cache ? 0 : 1, rows, g, hd});
  std::string v = reshape(linear(x, n.vProj, bias ? n.vBias : ""),
                          {cache ? 0 : 1, rows, g, hd});
  if (cfg.qkNorm) {
    q = rmsNorm(q, n.qNorm);
    k = rmsNorm(k, n.kNorm);
  }
  if (cache) {
    q = transpose(q, {0, 2, 1, 3});
    k = transpose(k, {0, 2, 1, 3});
    v = transpose(v, {0, 2, 1, 3});
  }
  bool local = isLocalLayer(cfg, layer);
  // (A global layer without RoPE reads no table: NoPE.)
  if (local || cfg.ropeInGlobalLayers) {
    q = rope(q, local);
    k = rope(k, local);
  }
  if (!cache) {
    q = transpose(q, {0, 2, 1, 3}); // [1, H, S, hd]
    k = transpose(k, {0, 2, 1, 3}); // [1, G, S, hd]
    v = transpose(v, {0, 2, 1, 3});
  } else {
    // The cache: the past rows, then this call's.
    std::string prefix = "past_key_values." + std::to_string(layer);
    std::string present = "present." + std::to_string(layer);
    for (auto [value, part] : {std::pair{&k, ".key"}, {&v, ".value"}}) {
      onnx::NodeProto &concat =
          w.addNode("Concat", present + part, {prefix + part, *value},
                    {present + part});
      ONNXGraphWriter::setInt(concat, "axis", 2);
      *value = present + part;
    }
  }
  // repeat_kv: query head i reads KV head i / (H / G).
  auto repeat = [&](const std::string &kv) {
    if (cache)
      return reshape(apply("Expand", {apply("Unsqueeze", {kv, ints({2})}),
                                      ints({1, 1, h / g, 1, 1})}),
                     {0, h, -1, hd});
    std::string wide = apply(
        "Expand", {reshape(kv, {1, g, 1, seq, hd}),
                   shape({1, g, h / g, seq, hd})});
    return reshape(wide, {1, h, seq, hd});
  };
  k = repeat(k);
  v = repeat(v);
  double scale = cfg.attentionScale != 0.0 ? cfg.attentionScale
                                           : 1.0 / std::sqrt(double(hd));
  std::string scores = apply(
      "Mul", {apply("MatMul", {q, transpose(k, {0, 1, 3, 2})}),
              scalar(float(scale))});
  scores = apply("Add", {scores, local ? "mask_local" : "mask_global"});
  std::string softmaxName = fresh("Softmax");
  onnx::NodeProto &softmax =
      w.addNode("Softmax", softmaxName, {scores}, {softmaxName + "/out"});
  ONNXGraphWriter::setInt(softmax, "axis", -1);
  std::string out = apply("MatMul", {softmaxName + "/out", v});
  out = reshape(transpose(out, {0, 2, 1, 3}),
                {cache ? 0 : 1, rows, h * hd});
  return linear(out, n.oProj, cfg.attentionOutputBias ? n.oBias : "");
}

std::string HFGraphBuilder::gatedMLP(const std::string &x,
                                     const std::string &gate,
                                     const std::string &up,
                                     const std::string &down) {
  std::string gated = linear(x, gate);
  std::string active;
  if (cfg.mlpActivation == MLPActivation::SiLU) {
    active = apply("Mul", {gated, apply("Sigmoid", {gated})});
  } else {
    // 0.5 g (1 + tanh(sqrt(2/pi) (g + 0.044715 g^3)))
    std::string cube = apply("Mul", {apply("Mul", {gated, gated}), gated});
    std::string inner = apply(
        "Add", {gated, apply("Mul", {cube, scalar(0.044715f)})});
    std::string t = apply(
        "Tanh", {apply("Mul", {inner, scalar(float(std::sqrt(2.0 / M_PI)))})});
    active = apply("Mul", {apply("Mul", {gated, scalar(0.5f)}),
                           apply("Add", {t, scalar(1.0f)})});
  }
  return linear(apply("Mul", {active, linear(x, up)}), down);
}

std::string HFGraphBuilder::moe(const std::string &x,
                                const LayerTensorNames &n) {
  int64_t e = cfg.numExperts, k = cfg.numExpertsPerTok;
  std::string logits = linear(x, n.router); // [1, S, E]
  std::string kName = fresh("k");
  w.addInt(kName, {1}, {k}, onnx::TensorProto::INT64);
  std::string topName = fresh("TopK");
  onnx::NodeProto &top = w.addNode("TopK", topName, {logits, kName},
                                   {topName + "/values", topName + "/indices"});
  ONNXGraphWriter::setInt(top, "axis", -1);
  std::string softmaxName = fresh("Softmax");
  onnx::NodeProto &softmax = w.addNode(
      "Softmax", softmaxName, {topName + "/values"}, {softmaxName + "/out"});
  ONNXGraphWriter::setInt(softmax, "axis", -1);
  // The k gates scattered into a dense [1, S, E] weight.
  std::string zeros = fresh("zeros");
  if (cache)
    zeros = apply("Mul", {logits, scalar(0.0f)});
  else
    w.addFloat(zeros, {1, seq, e}, std::vector<float>(seq * e, 0.0f));
  std::string scatterName = fresh("ScatterElements");
  onnx::NodeProto &scatter = w.addNode(
      "ScatterElements", scatterName,
      {zeros, topName + "/indices", softmaxName + "/out"},
      {scatterName + "/out"});
  ONNXGraphWriter::setInt(scatter, "axis", -1);
  std::string sum;
  for (int64_t x0 = 0; x0 < e; ++x0) {
    std::string gate = lastAxisSlice(scatterName + "/out", x0,
                                     x0 + 1); // [1, S, 1]
    std::string y = apply(
        "Mul", {gatedMLP(x, n.expertGateProj(x0), n.expertUpProj(x0),
                         n.expertDownProj(x0)),
                gate});
    sum = sum.empty() ? y : apply("Add", {sum, y});
  }
  return sum;
}

void HFGraphBuilder::build() {
  int64_t d = cfg.hiddenSize, vocab = cfg.vocabSize;
  if (cache) {
    // optimum's names and dimensions.
    auto int64 = onnx::TensorProto::INT64, f32 = onnx::TensorProto::FLOAT;
    w.addInput("input_ids", int64, {0, 0}, {"batch_size", "sequence_length"});
    w.addInput("attention_mask", int64, {0, 0},
               {"batch_size", "total_sequence_length"});
    w.addInput("position_ids", int64, {0, 0},
               {"batch_size", "sequence_length"});
    int64_t g = cfg.numKeyValueHeads, hd = cfg.headDim;
    for (int64_t layer = 0; layer < cfg.numHiddenLayers; ++layer)
      for (const char *part : {".key", ".value"})
        w.addInput("past_key_values." + std::to_string(layer) + part, f32,
                   {0, g, 0, hd},
                   {"batch_size", "", "past_sequence_length", ""});
    w.addOutput("logits", f32, {0, 0, vocab},
                {"batch_size", "sequence_length", ""});
    for (int64_t layer = 0; layer < cfg.numHiddenLayers; ++layer)
      for (const char *part : {".key", ".value"})
        w.addOutput("present." + std::to_string(layer) + part, f32,
                    {0, g, 0, hd},
                    {"batch_size", "", "total_sequence_length", ""});
  } else {
    w.addInput("input_ids", onnx::TensorProto::INT64, {1, seq},
               {"", seqDimParam});
    w.addOutput("logits", onnx::TensorProto::FLOAT, {1, seq, vocab},
                {"", seqDimParam});
  }
  auto addTables = [&](const std::string &prefix, double theta,
                       const RopeScaling &scaling) {
    if (cache)
      addComputedRopeTables(prefix, theta, scaling);
    else
      addRopeTables(prefix, theta, scaling);
  };
  auto addMaskOf = [&](const std::string &name, int64_t window) {
    if (cache)
      addComputedMask(name, window);
    else
      addMask(name, window);
  };
  // The tables and masks of the layer kinds the model has (an unused
  // initializer is a warning in ONNX Runtime).
  bool anyLocal = false, anyGlobal = false;
  for (int64_t layer = 0; layer < cfg.numHiddenLayers; ++layer)
    (isLocalLayer(cfg, layer) ? anyLocal : anyGlobal) = true;
  if (anyGlobal) {
    if (cfg.ropeInGlobalLayers || !cache)
      addTables("rope_global.", cfg.ropeTheta, cfg.ropeScaling);
    addMaskOf("mask_global", 0);
  }
  if (anyLocal) {
    if (cfg.ropeLocalTheta != 0.0)
      addTables("rope_local.", cfg.ropeLocalTheta, RopeScaling());
    else
      addTables("rope_local.", cfg.ropeTheta, cfg.ropeScaling);
    addMaskOf("mask_local", cfg.slidingWindow);
  }

  w.addFloat("embed_tokens", {vocab, d}, load(kEmbedTokensName));
  std::string h = apply("Gather", {"embed_tokens", "input_ids"});
  if (cfg.embeddingMultiplier != 1.0)
    h = apply("Mul", {h, scalar(float(cfg.embeddingMultiplier))});
  for (int64_t layer = 0; layer < cfg.numHiddenLayers; ++layer) {
    LayerTensorNames n = layerTensorNames(layer);
    std::string attended = attention(rmsNorm(h, n.inputNorm), n, layer);
    if (cfg.sandwichNorms)
      attended = rmsNorm(attended, n.postAttentionNorm);
    h = apply("Add", {h, attended});
    std::string x = rmsNorm(h, cfg.sandwichNorms ? n.preFeedforwardNorm
                                                 : n.postAttentionNorm);
    std::string y = isMoELayer(cfg, layer)
                        ? moe(x, n)
                        : gatedMLP(x, n.gateProj, n.upProj, n.downProj);
    if (cfg.sandwichNorms)
      y = rmsNorm(y, n.postFeedforwardNorm);
    h = apply("Add", {h, y});
  }
  std::string normed = rmsNorm(h, kFinalNormName);
  std::string logits =
      cfg.tieWordEmbeddings
          ? apply("MatMul", {normed, transpose("embed_tokens", {1, 0})})
          : linear(normed, kLmHeadName);
  w.addNode("Identity", "logits", {logits}, {"logits"});
}

static llvm::Expected<std::string>
buildGraph(const ModelConfig &config, const WeightSource &weights,
           int64_t seqLen, const std::string &seqDimParam) {
  if (config.architecture != Architecture::Dense)
    return llvm::createStringError(
        "only afm-dense models are written as ONNX, not " +
        architectureName(config.architecture).str());
  if (config.linearWeightFormat != LinearWeightFormat::F32 ||
      config.embeddingFormat != EmbeddingFormat::F32 ||
      config.kvCacheDType != KVCacheDType::F32 || config.int8Activations ||
      config.loraRank != 0)
    return llvm::createStringError(
        "only f32 weights, caches and activations without LoRA are written "
        "as ONNX (the graph holds the checkpoint's weights)");
  if (seqLen != 0 && (seqLen < 1 || seqLen > config.maxPositionEmbeddings))
    return llvm::createStringError(llvm::formatv(
        "the sequence length must be between 1 and the context ({0}), got "
        "{1}",
        config.maxPositionEmbeddings, seqLen).str());
  if (llvm::Error error = checkWeights(config, weights))
    return std::move(error);
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("afm-gen-onnx-decoder --model");
  model.add_opset_import()->set_version(17);
  onnx::GraphProto &graph = *model.mutable_graph();
  graph.set_name("decoder");
  HFGraphBuilder(config, weights, seqLen, seqDimParam, graph).build();
  return model.SerializeAsString();
}

llvm::Expected<std::string>
mlir::afm::buildHFDecoderONNX(const ModelConfig &config,
                              const WeightSource &weights, int64_t seqLen,
                              const std::string &seqDimParam) {
  if (seqLen == 0)
    seqLen = -1; // refused below, with the range
  return buildGraph(config, weights, seqLen, seqDimParam);
}

llvm::Expected<std::string>
mlir::afm::buildHFDecoderONNXWithCache(const ModelConfig &config,
                                       const WeightSource &weights) {
  return buildGraph(config, weights, /*seqLen=*/0, "");
}
