//===- PEFTAdapterTest.cpp - PEFT LoRA adapters and the reference ---------===//
//
// The loader of PEFT adapter folders (adapter_config.json +
// adapter_model.safetensors) on adapters written by the example generator,
// each of its errors, and the reference evaluator's two ways of applying an
// adapter: merged into f32 weights (checked against weights merged here),
// and as a separate term of unrounded activations with int8 activations.
//
//===----------------------------------------------------------------------===//

#include "ModelTestSupport.h"

#include "afm/Model/HalfFloat.h"
#include "afm/Model/PEFTAdapter.h"
#include "afm/Model/Random.h"
#include "afm/Reference/ReferenceModel.h"
#include "afm/Reference/ReferenceOps.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

using namespace mlir::afm;
using namespace mlir::afm::test;
using ::testing::HasSubstr;

namespace {

/// A random adapter for `config` with `options`.
PEFTAdapterFiles exampleAdapter(const ModelConfig &config,
                                ExampleAdapterOptions options = {}) {
  return llvm::cantFail(makeExampleAdapter(config, options));
}

/// `files` loaded for `config` through an in-memory safetensors file.
llvm::Expected<LoRAAdapter> parse(const PEFTAdapterFiles &files,
                                  const ModelConfig &config) {
  llvm::Expected<std::string> bytes = serializeSafeTensors(files.tensors);
  if (!bytes)
    return bytes.takeError();
  llvm::Expected<SafeTensorsFile> file =
      openBytes(*bytes, "adapter_model.safetensors");
  if (!file)
    return file.takeError();
  return parsePEFTAdapter(files.configJSON, "adapter_config.json", *file,
                          config);
}

/// The loader's error for `files` ("" if it loads).
std::string loadError(const PEFTAdapterFiles &files,
                      const ModelConfig &config) {
  llvm::Expected<LoRAAdapter> adapter = parse(files, config);
  return errorText(adapter);
}

/// `files` with adapter_config.json's `key` set (or removed).
PEFTAdapterFiles withConfigKey(PEFTAdapterFiles files, llvm::StringRef key,
                               std::optional<llvm::json::Value> value) {
  files.configJSON = withKey(files.configJSON, key, std::move(value));
  return files;
}

/// `files` without the tensors whose names contain `substring`.
PEFTAdapterFiles without(PEFTAdapterFiles files, llvm::StringRef substring) {
  llvm::erase_if(files.tensors, [&](const SafeTensor &t) {
    return llvm::StringRef(t.name).contains(substring);
  });
  return files;
}

/// A temporary folder, removed with its files at the end of the scope.
struct TempDir {
  llvm::SmallString<128> path;
  TempDir() {
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("peft-adapter", path));
  }
  ~TempDir() { llvm::sys::fs::remove_directories(path); }
  std::string file(llvm::StringRef name) const {
    llvm::SmallString<128> p(path);
    llvm::sys::path::append(p, name);
    return p.str().str();
  }
};

TEST(PEFTAdapter, KeysFollowPEFT) {
  EXPECT_EQ(peftLoRAKey("model.layers.3.self_attn.q_proj.weight", true),
            "base_model.model.model.layers.3.self_attn.q_proj.lora_A.weight");
  EXPECT_EQ(peftLoRAKey("model.tracks.1.layers.0.self_attn.o_proj.weight",
                        false),
            "base_model.model.model.tracks.1.layers.0.self_attn.o_proj."
            "lora_B.weight");
}

