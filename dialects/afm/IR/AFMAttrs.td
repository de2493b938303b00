//===- AFMAttrs.td - afm enums and attributes --------------*- tablegen -*-===//

#ifndef AFM_ATTRS_TD
#define AFM_ATTRS_TD

include "dialects/afm/IR/AFMDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def AFM_AttentionKind : I32EnumAttr<"AttentionKind",
    "attention kind: local (sliding window, RoPE) or global (NoPE)", [
      I32EnumAttrCase<"Local", 0, "local">,
      I32EnumAttrCase<"Global", 1, "global">]> {
  let cppNamespace = "::mlir::afm";
}

def AFM_ScaleGranularity : I32EnumAttr<"ScaleGranularity",
    "how many scales a quantized weight carries", [
      I32EnumAttrCase<"PerTensor", 0, "per_tensor">,
      I32EnumAttrCase<"PerChannel", 1, "per_channel">]> {
  let cppNamespace = "::mlir::afm";
}

def AFM_ASTCOffset : I32EnumAttr<"ASTCOffset",
    "how the per-block f16 offset of an ASTC weight is chosen", [
      // The paper: subtract the block minimum.
      I32EnumAttrCase<"Min", 0, "min">,
      // Place the block's data in the linear segment of ASTC's HDR curve.
      I32EnumAttrCase<"LinearSegment", 1, "linear_segment">]> {
  let cppNamespace = "::mlir::afm";
}

//===----------------------------------------------------------------------===//
// Inline payloads of compressed weights
//===----------------------------------------------------------------------===//

class AFM_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<AFM_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def AFM_QuantizedDataAttr : AFM_Attr<"QuantizedData", "quantized"> {
  let summary = "Inline payload of a `!afm.q2` or `!afm.q4` weight";
  let description = [{
    Packed codes and their scales, for small weights kept in the IR (tests,
    toy models). `codes` is a 1-D `i8` tensor of packed codes, row-major,
    each row padded to a whole byte (4 codes per byte for 2-bit, 2 for
    4-bit, lowest bits first); `scales` is a 1-D `f32` tensor. Which sizes
    are valid depends on the weight type and is checked by `afm.weight`.
    Either may be a `dense_resource`.

    Example:

    ```mlir
    #afm.quantized<codes = dense<[27, -28]> : tensor<2xi8>,
                   scales = dense<0.25> : tensor<1xf32>>
    ```
  }];
  let parameters = (ins "::mlir::ElementsAttr":$codes,
                        "::mlir::ElementsAttr":$scales);
  let assemblyFormat = "`<` `codes` `=` $codes `,` `scales` `=` $scales `>`";
  let genVerifyDecl = 1;
}

def AFM_ASTCDataAttr : AFM_Attr<"ASTCData", "astc_blocks"> {
  let summary = "Inline payload of an `!afm.astc` weight";
  let description = [{
    `blocks` is a 1-D `i8` tensor holding 16 bytes (one 128-bit ASTC block)
    per block, blocks in row-major block order; `offsets` is a 1-D `f16`
    tensor with one offset per block. Sizes are checked by `afm.weight`.

    Example:

    ```mlir
    #afm.astc_blocks<blocks = dense_resource<w_blocks> : tensor<16xi8>,
                     offsets = dense<-0.5> : tensor<1xf16>>
    ```
  }];
  let parameters = (ins "::mlir::ElementsAttr":$blocks,
                        "::mlir::ElementsAttr":$offsets);
  let assemblyFormat =
      "`<` `blocks` `=` $blocks `,` `offsets` `=` $offsets `>`";
  let genVerifyDecl = 1;
}


//===----------------------------------------------------------------------===//
// Stage contracts
//
// What one stage of the pipeline tells a later one travels in these typed
// attributes, under the discardable names that AFMDialect.td declares
// (`afm.model`, `afm.entry`, ...). ODS generates their accessors and the
// dialect's verifyOperationAttribute checks each where it appears.
//===----------------------------------------------------------------------===//

