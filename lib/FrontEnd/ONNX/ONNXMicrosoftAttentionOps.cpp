//===- ONNXMicrosoftAttentionOps.cpp - com.microsoft attention ------------===//
//
// The older com.microsoft attention ops, MultiHeadAttention (separate
// query, key and value) and Attention (one input projected by packed QKV
// weights), as ONNX Runtime's CPU kernels define them, in their common
// form without masks or a past: softmax(scale * q k^T [+ causal mask]) v
// per head (ONNXAttention.cpp). The forms left out are rejected at the
// node, naming the input or attribute.
//
//===----------------------------------------------------------------------===//

#include "TOSABuilder.h"

using namespace mlir;
using namespace mlir::afm::onnx_import;

namespace {

/// Query, key and value [B, S, D], [B, L, D], [B, L, D] attended over
/// num_heads heads, with the scale and unidirectional (causal) attributes.
/// Returns the output [B, S, D] and the keys and values as heads [B, N,
/// L, H] (the present of a call without a past).
struct AttentionResult {
  Value output, keys, values;
};

AttentionResult attend(TOSABuilder &t, Value q, Value k, Value v,
                       int64_t numHeads) {
  ONNXNode &node = t.node;
  int64_t headDim = TOSABuilder::shapeOf(q).back() / numHeads;
  Value keys = splitHeads(t, k, numHeads, headDim);
  Value values = splitHeads(t, v, numHeads, headDim);
  CausalAttention options{numHeads, numHeads};
  const onnx::AttributeProto *scale = node.getAttribute("scale");
  options.scale = scale ? scale->f() : 0.0;
  options.causal = node.getIntAttribute("unidirectional", 0) != 0;
  Value output = buildCausalAttention(t, splitHeads(t, q, numHeads, headDim),
                                      keys, values, options);
  return {output, keys, values};
}

/// num_heads, which must be positive and divide the hidden size `width`.
FailureOr<int64_t> getNumHeads(ONNXNode &node, int64_t width) {
  int64_t numHeads = node.getIntAttribute("num_heads", 0);
  if (numHeads <= 0 || width % numHeads != 0)
    return node.emitError() << "num_heads (" << numHeads
                            << ") must be positive and divide the hidden "
                               "size "
                            << width;
  return numHeads;
}

/// The optional bias input `index` of the packed query, key and value,
/// [3 * width], as [1, 1, 3 * width]; null when absent.
FailureOr<Value> getPackedBias(TOSABuilder &t, unsigned index, int64_t width) {
  if (!t.node.hasInput(index))
    return Value();
  auto bias = t.node.getFloatInput(index);
  if (failed(bias))
    return failure();
  if (bias->getType().getShape() != llvm::ArrayRef<int64_t>{3 * width})
    return t.node.emitError()
           << "bias " << bias->getType() << " is not [" << 3 * width << "]";
  return t.reshape(*bias, {1, 1, 3 * width});
}

/// Fails unless unidirectional is 0 or 1.
LogicalResult checkUnidirectional(ONNXNode &node) {
  int64_t unidirectional = node.getIntAttribute("unidirectional", 0);
  if (unidirectional != 0 && unidirectional != 1)
    return node.emitError()
           << "unidirectional=" << unidirectional << " is not 0 or 1";
  return success();
}

/// MultiHeadAttention with separate 3-D query [B, S, D], key and value
/// [B, L, D], an optional bias [3 D] added to them, no masks and no past;
/// outputs (output, present_key, present_value), the presents the keys and
/// values as heads.
Results lowerMultiHeadAttention(ONNXNode &node) {
  if (failed(rejectInput(node, 4, "key_padding_mask")) ||
      failed(rejectInput(node, 5, "attention_bias")) ||
      failed(rejectInput(node, 6, "past_key")) ||
      failed(rejectInput(node, 7, "past_value")) ||
      failed(rejectInput(node, 8, "past_sequence_length")) ||
      failed(rejectInput(node, 9, "cache_indirection")) ||
      failed(rejectOutput(node, 3, "qk")) || failed(checkUnidirectional(node)))
    return failure();
  if (!node.hasInput(1) || !node.hasInput(2))
    return node.emitError() << "key and value are required (packed QKV or "
                               "packed KV is not supported)";
  auto query = node.getFloatInput(0);
  auto key = node.getFloatInput(1);
  auto value = node.getFloatInput(2);
  if (failed(query) || failed(key) || failed(value))
    return failure();
  RankedTensorType queryType = query->getType();
  if (queryType.getRank() != 3)
    return node.emitError() << "query " << queryType
                            << " is not 3-D [B, S, D] (packed QKV is not "
                               "supported)";
  int64_t batch = queryType.getDimSize(0), width = queryType.getDimSize(2);
  RankedTensorType keyType = key->getType();
  if (keyType.getRank() != 3 || keyType.getDimSize(0) != batch ||
      keyType.getDimSize(2) != width || value->getType() != keyType)
    return node.emitError()
           << "key " << keyType << " and value " << value->getType()
           << " are not [" << batch << ", L, " << width
           << "] like the query (packed KV, keys as heads and other value "
              "sizes are not supported)";
  auto numHeads = getNumHeads(node, width);
  if (failed(numHeads))
    return failure();
  TOSABuilder t(node);
  Value q = *query, k = *key, v = *value;
  auto bias = getPackedBias(t, 3, width);
  if (failed(bias))
    return failure();
  if (*bias) {
    q = t.add(q, t.slice(*bias, 2, 0, width));
    k = t.add(k, t.slice(*bias, 2, width, width));
    v = t.add(v, t.slice(*bias, 2, 2 * width, width));
  }
  AttentionResult result = attend(t, q, k, v, *numHeads);
  return llvm::SmallVector<Value>{result.output, result.keys, result.values};
}

/// Attention: input [B, S, I] times weights [I, 3 D] (+ bias [3 D]) is
/// the packed [B, S, 3 D] query, key and value; no mask and no past. The
/// optional present is [2, B, N, S, H], the keys and values as heads.
Results lowerAttention(ONNXNode &node) {
  if (failed(rejectInput(node, 3, "mask_index")) ||
      failed(rejectInput(node, 4, "past")) ||
      failed(rejectInput(node, 5, "attention_bias")) ||
      failed(rejectInput(node, 6, "past_sequence_length")) ||
      failed(checkUnidirectional(node)))
    return failure();
  if (node.getAttribute("qkv_hidden_sizes"))
    return node.emitError() << "qkv_hidden_sizes is not supported";
  if (node.getIntAttribute("do_rotary", 0) != 0)
    return node.emitError() << "do_rotary=1 is not supported";
  if (node.getIntAttribute("past_present_share_buffer", 0) != 0)
    return node.emitError() << "past_present_share_buffer=1 is not supported";
  auto input = node.getFloatInput(0);
  auto weights = node.getFloatInput(1);
  if (failed(input) || failed(weights))
    return failure();
  RankedTensorType inputType = input->getType();
  RankedTensorType weightsType = weights->getType();
  if (inputType.getRank() != 3)
    return node.emitError() << "input " << inputType << " is not 3-D";
  int64_t batch = inputType.getDimSize(0), seq = inputType.getDimSize(1),
          inputWidth = inputType.getDimSize(2);
  if (weightsType.getRank() != 2 || weightsType.getDimSize(0) != inputWidth ||
      weightsType.getDimSize(1) % 3 != 0)
    return node.emitError() << "weights " << weightsType << " are not ["
                            << inputWidth << ", 3 * hidden]";
  int64_t width = weightsType.getDimSize(1) / 3;
  auto numHeads = getNumHeads(node, width);
  if (failed(numHeads))
    return failure();
  TOSABuilder t(node);
  Value packed = t.matmul(t.reshape(*input, {1, batch * seq, inputWidth}),
                          t.reshape(*weights, {1, inputWidth, 3 * width}));
  packed = t.reshape(packed, {batch, seq, 3 * width});
  auto bias = getPackedBias(t, 2, width);
  if (failed(bias))
    return failure();
  if (*bias)
    packed = t.add(packed, *bias);
  AttentionResult result =
      attend(t, t.slice(packed, 2, 0, width), t.slice(packed, 2, width, width),
             t.slice(packed, 2, 2 * width, width), *numHeads);
  int64_t headDim = width / *numHeads;
  llvm::SmallVector<int64_t> oneShape = {1, batch, *numHeads, seq, headDim};
  Value present = t.concat(
      {t.reshape(result.keys, oneShape), t.reshape(result.values, oneShape)},
      0);
  return llvm::SmallVector<Value>{result.output, present};
}

} // namespace

void mlir::afm::onnx_import::registerMicrosoftAttentionLowerings(
    llvm::StringMap<NodeLowering> &lowerings) {
  lowerings.insert({
      {"MultiHeadAttention", lowerMultiHeadAttention},
      {"Attention", lowerAttention},
  });
}