TEST(PEFTAdapter, RoundTripsThroughAFolder) {
  ModelConfig config = smallConfig();
  ExampleAdapterOptions options;
  options.rank = 4;
  options.alpha = 8.0;
  options.seed = 5;
  PEFTAdapterFiles files = exampleAdapter(config, options);
  TempDir dir;
  ASSERT_FALSE(bool(writePEFTAdapter(dir.path, files)));
  llvm::Expected<LoRAAdapter> adapter = loadPEFTAdapter(dir.path, config);
  ASSERT_TRUE(bool(adapter)) << errorText(adapter);
  EXPECT_EQ(adapter->rank, 4);
  EXPECT_EQ(adapter->alpha, 8.0);
  EXPECT_EQ(adapter->scale, 2.0);
  ASSERT_EQ(adapter->pairs.size(), 8u); // 2 layers x q, k, v, o
  const char *order[] = {"q_proj", "k_proj", "v_proj", "o_proj"};
  for (size_t i = 0; i < adapter->pairs.size(); ++i) {
    const LoRATensorPair &pair = adapter->pairs[i];
    EXPECT_EQ(pair.weightName, "model.layers." + std::to_string(i / 4) +
                                   ".self_attn." + order[i % 4] + ".weight");
    // q: [16, 16]; k, v: [8, 16]; o: [16, 16].
    EXPECT_EQ(pair.inFeatures, 16);
    EXPECT_EQ(pair.outFeatures, i % 4 == 1 || i % 4 == 2 ? 8 : 16);
    std::vector<float> a = valuesOf(tensorNamed(
        files.tensors, peftLoRAKey(pair.weightName, true)));
    std::vector<float> b = valuesOf(tensorNamed(
        files.tensors, peftLoRAKey(pair.weightName, false)));
    EXPECT_EQ(pair.a, a);
    ASSERT_EQ(pair.b.size(), b.size());
    for (size_t k = 0; k < b.size(); ++k)
      EXPECT_EQ(pair.b[k], float(double(b[k]) * 2.0)) << k;
  }
  // The same options give the same bytes; another seed others.
  EXPECT_EQ(exampleAdapter(config, options).tensors[0].data,
            files.tensors[0].data);
  options.seed = 6;
  EXPECT_NE(exampleAdapter(config, options).tensors[0].data,
            files.tensors[0].data);
}

TEST(PEFTAdapter, RsloraScalesByTheSquareRootOfTheRank) {
  ModelConfig config = smallConfig();
  ExampleAdapterOptions options;
  options.rank = 4;
  options.alpha = 6.0;
  PEFTAdapterFiles files = exampleAdapter(config, options);
  llvm::Expected<LoRAAdapter> plain = parse(files, config);
  llvm::Expected<LoRAAdapter> rs =
      parse(withConfigKey(files, "use_rslora", true), config);
  ASSERT_TRUE(plain && rs) << errorText(plain) << errorText(rs);
  EXPECT_EQ(plain->scale, 1.5);
  EXPECT_EQ(rs->scale, 3.0);
  std::vector<float> b = valuesOf(files.tensors[1]);
  EXPECT_EQ(rs->pairs[0].b[0], float(double(b[0]) * 3.0));
}

TEST(PEFTAdapter, MissingKeysTakePEFTsDefaults) {
  ModelConfig config = smallConfig();
  ExampleAdapterOptions options;
  options.rank = 8;
  options.alpha = 32.0;
  PEFTAdapterFiles files = exampleAdapter(config, options);
  // LoraConfig's defaults: r 8, lora_alpha 8.
  llvm::Expected<LoRAAdapter> adapter = parse(
      withConfigKey(withConfigKey(files, "r", std::nullopt), "lora_alpha",
                    std::nullopt),
      config);
  ASSERT_TRUE(bool(adapter)) << errorText(adapter);
  EXPECT_EQ(adapter->rank, 8);
  EXPECT_EQ(adapter->alpha, 8.0);
  EXPECT_EQ(adapter->scale, 1.0);
}

TEST(PEFTAdapter, TargetsSelectProjections) {
  ModelConfig config = smallConfig();
  ExampleAdapterOptions options;
  options.targets = {"q_proj", "v_proj"};
  PEFTAdapterFiles files = exampleAdapter(config, options);
  llvm::Expected<LoRAAdapter> adapter = parse(files, config);
  ASSERT_TRUE(bool(adapter)) << errorText(adapter);
  ASSERT_EQ(adapter->pairs.size(), 4u);
  EXPECT_EQ(adapter->pairs[1].weightName,
            "model.layers.0.self_attn.v_proj.weight");
  // A dotted suffix and a regular expression select the same modules.
  EXPECT_EQ(loadError(withConfigKey(files, "target_modules",
                                    llvm::json::Array{"self_attn.q_proj",
                                                      "v_proj"}),
                      config),
            "");
  EXPECT_EQ(loadError(withConfigKey(files, "target_modules",
                                    "model\\.layers\\.[0-9]+\\.self_attn\\."
                                    "(q_proj|v_proj)"),
                      config),
            "");
  EXPECT_THAT(loadError(withConfigKey(files, "target_modules",
                                      ".*_proj"),
                        config),
              HasSubstr("it selects 'model.layers.0.mlp.gate_proj': only "
                        "the attention projections"));
  EXPECT_THAT(loadError(withConfigKey(files, "target_modules",
                                      "all-linear"),
                        config),
              HasSubstr("\"all-linear\" also adapts the MLP"));
}

