//===- DecoderGraph.h - a stateless decoder graph as afm entry points -*- C++ -*-===//
//
// An imported decoder graph (e.g. ONNX: token ids [1, S] -> logits
// [1, S, V]) has no KV cache: each step computes the whole window. Wrapped
// into the runtime's prefill/decode entry points (include/afm/kernel_abi.h),
// it packages into an .afmb like any afm model: the session's KV arena
// holds the token history, each call appends its tokens, runs the graph on
// the window and returns the logits of the last new position. Causal
// attention makes the zeros after the history irrelevant. The graph's
// body is inlined into the prefill entry; decode calls prefill.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_COMPILER_DECODERGRAPH_H
#define AFM_COMPILER_DECODERGRAPH_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::afm {

/// An entry point with the afm_entry_fn signature (include/afm/kernel_abi.h)
/// around a graph: no weights section, `maxTokens` token ids, the arena
/// typed `arenaType`, `vocab` f32 logits out. createGraphEntry leaves the
/// builder at the start of its body.
struct GraphEntry {
  func::FuncOp func;
  Value tokens, arena, logits;
  Value count, position; ///< as index
};
GraphEntry createGraphEntry(OpBuilder &b, Location loc, llvm::StringRef symbol,
                            int64_t maxTokens, MemRefType arenaType,
                            int64_t vocab);

/// Replaces `call` by the body of its single-block callee `graph`: the
/// graph's temporaries are then the entry's, which afm-plan-step-memory
/// lays out in the arena (a step allocates nothing; heap buffers above
/// glibc's mmap threshold cost page faults every step).
void inlineGraphCall(OpBuilder &b, func::CallOp call, func::FuncOp graph);

/// Writes row `row` of `logits` [1, S, V] into the entry's logits output,
/// and returns from the entry.
void storeLogitsRowAndReturn(OpBuilder &b, Location loc,
                             const GraphEntry &entry, Value logits, Value row);

/// Turns `@main(ids: tensor<1xSxi64|i32>) -> (tensor<1xSxVxf32>, ...)` into
/// the private `@afm_graph` called by `@afm_prefill` and `@afm_decode`, and
/// sets the module's afm.model / afm.weights / afm.kv_layout attributes
/// for writePackage (context length S, vocabulary V, no weights section:
/// the graph's constants are in the code). Emits an error when `@main` is
/// not such a graph.
LogicalResult wrapDecoderGraph(ModuleOp module, llvm::StringRef name);

} // namespace mlir::afm

#endif // AFM_COMPILER_DECODERGRAPH_H
