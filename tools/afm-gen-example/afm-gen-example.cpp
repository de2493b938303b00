//===- afm-gen-example.cpp - write a small random example model -----------===//
//
// Writes config.json and model.safetensors for a preset (or any supported
// config) with reproducible random weights: the same flags give the same
// bytes on every machine. With --adapter-rank it writes a LoRA adapter for
// that model instead, as a PEFT folder (adapter_config.json and
// adapter_model.safetensors), also reproducibly.
//
//===----------------------------------------------------------------------===//

#include "afm/TestModels/ExampleModel.h"
#include "afm/TestModels/HFExampleModel.h"
#include "afm/Model/ModelWeights.h"
#include "afm/Model/PEFTAdapter.h"
#include "afm/Support/Progress.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Parallel.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace mlir::afm;

static cl::OptionCategory category("afm-gen-example options");

/// cl::desc keeps a StringRef: the text must outlive the option.
static const std::string presetHelp =
    "Example config to generate (" + join(examplePresetNames(), ", ") + ")";
static cl::opt<std::string> presetName("preset", cl::desc(presetHelp),
                                       cl::value_desc("name"),
                                       cl::cat(category));
static cl::opt<std::string>
    configPath("config",
               cl::desc("Generate weights for this config.json instead of "
                        "a preset"),
               cl::value_desc("file"), cl::cat(category));
static cl::opt<std::string>
    outDir("out-dir",
           cl::desc("Directory for config.json and model.safetensors "
                    "(created if missing)"),
           cl::value_desc("dir"), cl::Required, cl::cat(category));
static cl::opt<uint64_t> seed("seed", cl::desc("Random seed (default 0)"),
                              cl::value_desc("N"), cl::init(0),
                              cl::cat(category));
static cl::list<std::string> zeroSubstrings(
    "zero-tensors",
    cl::desc("Make every tensor whose name contains this substring all "
             "zeros, the others unchanged (repeatable)"),
    cl::value_desc("substring"), cl::cat(category));

static const std::string hfHelp =
    "Write a Hugging Face model folder of this family instead (" +
    join(hfExampleFamilies(), ", ") +
    "): config.json as published, generation_config.json, BF16 weights";
static cl::opt<std::string> hfFamily("hf-family", cl::desc(hfHelp),
                                     cl::value_desc("family"),
                                     cl::cat(category));
static cl::opt<int64_t> hfVocabSize(
    "vocab-size",
    cl::desc("With --hf-family: the vocabulary size instead of 256, e.g. a "
             "real tokenizer.json's, to put that tokenizer in the folder"),
    cl::value_desc("N"), cl::cat(category));
static cl::opt<int64_t> hfShards(
    "shards",
    cl::desc("With --hf-family: split the weights into this many shards "
             "with model.safetensors.index.json (default 1: "
             "model.safetensors)"),
    cl::value_desc("N"), cl::init(1), cl::cat(category));

static cl::opt<bool> configOnly(
    "config-only",
    cl::desc("Write config.json only and print the parameter count and the "
             "size of the F32 weights"),
    cl::cat(category));

static cl::opt<int64_t> adapterRank(
    "adapter-rank",
    cl::desc("Write a random LoRA adapter of this rank (1..256) for the "
             "model of --preset or --config instead of its weights: a PEFT "
             "folder with adapter_config.json and adapter_model.safetensors "
             "(F32); both factors random, the adapter's term about 20% of a "
             "projection's output"),
    cl::value_desc("R"), cl::cat(category));
static cl::opt<double> adapterAlpha(
    "adapter-alpha",
    cl::desc("With --adapter-rank: lora_alpha (default: the rank)"),
    cl::value_desc("A"), cl::cat(category));
static cl::list<std::string> adapterTargets(
    "adapter-targets",
    cl::desc("With --adapter-rank: the projections to adapt, a subset of "
             "q_proj,k_proj,v_proj,o_proj (default: all four)"),
    cl::value_desc("list"), cl::CommaSeparated, cl::cat(category));
static cl::opt<bool> adapterRslora(
    "adapter-rslora",
    cl::desc("With --adapter-rank: use_rslora (scale alpha / sqrt(rank) "
             "instead of alpha / rank)"),
    cl::cat(category));

static Expected<ModelConfig> chosenConfig() {
  if (presetName.empty() == configPath.empty())
    return createStringError("give exactly one of --preset and --config");
  if (!presetName.empty())
    return examplePresetConfig(presetName);
  return loadModelConfig(configPath);
}

/// Whether `--zero-tensors` makes tensor `name` all zeros. A substring that
/// matches no tensor is an error (it is most likely a typo).
static Expected<std::vector<bool>>
zeroedTensors(ArrayRef<ExampleTensorPlan> plans) {
  std::vector<bool> zeroed(plans.size(), false);
  for (const std::string &substring : zeroSubstrings) {
    if (substring.empty())
      return createStringError("--zero-tensors needs a non-empty substring");
    bool matched = false;
    for (size_t i = 0; i < plans.size(); ++i)
      if (StringRef(plans[i].name).contains(substring))
        zeroed[i] = matched = true;
    if (!matched)
      return createStringError("--zero-tensors '" + substring +
                               "' matches no tensor of the model");
  }
  return zeroed;
}