TEST(PEFTAdapter, OnDeviceBlock2LayersHaveNoKV) {
  ModelConfig config = llvm::cantFail(examplePresetConfig("tiny-on-device"));
  llvm::Expected<LoRAAdapter> adapter =
      parse(exampleAdapter(config), config);
  ASSERT_TRUE(bool(adapter)) << errorText(adapter);
  int64_t block1 = block1Layers(config), layers = config.numHiddenLayers;
  EXPECT_EQ(int64_t(adapter->pairs.size()),
            4 * block1 + 2 * (layers - block1));
}

TEST(PEFTAdapter, PTMoEAdaptsEveryTrack) {
  ModelConfig config = llvm::cantFail(examplePresetConfig("tiny-pt-moe"));
  llvm::Expected<LoRAAdapter> adapter =
      parse(exampleAdapter(config), config);
  ASSERT_TRUE(bool(adapter)) << errorText(adapter);
  EXPECT_EQ(int64_t(adapter->pairs.size()),
            4 * config.numTracks * config.numHiddenLayers);
  EXPECT_EQ(adapter->pairs[0].weightName,
            "model.tracks.0.layers.0.self_attn.q_proj.weight");
  EXPECT_EQ(adapter->pairs.back().weightName,
            "model.tracks." + std::to_string(config.numTracks - 1) +
                ".layers." + std::to_string(config.numHiddenLayers - 1) +
                ".self_attn.o_proj.weight");
}

TEST(PEFTAdapter, LayersToTransformSelectsLayers) {
  ModelConfig config = smallConfig();
  PEFTAdapterFiles files = exampleAdapter(config);
  PEFTAdapterFiles layer0 = withConfigKey(without(files, "layers.1."),
                                          "layers_to_transform",
                                          llvm::json::Array{0});
  llvm::Expected<LoRAAdapter> adapter = parse(layer0, config);
  ASSERT_TRUE(bool(adapter)) << errorText(adapter);
  EXPECT_EQ(adapter->pairs.size(), 4u);
  EXPECT_THAT(loadError(withConfigKey(files, "layers_to_transform",
                                      llvm::json::Array{0}),
                        config),
              HasSubstr("tensor 'base_model.model.model.layers.1.self_attn."
                        "q_proj.lora_A.weight': adapts "
                        "'model.layers.1.self_attn.q_proj', which "
                        "target_modules (and layers_to_transform)"));
  EXPECT_THAT(loadError(withConfigKey(files, "layers_to_transform",
                                      llvm::json::Array{2}),
                        config),
              HasSubstr("key 'layers_to_transform': layer 2 does not exist"));
}

