//===- Driver.cpp - the afm-compile command line --------------------------===//
//
// config.json + model.safetensors (or afm IR) in, .afmb out, for one target.
// Each intermediate stage can be emitted instead, to inspect or test it.
//
//===----------------------------------------------------------------------===//

#include "afm/Compiler/Driver.h"

#include "ReplacingOutput.h"

#include "afm/CodeGen/ObjectEmitter.h"
#include "afm/Compiler/Compile.h"
#include "afm/Compiler/DecoderGraph.h"
#include "afm/Compiler/KVDecoderGraph.h"
#include "afm/Package/AdapterPackage.h"
#include "afm/Package/Package.h"
#include "afm/Package/WeightEncoding.h"
#include "afm/FrontEnd/Config/ConfigImport.h"
#include "afm/FrontEnd/ONNX/ONNXImport.h"
#include "afm/Compiler/InitAll.h"
#include "afm/Support/NestingDepth.h"
#include "afm/available_memory.h"
#include "afm/Model/HFConfig.h"
#include "afm/Model/SafeTensors.h"
#include "afm/Support/Progress.h"
#include "afm/Tokenizer/JsonImport.h"
#include "afm/Tokenizer/Serialize.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"

using namespace mlir;

using namespace mlir::afm;
namespace cl = llvm::cl;

/// The help of --parallel-min-work, with the default from CodegenOptions.h.
static llvm::StringRef minParallelWorkHelp() {
  static const std::string help =
      ("Run the tile loops of ops with at least this many loop iterations "
       "(multiply-adds for a matmul) on the runtime's threads; 0 never "
       "(default " +
       llvm::Twine(kDefaultMinParallelWork) + ")")
          .str();
  return help;
}

