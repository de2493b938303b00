//===- HFDecoderONNX.h - a model folder as a plain ONNX graph ---*- C++ -*-===//
//
// Writes a decoder that the compiler reads from a config and its weights
// (every afm-dense form the Hugging Face families map onto: biases, q/k
// norms, Gemma's norms and GeGLU, local/global layers with their RoPE,
// top-k MoE layers) as one static ONNX graph of standard ops, so that ONNX
// Runtime can evaluate the same weights: an independent check of both the
// compiler and the reference evaluator on each family.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_TESTMODELS_HFDECODERONNX_H
#define AFM_TESTMODELS_HFDECODERONNX_H

#include "afm/Model/ModelConfig.h"
#include "afm/Model/WeightSource.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace mlir::afm {

/// The serialized ModelProto (opset 17) of the afm-dense model `config`
/// with `weights` (checked with `checkWeights`): input_ids int64
/// [1, seqLen] to logits float [1, seqLen, V], the whole sequence at once
/// with causal (and windowed) masks and no cache, as scripts/ort-greedy.js
/// runs it; with `seqDimParam`, the sequence dimension of input_ids and
/// logits is declared as that symbolic dim_param (the graph inside stays
/// sized for seqLen, as exporters' graphs are specialized when bound).
/// Errors for what it does not write: another architecture than
/// afm-dense, compressed formats, LoRA; and seqLen outside
/// [1, max_position_embeddings].
llvm::Expected<std::string>
buildHFDecoderONNX(const ModelConfig &config, const WeightSource &weights,
                   int64_t seqLen, const std::string &seqDimParam = "");

/// The same model as exporters write a decoder with a KV cache (optimum's
/// names): inputs input_ids, attention_mask, position_ids (int64) and
/// past_key_values.N.key/value [B, G, past, hd]; outputs logits and
/// present.N.key/value [B, G, past + S, hd]; every batch and sequence
/// dimension symbolic (batch_size, sequence_length, past_sequence_length,
/// total_sequence_length); the rotary tables computed from position_ids
/// with Cos and Sin, the causal, window and padding mask built with
/// Range, Greater, Not and And. Runs with any past length, 0 included.
llvm::Expected<std::string>
buildHFDecoderONNXWithCache(const ModelConfig &config,
                            const WeightSource &weights);

} // namespace mlir::afm

#endif // AFM_TESTMODELS_HFDECODERONNX_H
