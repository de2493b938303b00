//===- AFMDialect.td - afm dialect definition --------------*- tablegen -*-===//
//
// The afm dialect: model-level vocabulary of Apple-Foundation-Model-style
// language models (PT-MoE, interleaved local/global attention, shared-KV
// layers, compressed weights). Semantics: docs/semantics.md.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_DIALECT_TD
#define AFM_DIALECT_TD

include "mlir/IR/OpBase.td"

def AFM_Dialect : Dialect {
  let name = "afm";
  let cppNamespace = "::mlir::afm";
  let summary = "Model-level ops and compressed-weight types of AFM-style LMs";
  let description = [{
    The `afm` dialect describes a decoder-only language model at the level of
    its building blocks: embeddings, RMSNorm, RoPE, linear layers over plain
    and compressed weights, grouped-query attention with a runtime-owned KV
    cache (local sliding-window or global, optionally reading another layer's
    cache), SwiGLU feed-forward networks, mixture-of-experts layers, and
    parallel track blocks that synchronize by averaging.

    Activations are ordinary builtin tensors. Weights are produced by
    `afm.weight`, which names a tensor stored outside the IR (a safetensors
    entry) or carries it inline. Compressed weights have their own types:
    `!afm.q2` (2-bit balanced levels with a scale), `!afm.q4` (4-bit codes
    with group scales), `!afm.astc` (ASTC HDR blocks with a per-block f16
    offset). KV caches are `!afm.kv_cache` values owned by the runtime.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
    void registerTypes();
  }];
}

class AFM_Op<string mnemonic, list<Trait> traits = []>
    : Op<AFM_Dialect, mnemonic, traits>;

#endif // AFM_DIALECT_TD
