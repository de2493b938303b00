//===- afm-gen-onnx-decoder.cpp - write the ONNX test decoder -------------===//
//
// Writes a small decoder model.onnx with seeded random weights (see
// afm/TestModels/DecoderModel.h): float MatMul projections, or
// MatMulNBits with --matmul-nbits 4 or 2.
//
//===----------------------------------------------------------------------===//

#include "afm/Model/HFConfig.h"
#include "afm/TestModels/DecoderModel.h"
#include "afm/TestModels/HFDecoderONNX.h"

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
static cl::opt<std::string> modelDir(
    "model",
    cl::desc("Write this Hugging Face model folder (as afm-compile --model "
             "reads it) as a graph of standard ONNX ops instead: input_ids "
             "[1, S] to logits [1, S, V], the whole sequence at once"),
    cl::value_desc("dir"), cl::cat(category));
static cl::opt<int64_t> seqLen(
    "seq-len",
    cl::desc("With --model: the static sequence length S (default 64)"),
    cl::init(64), cl::cat(category));

static cl::opt<std::string> seqDimParam(
    "seq-dim-param",
    cl::desc("With --model: declare the sequence dimension of input_ids and "
             "logits as this symbolic dim_param, as exporters do"),
    cl::value_desc("name"), cl::cat(category));

static cl::opt<bool> kvCache(
    "kv-cache",
    cl::desc("Write the decoder as exporters write one with a KV cache: "
             "symbolic batch and sequence dimensions, attention_mask and "
             "position_ids inputs, past_key_values.N.key/value inputs and "
             "present.N.key/value outputs. With --model, as optimum does "
             "(rotary tables computed with Cos/Sin, masks built with "
             "Range/Greater/Not/And, Concat of past and new rows); without, "
             "as ONNX Runtime GenAI does (RotaryEmbedding, "
             "GroupQueryAttention with past keys, seqlens_k from the mask)"),
    cl::cat(category));

/// The --model form: the folder's config and weights.
static Expected<std::string> folderAsONNX() {
  if (matmulBits.getNumOccurrences() || numLayers.getNumOccurrences() ||
      seed.getNumOccurrences())
    return createStringError("--model goes without --matmul-nbits, --layers "
                             "and --seed (the folder has the weights)");
  auto folder = mlir::afm::loadHFModelFolder(modelDir, {});
  if (!folder)
    return folder.takeError();
  auto weights = mlir::afm::WeightSource::open(folder->weightsPath);
  if (!weights)
    return weights.takeError();
  if (kvCache) {
    if (seqLen.getNumOccurrences() || seqDimParam.getNumOccurrences())
      return createStringError("--kv-cache goes without --seq-len and "
                               "--seq-dim-param (every dimension is "
                               "symbolic)");
    return mlir::afm::buildHFDecoderONNXWithCache(folder->config, *weights);
  }
  return mlir::afm::buildHFDecoderONNX(folder->config, *weights, seqLen,
                                       seqDimParam);
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv, "afm ONNX test decoder writer\n");
  if (matmulBits != 0 && matmulBits != 2 && matmulBits != 4) {
    WithColor::error() << "--matmul-nbits must be 0, 2 or 4\n";
    return 1;
  }
  std::string serialized;
  if (!modelDir.empty()) {
    Expected<std::string> graph = folderAsONNX();
    if (!graph) {
      WithColor::error() << toString(graph.takeError()) << "\n";
      return 1;
    }
    serialized = std::move(*graph);
  } else {
    if (seqDimParam.getNumOccurrences()) {
      WithColor::error() << "--seq-dim-param goes with --model\n";
      return 1;
    }
    mlir::afm::ONNXDecoderConfig config;
    config.seed = seed;
    config.matmulBits = matmulBits;
    config.numLayers = numLayers;
    config.kvCache = kvCache;
    serialized = mlir::afm::buildONNXDecoder(config);
  }
  std::error_code ec;
  ToolOutputFile out(outPath, ec, sys::fs::OF_None);
  if (ec) {
    WithColor::error() << "cannot write '" << outPath << "': " << ec.message()
                       << "\n";
    return 1;
  }
  out.os() << serialized;
  out.keep();
  return 0;
}
