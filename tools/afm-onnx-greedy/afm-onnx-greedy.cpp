//===- afm-onnx-greedy.cpp - greedy decoding of an ONNX decoder -----------===//
//
// Imports a static-shape ONNX decoder (input_ids int64 [1, S] -> logits
// float [1, S, V]), compiles it for the host, and runs afm-reference's
// greedy protocol on it as scripts/ort-greedy.js does with ONNX Runtime:
// the prompt gives L_0 and t_1 = argmax(L_0); decode step k = 1..N feeds
// t_k and gives L_k and t_{k+1}. Each run takes the whole S-slot sequence
// (prompt and tokens so far, padded with token 0) and L_k is the row of
// the last filled position. Writes L_0..L_N as raw f32 (for afm-compare)
// and t_1..t_{N+1}.
//
//===----------------------------------------------------------------------===//

#include "afm/CodeGen/ObjectEmitter.h"
#include "afm/Compiler/HostLibrary.h"
#include "afm/FrontEnd/ONNX/ONNXImport.h"
#include "afm/Compiler/InitAll.h"
#include "afm/Reference/Greedy.h"
#include "afm/Reference/Logits.h"
#include "afm/Target/TargetDescription.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

static llvm::cl::OptionCategory category("afm-onnx-greedy options");
static llvm::cl::opt<std::string> modelPath(llvm::cl::Positional,
                                            llvm::cl::desc("<model.onnx>"),
                                            llvm::cl::Required,
                                            llvm::cl::cat(category));
static llvm::cl::opt<std::string>
    promptText("prompt", llvm::cl::desc("Prompt token ids, comma separated"),
               llvm::cl::value_desc("t0,t1,..."), llvm::cl::Required,
               llvm::cl::cat(category));
static llvm::cl::opt<int64_t>
    decodeSteps("steps", llvm::cl::desc("Decode steps N (default 16)"),
                llvm::cl::init(16), llvm::cl::cat(category));
static llvm::cl::opt<std::string> logitsOut(
    "logits-out", llvm::cl::desc("Write L_0..L_N here (raw little-endian f32)"),
    llvm::cl::value_desc("file"), llvm::cl::Required, llvm::cl::cat(category));
static llvm::cl::opt<std::string> tokensOut(
    "tokens-out",
    llvm::cl::desc("Write t_1..t_{N+1} here (one line, space separated)"),
    llvm::cl::value_desc("file"), llvm::cl::cat(category));

/// Runs the greedy protocol on the loaded graph `main` with `seqLen`
/// slots and `vocab` logits per slot.
static llvm::Expected<afm::GreedyResult>
decode(void *main, int64_t seqLen, int64_t vocab,
       llvm::ArrayRef<int32_t> prompt) {
  if (prompt.empty() ||
      static_cast<int64_t>(prompt.size()) + decodeSteps > seqLen)
    return llvm::createStringError("the prompt (" + llvm::Twine(prompt.size()) +
                                   " tokens) and " + llvm::Twine(decodeSteps) +
                                   " steps do not fit " + llvm::Twine(seqLen) +
                                   " positions");
  // Saturated: shapes whose bytes overflow are refused as too big.
  auto ids = afm::HostBuffer::allocate(
      llvm::SaturatingMultiply<uint64_t>(seqLen, sizeof(int64_t)));
  if (!ids)
    return ids.takeError();
  auto logits = afm::HostBuffer::allocate(llvm::SaturatingMultiply<uint64_t>(
      llvm::SaturatingMultiply<uint64_t>(seqLen, vocab), sizeof(float)));
  if (!logits)
    return logits.takeError();
  int64_t filled = 0;
  for (int32_t token : prompt) {
    if (token < 0 || token >= vocab)
      return llvm::createStringError("token " + llvm::Twine(token) +
                                     " is outside the vocabulary");
    ids->data<int64_t>()[filled++] = token;
  }
  afm::GreedyResult result;
  for (int64_t step = 0; step <= decodeSteps; ++step) {
    if (llvm::Error error = afm::callGraph(main, {ids->data(), logits->data()}))
      return std::move(error);
    llvm::ArrayRef<float> row(logits->data<float>() + (filled - 1) * vocab,
                              vocab);
    llvm::append_range(result.logits, row);
    int32_t next = afm::argmax(row);
    result.tokens.push_back(next);
    if (step < decodeSteps)
      ids->data<int64_t>()[filled++] = next;
  }
  return result;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::cl::HideUnrelatedOptions(category);
  llvm::cl::ParseCommandLineOptions(
      argc, argv, "afm greedy decoding of a static-shape ONNX decoder\n");
  llvm::ExitOnError exitOnErr("afm-onnx-greedy: error: ");

  if (decodeSteps < 0)
    exitOnErr(llvm::createStringError("--steps " + llvm::Twine(decodeSteps) +
                                      ": give 0 or more decode steps"));
  std::vector<int32_t> prompt = exitOnErr(afm::parseTokenList(promptText));
  DialectRegistry registry;
  afm::registerDialects(registry);
  afm::registerLLVMIRTranslations(registry);
  MLIRContext context(registry);
  auto model = llvm::MemoryBuffer::getFile(modelPath);
  if (!model)
    exitOnErr(llvm::createStringError("cannot read " + modelPath + ": " +
                                      model.getError().message()));
  OwningOpRef<ModuleOp> module =
      afm::importONNXModel(&context, (*model)->getBuffer(), modelPath);
  if (!module)
    return 1;
  auto main = module->lookupSymbol<func::FuncOp>("main");
  FunctionType signature = main.getFunctionType();
  auto idsType = signature.getNumInputs() == 1
                     ? dyn_cast<RankedTensorType>(signature.getInput(0))
                     : nullptr;
  auto logitsType = signature.getNumResults() == 1
                        ? dyn_cast<RankedTensorType>(signature.getResult(0))
                        : nullptr;
  if (!idsType || !logitsType || idsType.getRank() != 2 ||
      idsType.getDimSize(0) != 1 || !idsType.getElementType().isInteger(64) ||
      logitsType.getRank() != 3 || !logitsType.getElementType().isF32() ||
      logitsType.getShape().take_front(2) != idsType.getShape())
    exitOnErr(llvm::createStringError(
        "the model is not input_ids int64 [1, S] -> logits float [1, S, V]"));

  afm::HostLibrary library;
  exitOnErr(library.compileAndLoad(*module, afm::getHostTarget()));
  void *function = library.lookup("main");
  if (!function)
    exitOnErr(llvm::createStringError("the library has no main"));
  afm::GreedyResult result = exitOnErr(decode(
      function, idsType.getDimSize(1), logitsType.getDimSize(2), prompt));

  exitOnErr(afm::writeLogitsFile(logitsOut, result.logits));
  std::string tokens = llvm::join(
      llvm::map_range(result.tokens,
                      [](int32_t token) { return std::to_string(token); }),
      " ");
  if (!tokensOut.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream os(tokensOut, ec);
    if (ec)
      exitOnErr(llvm::createStringError(ec, "cannot write " + tokensOut));
    os << tokens << "\n";
  }
  llvm::outs() << "tokens: " << tokens << "\n";
  return 0;
}
