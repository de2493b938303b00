//===- KVDecoderGraph.h - an exported decoder with a KV cache ---*- C++ -*-===//
//
// Exporters (optimum, torch.onnx over transformers, ONNX Runtime GenAI's
// builder) write a decoder with a KV cache as a graph whose inputs are
// input_ids, attention_mask, optionally position_ids, and each layer's
// past_key_values.N.key/value [batch, kv_heads, past, head_dim], and whose
// outputs are the logits and present.N.key/value, the past with this
// call's rows appended. Every batch and sequence dimension is symbolic.
//
// Shapes are static here, so the graph is specialized once per entry
// point: batch 1, R rows (the prefill chunk, or 1 for decode), a past of
// exactly the compiled context C. The session's KV arena holds one
// [kv_heads, C, head_dim] buffer per past input, slot p holding position p.
// A call passes as the past the filled slots right-aligned (zeros in
// front: exporters' left padding), so that the graph's key index minus its
// query index is the true distance (sliding windows compare it); an
// attention_mask that is 1 on those slots and on this call's rows, 0 on
// the padding; position_ids position + i. It then copies the new rows of
// each present (indices C..C+count) into slots position..position+count.
// Masked slots get no weight (the mask adds the lowest float before the
// softmax), so a step costs O(C) and its result is the exporter's.
//
// A graph whose attention is GroupQueryAttention reads its past from
// index 0 instead, as many rows as the attention mask's sum says: there
// the past is the arena buffer itself, the mask 1 on [0, position + R),
// and the new rows are present rows position..position+count.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_COMPILER_KVDECODERGRAPH_H
#define AFM_COMPILER_KVDECODERGRAPH_H

#include "afm/FrontEnd/ONNX/ONNXImport.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::afm {

/// What each input and output of a decoder graph with a KV cache is.
struct KVDecoderInterface {
  /// How the graph reads its past and where a call's rows land in the
  /// present.
  enum class Layout {
    /// present = Concat(past, rows) (optimum, torch.onnx): the past's
    /// filled slots right-aligned, the rows at index `context`.
    Concatenated,
    /// com.microsoft GroupQueryAttention (ONNX Runtime GenAI): the past's
    /// filled slots from index 0, their count seqlens_k + 1 - S taken from
    /// the attention mask's sum; the rows at index `position`.
    FromSeqlens,
  };
  Layout layout = Layout::Concatenated;
  /// One past input and the present output that extends it.
  struct Cache {
    unsigned pastInput = 0;     ///< index in the graph's inputs
    unsigned presentOutput = 0; ///< index in the graph's outputs
    int64_t heads = 0, headDim = 0;
  };
  unsigned inputIds = 0, attentionMask = 0;
  std::optional<unsigned> positionIds;
  /// Output 0 is the logits [1, S, V].
  int64_t vocab = 0;
  std::vector<Cache> caches;

  /// Bytes of the session's caches at context `context`: one f32
  /// [heads, context, headDim] buffer per past input; -1 when that
  /// overflows 64 bits.
  int64_t arenaBytes(int64_t context) const;
};

/// The roles of `signature`'s inputs and outputs when it is a decoder with
/// a KV cache (it has an input named past_key_values.*); std::nullopt when
/// it has none (a stateless decoder); an error naming the input or output
/// that does not fit the form.
llvm::Expected<std::optional<KVDecoderInterface>>
recognizeKVDecoder(const ONNXGraphSignature &signature);

/// The sizes of the graph's symbolic dimensions for an entry of `rows`
/// tokens over a past of `context` positions: batch 1, sequence `rows`,
/// past `context`, total (attention_mask and present) `context + rows`.
/// `userBindings` (--bind-dim) add sizes for other names; an error when a
/// name gets two sizes, or a static dimension contradicts its role.
llvm::Expected<llvm::StringMap<int64_t>>
bindKVDecoderDims(const ONNXGraphSignature &signature,
                  const KVDecoderInterface &interface, int64_t rows,
                  int64_t context,
                  const llvm::StringMap<int64_t> &userBindings);

/// Adds `@afm_prefill` (calling `prefillGraph`, specialized for
/// `prefillRows` rows) and `@afm_decode` (calling `decodeGraph`, 1 row)
/// with the afm_entry_fn signature, and the module's afm.model,
/// afm.weights and afm.kv_* attributes for the packager (context
/// `context`, prefill chunk `prefillRows`, the caches as the KV arena).
LogicalResult wrapKVDecoderGraphs(ModuleOp module, func::FuncOp prefillGraph,
                                  func::FuncOp decodeGraph,
                                  const KVDecoderInterface &interface,
                                  int64_t context, int64_t prefillRows,
                                  llvm::StringRef name);

} // namespace mlir::afm

#endif // AFM_COMPILER_KVDECODERGRAPH_H