def AFM_EntryKind : I32EnumAttr<"EntryKind",
    "which entry point of a compiled model a function is", [
      I32EnumAttrCase<"Prefill", 0, "prefill">,
      I32EnumAttrCase<"Decode", 1, "decode">,
      I32EnumAttrCase<"Verify", 2, "verify">]> {
  let cppNamespace = "::mlir::afm";
  let genSpecializedAttr = 0;
}

def AFM_EntryKindAttr : EnumAttr<AFM_Dialect, AFM_EntryKind, "entry"> {
  let summary = "Marks a function as the model's prefill, decode or verify "
                "entry";
  let assemblyFormat = "`<` $value `>`";
}

def AFM_GateActivation : I32EnumAttr<"GateActivation",
    "the activation of a gated MLP's gate branch", [
      I32EnumAttrCase<"SiLU", 0, "silu">,
      I32EnumAttrCase<"GELUTanh", 1, "gelu_tanh">]> {
  let cppNamespace = "::mlir::afm";
  let genSpecializedAttr = 0;
}

def AFM_GateActivationAttr
    : EnumAttr<AFM_Dialect, AFM_GateActivation, "gate_activation"> {
  let summary = "SiLU (SwiGLU) or tanh-approximated GELU (GeGLU, Gemma)";
  let assemblyFormat = "`<` $value `>`";
}

def AFM_ActivationFormat : I32EnumAttr<"ActivationFormat",
    "what compressed linear layers multiply their activations as", [
      I32EnumAttrCase<"F32", 0, "f32">,
      I32EnumAttrCase<"Int8", 1, "int8">]> {
  let cppNamespace = "::mlir::afm";
}

