//===- DecoderModel.h - a small ONNX decoder with random weights -*- C++
//-*-===//
//
// Writes a Llama-style decoder as ONNX Runtime's LLM exporters shape it
// (SimplifiedLayerNormalization, SkipSimplifiedLayerNormalization,
// RotaryEmbedding, GroupQueryAttention and optionally MatMulNBits from the
// com.microsoft domain), with reproducible random weights: the test model
// that the importer is compared with ONNX Runtime on.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_ONNXMODELS_DECODERMODEL_H
#define AFM_ONNXMODELS_DECODERMODEL_H

#include <cstdint>
#include <string>

namespace mlir::afm {

/// The decoder's shape and weight encoding.
struct ONNXDecoderConfig {
  int64_t vocabSize = 96;
  int64_t hiddenSize = 64;
  int64_t numLayers = 2;
  int64_t numHeads = 4;
  int64_t numKVHeads = 2;
  int64_t headDim = 16;
  int64_t ffnSize = 128;
  /// The static sequence length: input_ids is int64 [1, seqLen], logits
  /// float [1, seqLen, vocabSize].
  int64_t seqLen = 32;
  float epsilon = 1e-5f;
  /// 0: float MatMul projections; 2 or 4: MatMulNBits with these bits.
  int64_t matmulBits = 0;
  int64_t blockSize = 32;
  uint64_t seed = 1;
  /// Write it as ONNX Runtime GenAI's model builder does a decoder with a
  /// KV cache: inputs input_ids, attention_mask, position_ids and
  /// past_key_values.N.key/value, outputs logits and present.N.key/value,
  /// every batch and sequence dimension symbolic; GroupQueryAttention's
  /// seqlens_k and total_sequence_length computed from the attention mask
  /// (ReduceSum, Shape); rotary tables for `maxPositions` positions.
  /// seqLen is then unused.
  bool kvCache = false;
  int64_t maxPositions = 2048;
};

/// The serialized ModelProto of the decoder `config` describes. Layers
/// alternate half-split and interleaved rotary embeddings; with
/// MatMulNBits, the LM head is quantized symmetrically (no zero points)
/// with a bias and every other projection asymmetrically with packed
/// zero points, so both forms are exercised.
std::string buildONNXDecoder(const ONNXDecoderConfig &config);

} // namespace mlir::afm

#endif // AFM_ONNXMODELS_DECODERMODEL_H