TEST(PEFTAdapter, RefusesUnsupportedConfigKeys) {
  ModelConfig config = smallConfig();
  PEFTAdapterFiles files = exampleAdapter(config);
  auto error = [&](llvm::StringRef key, llvm::json::Value value) {
    return loadError(withConfigKey(files, key, std::move(value)), config);
  };
  EXPECT_THAT(error("target_modules", llvm::json::Array{"q_proj", "gate_proj"}),
              HasSubstr("adapter_config.json: key 'target_modules': module "
                        "'gate_proj' cannot be adapted: only the attention "
                        "projections q_proj, k_proj, v_proj and o_proj"));
  EXPECT_THAT(error("lora_magic", 1),
              HasSubstr("key 'lora_magic': unknown key"));
  EXPECT_THAT(error("r", 0), HasSubstr("key 'r': the rank must be an integer "
                                       "between 1 and 256, got 0"));
  EXPECT_THAT(error("r", 300), HasSubstr("key 'r'"));
  EXPECT_THAT(error("lora_alpha", -1),
              HasSubstr("key 'lora_alpha': expected a positive finite"));
  EXPECT_THAT(error("peft_type", "IA3"), HasSubstr("key 'peft_type'"));
  EXPECT_THAT(error("bias", "all"),
              HasSubstr("key 'bias': value \"all\" is not supported"));
  EXPECT_THAT(error("fan_in_fan_out", true), HasSubstr("key 'fan_in_fan_out'"));
  EXPECT_THAT(error("use_dora", true), HasSubstr("key 'use_dora'"));
  EXPECT_THAT(error("rank_pattern", llvm::json::Object{{"q_proj", 4}}),
              HasSubstr("key 'rank_pattern': must be null or empty"));
  EXPECT_THAT(error("alpha_pattern", llvm::json::Object{{"q_proj", 4}}),
              HasSubstr("key 'alpha_pattern'"));
  EXPECT_THAT(error("modules_to_save", llvm::json::Array{"lm_head"}),
              HasSubstr("key 'modules_to_save'"));
  EXPECT_THAT(error("layer_replication",
                    llvm::json::Array{llvm::json::Array{0, 2}}),
              HasSubstr("key 'layer_replication'"));
  EXPECT_THAT(error("init_lora_weights", "pissa"),
              HasSubstr("changes the base weights"));
  EXPECT_THAT(error("layers_pattern", "h"), HasSubstr("key 'layers_pattern'"));
  EXPECT_THAT(loadError(withConfigKey(files, "target_modules", std::nullopt),
                        config),
              HasSubstr("missing required key 'target_modules'"));
  // Irrelevant keys of a real adapter_config.json load.
  PEFTAdapterFiles saved = files;
  for (auto [key, value] :
       {std::pair<const char *, llvm::json::Value>{"lora_dropout", 0.05},
        {"megatron_core", "megatron.core"},
        {"loftq_config", llvm::json::Object{}},
        {"revision", nullptr},
        {"modules_to_save", nullptr},
        {"layers_to_transform", nullptr},
        {"rank_pattern", llvm::json::Object{}},
        {"init_lora_weights", true}})
    saved = withConfigKey(saved, key, value);
  EXPECT_EQ(loadError(saved, config), "");
}

TEST(PEFTAdapter, RefusesTensorsThatDoNotFit) {
  ModelConfig config = smallConfig();
  PEFTAdapterFiles files = exampleAdapter(config);
  // A module the config does not target.
  EXPECT_THAT(
      loadError(withConfigKey(files, "target_modules",
                              llvm::json::Array{"q_proj", "k_proj", "v_proj"}),
                config),
      HasSubstr("adapter_model.safetensors: tensor "
                "'base_model.model.model.layers.0.self_attn.o_proj.lora_A."
                "weight': adapts 'model.layers.0.self_attn.o_proj', which "
                "target_modules"));
  // A targeted projection without tensors in one layer.
  EXPECT_THAT(loadError(without(files, "layers.1.self_attn.k_proj"), config),
              HasSubstr("no tensors for 'model.layers.1.self_attn.k_proj' "
                        "(layer 1), which target_modules"));
  // An A without its B.
  EXPECT_THAT(loadError(without(files, "layers.0.self_attn.v_proj.lora_B"),
                        config),
              HasSubstr("tensor 'base_model.model.model.layers.0.self_attn."
                        "v_proj.lora_A.weight': has no lora_B factor"));
  // Keys of no attention projection of this model.
  PEFTAdapterFiles extra = files;
  extra.tensors.push_back(SafeTensor::fromF32(
      "base_model.model.model.layers.0.mlp.gate_proj.lora_A.weight", {8, 16},
      std::vector<float>(128, 0.0f)));
  EXPECT_THAT(loadError(extra, config),
              HasSubstr("mlp.gate_proj.lora_A.weight': adapts no attention "
                        "projection"));
  extra = files;
  extra.tensors.push_back(SafeTensor::fromF32(
      "base_model.model.model.layers.7.self_attn.q_proj.lora_A.weight",
      {8, 16}, std::vector<float>(128, 0.0f)));
  EXPECT_THAT(loadError(extra, config),
              HasSubstr("layers.7.self_attn.q_proj.lora_A.weight': adapts no "
                        "attention projection"));
  extra = files;
  extra.tensors.push_back(
      SafeTensor::fromF32("model.layers.0.self_attn.q_proj.lora_A.weight",
                          {1}, std::vector<float>(1, 0.0f)));
  EXPECT_THAT(loadError(extra, config),
              HasSubstr("expected the prefix 'base_model.model.'"));
  // Shapes of another model: hidden size 32 instead of 16.
  ModelConfig wider = config;
  wider.hiddenSize = 32;
  wider.headDim = 8;
  EXPECT_THAT(loadError(exampleAdapter(wider), config),
              HasSubstr("self_attn.q_proj.lora_A.weight': shape [8, 32], "
                        "expected [8, 16] (A [r, in] with r = 8, in = 16"));
  // A rank other than r.
  EXPECT_THAT(loadError(withConfigKey(files, "r", 4), config),
              HasSubstr("shape [8, 16], expected [4, 16]"));
  // A non-finite value.
  PEFTAdapterFiles nan = files;
  std::vector<float> values = valuesOf(nan.tensors[1]);
  values[5] = NAN;
  setValues(nan.tensors[1], values);
  EXPECT_THAT(loadError(nan, config),
              HasSubstr("q_proj.lora_B.weight': element 5 is not finite"));
}