namespace {
enum class Emit { AFMB, AFM, LLVMDialect, LLVMIR, Object, Library };
/// The input rows of compressed projections (`linear_activations`).
enum class Activations { F32, Int8 };

/// The values of --linear-weights and --lm-head.
cl::ValuesClass linearWeightFormats() {
  return cl::values(
      clEnumValN(LinearWeightFormat::F32, "f32", "float weights"),
      clEnumValN(LinearWeightFormat::Q2, "q2",
                 "2-bit balanced levels, one scale per tensor"),
      clEnumValN(LinearWeightFormat::ASTC, "astc",
                 "6x6 ASTC HDR blocks with an f16 offset"));
}

struct Options {
  cl::OptionCategory category{"afm-compile options"};
  cl::opt<std::string> input{cl::Positional,
                             cl::desc("[model.mlir: afm IR instead of --config]"),
                             cl::init(""), cl::cat(category)};
  cl::opt<std::string> config{"config",
                              cl::desc("Model config (config.json)"),
                              cl::value_desc("file"), cl::cat(category)};
  cl::opt<std::string> model{
      "model",
      cl::desc("Hugging Face model folder instead of --config: config.json "
               "(model_type llama, mistral, qwen2, qwen3, qwen3_moe, "
               "gemma3_text; every key honoured, known to be irrelevant, or "
               "refused), model.safetensors or the shards "
               "of model.safetensors.index.json (BF16, F16 or F32); "
               "docs/hf-models.md"),
      cl::value_desc("dir"), cl::cat(category)};
  cl::opt<int64_t> contextLength{
      "context",
      cl::desc("With --model: the compiled context in tokens, the KV caches' "
               "length (default: the model's max_position_embeddings, at "
               "most 4096). With --onnx, for a decoder with a KV cache "
               "(past_key_values inputs): its caches' length (default "
               "1024); for a stateless decoder whose input_ids has a "
               "symbolic sequence dimension: the window it is bound to"),
      cl::value_desc("N"), cl::cat(category)};
  cl::opt<LinearWeightFormat> linearWeights{
      "linear-weights",
      cl::desc("With --model: how the attention and MLP projections are "
               "stored (config key linear_weight_format; default f32)"),
      cl::init(LinearWeightFormat::F32),
      linearWeightFormats(),
      cl::cat(category)};
  cl::opt<EmbeddingFormat> embedding{
      "embedding",
      cl::desc("With --model: how the embedding table (and a tied LM head) "
               "is stored (config key embedding_format; default f32)"),
      cl::init(EmbeddingFormat::F32),
      cl::values(clEnumValN(EmbeddingFormat::F32, "f32", "float table"),
                 clEnumValN(EmbeddingFormat::Q4, "q4",
                            "symmetric 4-bit codes, one scale per 32 "
                            "entries of a row")),
      cl::cat(category)};
  cl::opt<LinearWeightFormat> lmHead{
      "lm-head",
      cl::desc("With --model: how an untied LM head is stored (config key "
               "lm_head_format; default f32; a tied head is the embedding "
               "table, see --embedding)"),
      cl::init(LinearWeightFormat::F32),
      linearWeightFormats(),
      cl::cat(category)};
  cl::opt<KVCacheDType> kvCache{
      "kv-cache",
      cl::desc("With --model: the KV caches' element type (config key "
               "kv_cache_dtype; default f32)"),
      cl::init(KVCacheDType::F32),
      cl::values(clEnumValN(KVCacheDType::F32, "f32", "float"),
                 clEnumValN(KVCacheDType::Int8, "int8",
                            "int8 codes, one f32 scale per token and head"),
                 clEnumValN(KVCacheDType::F16, "f16",
                            "IEEE half precision, rounded to nearest even")),
      cl::cat(category)};
  cl::opt<Activations> linearActivations{
      "linear-activations",
      cl::desc("With --model: the input rows of compressed projections "
               "(config key linear_activations; default f32; int8 needs "
               "--linear-weights q2 or astc)"),
      cl::init(Activations::F32),
      cl::values(clEnumValN(Activations::F32, "f32", "float rows"),
                 clEnumValN(Activations::Int8, "int8",
                            "rows rounded to int8, integer products")),
      cl::cat(category)};
  cl::opt<std::string> onnx{
      "onnx",
      cl::desc("ONNX decoder graph instead of --config, on the calling "
               "thread: either stateless (token ids [1, S] -> logits "
               "[1, S, V]; each call runs the S-token window), or with a KV "
               "cache as exporters write it (input_ids, attention_mask, "
               "position_ids, past_key_values.N.key/value -> logits, "
               "present.N.key/value; its dimensions bound per entry point "
               "from --context and --prefill-chunk; a step costs O(context))"),
      cl::value_desc("file"), cl::cat(category)};
  cl::list<std::string> bindDims{
      "bind-dim",
      cl::desc("With --onnx: give the graph's symbolic dimension NAME (a "
               "dim_param of its inputs and outputs, such as "
               "sequence_length) the size N; repeatable"),
      cl::value_desc("NAME=N"), cl::cat(category)};
  cl::opt<bool> onnxRaise{
      "onnx-raise-to-afm",
      cl::desc("With --onnx: raise RMS normalizations to afm.rms_norm and "
               "one-token MatMuls by constant weights to afm.linear, for "
               "afm's kernels (default true)"),
      cl::init(true), cl::cat(category)};
  cl::opt<std::string> weights{
      "weights",
      cl::desc("Weights (.safetensors, or the model.safetensors.index.json "
               "of a sharded checkpoint); defaults to the afm.weights_file "
               "attribute of an IR input"),
      cl::value_desc("file"), cl::cat(category)};
  cl::opt<std::string> output{"o", cl::desc("Output file (default: "
                                            "model.afmb, - for stdout)"),
                              cl::value_desc("file"), cl::init("model.afmb"),
                              cl::cat(category)};
  cl::opt<std::string> target{"target",
                              cl::desc("Target (see --list-targets); "
                                       "default: this machine"),
                              cl::init("host"), cl::cat(category)};
  cl::opt<std::string> targetOS{
      "target-os",
      cl::desc("Link for another OS than the target's: linux or macos "
               "(e.g. apple-m2 code paths as Linux AArch64 for qemu)"),
      cl::init(""), cl::cat(category)};
  cl::opt<int64_t> prefillChunk{
      "prefill-chunk",
      cl::desc("Tokens per prefill call (default: 128 for models of "
               "hidden_size 1024 or more, 16 for smaller ones, at most the "
               "context). Chunks of 32 or more rows multiply compressed "
               "weights as GEMMs (2-bit on int8 activations: an integer GEMM "
               "when the chunk is a multiple of 4); a prompt pays for whole "
               "chunks. 128 is the fastest measured for the 3B preset"),
      cl::init(16), cl::cat(category)};
  cl::opt<int64_t> verifyTokens{
      "verify-tokens",
      cl::desc("With --model or --config: also build afm_verify, an entry "
               "that runs up to N tokens in one step and returns the logits "
               "of every one, for speculative decoding (afm-run --draft); "
               "local layers' ring caches get N-1 spare slots so rejected "
               "drafts can be rewound. 0 (default): none; else 2 to 16"),
      cl::value_desc("N"), cl::init(0), cl::cat(category)};
  cl::opt<int64_t> draftLayers{
      "draft-layers",
      cl::desc("With --model or --config: compile only the first N layers "
               "(then the final norm and the LM head) as an early-exit "
               "draft for afm-run --draft, reading the same weights: "
               "self-speculative decoding. Give it --verify-tokens too "
               "(the draft rewinds rejected tokens)"),
      cl::value_desc("N"), cl::init(0), cl::cat(category)};
  cl::opt<int64_t> adapterRank{
      "adapter-rank",
      cl::desc("With --model or --config: give every attention projection "
               "(q, k, v, o) a run-time LoRA adapter slot of rank R, so that "
               "adapters compiled with --adapter attach to sessions without "
               "a recompile (afm-run --adapter). Without an adapter the "
               "slots are zero and the model is the base. 0 (default): "
               "none; at most 256"),
      cl::value_desc("R"), cl::init(0), cl::cat(category)};
  cl::opt<std::string> adapter{
      "adapter",
      cl::desc("Compile a LoRA adapter instead of a model: a PEFT folder "
               "(adapter_config.json, adapter_model.safetensors; attention "
               "projections q/k/v/o) for the base --base, whose config "
               "--config or --model gives. Writes an adapter file for "
               "afm-run --adapter"),
      cl::value_desc("dir"), cl::cat(category)};
  cl::opt<std::string> base{
      "base",
      cl::desc("With --adapter: the base model (.afmb compiled with "
               "--adapter-rank); the adapter works with it and with no "
               "other weights"),
      cl::value_desc("file.afmb"), cl::cat(category)};
  cl::opt<Emit> emit{
      "emit", cl::desc("What to write (default: afmb)"), cl::init(Emit::AFMB),
      cl::values(clEnumValN(Emit::AFMB, "afmb", "the runtime-loadable binary"),
                 clEnumValN(Emit::AFM, "afm", "the imported afm IR"),
                 clEnumValN(Emit::LLVMDialect, "llvm-dialect",
                            "IR after the afm-codegen pipeline"),
                 clEnumValN(Emit::LLVMIR, "llvm-ir", "optimized LLVM IR"),
                 clEnumValN(Emit::Object, "object", "the object file"),
                 clEnumValN(Emit::Library, "library",
                            "the linked shared library")),
      cl::cat(category)};
  cl::opt<int64_t> minParallelWork{
      "parallel-min-work",
      cl::desc(minParallelWorkHelp()),
      cl::init(kDefaultMinParallelWork), cl::cat(category)};
  cl::opt<bool> prefillBypass{
      "prefill-bypass",
      cl::desc("During prefill, run the layers after the last KV-writing "
               "attention (Block 2 of the on-device model) for the last "
               "prompt row only (default true)"),
      cl::init(true), cl::cat(category)};
  cl::opt<bool> fuseMinShift{
      "fuse-min-shift",
      cl::desc("Fold ASTC block offsets into the matmuls' accumulator init "
               "(default true); false materializes each reconstructed "
               "weight (the unfused math, for testing)"),
      cl::init(true), cl::cat(category)};
  cl::opt<bool> arenaTemporaries{
      "arena-temporaries",
      cl::desc("Keep the temporary buffers of prefill and decode in the "
               "session's arena, laid out at compile time (default true): "
               "a decode step then allocates nothing; false uses the heap"),
      cl::init(true), cl::cat(category)};
  cl::opt<bool> report{
      "report",
      cl::desc("Print the compile report: per weight its format, bits per "
               "weight and SNR against the float weights; weight bytes and "
               "KV bytes per token (to stdout, or stderr when -o is -)"),
      cl::cat(category)};
  cl::opt<std::string> dequantizedWeights{
      "dequantized-weights",
      cl::desc("Also write the float weights the compiled model computes "
               "with (compressed weights dequantized, split-off adapters "
               "folded back) as a safetensors file, for a reference run"),
      cl::value_desc("file"), cl::cat(category)};
  cl::opt<std::string> tokenizer{
      "tokenizer",
      cl::desc("Pack this Hugging Face tokenizer.json into the .afmb, so the "
               "runtime takes and gives text (afm-run --text); its ids must "
               "be below the model's vocab_size"),
      cl::value_desc("file"), cl::cat(category)};
  cl::list<uint32_t> eosTokenIds{
      "eos-token-ids",
      cl::desc("Token ids that end generation (generation_config.json's "
               "eos_token_id), recorded in the .afmb; comma-separated"),
      cl::CommaSeparated, cl::value_desc("id,..."), cl::cat(category)};
  cl::opt<bool> listTargets{"list-targets",
                            cl::desc("Print the known targets and exit"),
                            cl::cat(category)};
};
} // namespace

