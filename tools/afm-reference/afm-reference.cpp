//===- afm-reference.cpp - run a model with the reference evaluator -------===//
//
// Greedy decoding with the plain C++ reference model, following the same
// protocol as the runtime's afm-run so that tokens and logits compare:
//   prefill(prompt) -> L0, t1 = argmax(L0)
//   for k = 1..N: decode(t_k) -> L_k, t_{k+1} = argmax(L_k)
// Prints "tokens: t1 ... t_{N+1}"; --logits-out writes L0..LN as raw
// little-endian f32.
//
//===----------------------------------------------------------------------===//

#include "afm/Model/ModelConfig.h"
#include "afm/Model/SafeTensors.h"
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
                                       cl::value_desc("file"), cl::Required,
                                       cl::cat(category));
static cl::opt<std::string>
    weightsPath("weights", cl::desc("The model's .safetensors weights"),
                cl::value_desc("file"), cl::Required, cl::cat(category));
static cl::opt<std::string>
    prompt("prompt", cl::desc("Comma-separated prompt token ids, e.g. 1,2,3"),
           cl::value_desc("ids"), cl::Required, cl::cat(category));
static cl::opt<unsigned>
    decodeSteps("decode",
                cl::desc("Greedy decode steps N after the prompt (prints N+1 "
                         "tokens; default 0)"),
                cl::value_desc("N"), cl::init(0), cl::cat(category));
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

  ModelConfig config = exitOnErr(loadModelConfig(configPath));
  SafeTensorsFile weights = exitOnErr(SafeTensorsFile::open(weightsPath));
  ReferenceModel model = exitOnErr(ReferenceModel::create(config, weights));
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