def AFM_ModelAttr : AFM_Attr<"Model", "model"> {
  let summary = "What a module is a model of (`afm.model` on the module)";
  let description = [{
    Written by the front ends, read by the passes that need model-wide facts
    (adapters for `afm-svd-split`, the activation format for
    `afm-lower-to-linalg`, the sizes `afm-export-model-facts` checks the
    entry points against) and by the packager, which writes them into the
    binary's manifest. `num_layers` counts the layers of all tracks;
    `hidden_size` and `num_layers` are 0 when not known (a graph imported
    from ONNX).

    ```mlir
    module attributes {afm.model = #afm.model<name = "tiny",
        architecture = "afm-dense", vocab_size = 256, hidden_size = 64,
        num_layers = 2, context_length = 128, prefill_chunk = 16>} {}
    ```
  }];
  let parameters = (ins
    StringRefParameter<"the model's name", "\"\"">:$name,
    StringRefParameter<"the architecture (docs/model-config.md)",
                       "\"\"">:$architecture,
    "int64_t":$vocab_size,
    DefaultValuedParameter<"int64_t", "0", "0: not known">:$hidden_size,
    DefaultValuedParameter<"int64_t", "0", "0: not known">:$num_layers,
    "int64_t":$context_length,
    "int64_t":$prefill_chunk,
    DefaultValuedParameter<"int64_t", "0",
        "rank of the LoRA adapters split off compressed layers">:$lora_rank,
    OptionalParameter<"::mlir::FloatAttr", "the adapters' alpha">:$lora_alpha,
    DefaultValuedParameter<"::mlir::afm::ActivationFormat",
        "::mlir::afm::ActivationFormat::F32">:$linear_activations);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def AFM_KVCacheAttention : I32EnumAttr<"KVCacheAttention",
    "which attention a KV cache serves", [
      I32EnumAttrCase<"None", 0, "none">,
      I32EnumAttrCase<"Local", 1, "local">,
      I32EnumAttrCase<"Global", 2, "global">]> {
  let cppNamespace = "::mlir::afm";
}

def AFM_KVSlotAttr : AFM_Attr<"KVSlot", "kv_slot"> {
  let summary = "Where one layer's KV cache lives in the session's arena";
  let description = [{
    One element of the module's `afm.kv_layout` (written by
    `afm-bind-entry-abi`): the cache of `layer` occupies `bytes` bytes at
    `offset` in the KV arena; an int8 cache's f32 scales occupy
    `scales_bytes` bytes at `scales_offset`.
  }];
  let parameters = (ins
    "int64_t":$layer,
    "int64_t":$offset,
    "int64_t":$bytes,
    "::mlir::Type":$type,
    "::mlir::afm::KVCacheAttention":$attention,
    DefaultValuedParameter<"int64_t", "0">:$scales_offset,
    DefaultValuedParameter<"int64_t", "0">:$scales_bytes);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def AFM_AdapterSlotAttr : AFM_Attr<"AdapterSlot", "adapter_slot"> {
  let summary = "Where one run-time adapter factor lives in the session's arena";
  let description = [{
    One element of the module's `afm.adapter_layout` (written by
    `afm-bind-entry-abi`): the f32 factor `name` of shape `rows` x `cols`
    occupies `bytes` bytes at `offset` in the arena, after the KV caches.
  }];
  let parameters = (ins
    StringRefParameter<"the factor's slot name">:$name,
    "int64_t":$offset,
    "int64_t":$bytes,
    "int64_t":$rows,
    "int64_t":$cols);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def AFM_SVDFactorAttr : AFM_Attr<"SVDFactor", "svd_factor"> {
  let summary = "Marks a weight as one factor of a LoRA adapter's SVD split";
  let description = [{
    Set by `afm-svd-split` on the `afm.weight` of factor `a` ([rank, cols])
    or `b` ([rows, rank]) split off the weight named `source`; the packager
    computes the factor from the source tensor.
  }];
  let parameters = (ins
    StringRefParameter<"the weight it is split off">:$source,
    StringRefParameter<"\"a\" or \"b\"">:$factor,
    "int64_t":$rank,
    "::mlir::FloatAttr":$alpha,
    "int64_t":$rows,
    "int64_t":$cols);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def AFM_SVDResidualAttr : AFM_Attr<"SVDResidual", "svd_residual"> {
  let summary = "Marks a weight as the residual of a rank-`rank` SVD split";
  let parameters = (ins "int64_t":$rank);
  let assemblyFormat = "`<` struct(params) `>`";
}

def AFM_WeightSlotAttr : AFM_Attr<"WeightSlot", "weight_slot"> {
  let summary = "Where one weight buffer lives in the weights section";
  let description = [{
    One element of the module's `afm.weights` (written by
    `afm-bind-entry-abi`): the buffer of weight `name` (of a compressed
    weight of type `format`: its part `part`) occupies `bytes` bytes of
    type `type` at `offset`. `value` is an inline payload; `svd_factor` and
    `svd_residual` carry the weight's LoRA split.
  }];
  let parameters = (ins
    StringRefParameter<"the weight's name">:$name,
    "int64_t":$offset,
    "int64_t":$bytes,
    "::mlir::Type":$type,
    StringRefParameter<"the part of a compressed weight", "\"\"">:$part,
    OptionalParameter<"::mlir::Type">:$format,
    OptionalParameter<"::mlir::Attribute">:$value,
    OptionalParameter<"::mlir::afm::SVDFactorAttr">:$svd_factor,
    OptionalParameter<"::mlir::afm::SVDResidualAttr">:$svd_residual);
  let assemblyFormat = "`<` struct(params) `>`";
}

def AFM_GEMMScheduleAttr : AFM_Attr<"GEMMSchedule", "gemm_schedule"> {
  let summary = "How a packed GEMM is tiled (afm-pack-gemm's choice)";
  let description = [{
    Set by `afm-pack-gemm` on the `linalg.generic` of a GEMM whose operands
    it packed into register-tile panels; `afm-tile-for-target` applies it:
    loops are tiled by `cache_tiles` in the order `cache_interchange`, then
    by `register_tiles` into one vector contraction per tile. When the
    input was packed at run time, `pack_input` is its operand and
    `pack_order` the loop order of the packing copy.
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t">:$cache_tiles,
    ArrayRefParameter<"int64_t">:$cache_interchange,
    ArrayRefParameter<"int64_t">:$register_tiles,
    DefaultValuedParameter<"int64_t", "-1">:$pack_input,
    OptionalArrayRefParameter<"int64_t">:$pack_order);
  let assemblyFormat = [{
    `<` `cache_tiles` `=` `[` $cache_tiles `]` `,`
        `cache_interchange` `=` `[` $cache_interchange `]` `,`
        `register_tiles` `=` `[` $register_tiles `]`
        (`,` `pack_input` `=` $pack_input^)?
        (`,` `pack_order` `=` `[` $pack_order^ `]`)? `>`
  }];
  let genVerifyDecl = 1;
}

def AFM_TileKind : I32EnumAttr<"TileKind",
    "how a tile of a linalg op is vectorized", [
      // Element-wise vector ops and multi-reductions.
      I32EnumAttrCase<"Elementwise", 0, "elementwise">,
      // A vector.contract (register rows x two vectors of columns).
      I32EnumAttrCase<"Contraction", 1, "contraction">,
      // Split-K partial sums: reductions by 1 under an innermost output
      // vector (a GEMV's inner loop); streamed inputs are prefetched.
      I32EnumAttrCase<"SplitK", 2, "split_k">,
      // afm_cpu.dot_bytes over four-byte lanes (Int8DotProducts.h).
      I32EnumAttrCase<"Int8Dot", 3, "int8_dot">,
      // An f32 GEMM on SME ZA tiles (scalable [4]x[4] outer products).
      I32EnumAttrCase<"SME", 4, "sme">]> {
  let cppNamespace = "::mlir::afm";
}

def AFM_TilePlanAttr : AFM_Attr<"TilePlan", "tile_plan"> {
  let summary = "How a linalg op is tiled and vectorized (afm-select-tiles)";
  let description = [{
    Set by `afm-select-tiles` on each linalg op on buffers, applied by
    `afm-tile-for-target`: the op's loops are tiled by `tiles` (0: not
    tiled) in the order `interchange` (empty: the op's), and each tile is
    vectorized as `kind` says. An `sme` plan has no sizes: its tiles are
    scalable.

    ```mlir
    linalg.matmul {afm.tile_plan = #afm.tile_plan<contraction, tiles = [8, 32, 16]>} ...
    ```
  }];
  let parameters = (ins
    "::mlir::afm::TileKind":$kind,
    OptionalArrayRefParameter<"int64_t">:$tiles,
    OptionalArrayRefParameter<"int64_t">:$interchange);
  let assemblyFormat = [{
    `<` $kind (`,` `tiles` `=` `[` $tiles^ `]`)?
        (`,` `interchange` `=` `[` $interchange^ `]`)? `>`
  }];
  let genVerifyDecl = 1;
}

def AFM_TargetAttr : AFM_Attr<"Target", "target"> {
  let summary = "The target a module is compiled for (`afm.target`)";
  let description = [{
    Stamped on the module by `afm-set-target`, the one place that resolves
    a target name; every pass that depends on the target reads it from
    here (`getTargetDescription`). `os` retargets the code paths of `name`
    to another operating system ("linux" or "macos"), or is empty.

    ```mlir
    module attributes {afm.target = #afm.target<name = "apple-m2", os = "linux">} {}
    ```
  }];
  let parameters = (ins
    StringRefParameter<"a name of lib/Target's table">:$name,
    StringRefParameter<"operating system override", "\"\"">:$os);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // AFM_ATTRS_TD