TEST(PEFTAdapter, ReadsHalfPrecisionAndRefusesOtherDtypes) {
  ModelConfig config = smallConfig();
  TempDir dir;
  PEFTAdapterFiles files = exampleAdapter(config);
  // F16 and BF16 factors are widened exactly.
  for (DType dtype : {DType::F16, DType::BF16}) {
    PEFTAdapterFiles half = files;
    for (SafeTensor &tensor : half.tensors) {
      std::vector<float> values = valuesOf(tensor);
      tensor.dtype = dtype;
      tensor.data.clear();
      for (float v : values) {
        uint16_t bits = dtype == DType::F16 ? f32ToF16(v) : f32ToBF16(v);
        tensor.data.push_back(uint8_t(bits & 0xff));
        tensor.data.push_back(uint8_t(bits >> 8));
      }
    }
    llvm::Expected<LoRAAdapter> adapter = parse(half, config);
    ASSERT_TRUE(bool(adapter)) << errorText(adapter);
    float a0 = valuesOf(files.tensors[0])[0];
    EXPECT_EQ(adapter->pairs[0].a[0],
              dtype == DType::F16 ? f16ToF32(f32ToF16(a0))
                                  : bf16ToF32(f32ToBF16(a0)));
  }
  ASSERT_FALSE(bool(writePEFTAdapter(dir.path, files)));
  // An integer dtype.
  std::string header =
      R"({"base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight":)"
      R"({"dtype":"I8","shape":[1],"data_offsets":[0,1]}})";
  {
    std::error_code ec;
    llvm::raw_fd_ostream out(dir.file(kPEFTWeightsName), ec);
    ASSERT_FALSE(ec);
    out << rawSafeTensors(header, std::string(1, '\0'));
  }
  llvm::Expected<LoRAAdapter> adapter = loadPEFTAdapter(dir.path, config);
  std::string message = errorText(adapter);
  EXPECT_THAT(message, HasSubstr("adapter_model.safetensors"));
  EXPECT_THAT(message, HasSubstr("dtype 'I8'"));
  // A missing weights file, a missing config, no folder.
  llvm::sys::fs::remove(dir.file(kPEFTWeightsName));
  adapter = loadPEFTAdapter(dir.path, config);
  EXPECT_THAT(errorText(adapter),
              HasSubstr("adapter_model.safetensors: no such file"));
  llvm::sys::fs::remove(dir.file(kPEFTConfigName));
  adapter = loadPEFTAdapter(dir.path, config);
  EXPECT_THAT(errorText(adapter),
              HasSubstr("adapter_config.json: cannot read"));
  adapter = loadPEFTAdapter(dir.file("none"), config);
  EXPECT_THAT(errorText(adapter), HasSubstr("not an adapter folder"));
}