static int error(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "afm-compile") << message << "\n";
  return 1;
}

static void printTargets(llvm::raw_ostream &os) {
  TargetDescription host = getHostTarget();
  os << "host (this machine: " << host.name << ", " << host.triple << ")\n";
  for (const TargetDescription &t : getKnownTargets()) {
    os << llvm::left_justify(t.name, 16) << " " << t.triple << ", cpu " << t.cpu
       << ", " << t.vectorBits << "-bit vectors x " << t.vectorRegisters
       << (t.hasSME ? ", SME" : "");
    if (t.prefetchBytes == 0)
      os << ", no software prefetch";
    else
      os << ", weights prefetched " << t.prefetchBytes / 1024
         << " KiB ahead (locality " << t.streamPrefetchLocality << ")";
    if (t.interleaveRowHalves)
      os << ", GEMV rows from both halves in turn";
    if (t.readOncePrefetch.spacing)
      os << ", attention's next rows prefetched every "
         << t.readOncePrefetch.spacing << " bytes from "
         << t.readOncePrefetch.sparseFromBytes / (1024 * 1024)
         << " MiB a layer";
    os << "\n";
  }
}

/// A session of this model reserves its whole arena (KV caches at full
/// context, and scratch). More than any process here may hold (the
/// machine's memory, or its cgroup's limit) cannot run here: say so now
/// rather than at session creation.
static void warnIfArenaExceedsMemory(ModuleOp module) {
  auto arena = contracts(module).getKvArenaBytesAttrHelper().getAttr(module);
  uint64_t limit = afm_memory_limit();
  if (!arena || limit == UINT64_MAX || uint64_t(arena.getInt()) <= limit)
    return;
  llvm::WithColor::warning(llvm::errs(), "afm-compile")
      << "a session needs " << arena.getInt()
      << " bytes of KV memory (its caches at full context, and scratch), "
      << "more than the " << limit
      << " bytes a process here may hold; it cannot run here (a shorter "
         "context needs less)\n";
}