/// Generates the weights of `config` tensor by tensor, in pieces generated
/// on every core, and streams them to `path`: memory stays at a few pieces
/// whatever the model's size.
static Error writeWeights(StringRef path, const ModelConfig &config) {
  std::vector<ExampleTensorPlan> plans = planExampleTensors(config);
  Expected<std::vector<bool>> zeroed = zeroedTensors(plans);
  if (!zeroed)
    return zeroed.takeError();
  std::vector<SafeTensorSpec> specs;
  uint64_t totalBytes = 0;
  for (const ExampleTensorPlan &plan : plans) {
    specs.push_back({plan.name, DType::F32, plan.shape});
    totalBytes += 4 * uint64_t(plan.numElements());
  }
  auto writer = SafeTensorsStreamWriter::create(
      path, std::move(specs),
      {{"generator", "afm-gen-example"}, {"seed", std::to_string(seed)}});
  if (!writer)
    return writer.takeError();
  // Pieces of 1M values, 16 of them per batch written at once.
  constexpr int64_t kPiece = int64_t(1) << 20, kBatch = 16 * kPiece;
  std::vector<float> batch;
  afm::TerminalProgress progress("afm-gen-example", totalBytes, "GB");
  uint64_t done = 0;
  for (size_t i = 0; i < plans.size(); ++i) {
    const ExampleTensorPlan &plan = plans[i];
    for (int64_t begin = 0; begin < plan.numElements(); begin += kBatch) {
      int64_t count = std::min(kBatch, plan.numElements() - begin);
      batch.assign(count, 0.0f); // All-zero bytes are +0.0f.
      if (!(*zeroed)[i])
        parallelFor(0, (count + kPiece - 1) / kPiece, [&](size_t piece) {
          int64_t first = int64_t(piece) * kPiece;
          generateExampleValues(
              plan, seed, begin + first,
              MutableArrayRef<float>(batch).slice(
                  first, std::min(kPiece, count - first)));
        });
      if (Error err = (*writer)->append(ArrayRef<uint8_t>(
              reinterpret_cast<const uint8_t *>(batch.data()), 4 * count)))
        return err;
      done += 4 * uint64_t(count);
      progress.update(plan.name, done);
    }
  }
  progress.finish();
  return (*writer)->finish();
}

static Error writeText(StringRef path, StringRef text) {
  std::error_code ec;
  raw_fd_ostream out(path, ec, sys::fs::OF_Text);
  if (ec)
    return createStringError(path + ": cannot write: " + ec.message());
  out << text;
  out.close();
  if (out.has_error())
    return createStringError(path + ": cannot write: " + out.error().message());
  return Error::success();
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "afm-gen-example: write config.json and model.safetensors of an "
      "example model with reproducible random weights, or (--adapter-rank) "
      "a LoRA adapter for it in PEFT's layout\n\n"
      "The weights are generated tensor by tensor on every core and streamed "
      "to disk, so models larger than memory can be written (the paper-size "
      "presets take 6-12 GB of F32).\n");
  ExitOnError exitOnErr("afm-gen-example: error: ");

  if (!hfFamily.empty()) {
    if (!presetName.empty() || !configPath.empty() || configOnly)
      exitOnErr(createStringError("--hf-family goes without --preset, "
                                  "--config and --config-only"));
    std::optional<int64_t> vocab;
    if (hfVocabSize.getNumOccurrences())
      vocab = hfVocabSize;
    exitOnErr(writeHFExampleFolder(outDir, hfFamily, hfShards, seed,
                                   zeroSubstrings, vocab));
    return 0;
  }
  if (hfShards.getNumOccurrences() || hfVocabSize.getNumOccurrences())
    exitOnErr(createStringError("--shards and --vocab-size go with "
                                "--hf-family"));

  bool adapter = adapterRank.getNumOccurrences() > 0;
  if (!adapter && (adapterAlpha.getNumOccurrences() ||
                   adapterTargets.getNumOccurrences() ||
                   adapterRslora.getNumOccurrences()))
    exitOnErr(createStringError("--adapter-alpha, --adapter-targets and "
                                "--adapter-rslora go with --adapter-rank"));
  if (adapter && (configOnly || !zeroSubstrings.empty()))
    exitOnErr(createStringError("--adapter-rank goes without --config-only "
                                "and --zero-tensors"));
  ModelConfig config = exitOnErr(chosenConfig());
  if (adapter) {
    ExampleAdapterOptions options;
    options.rank = adapterRank;
    options.alpha = adapterAlpha.getNumOccurrences() ? double(adapterAlpha)
                                                     : 0.0;
    if (adapterAlpha.getNumOccurrences() && !(adapterAlpha > 0.0))
      exitOnErr(createStringError("--adapter-alpha must be positive"));
    if (!adapterTargets.empty())
      options.targets.assign(adapterTargets.begin(), adapterTargets.end());
    options.useRslora = adapterRslora;
    options.seed = seed;
    options.baseModelName = presetName.empty()
                                ? std::string(configPath)
                                : "afm-example/" + presetName;
    PEFTAdapterFiles files = exitOnErr(makeExampleAdapter(config, options));
    exitOnErr(writePEFTAdapter(outDir, files));
    return 0;
  }
  if (sys::fs::exists(outDir) && !sys::fs::is_directory(outDir))
    exitOnErr(createStringError(outDir + ": exists and is not a directory"));
  if (std::error_code ec = sys::fs::create_directories(outDir))
    exitOnErr(createStringError(outDir + ": cannot create: " + ec.message()));

  SmallString<256> path(outDir);
  sys::path::append(path, "config.json");
  exitOnErr(writeText(path, toJSON(config)));
  if (configOnly) {
    int64_t parameters = parameterCount(config);
    outs() << formatv("{0} parameters, {1:f2} GB of F32 weights\n",
                      parameters, 4e-9 * double(parameters));
    return 0;
  }
  sys::path::remove_filename(path);
  sys::path::append(path, "model.safetensors");
  exitOnErr(writeWeights(path, config));
  return 0;
}