TEST(PEFTAdapter, ExampleTermIsAFifthOfTheProjection) {
  for (llvm::StringRef preset : {"tiny-dense", "tiny-pt-moe"}) {
    ModelConfig config = llvm::cantFail(examplePresetConfig(preset));
    std::vector<SafeTensor> weights = generateExampleWeights(config, 0);
    for (int64_t rank : {4, 32}) {
      ExampleAdapterOptions options;
      options.rank = rank;
      LoRAAdapter adapter =
          llvm::cantFail(parse(exampleAdapter(config, options), config));
      SplitMix64 rng(7);
      double termSquares = 0.0, baseSquares = 0.0;
      for (const LoRATensorPair &pair : adapter.pairs) {
        std::vector<float> x(pair.inFeatures);
        for (float &v : x)
          v = float(rng.nextNormal());
        std::vector<float> base =
            reference::linear(x, valuesOf(tensorNamed(weights,
                                                      pair.weightName)));
        std::vector<float> term =
            reference::linear(reference::linear(x, pair.a), pair.b);
        for (size_t i = 0; i < base.size(); ++i) {
          baseSquares += double(base[i]) * base[i];
          termSquares += double(term[i]) * term[i];
        }
      }
      double ratio = std::sqrt(termSquares / baseSquares);
      EXPECT_GT(ratio, 0.1) << preset.str() << " rank " << rank;
      EXPECT_LT(ratio, 0.3) << preset.str() << " rank " << rank;
    }
  }
}

TEST(PEFTAdapter, GeneratorRefusesBadOptions) {
  ModelConfig config = smallConfig();
  ExampleAdapterOptions options;
  options.targets = {"gate_proj"};
  EXPECT_THAT(errorText(makeExampleAdapter(config, options).takeError()),
              HasSubstr("only the attention projections"));
  options = {};
  options.rank = 0;
  EXPECT_THAT(errorText(makeExampleAdapter(config, options).takeError()),
              HasSubstr("between 1 and 256"));
}

/// The weights `tensors` with `adapter` merged into them here, in double:
/// an implementation apart from ReferenceModel::applyAdapter.
std::vector<SafeTensor> mergedWeights(std::vector<SafeTensor> tensors,
                                      const LoRAAdapter &adapter) {
  for (const LoRATensorPair &pair : adapter.pairs) {
    SafeTensor &weight = tensorNamed(tensors, pair.weightName);
    std::vector<float> w = valuesOf(weight);
    int64_t r = adapter.rank;
    for (int64_t o = 0; o < pair.outFeatures; ++o)
      for (int64_t i = 0; i < pair.inFeatures; ++i) {
        double ba = 0.0;
        for (int64_t k = 0; k < r; ++k)
          ba += double(pair.b[o * r + k]) * pair.a[k * pair.inFeatures + i];
        w[o * pair.inFeatures + i] =
            float(double(w[o * pair.inFeatures + i]) + ba);
      }
    setValues(weight, w);
  }
  return tensors;
}

TEST(PEFTAdapter, ReferenceMergesTheAdapterIntoF32Weights) {
  ModelConfig config = smallConfig();
  std::vector<SafeTensor> weights = generateExampleWeights(config, 1);
  LoRAAdapter adapter = llvm::cantFail(parse(exampleAdapter(config), config));
  std::vector<int32_t> tokens = {3, 1, 4, 1, 5};
  std::vector<float> base = logitsWith(config, weights, tokens);
  std::vector<float> merged =
      logitsWith(config, mergedWeights(weights, adapter), tokens);
  llvm::Expected<ReferenceModel> model = modelWith(config, weights);
  ASSERT_TRUE(bool(model)) << errorText(model);
  ASSERT_FALSE(bool(model->applyAdapter(adapter)));
  std::vector<float> adapted = llvm::cantFail(model->forward(tokens));
  double scale = maxAbs(merged);
  EXPECT_LE(maxAbsDiff(adapted, merged), 1e-5 * scale);
  EXPECT_GT(maxAbsDiff(adapted, base), 1e-2 * scale)
      << "the adapter changes the logits visibly";
  // A second adapter is refused.
  EXPECT_THAT(errorText(model->applyAdapter(adapter)),
              HasSubstr("an adapter is already applied"));
}