/// The tokenizer and end-of-sequence ids of the command line, ready to
/// pack.
static llvm::Expected<PackageText>
readPackageText(llvm::StringRef tokenizerPath, llvm::ArrayRef<uint32_t> eos) {
  PackageText text;
  text.eosIds.assign(eos.begin(), eos.end());
  if (tokenizerPath.empty())
    return text;
  auto description = tokenizer::importTokenizerJsonFile(tokenizerPath);
  if (!description)
    return description.takeError();
  text.tokenizer = tokenizer::serializeTokenizer(*description);
  text.tokenizerIdLimit = tokenizer::tokenizerIdLimit(*description);
  return text;
}

/// The id of the token `content` in `description` (an added token, or
/// one of the vocabulary).
static std::optional<uint32_t>
tokenId(const tokenizer::TokenizerDescription &description,
        llvm::StringRef content) {
  for (const tokenizer::AddedToken &added : description.addedTokens)
    if (added.content == content)
      return added.id;
  for (const auto &[token, id] : description.model.vocab)
    if (token == content)
      return id;
  return std::nullopt;
}

/// tokenizer_config.json's add_bos_token / add_eos_token, for the classes
/// whose fast tokenizer rebuilds its template from them (transformers'
/// LlamaTokenizerFast.update_post_processor): a sequence gets
/// [bos_token] when add_bos_token (default true) and [eos_token] after it
/// when add_eos_token (default false). For other classes tokenizer.json's
/// template stands, as transformers leaves it.
static llvm::Error
applyTokenizerConfig(const HFTokenizerConfig &config, llvm::StringRef path,
                     tokenizer::TokenizerDescription &description) {
  if (!config.rebuildsTemplate() ||
      (!config.addBosToken && !config.addEosToken))
    return llvm::Error::success();
  auto idOf = [&](llvm::StringRef key, llvm::StringRef content)
      -> llvm::Expected<uint32_t> {
    if (content.empty())
      return llvm::createStringError(
          path + ": " + key + " is needed (add_" + key +
          " is true) but not given");
    if (std::optional<uint32_t> id = tokenId(description, content))
      return *id;
    return llvm::createStringError(path + ": " + key + " '" + content +
                                   "' is not a token of tokenizer.json");
  };
  description.prefixIds.clear();
  description.suffixIds.clear();
  if (config.addBosToken.value_or(true)) {
    auto id = idOf("bos_token", config.bosToken);
    if (!id)
      return id.takeError();
    description.prefixIds.push_back(*id);
  }
  if (config.addEosToken.value_or(false)) {
    auto id = idOf("eos_token", config.eosToken);
    if (!id)
      return id.takeError();
    description.suffixIds.push_back(*id);
  }
  return llvm::Error::success();
}

/// The options only a Hugging Face folder takes (its config.json says
/// nothing about compression or the compiled context).
static bool usesFolderOnlyOptions(const Options &opts) {
  return opts.contextLength.getNumOccurrences() ||
         opts.linearWeights.getNumOccurrences() ||
         opts.embedding.getNumOccurrences() ||
         opts.lmHead.getNumOccurrences() ||
         opts.kvCache.getNumOccurrences() ||
         opts.linearActivations.getNumOccurrences();
}

/// --context alone of those options also goes with --onnx (a decoder with
/// a KV cache).
static bool onlyContextGiven(const Options &opts) {
  return opts.contextLength.getNumOccurrences() &&
         !opts.linearWeights.getNumOccurrences() &&
         !opts.embedding.getNumOccurrences() &&
         !opts.kvCache.getNumOccurrences() &&
         !opts.linearActivations.getNumOccurrences();
}

