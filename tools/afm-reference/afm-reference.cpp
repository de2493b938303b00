//===- afm-reference.cpp - run a model with the reference evaluator -------===//
//
// Greedy decoding with the plain C++ reference model, following the same
// protocol as the runtime's afm-run so that tokens and logits compare:
//   prefill(prompt) -> L0, t1 = argmax(L0)
//   for k = 1..N: decode(t_k) -> L_k, t_{k+1} = argmax(L_k)
// Prints "tokens: t1 ... t_{N+1}"; --logits-out writes L0..LN as raw
// little-endian f32. --adapter applies a PEFT LoRA adapter folder to the
// base weights first (merged with f32 activations, a separate term with
// int8 activations; docs/semantics.md section 4.1).
//
//===----------------------------------------------------------------------===//

#include "afm/Model/HFConfig.h"
#include "afm/Model/ModelConfig.h"
#include "afm/Model/PEFTAdapter.h"
#include "afm/Model/WeightSource.h"
#include "afm/Reference/Greedy.h"
#include "afm/Reference/Logits.h"
#include "afm/Reference/ReferenceModel.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace mlir::afm;

static cl::OptionCategory category("afm-reference options");

static cl::opt<std::string> configPath("config",
                                       cl::desc("The model's config.json"),
                                       cl::value_desc("file"),
                                       cl::cat(category));
static cl::opt<std::string> weightsPath(
    "weights",
    cl::desc("The model's weights (with --config): a .safetensors file, or "
             "the model.safetensors.index.json of a sharded checkpoint"),
    cl::value_desc("file"), cl::cat(category));
static cl::opt<std::string> modelDir(
    "model",
    cl::desc("A Hugging Face model folder (model_type llama, mistral, qwen2, qwen3, qwen3_moe or "
             "gemma3_text) "
             "instead of --config and --weights, read as afm-compile "
             "--model reads it"),
    cl::value_desc("dir"), cl::cat(category));
static cl::opt<int64_t> contextLength(
    "context",
    cl::desc("With --model: the context in tokens (default: the model's "
             "max_position_embeddings, at most 4096), as afm-compile's"),
    cl::value_desc("N"), cl::cat(category));
static cl::opt<std::string>
    prompt("prompt", cl::desc("Comma-separated prompt token ids, e.g. 1,2,3"),
           cl::value_desc("ids"), cl::Required, cl::cat(category));
static cl::opt<unsigned>
    decodeSteps("decode",
                cl::desc("Greedy decode steps N after the prompt (prints N+1 "
                         "tokens; default 0)"),
                cl::value_desc("N"), cl::init(0), cl::cat(category));
static cl::opt<int64_t> draftLayers(
    "draft-layers",
    cl::desc("Evaluate only the first N layers (then the final norm and the "
             "LM head), as afm-compile --draft-layers builds an early-exit "
             "draft"),
    cl::value_desc("N"), cl::init(0), cl::cat(category));
static cl::opt<std::string> adapterDir(
    "adapter",
    cl::desc("Apply this LoRA adapter (a PEFT folder: adapter_config.json and "
             "adapter_model.safetensors, on q/k/v/o_proj) to the base weights"),
    cl::value_desc("dir"), cl::cat(category));
static cl::opt<std::string> logitsOut(
    "logits-out",
    cl::desc("Write the logits of the N+1 steps as raw little-endian f32"),
    cl::value_desc("file"), cl::cat(category));

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "afm-reference: greedy decoding with the plain C++ reference model\n");
  ExitOnError exitOnErr("afm-reference: error: ");

  bool fromFolder = !modelDir.empty() && configPath.empty() && weightsPath.empty();
  bool fromFiles = modelDir.empty() && !configPath.empty() && !weightsPath.empty();
  if (!fromFolder && !fromFiles)
    exitOnErr(createStringError("give --model DIR, or --config FILE and "
                                "--weights FILE"));
  if (modelDir.empty() && contextLength.getNumOccurrences())
    exitOnErr(createStringError("--context goes with --model"));
  ModelConfig config;
  std::string weightsAt = weightsPath;
  if (!modelDir.empty()) {
    HFLoadOptions options;
    if (contextLength.getNumOccurrences())
      options.context = contextLength;
    HFModelFolder folder = exitOnErr(loadHFModelFolder(modelDir, options));
    config = folder.config;
    weightsAt = folder.weightsPath;
  } else {
    config = exitOnErr(loadModelConfig(configPath));
  }
  if (!adapterDir.empty() && draftLayers.getNumOccurrences())
    exitOnErr(createStringError("--adapter does not go with --draft-layers"));
  if (draftLayers.getNumOccurrences())
    config = exitOnErr(earlyExitConfig(config, draftLayers));
  WeightSource weights = exitOnErr(WeightSource::open(weightsAt));
  ReferenceModel model = exitOnErr(ReferenceModel::create(
      config, weights, /*allowUnused=*/draftLayers.getNumOccurrences() > 0));
  if (!adapterDir.empty())
    exitOnErr(
        model.applyAdapter(exitOnErr(loadPEFTAdapter(adapterDir, config))));
  std::vector<int32_t> tokens = exitOnErr(parseTokenList(prompt));
  GreedyResult result = exitOnErr(greedyDecode(model, tokens, decodeSteps));

  if (!logitsOut.empty())
    exitOnErr(writeLogitsFile(logitsOut, result.logits));
  outs() << "tokens: " << join(map_range(result.tokens,
                                         [](int32_t t) {
                                           return std::to_string(t);
                                         }),
                               " ")
         << "\n";
  return 0;
}