TEST(PEFTAdapter, ReferenceMergesOnEveryArchitecture) {
  for (llvm::StringRef preset : {"tiny-on-device", "tiny-pt-moe"}) {
    ModelConfig config = llvm::cantFail(examplePresetConfig(preset));
    std::vector<SafeTensor> weights = generateExampleWeights(config, 2);
    ExampleAdapterOptions options;
    options.rank = 4;
    options.targets = {"q_proj", "v_proj", "o_proj"};
    LoRAAdapter adapter =
        llvm::cantFail(parse(exampleAdapter(config, options), config));
    std::vector<int32_t> tokens = {7, 70, 200, 1};
    std::vector<float> merged =
        logitsWith(config, mergedWeights(weights, adapter), tokens);
    llvm::Expected<ReferenceModel> model = modelWith(config, weights);
    ASSERT_TRUE(bool(model)) << errorText(model);
    ASSERT_FALSE(bool(model->applyAdapter(adapter)));
    std::vector<float> adapted = llvm::cantFail(model->forward(tokens));
    EXPECT_LE(maxAbsDiff(adapted, merged), 1e-5 * maxAbs(merged))
        << preset.str();
  }
}

TEST(PEFTAdapter, ReferenceKeepsTheTermApartWithInt8Activations) {
  ModelConfig config = smallConfig();
  config.linearWeightFormat = LinearWeightFormat::Q2;
  config.int8Activations = true;
  std::vector<SafeTensor> weights = generateExampleWeights(config, 1);
  LoRAAdapter adapter = llvm::cantFail(parse(exampleAdapter(config), config));
  std::vector<int32_t> tokens = {3, 1, 4, 1, 5};
  llvm::Expected<ReferenceModel> model = modelWith(config, weights);
  ASSERT_TRUE(bool(model)) << errorText(model);
  ASSERT_FALSE(bool(model->applyAdapter(adapter)));
  std::vector<float> adapted = llvm::cantFail(model->forward(tokens));
  // Merged weights would round the adapter's input too: close, not equal.
  std::vector<float> merged =
      logitsWith(config, mergedWeights(weights, adapter), tokens);
  std::vector<float> base = logitsWith(config, weights, tokens);
  EXPECT_GT(maxAbsDiff(adapted, merged), 0.0);
  EXPECT_GT(maxAbsDiff(adapted, base), 3 * maxAbsDiff(adapted, merged))
      << maxAbsDiff(adapted, base) << " vs " << maxAbsDiff(adapted, merged);
  // An adapter whose B is zero changes nothing.
  LoRAAdapter zero = adapter;
  for (LoRATensorPair &pair : zero.pairs)
    llvm::fill(pair.b, 0.0f);
  llvm::Expected<ReferenceModel> same = modelWith(config, weights);
  ASSERT_TRUE(bool(same)) << errorText(same);
  ASSERT_FALSE(bool(same->applyAdapter(zero)));
  EXPECT_EQ(llvm::cantFail(same->forward(tokens)), base);
}

TEST(PEFTAdapter, ReferenceRefusesAdaptersOfAnotherModel) {
  ModelConfig config = smallConfig();
  LoRAAdapter adapter = llvm::cantFail(parse(exampleAdapter(config), config));
  llvm::Expected<ReferenceModel> model = exampleModel(config);
  ASSERT_TRUE(bool(model)) << errorText(model);
  LoRAAdapter renamed = adapter;
  renamed.pairs[0].weightName = "model.layers.0.mlp.gate_proj.weight";
  EXPECT_THAT(errorText(model->applyAdapter(renamed)),
              HasSubstr("'model.layers.0.mlp.gate_proj.weight' is not an "
                        "attention projection"));
  LoRAAdapter resized = adapter;
  resized.pairs[1].outFeatures = 16;
  EXPECT_THAT(errorText(model->applyAdapter(resized)),
              HasSubstr("k_proj.weight' is [16, 16] with rank 8"));
  // Nothing was applied: the model still takes an adapter.
  EXPECT_FALSE(bool(model->applyAdapter(adapter)));
}

} // namespace