/// Imports the Hugging Face folder `--model` with the compression flags;
/// `weightsPath` becomes the folder's weights (index or single file), and
/// `text` gets the folder's tokenizer.json and generation_config.json end
/// ids unless --tokenizer and --eos-token-ids gave them.
static llvm::Expected<OwningOpRef<ModuleOp>>
importFolder(MLIRContext &context, const Options &opts,
             std::string &weightsPath, PackageText &text) {
  HFLoadOptions loadOptions;
  if (opts.contextLength.getNumOccurrences())
    loadOptions.context = opts.contextLength;
  auto folder = loadHFModelFolder(opts.model, loadOptions);
  if (!folder)
    return folder.takeError();
  ModelConfig config = folder->config;
  config.linearWeightFormat = opts.linearWeights;
  config.embeddingFormat = opts.embedding;
  config.lmHeadFormat = opts.lmHead;
  config.kvCacheDType = opts.kvCache;
  config.int8Activations = opts.linearActivations == Activations::Int8;
  if (llvm::Error err = validateModelConfig(
          config, opts.model + " with the compression flags"))
    return std::move(err);
  if (opts.draftLayers > 0) {
    auto draft = earlyExitConfig(config, opts.draftLayers);
    if (!draft)
      return draft.takeError();
    config = std::move(*draft);
  }
  weightsPath = folder->weightsPath;
  if (opts.tokenizer.empty() && folder->tokenizerJson) {
    auto description =
        tokenizer::importTokenizerJsonFile(*folder->tokenizerJson);
    if (!description)
      return description.takeError();
    if (folder->tokenizerConfig)
      if (llvm::Error err = applyTokenizerConfig(
              *folder->tokenizerConfig, *folder->tokenizerConfigJson,
              *description))
        return std::move(err);
    text.tokenizer = tokenizer::serializeTokenizer(*description);
    text.tokenizerIdLimit = tokenizer::tokenizerIdLimit(*description);
  }
  if (opts.eosTokenIds.empty() && folder->generation)
    for (int64_t id : folder->generation->eosTokenIds) {
      if (id < 0 || id > int64_t(UINT32_MAX))
        return llvm::createStringError(
            *folder->generationConfigJson + ": eos_token_id " +
            std::to_string(id) + " is not a token id");
      text.eosIds.push_back(uint32_t(id));
    }
  ConfigImportOptions importOptions;
  importOptions.weightsPath = weightsPath;
  if (opts.prefillChunk.getNumOccurrences())
    importOptions.prefillChunk = opts.prefillChunk;
  importOptions.verifyTokens = opts.verifyTokens;
  importOptions.adapterRank = opts.adapterRank;
  if (llvm::Error err = checkConfigImportOptions(importOptions))
    return std::move(err);
  return importModelConfig(&context, config, importOptions);
}

/// The context of a decoder graph with a KV cache when --context is not
/// given: its caches then take 4 * kv_heads * head_dim KiB per layer.
static constexpr int64_t kDefaultGraphContext = 1024;
/// The largest window of a stateless decoder graph.
static constexpr int64_t kMaxStatelessWindow = 65536;
/// Above this the arena would not fit any machine afm targets.
static constexpr int64_t kMaxGraphCacheBytes = int64_t(1) << 40;

