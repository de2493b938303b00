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
    offset). KV caches are `!afm.kv_cache` values owned by the runtime; the
    factors of run-time LoRA adapters (`afm.adapter_weight`) live in the
    session's memory too.
  }];
  // The stage contracts: attributes one stage sets on ops it does not own
  // for a later stage to read (AFMAttrs.td, "Stage contracts"). ODS
  // generates an accessor for each; verifyOperationAttribute checks them.
  let discardableAttrs = (ins
    "::mlir::afm::ModelAttr":$model,
    "::mlir::StringAttr":$weights_file,
    "::mlir::afm::TargetAttr":$target,
    "::mlir::afm::EntryKindAttr":$entry,
    "::mlir::IntegerAttr":$layer,
    "::mlir::IntegerAttr":$host_argument,
    "::mlir::ArrayAttr":$weights,
    "::mlir::IntegerAttr":$weights_bytes,
    "::mlir::ArrayAttr":$kv_layout,
    "::mlir::IntegerAttr":$kv_arena_bytes,
    "::mlir::IntegerAttr":$scratch_bytes,
    "::mlir::IntegerAttr":$verify_tokens,
    "::mlir::ArrayAttr":$adapter_layout,
    "::mlir::IntegerAttr":$track_count,
    "::mlir::afm::SVDFactorAttr":$svd_factor,
    "::mlir::afm::SVDResidualAttr":$svd_residual,
    "::mlir::UnitAttr":$int8_activations,
    "::mlir::afm::GEMMScheduleAttr":$gemm_schedule,
    "::mlir::DenseI64ArrayAttr":$whole_tile_dims,
    "::mlir::afm::TilePlanAttr":$tile_plan,
    "::mlir::UnitAttr":$parallel
  );
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
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
