//===- afm-gen-example.cpp - write a small random example model -----------===//
//
// Writes config.json and model.safetensors for a preset (or any supported
// config) with reproducible random weights: the same flags give the same
// bytes on every machine.
//
//===----------------------------------------------------------------------===//

#include "afm/Model/ExampleModel.h"
#include "afm/Model/ModelWeights.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
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

/// Refuse configs whose f32 weights would not fit comfortably in memory:
/// this tool is for small examples.
static constexpr int64_t kMaxParameters = int64_t(1) << 28;

static Expected<ModelConfig> chosenConfig() {
  if (presetName.empty() == configPath.empty())
    return createStringError("give exactly one of --preset and --config");
  if (!presetName.empty())
    return examplePresetConfig(presetName);
  return loadModelConfig(configPath);
}

/// Zeroes the tensors `--zero-tensors` names; a substring that matches no
/// tensor is an error (it is most likely a typo).
static Error applyZeroTensors(std::vector<SafeTensor> &tensors) {
  for (const std::string &substring : zeroSubstrings) {
    if (substring.empty())
      return createStringError("--zero-tensors needs a non-empty substring");
    if (zeroTensors(tensors, substring) == 0)
      return createStringError("--zero-tensors '" + substring +
                               "' matches no tensor of the model");
  }
  return Error::success();
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
      "afm-gen-example: write config.json and model.safetensors of a small "
      "example model with reproducible random weights\n");
  ExitOnError exitOnErr("afm-gen-example: error: ");

  ModelConfig config = exitOnErr(chosenConfig());
  int64_t parameters = parameterCount(config);
  if (parameters > kMaxParameters)
    exitOnErr(createStringError(
        "the config has " + Twine(parameters) + " parameters; " +
        "afm-gen-example writes examples of at most " + Twine(kMaxParameters)));
  if (sys::fs::exists(outDir) && !sys::fs::is_directory(outDir))
    exitOnErr(createStringError(outDir + ": exists and is not a directory"));
  if (std::error_code ec = sys::fs::create_directories(outDir))
    exitOnErr(createStringError(outDir + ": cannot create: " + ec.message()));

  SmallString<256> path(outDir);
  sys::path::append(path, "config.json");
  exitOnErr(writeText(path, toJSON(config)));
  sys::path::remove_filename(path);
  sys::path::append(path, "model.safetensors");
  std::vector<SafeTensor> tensors = generateExampleWeights(config, seed);
  exitOnErr(applyZeroTensors(tensors));
  exitOnErr(writeSafeTensors(path, tensors,
                             {{"generator", "afm-gen-example"},
                              {"seed", std::to_string(seed)}}));
  return 0;
}