/// --onnx: a stateless decoder graph (bound with --bind-dim) or one with a
/// KV cache (bound per entry point: --context, --prefill-chunk), wrapped
/// into the runtime's entry points. Errors are reported; null on failure.
static OwningOpRef<ModuleOp> importONNXDecoder(MLIRContext &context,
                                               const Options &opts) {
  auto fail = [](llvm::Twine message) {
    error(message);
    return OwningOpRef<ModuleOp>();
  };
  auto bytes = llvm::MemoryBuffer::getFile(opts.onnx, /*IsText=*/false);
  if (!bytes)
    return fail("cannot read '" + opts.onnx +
                "': " + bytes.getError().message());
  ONNXImportOptions importOptions;
  importOptions.raiseToAFM = opts.onnxRaise;
  llvm::StringMap<int64_t> userBindings;
  for (llvm::StringRef binding : opts.bindDims) {
    auto [name, size] = binding.split('=');
    int64_t value = 0;
    if (name.empty() || size.getAsInteger(10, value) || value < 1)
      return fail("--bind-dim '" + binding +
                  "': expected NAME=N with N a positive size");
    if (!userBindings.try_emplace(name, value).second)
      return fail("--bind-dim " + name + " is given twice");
  }
  llvm::StringRef graphBytes = (*bytes)->getBuffer();
  std::string name = llvm::sys::path::stem(opts.onnx).str();
  auto signature = getONNXGraphSignature(graphBytes, opts.onnx);
  std::optional<KVDecoderInterface> kv;
  if (signature) {
    auto recognized = recognizeKVDecoder(*signature);
    if (!recognized)
      return fail(llvm::toString(recognized.takeError()));
    kv = *recognized;
  } else {
    // The importer reports an unreadable model in its own words.
    llvm::consumeError(signature.takeError());
  }

  if (!kv) {
    // A stateless decoder runs batch 1 over a window of --context tokens:
    // its input's symbolic dimensions are bound so unless --bind-dim
    // gives them. Each step runs the whole window (masks of window^2 among
    // its temporaries), and decode stages its token on the stack: the
    // window is bounded.
    bool contextUsed = false;
    if (signature && signature->inputs.size() == 1 &&
        signature->inputs[0].dims.size() == 2) {
      const auto &dims = signature->inputs[0].dims;
      if (!dims[0].param.empty())
        userBindings.try_emplace(dims[0].param, 1);
      if (!dims[1].param.empty() && opts.contextLength.getNumOccurrences() &&
          dims[1].param != dims[0].param)
        contextUsed =
            userBindings.try_emplace(dims[1].param, opts.contextLength).second;
      int64_t window = dims[1].param.empty()
                           ? dims[1].size
                           : userBindings.lookup(dims[1].param);
      if (window > kMaxStatelessWindow)
        return fail(llvm::formatv("a stateless decoder graph's window of {0} "
                                  "tokens is more than {1}: each step runs "
                                  "all of them; export the decoder with a "
                                  "KV cache",
                                  window, kMaxStatelessWindow)
                        .str());
    }
    if (opts.contextLength.getNumOccurrences() && !contextUsed)
      return fail("--context goes with a decoder graph with a KV cache "
                  "(past_key_values inputs) or a stateless one whose "
                  "sequence dimension is symbolic and not given by "
                  "--bind-dim (the window)");
    importOptions.boundDims = std::move(userBindings);
    OwningOpRef<ModuleOp> module =
        importONNXModel(&context, graphBytes, opts.onnx, importOptions);
    if (!module || failed(wrapDecoderGraph(*module, name)))
      return nullptr;
    return module;
  }

  int64_t contextLength = opts.contextLength.getNumOccurrences()
                              ? int64_t(opts.contextLength)
                              : kDefaultGraphContext;
  int64_t rows = opts.prefillChunk;
  if (contextLength < 1 || rows < 1 || rows > contextLength)
    return fail(llvm::formatv("--context must be at least 1 and "
                              "--prefill-chunk between 1 and the context; "
                              "got {0} and {1}",
                              contextLength, rows)
                    .str());
  if (signature->rotaryTablePositions >= 0 &&
      contextLength > signature->rotaryTablePositions)
    return fail(llvm::formatv("the graph's RotaryEmbedding tables cover {0} "
                              "positions; --context {1} goes past them",
                              signature->rotaryTablePositions, contextLength)
                    .str());
  int64_t cacheBytes = kv->arenaBytes(contextLength);
  if (cacheBytes < 0 || cacheBytes > kMaxGraphCacheBytes)
    return fail(llvm::formatv("the graph's KV caches at context {0} would "
                              "take more than {1} GiB",
                              contextLength, kMaxGraphCacheBytes >> 30)
                    .str());
  // One specialization per entry point: `rows` rows for prefill, 1 for
  // decode (the same function when the chunk is 1).
  OwningOpRef<ModuleOp> module;
  func::FuncOp graphs[2];
  const int64_t entryRowCounts[2] = {rows, 1};
  for (auto [i, entryRows] : llvm::enumerate(entryRowCounts)) {
    if (i == 1 && rows == 1) {
      graphs[1] = graphs[0];
      break;
    }
    auto bindings =
        bindKVDecoderDims(*signature, *kv, entryRows, contextLength,
                          userBindings);
    if (!bindings)
      return fail(llvm::toString(bindings.takeError()));
    importOptions.boundDims = std::move(*bindings);
    OwningOpRef<ModuleOp> imported =
        importONNXModel(&context, graphBytes, opts.onnx, importOptions);
    if (!imported)
      return nullptr;
    auto graph = imported->lookupSymbol<func::FuncOp>("main");
    graph.setSymName(i == 0 ? "afm_graph_prefill" : "afm_graph_decode");
    graphs[i] = graph;
    if (!module) {
      module = std::move(imported);
      continue;
    }
    // Helper routines (string printing, ...) are the same in both.
    for (Operation &op : llvm::make_early_inc_range(*imported->getBody())) {
      auto symbol = dyn_cast<SymbolOpInterface>(op);
      if (symbol && module->lookupSymbol(symbol.getName()))
        continue;
      op.moveBefore(module->getBody(), module->getBody()->end());
    }
  }
  if (failed(wrapKVDecoderGraphs(*module, graphs[0], graphs[1], *kv,
                                 contextLength, rows, name)))
    return nullptr;
  return module;
}

