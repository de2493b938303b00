//===- afm-compare.cpp - compare two logits files step by step ------------===//
//
// Both files hold raw little-endian f32 logits, vocab_size per greedy step
// (as afm-reference --logits-out and afm-run write them). Each step's error
// is max|actual - ref| / max|ref|; any step above the tolerance fails.
//
//===----------------------------------------------------------------------===//

#include "afm/Reference/Logits.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

using namespace llvm;
using namespace mlir::afm;

static cl::OptionCategory category("afm-compare options");

static cl::opt<std::string> referencePath(cl::Positional, cl::Required,
                                          cl::desc("<reference logits>"),
                                          cl::cat(category));
static cl::opt<std::string> actualPath(cl::Positional, cl::Required,
                                       cl::desc("<actual logits>"),
                                       cl::cat(category));
static cl::opt<int64_t> vocabSize("vocab",
                                  cl::desc("Logits per step (vocab_size)"),
                                  cl::value_desc("V"), cl::Required,
                                  cl::cat(category));
static cl::opt<double> tolerance(
    "tolerance",
    cl::desc("Largest allowed max|a-b|/max|ref| per step (default 1e-4)"),
    cl::init(1e-4), cl::cat(category));

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "afm-compare: compare two raw f32 logits files step by step\n");
  ExitOnError exitOnErr("afm-compare: error: ");

  if (!(tolerance >= 0.0))
    exitOnErr(createStringError("--tolerance must be a non-negative number"));
  std::vector<float> reference = exitOnErr(readLogitsFile(referencePath));
  std::vector<float> actual = exitOnErr(readLogitsFile(actualPath));
  std::vector<StepComparison> steps =
      exitOnErr(compareLogitSteps(reference, actual, vocabSize));

  std::optional<size_t> firstFailure;
  for (size_t k = 0; k < steps.size(); ++k) {
    outs() << "step " << k << ": max|a-b|/max|ref| = "
           << format("%.6e", steps[k].relativeError) << "\n";
    if (!firstFailure && !withinTolerance(steps[k], tolerance))
      firstFailure = k;
  }
  if (firstFailure) {
    const StepComparison &step = steps[*firstFailure];
    std::string message;
    raw_string_ostream os(message);
    os << "step " << *firstFailure << " exceeds the tolerance "
       << format("%g", tolerance.getValue())
       << format(" (max|a-b| = %.6e, max|ref| = %.6e)", step.maxAbsDiff,
                 step.maxAbsReference);
    outs().flush();
    exitOnErr(createStringError(message));
  }
  outs() << steps.size() << " steps within tolerance\n";
  return 0;
}
