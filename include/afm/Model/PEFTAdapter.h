//===- PEFTAdapter.h - LoRA adapters in PEFT's folder layout ----*- C++ -*-===//
//
// A LoRA adapter as Hugging Face PEFT saves one: a folder with
// `adapter_config.json` (a LoraConfig) and `adapter_model.safetensors`, whose
// tensors are `base_model.model.<module>.lora_A.weight` [r, in] and
// `.lora_B.weight` [out, r] for each adapted linear module. Only the
// attention projections q_proj, k_proj, v_proj and o_proj can be adapted
// (docs/semantics.md, "Runtime adapters"). As for Hugging Face configs
// (HFConfig.h), every key of adapter_config.json is honoured, known not to
// matter for inference, or refused.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_MODEL_PEFTADAPTER_H
#define AFM_MODEL_PEFTADAPTER_H

#include "afm/Model/ModelConfig.h"
#include "afm/Model/SafeTensors.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::afm {

/// The file names of a PEFT adapter folder.
inline constexpr const char kPEFTConfigName[] = "adapter_config.json";
inline constexpr const char kPEFTWeightsName[] = "adapter_model.safetensors";

/// The modules an adapter can target, in the order a layer's pairs come.
inline constexpr const char *kPEFTTargetModules[] = {"q_proj", "k_proj",
                                                     "v_proj", "o_proj"};

/// One adapted projection: W' = W + B A, with B already scaled.
struct LoRATensorPair {
  /// The base weight it adapts, our name, e.g.
  /// "model.layers.3.self_attn.q_proj.weight".
  std::string weightName;
  int64_t inFeatures = 0, outFeatures = 0;
  /// [rank, inFeatures] row-major (lora_A.weight).
  std::vector<float> a;
  /// [outFeatures, rank] (lora_B.weight) times `scale`, rounded to f32.
  std::vector<float> b;
};

/// A loaded adapter.
struct LoRAAdapter {
  int64_t rank = 0;
  double alpha = 0.0;
  /// alpha / rank, or alpha / sqrt(rank) with use_rslora.
  double scale = 0.0;
  /// In the model's layer order (afm-pt-moe: track 0's layers, then track
  /// 1's, as `expectedTensors`), q, k, v, o within a layer.
  std::vector<LoRATensorPair> pairs;
};

/// PEFT's key of the A (`isA`) or B factor adapting our weight
/// `weightName` ("....q_proj.weight"):
/// "base_model.model.....q_proj.lora_A.weight".
std::string peftLoRAKey(llvm::StringRef weightName, bool isA);

/// Reads and checks the adapter folder `dir` for the model `config`.
/// Missing `r` and `lora_alpha` take LoraConfig's defaults (8 and 8);
/// `layers_to_transform` (an index or a list of them, applied to the layer
/// index within a track) and `layers_pattern` "layers" are honoured; an
/// `init_lora_weights` that rewrites the base weights (PiSSA, OLoRA,
/// CorDA, LoftQ) is refused. Errors name the file and the key or tensor: a missing file; an unknown,
/// mistyped or unsupported key of adapter_config.json; a target module
/// other than q_proj/k_proj/v_proj/o_proj; a tensor that adapts no
/// projection of this model or one not targeted; a targeted projection
/// without its tensors; an A without its B (or the reverse); a shape other
/// than A [r, in], B [out, r]; a dtype other than F32/F16/BF16; a
/// non-finite value.
llvm::Expected<LoRAAdapter> loadPEFTAdapter(llvm::StringRef dir,
                                            const ModelConfig &config);

/// The same over the text of adapter_config.json (named `configName` in
/// errors) and an open adapter_model.safetensors.
llvm::Expected<LoRAAdapter> parsePEFTAdapter(llvm::StringRef configJSON,
                                             llvm::StringRef configName,
                                             const SafeTensorsFile &weights,
                                             const ModelConfig &config);

/// What `makeExampleAdapter` generates.
struct ExampleAdapterOptions {
  int64_t rank = 8;
  /// lora_alpha; 0 means the rank.
  double alpha = 0.0;
  /// A subset of kPEFTTargetModules.
  std::vector<std::string> targets = {"q_proj", "k_proj", "v_proj", "o_proj"};
  bool useRslora = false;
  uint64_t seed = 0;
  /// adapter_config.json's base_model_name_or_path.
  std::string baseModelName = "afm-example";
};

/// A PEFT adapter folder in memory: adapter_config.json's text and the
/// tensors of adapter_model.safetensors (F32, B unscaled as PEFT stores it).
struct PEFTAdapterFiles {
  std::string configJSON;
  std::vector<SafeTensor> tensors;
};

/// A random adapter for `config`, the same bits for the same options on
/// every machine. Unlike PEFT's initialisation (B = 0) both factors are
/// random, A ~ N(0, 1/in) and the scaled B ~ N(0, 0.2^2 / r), so that the
/// adapter's term is about 20% of an example projection's output (whose
/// weights are N(0, 1/in)). An error for a rank outside 1..256 or an
/// unknown target.
llvm::Expected<PEFTAdapterFiles>
makeExampleAdapter(const ModelConfig &config,
                   const ExampleAdapterOptions &options);

/// Writes `files` into the folder `dir` (created if missing).
llvm::Error writePEFTAdapter(llvm::StringRef dir,
                             const PEFTAdapterFiles &files);

} // namespace mlir::afm

#endif // AFM_MODEL_PEFTADAPTER_H