/// --adapter: the PEFT folder against the base's config and slots.
static int compileAdapter(const Options &opts) {
  if (opts.base.empty())
    return error("--adapter needs --base MODEL.afmb (the model it adapts)");
  if (opts.config.empty() == opts.model.empty() || !opts.input.empty() ||
      !opts.onnx.empty())
    return error("--adapter needs the base's config: exactly one of "
                 "--config FILE or --model DIR");
  ModelConfig config;
  if (!opts.model.empty()) {
    auto folder = loadHFModelFolder(opts.model, HFLoadOptions());
    if (!folder)
      return error(llvm::toString(folder.takeError()));
    config = folder->config;
  } else {
    auto parsed = loadModelConfig(opts.config);
    if (!parsed)
      return error(llvm::toString(parsed.takeError()));
    config = *parsed;
  }
  auto output = ReplacingOutput::open(opts.output);
  if (!output)
    return error(llvm::toString(output.takeError()));
  auto summary =
      writeAdapterPackage((*output)->os(), opts.adapter, opts.base, config);
  if (!summary)
    return error(llvm::toString(summary.takeError()));
  if (llvm::Error err = (*output)->commit())
    return error(llvm::toString(std::move(err)));
  if (opts.report)
    (opts.output == "-" ? llvm::errs() : llvm::outs()) << llvm::formatv(
        "adapter: rank {0} in rank-{1} slots, {2} projections, {3} bytes of "
        "factors, base identity {4:x16}\n",
        summary->rank, summary->slotRank, summary->projections,
        summary->factorBytes, summary->baseIdentity);
  return 0;
}

