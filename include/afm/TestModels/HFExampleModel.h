//===- HFExampleModel.h - small Hugging Face model folders ------*- C++ -*-===//
//
// Reproducible Hugging Face-style model folders for tests: a config.json
// written as transformers publishes it, generation_config.json, and random
// BF16 weights in one model.safetensors or in shards with
// model.safetensors.index.json.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_TESTMODELS_HFEXAMPLEMODEL_H
#define AFM_TESTMODELS_HFEXAMPLEMODEL_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::afm {

/// The families `hfExampleConfigJSON` knows: "llama", "mistral", "qwen2",
/// "qwen3", "qwen3_moe", "gemma3_text".
std::vector<llvm::StringRef> hfExampleFamilies();

/// The config.json text of a tiny model of `family` (tiny-dense's sizes),
/// in the published form: a llama with Llama 3 `rope_scaling` (its bands
/// moved to short wavelengths, so that positions under 64 see all three),
/// tied embeddings and max_position_embeddings 131072; a mistral with a
/// `sliding_window` of 8 and an untied LM head; a qwen2 (q/k/v biases) and
/// a qwen3 (q/k norms, head_dim 32 apart from d / H), both tied, as the
/// small published ones are; a qwen3_moe (4 experts, top 2, in every
/// layer; untied); a gemma3_text (6 layers, 5 sliding then 1 full with
/// its own scaled RoPE). An error for another family.
llvm::Expected<std::string> hfExampleConfigJSON(llvm::StringRef family);

/// Writes the folder `dir` (created if missing): config.json,
/// generation_config.json, and the weights of the config as BF16 (the
/// values of afm-gen-example's distributions for `seed`, rounded), in
/// `model.safetensors` when `shards` is 1, otherwise in `shards` files
/// `model-0000k-of-0000n.safetensors` of about equal size with
/// `model.safetensors.index.json`. Every tensor whose name contains one of
/// `zeroSubstrings` is written as zeros (the others unchanged). A
/// `vocabSize` replaces the config's 256 (so that a real tokenizer.json
/// fits the model).
llvm::Error
writeHFExampleFolder(llvm::StringRef dir, llvm::StringRef family,
                     int64_t shards, uint64_t seed,
                     llvm::ArrayRef<std::string> zeroSubstrings = {},
                     std::optional<int64_t> vocabSize = std::nullopt);

} // namespace mlir::afm

#endif // AFM_TESTMODELS_HFEXAMPLEMODEL_H
