//===- afm-gen-onnx-decoder.cpp - write the ONNX test decoder -------------===//
//
// Writes a small decoder model.onnx with seeded random weights (see
// afm/TestModels/DecoderModel.h): float MatMul projections, or
// MatMulNBits with --matmul-nbits 4 or 2.
//
//===----------------------------------------------------------------------===//

#include "afm/TestModels/DecoderModel.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace llvm;

static cl::OptionCategory category("afm-gen-onnx-decoder options");
static cl::opt<std::string> outPath("o", cl::desc("Output model.onnx"),
                                    cl::value_desc("file"), cl::Required,
                                    cl::cat(category));
static cl::opt<uint64_t> seed("seed", cl::desc("Weight seed (default 1)"),
                              cl::init(1), cl::cat(category));
static cl::opt<int64_t>
    matmulBits("matmul-nbits",
               cl::desc("Quantize the projections to MatMulNBits with this "
                        "many bits (2 or 4; default 0: float MatMul)"),
               cl::init(0), cl::cat(category));
static cl::opt<int64_t> numLayers("layers",
                                  cl::desc("Decoder layers (default 2)"),
                                  cl::init(2), cl::cat(category));

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv, "afm ONNX test decoder writer\n");
  if (matmulBits != 0 && matmulBits != 2 && matmulBits != 4) {
    WithColor::error() << "--matmul-nbits must be 0, 2 or 4\n";
    return 1;
  }
  mlir::afm::ONNXDecoderConfig config;
  config.seed = seed;
  config.matmulBits = matmulBits;
  config.numLayers = numLayers;
  std::error_code ec;
  ToolOutputFile out(outPath, ec, sys::fs::OF_None);
  if (ec) {
    WithColor::error() << "cannot write '" << outPath << "': " << ec.message()
                       << "\n";
    return 1;
  }
  out.os() << mlir::afm::buildONNXDecoder(config);
  out.keep();
  return 0;
}