int mlir::afm::runCompileDriver(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  Options opts;
  cl::HideUnrelatedOptions(opts.category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "afm-compile: compile a model for a target into an .afmb binary\n\n"
      "  afm-compile --model Llama-3.2-1B/ -o model.afmb --linear-weights q2 "
      "--embedding q4\n"
      "  afm-compile --config config.json --weights model.safetensors "
      "-o model.afmb --target x86-64-v3\n"
      "  afm-compile model.mlir --weights model.safetensors -o model.afmb\n"
      "  afm-compile --onnx decoder.onnx -o model.afmb\n"
      "  afm-compile --adapter peft-adapter/ --base model.afmb --config "
      "config.json -o adapter.afma\n");
  if (opts.listTargets) {
    printTargets(llvm::outs());
    return 0;
  }
  if (!opts.adapter.empty())
    return compileAdapter(opts);
  if (!opts.base.empty())
    return error("--base goes with --adapter");
  if (opts.config.empty() + opts.input.empty() + opts.onnx.empty() +
          opts.model.empty() !=
      3)
    return error("give exactly one of --model DIR, --config FILE, --onnx FILE "
                 "or an input .mlir file");
  if ((opts.verifyTokens.getNumOccurrences() ||
       opts.draftLayers.getNumOccurrences() ||
       opts.adapterRank.getNumOccurrences()) &&
      (!opts.onnx.empty() || !opts.input.empty()))
    return error("--verify-tokens, --draft-layers and --adapter-rank go with "
                 "--model or --config (an ONNX graph or an IR file brings "
                 "its own entry points)");
  if (opts.draftLayers.getNumOccurrences() && opts.draftLayers < 1)
    return error("--draft-layers must be at least 1");
  if (!opts.bindDims.empty() && opts.onnx.empty())
    return error("--bind-dim goes with --onnx (the graph's symbolic "
                 "dimensions)");
  if (opts.model.empty() && usesFolderOnlyOptions(opts) &&
      !(onlyContextGiven(opts) && !opts.onnx.empty()))
    return error("--context, --linear-weights, --embedding, --lm-head, "
                 "--kv-cache and --linear-activations go with --model (a "
                 "--config file sets "
                 "max_position_embeddings and the compression keys itself)");
  if (!opts.model.empty() && !opts.weights.empty())
    return error("--model reads the weights from its folder: drop --weights");
  auto target = lookupTarget(opts.target, opts.targetOS);
  if (!target)
    return error(llvm::toString(target.takeError()));
  // Text before the long compile, so a bad tokenizer fails fast.
  auto text = readPackageText(opts.tokenizer, opts.eosTokenIds);
  if (!text)
    return error(llvm::toString(text.takeError()));

  DialectRegistry registry;
  registerDialects(registry);
  registerLLVMIRTranslations(registry);
  MLIRContext context(registry);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);

  OwningOpRef<ModuleOp> module;
  std::string weightsPath = opts.weights;
  if (!opts.model.empty()) {
    auto imported = importFolder(context, opts, weightsPath, *text);
    if (!imported)
      return error(llvm::toString(imported.takeError()));
    module = std::move(*imported);
  } else if (!opts.config.empty()) {
    if (weightsPath.empty() && opts.emit == Emit::AFMB)
      return error("--config needs --weights model.safetensors");
    ConfigImportOptions importOptions;
    importOptions.weightsPath = weightsPath;
    if (opts.prefillChunk.getNumOccurrences())
      importOptions.prefillChunk = opts.prefillChunk;
    importOptions.verifyTokens = opts.verifyTokens;
    importOptions.draftLayers = opts.draftLayers;
    importOptions.adapterRank = opts.adapterRank;
    auto imported = importModelFiles(&context, opts.config, importOptions);
    if (!imported)
      return error(llvm::toString(imported.takeError()));
    module = std::move(*imported);
  } else if (!opts.onnx.empty()) {
    module = importONNXDecoder(context, opts);
    if (!module)
      return 1;
  } else {
    std::string message;
    std::unique_ptr<llvm::MemoryBuffer> input =
        openInputFile(opts.input, &message);
    if (!input)
      return error(message);
    if (llvm::Error err = checkIRNesting(*input)) {
      llvm::errs() << llvm::toString(std::move(err)) << "\n";
      return 1;
    }
    sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
    module = parseSourceFile<ModuleOp>(sourceMgr, &context);
    if (!module)
      return 1;
  }

  auto output = ReplacingOutput::open(opts.output);
  if (!output)
    return error(llvm::toString(output.takeError()));
  llvm::raw_ostream &os = (*output)->os();
  auto finish = [&] {
    if (llvm::Error err = (*output)->commit())
      return error(llvm::toString(std::move(err)));
    return 0;
  };

  if (opts.emit == Emit::AFM) {
    module->print(os);
    return finish();
  }
  if (opts.minParallelWork < 0)
    return error("--parallel-min-work must not be negative");
  CodegenOptions codegen;
  codegen.minParallelWork = opts.minParallelWork;
  codegen.prefillBypass = opts.prefillBypass;
  codegen.arenaTemporaries = opts.arenaTemporaries;
  codegen.fuseMinShift = opts.fuseMinShift;
  if (!opts.onnx.empty()) {
    // No entry-point ABI pass runs on a graph: it stays on the calling
    // thread.
    codegen.minParallelWork = 0;
    if (failed(lowerGraphToLLVMDialect(*module, *target, codegen)))
      return 1;
  } else if (failed(lowerToLLVMDialect(*module, *target, codegen))) {
    return 1;
  }
  if (opts.emit == Emit::LLVMDialect) {
    module->print(os);
    return finish();
  }
  if (opts.emit == Emit::LLVMIR) {
    llvm::LLVMContext llvmContext;
    auto llvmModule = toLLVMIR(*module, llvmContext, *target);
    if (!llvmModule)
      return error(llvm::toString(llvmModule.takeError()));
    (*llvmModule)->print(os, nullptr);
    return finish();
  }
  if (opts.emit == Emit::Object || opts.emit == Emit::Library) {
    auto object = toObject(*module, *target);
    if (!object)
      return error(llvm::toString(object.takeError()));
    if (opts.emit == Emit::Object) {
      os << *object;
      return finish();
    }
    auto library = linkSharedLibrary(*object, *target);
    if (!library)
      return error(llvm::toString(library.takeError()));
    os << *library;
    return finish();
  }

  // LLVM optimizes and generates code on one thread (minutes for a large
  // model); the weights are encoded meanwhile, and the package waits for
  // the library only at its end.
  auto library = BackgroundLibraryBuild::start(*module, *target);
  warnIfArenaExceedsMemory(*module);

  // Packaging reads only the module's attributes (the layouts): the code,
  // now in the library, is dropped so that its memory (gigabytes at the
  // paper's model size) is free before the weights are encoded.
  for (Operation &op : *module->getBody())
    op.dropAllReferences();
  module->getBody()->clear();

  auto weights = openPackageWeights(*module, weightsPath);
  if (!weights)
    return error(llvm::toString(weights.takeError()));
  // The dequantized values are never kept: for a model of billions of
  // parameters they would take four bytes a weight (--dequantized-weights
  // encodes the weights again, one at a time).
  const WeightSource *weightsFile = *weights ? &**weights : nullptr;
  WeightEncoder encoder(weightsFile, /*keepValues=*/false);
  // Per-weight progress of a packaging step on the terminal.
  auto reportTo = [](::afm::TerminalProgress &progress) -> PackageProgress {
    return [&progress](StringRef weight, uint64_t done, uint64_t total) {
      progress.setTotal(total);
      progress.update(weight, done);
    };
  };
  {
    ::afm::TerminalProgress progress("afm-compile: weights", 0, "GB");
    if (llvm::Error err = writePackage(
            os, *module, [&] { return library.take(); }, *target, encoder,
            reportTo(progress), *text))
      return error(llvm::toString(std::move(err)));
  }
  if (!opts.dequantizedWeights.empty()) {
    ::afm::TerminalProgress progress("afm-compile: dequantized weights", 0,
                                     "GB");
    if (llvm::Error err =
            writeEffectiveWeights(*module, weightsFile,
                                  opts.dequantizedWeights, reportTo(progress)))
      return error(llvm::toString(std::move(err)));
  }
  if (opts.report)
    printCompileReport(opts.output == "-" ? llvm::errs() : llvm::outs(),
                       *module, encoder);
  return finish();
}
