//===- AFMOps.td - afm operations ---------------------------*- tablegen -*-===//
//
// Model-level operations. Activations are builtin tensors; dimensions that
// depend on the number of tokens may be dynamic. Verifiers check every static
// shape relation, so shapes that do not fit are rejected before lowering.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_OPS_TD
#define AFM_OPS_TD

include "dialects/afm/IR/AFMTypes.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def AFM_FloatTensor : RankedTensorOf<[AnyFloat]>;
def AFM_Activation2D : 2DTensorOf<[AnyFloat]>;
def AFM_HeadsTensor : 3DTensorOf<[AnyFloat]>;

/// A KV cache before (`!afm.kv_cache`) or after binding to runtime memory
/// (`memref<2 x kvHeads x capacity x headDim>`, keys then values).
def AFM_KVCacheStorage : AnyTypeOf<[AFM_KVCacheType,
                                    MemRefRankOf<[F32, F16, BF16, I8], [4]>],
    "KV cache (!afm.kv_cache or memref<2xGxCxD> of keys then values)">;

/// The scales of a bound i8 cache: one f32 per token per head
/// (`memref<2 x kvHeads x capacity>`, keys then values).
def AFM_KVScalesStorage : MemRefRankOf<[F32], [3]>;

/// Weights a linear layer can multiply by: plain, 2-bit, or ASTC.
def AFM_LinearWeight : AnyTypeOf<[2DTensorOf<[AnyFloat]>, AFM_Q2WeightType,
                                  AFM_ASTCWeightType],
                                 "plain, 2-bit or ASTC weight matrix">;
/// Tables an embedding can be gathered from: plain or 4-bit.
def AFM_EmbeddingTable : AnyTypeOf<[2DTensorOf<[AnyFloat]>, AFM_Q4WeightType],
                                   "plain or 4-bit embedding table">;
/// The LM head may also reuse (tie) a 4-bit embedding table.
def AFM_HeadWeight : AnyTypeOf<[2DTensorOf<[AnyFloat]>, AFM_Q2WeightType,
                                AFM_Q4WeightType, AFM_ASTCWeightType],
                               "plain or compressed weight matrix">;

//===----------------------------------------------------------------------===//
// Weights
//===----------------------------------------------------------------------===//

def AFM_WeightOp : AFM_Op<"weight", [Pure]> {
  let summary = "A named model weight, stored outside the IR or inline";
  let description = [{
    Produces the weight called `name`. Without a `value`, the weight lives
    outside the IR, in the model's weight file (a safetensors entry of that
    name), and tools resolve it when they package the model. With a value,
    the weight is inline: a dense (or `dense_resource`) tensor for plain
    weights, `#afm.quantized` for `!afm.q2`/`!afm.q4`, and `#afm.astc_blocks`
    for `!afm.astc`. Inline payload sizes must match the type.

    Example:

    ```mlir
    %wq = afm.weight "layers.0.attn.q_proj" : tensor<64x64xf32>
    %g = afm.weight "layers.0.attn_norm" : tensor<64xf32> = dense<1.0>
    %w2 = afm.weight "layers.0.ffn.down" : !afm.q2<64x128, per_channel>
    ```
  }];
  let arguments = (ins StrAttr:$name, OptionalAttr<AnyAttr>:$value);
  let results = (outs AnyTypeOf<[AFM_FloatTensor, AFM_CompressedWeight]>:$result);
  // `name : type (= value)?`: the value comes after the type so that a
  // tensor value can take it (`dense<1.0>`, `dense_resource<blob>`).
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def AFM_DequantizeOp : AFM_Op<"dequantize", [Pure]> {
  let summary = "Reconstruct a compressed weight as a float tensor";
  let description = [{
    Expands a `!afm.q2`, `!afm.q4` or `!afm.astc` weight into its float
    values (`s * level(q)`, `scale * q`, or `D + m`). Lowerings avoid
    materializing it; it exists so rewrites can state what they preserve.

    Example:

    ```mlir
    %w = afm.dequantize %q : !afm.q2<64x64, per_tensor> -> tensor<64x64xf32>
    ```
  }];
  let arguments = (ins AFM_CompressedWeight:$weight);
  let results = (outs 2DTensorOf<[AnyFloat]>:$result);
  let assemblyFormat =
      "$weight attr-dict `:` type($weight) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Token-wise layers
//===----------------------------------------------------------------------===//

def AFM_EmbeddingOp : AFM_Op<"embedding", [Pure]> {
  let summary = "Gather rows of an embedding table for a token sequence";
  let description = [{
    `result[t, :] = table[tokens[t], :]`. The table is plain or 4-bit
    (`!afm.q4`, dequantized per looked-up row). Token ids outside the table
    are a runtime error.

    Example:

    ```mlir
    %h = afm.embedding %table[%tokens]
        : !afm.q4<256x64, group = 32>, tensor<?xi32> -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins AFM_EmbeddingTable:$table, 1DTensorOf<[I32]>:$tokens);
  let results = (outs AFM_Activation2D:$result);
  let assemblyFormat = [{
    $table `[` $tokens `]` attr-dict `:` type($table) `,` type($tokens)
      `->` type($result)
  }];
  let hasVerifier = 1;
}

def AFM_RMSNormOp : AFM_Op<"rms_norm", [Pure,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "Root-mean-square normalization over the last dimension";
  let description = [{
    `y = x / sqrt(mean(x^2) + epsilon) * (weight + weight_offset)`, reduced
    over the last dimension in f32. `weight` has the size of that
    dimension; `weight_offset` is 0 except for Gemma's `(1 + w)` norms.

    Example:

    ```mlir
    %y = afm.rms_norm %x, %g {epsilon = 1.0e-05 : f32}
        : tensor<?x64xf32>, tensor<64xf32>
    %z = afm.rms_norm %x, %g {epsilon = 1.0e-06 : f32, weight_offset = 1.0 : f32}
        : tensor<?x64xf32>, tensor<64xf32>
    ```
  }];
  let arguments = (ins AFM_FloatTensor:$input, 1DTensorOf<[AnyFloat]>:$weight,
                       DefaultValuedAttr<F32Attr, "1.0e-5">:$epsilon,
                       DefaultValuedAttr<F32Attr, "0.0">:$weight_offset);
  let results = (outs AFM_FloatTensor:$result);
  let assemblyFormat =
      "$input `,` $weight attr-dict `:` type($input) `,` type($weight)";
  let hasVerifier = 1;
}

def AFM_RoPEOp : AFM_Op<"rope", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "Rotary position embedding (rotate-half form)";
  let description = [{
    Rotates each pair `(i, i + headDim/2)` of every head of token `t` by the
    angle `(position + t) * inv_freq[i]`, where `inv_freq[i]` is
    `theta^(-2i/headDim)`, or the `inv_freq` array when given (headDim/2
    positive frequencies: RoPE scaled for long contexts, such as Llama 3's
    `rope_scaling`; `theta` is then unused). `input` is
    `[tokens, heads, headDim]`, `position` is the position of the first
    token. Local attention layers use it; global layers do not (NoPE).

    Example:

    ```mlir
    %qr = afm.rope %q at %pos {theta = 500000.0 : f32} : tensor<?x4x16xf32>
    %kr = afm.rope %k at %pos {inv_freq = array<f64: 1.0, 0.5, 0.25, 0.125>} : tensor<?x2x8xf32>
    ```
  }];
  let arguments = (ins AFM_HeadsTensor:$input, Index:$position,
                       DefaultValuedAttr<F32Attr, "500000.0">:$theta,
                       OptionalAttr<DenseF64ArrayAttr>:$inv_freq);
  let results = (outs AFM_HeadsTensor:$result);
  let assemblyFormat = "$input `at` $position attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def AFM_LinearOp : AFM_Op<"linear", [Pure]> {
  let summary = "Matrix product with a weight stored output-major";
  let description = [{
    `result = acc + input * weight^T` for `input [T, K]` and `weight [N, K]`
    (`acc [T, N]` is optional and zero when absent). The weight is plain,
    2-bit (`!afm.q2`) or ASTC (`!afm.astc`); compressed weights are
    consumed directly by the lowered kernels. `acc` is the matmul's
    accumulator init: `afm-fuse-min-shift` puts the ASTC offset term there.

    Example:

    ```mlir
    %y = afm.linear %x, %w
        : tensor<?x64xf32>, !afm.q2<128x64, per_tensor> -> tensor<?x128xf32>
    %z = afm.linear %x, %d acc(%m : tensor<?x128xf32>)
        : tensor<?x64xf32>, tensor<128x64xf32> -> tensor<?x128xf32>
    ```
  }];
  let arguments = (ins AFM_Activation2D:$input, AFM_LinearWeight:$weight,
                       Optional<AFM_Activation2D>:$acc);
  let results = (outs AFM_Activation2D:$result);
  let builders = [
    OpBuilder<(ins "Type":$result, "Value":$input, "Value":$weight), [{
      build($_builder, $_state, result, input, weight, Value());
    }]>];
  let assemblyFormat = [{
    $input `,` $weight (`acc` `(` $acc^ `:` type($acc) `)`)? attr-dict `:`
      type($input) `,` type($weight) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Compressed weights: their parts after binding, and the ASTC split
//===----------------------------------------------------------------------===//

def AFM_BoundWeightOp : AFM_Op<"bound_weight", [Pure]> {
  let summary = "A compressed weight assembled from the buffers it lives in";
  let description = [{
    After `afm-bind-entry-abi`, a compressed weight is a set of buffers in
    the runtime's weights region. This op names them, so that lowerings
    read the packed codes directly. The parts, by type:

    - `!afm.q2<NxK, g>`: codes `tensor<N x ceil(K/4) x i8>` (4 codes per
      byte, lowest bits first) and scales `tensor<S x f32>` (S = 1 per
      tensor, N per channel).
    - `!afm.q4<VxD, group = G>`: codes `tensor<V x ceil(D/2) x i8>` (two's
      complement nibbles, low nibble first; within a row the bytes of 16
      consecutive groups interleaved by 4-byte word when the shape allows,
      `include/afm/Layout/PackedWeights.h`) and scales `tensor<V x D/G x f32>`.
    - `!afm.astc<NxK, block = 6x6>` in the CPU form (ASTC blocks transcoded
      at compile time, docs/compressed-weights.md), by row pairs: codes
      `tensor<Nb x 3 x Kb x i32>` and tail codes `tensor<Nb x 3 x Kb x i16>`
      (byte m of lane `[nb, i, kb]` holds column m, of the tail codes
      column 4 + m, of rows 2i, low nibble, and 2i + 1 of block (nb, kb),
      unsigned), scales and biases `tensor<Nb x Kb x f16>`, where Kb is
      `ceil(K/6)` padded to a multiple of 16 (zero codes, scales and
      biases); the weight is `scale * q + bias`, and `bias` plays the role
      of the block offset.

    Example:

    ```mlir
    %w = afm.bound_weight %codes, %scales
        : tensor<128x16xi8>, tensor<1xf32> -> !afm.q2<128x64, per_tensor>
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$parts);
  let results = (outs AFM_CompressedWeight:$result);
  let assemblyFormat =
      "$parts attr-dict `:` type($parts) `->` type($result)";
  let hasVerifier = 1;
}


def AFM_ASTCDecodeOp : AFM_Op<"astc_decode", [Pure]> {
  let summary = "The block values of an ASTC weight, without the offsets";
  let description = [{
    `D`, the decoded blocks of an `!afm.astc` weight, so that
    `dequantize(w) = astc_decode(w) + broadcast(astc_offsets(w))`. After
    binding, the CPU form's `scale * q` plays `D` and its bias the offset;
    the sum is the same. A linear layer over `astc_decode` lowers to a
    kernel that decodes blocks as it multiplies; nothing `[N, K]` is stored.

    Example:

    ```mlir
    %d = afm.astc_decode %w
        : !afm.astc<64x64, block = 6x6, offset = min> -> tensor<64x64xf32>
    ```
  }];
  let arguments = (ins AFM_ASTCWeightType:$weight);
  let results = (outs 2DTensorOf<[F32]>:$result);
  let assemblyFormat =
      "$weight attr-dict `:` type($weight) `->` type($result)";
  let hasVerifier = 1;
}

def AFM_ASTCOffsetsOp : AFM_Op<"astc_offsets", [Pure]> {
  let summary = "The per-block offsets of an ASTC weight";
  let description = [{
    One value per block, `[ceil(N/R), ceil(K/C)]`: the `m_b` of
    docs/semantics.md section 5 (after binding, the CPU form's bias).

    Example:

    ```mlir
    %m = afm.astc_offsets %w
        : !afm.astc<64x64, block = 6x6, offset = min> -> tensor<11x11xf32>
    ```
  }];
  let arguments = (ins AFM_ASTCWeightType:$weight);
  let results = (outs 2DTensorOf<[F32]>:$result);
  let assemblyFormat =
      "$weight attr-dict `:` type($weight) `->` type($result)";
  let hasVerifier = 1;
}

def AFM_MinShiftOp : AFM_Op<"min_shift", [Pure]> {
  let summary = "The offset term of a block-offset matmul";
  let description = [{
    `result[t, n] = sum_kb offsets[n / R, kb] * S[t, kb]` where
    `S[t, kb] = sum_{j < C} input[t, kb * C + j]` sums the activations under
    block column `kb` (zero past `K`). This is the `sum_b m_b S_b(x)` of
    the min-shift fusion: with it as the accumulator init,
    `x * (D + broadcast(m))^T = min_shift(x, m) + x * D^T`.

    Example:

    ```mlir
    %acc = afm.min_shift %x, %m {block = array<i64: 6, 6>}
        : tensor<?x64xf32>, tensor<11x11xf32> -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins AFM_Activation2D:$input, 2DTensorOf<[F32]>:$offsets,
                       DenseI64ArrayAttr:$block);
  let results = (outs AFM_Activation2D:$result);
  let assemblyFormat = [{
    $input `,` $offsets attr-dict `:` type($input) `,` type($offsets) `->`
      type($result)
  }];
  let hasVerifier = 1;
}

def AFM_LoRAOp : AFM_Op<"lora", [Pure, AllTypesMatch<["base", "result"]>]> {
  let summary = "Add a low-rank adapter's contribution to a linear output";
  let description = [{
    `result = base + (alpha / r) * (input * a^T) * b^T` with `input [T, K]`,
    `a [r, K]`, `b [N, r]` and `base [T, N]` (the output of the adapted
    linear layer). The paper's quality-recovery adapters have rank 32.

    Example:

    ```mlir
    %y2 = afm.lora %y, %x, %a, %b {alpha = 32.0 : f32}
        : tensor<?x128xf32>, tensor<?x64xf32>, tensor<32x64xf32>,
          tensor<128x32xf32>
    ```
  }];
  let arguments = (ins AFM_Activation2D:$base, AFM_Activation2D:$input,
                       2DTensorOf<[AnyFloat]>:$a, 2DTensorOf<[AnyFloat]>:$b,
                       F32Attr:$alpha);
  let results = (outs AFM_Activation2D:$result);
  let assemblyFormat = [{
    $base `,` $input `,` $a `,` $b attr-dict `:` type($base) `,`
      type($input) `,` type($a) `,` type($b)
  }];
  let hasVerifier = 1;
}

def AFM_AdapterWeightOp : AFM_Op<"adapter_weight", [Pure]> {
  let summary = "A factor of a run-time LoRA adapter, in the session's memory";
  let description = [{
    Factor `a` ([r, K]) or `b` ([N, r]) of the run-time adapter slot
    called `name` (`afm-compile --adapter-rank`). Unlike `afm.weight`, its
    values are not part of the model: each session holds its own copy,
    which `afm_session_set_adapter` fills from an adapter file and which
    reads as zeros (no adapter) otherwise. `afm-bind-entry-abi` places the
    slots in the session's arena after the KV caches and records them as
    the module's `afm.adapter_layout`. The factors are f32; the adapter's
    scale is folded into `b`.

    Example:

    ```mlir
    %a = afm.adapter_weight "model.layers.0.self_attn.q_proj.lora_a"
        : tensor<32x64xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name);
  let results = (outs 2DTensorOf<[F32]>:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

def AFM_AttentionOp : AFM_Op<"attention", [AttrSizedOperandSegments]> {
  let summary = "Causal GQA attention that appends to its layer's KV cache";
  let description = [{
    Computes causal attention of `query` (`[T, H, headDim]`, `H % G == 0`)
    at positions `position .. position+T-1` over the cached positions and
    the new `key` and `value` rows (`[T, G, headDim]`), with scale
    `1/sqrt(headDim)` unless `scale` is given and softmax in f32, then
    appends the new rows to `cache`.

    With `count`, only the first `count` rows are real tokens: the others
    are padding (prefill works on fixed-size chunks), are not appended, and
    their outputs are unspecified. Real rows never see padding rows, which
    come after them.

    A `local` layer attends to the last `window` positions
    (`max(0, p-window+1) .. p`) and needs a cache of at most `window`
    entries (a ring buffer); RoPE is applied to its queries and keys before.
    A `global` layer attends to the whole context, has no window, and no
    positional embedding (NoPE).

    An `i8` cache holds symmetric int8 codes with one f32 scale per token
    per head (`scale = absmax / 127`, codes `clamp(round(x / scale), -127,
    127)`): new rows are quantized on append and cached rows dequantized on
    read. Once bound to memory, its scales are a separate operand after
    `scales`, a `memref<2xGxCxf32>` (keys then values, C the capacity); it
    is required for an `i8` memref cache and not allowed otherwise (an
    unbound `!afm.kv_cache` carries its scales implicitly).

    With `int8_query` (an `i8` cache only), each query head vector is
    rounded to int8 before the scores, as int8 linear activations are
    (`step = absmax / 127`, codes `round_half_even(x * 127 / absmax)`, 0
    for a zero vector), so that a score is an exact integer dot product of
    codes times `step * key scale * scale`. The values and the softmax stay
    f32.

    Example:

    ```mlir
    %o = afm.attention local %q, %k, %v into %cache at %pos {window = 8}
        : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>,
          !afm.kv_cache<2x8x16, f32> -> tensor<?x4x16xf32>
    %p = afm.attention global %q2, %k2, %v2 into %kv at %pos count %n
        : tensor<16x4x16xf32>, tensor<16x2x16xf32>, tensor<16x2x16xf32>,
          memref<2x2x512x16xf32> -> tensor<16x4x16xf32>
    %r = afm.attention global %q2, %k2, %v2 into %kv8 scales %s at %pos
        : tensor<16x4x16xf32>, tensor<16x2x16xf32>, tensor<16x2x16xf32>,
          memref<2x2x512x16xi8>, memref<2x2x512xf32> -> tensor<16x4x16xf32>
    ```
  }];
  let arguments = (ins AFM_AttentionKind:$kind, AFM_HeadsTensor:$query,
                       AFM_HeadsTensor:$key, AFM_HeadsTensor:$value,
                       Arg<AFM_KVCacheStorage, "the layer's cache",
                           [MemRead, MemWrite]>:$cache,
                       Arg<Optional<AFM_KVScalesStorage>,
                           "the scales of a bound i8 cache",
                           [MemRead, MemWrite]>:$scales,
                       Index:$position, Optional<Index>:$count,
                       OptionalAttr<I64Attr>:$window,
                       OptionalAttr<F32Attr>:$scale,
                       UnitAttr:$int8_query);
  let results = (outs AFM_HeadsTensor:$result);
  let assemblyFormat = [{
    $kind $query `,` $key `,` $value `into` $cache (`scales` $scales^)?
      `at` $position (`count` $count^)? attr-dict
      `:` type($query) `,` type($key) `,` type($value) `,` qualified(type($cache))
      (`,` type($scales)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

def AFM_SharedKVAttentionOp
    : AFM_Op<"shared_kv_attention", [AttrSizedOperandSegments]> {
  let summary = "Causal GQA attention over another layer's KV cache";
  let description = [{
    The attention of a Block-2 layer of the on-device model: it has no key
    or value projections and reads, without appending, the cache that a
    Block-1 layer of the same kind filled for the same positions (so the
    cache holds positions up to `position + count - 1`). Query row `t`
    attends to the cached positions `<= position + t` (and, for `local`,
    within the window). With `count`, rows past it are padding with
    unspecified outputs; without, all rows are real. A bound `i8` cache comes
    with the owner's `scales`, as for `afm.attention`, and `int8_query`
    means what it means there. Otherwise identical to `afm.attention`.

    Example:

    ```mlir
    %o = afm.shared_kv_attention global %q from %cache3 at %pos
        : tensor<?x4x16xf32>, !afm.kv_cache<2x4096x16, f32>
          -> tensor<?x4x16xf32>
    ```
  }];
  let arguments = (ins AFM_AttentionKind:$kind, AFM_HeadsTensor:$query,
                       Arg<AFM_KVCacheStorage, "a Block-1 layer's cache",
                           [MemRead]>:$cache,
                       Arg<Optional<AFM_KVScalesStorage>,
                           "the scales of a bound i8 cache", [MemRead]>:$scales,
                       Index:$position, Optional<Index>:$count,
                       OptionalAttr<I64Attr>:$window,
                       OptionalAttr<F32Attr>:$scale,
                       UnitAttr:$int8_query);
  let results = (outs AFM_HeadsTensor:$result);
  let assemblyFormat = [{
    $kind $query `from` $cache (`scales` $scales^)? `at` $position
      (`count` $count^)? attr-dict
      `:` type($query) `,` qualified(type($cache)) (`,` type($scales)^)?
      `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Feed-forward and mixture of experts
//===----------------------------------------------------------------------===//

def AFM_SwiGLUOp : AFM_Op<"swiglu", [Pure,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "Gated feed-forward network (SwiGLU, or GeGLU)";
  let description = [{
    `result = down(act(gate(input)) * up(input))` with `gate`, `up` of shape
    `[F, d]` and `down` of shape `[d, F]`; each weight may be plain or
    compressed. `act` is `silu` (SwiGLU, the default) or `gelu_tanh`, GELU
    with the tanh approximation `0.5 g (1 + tanh(sqrt(2/pi) (g + 0.044715
    g^3)))` (GeGLU: Gemma's `gelu_pytorch_tanh`).

    Example:

    ```mlir
    %y = afm.swiglu %x, %wg, %wu, %wd
        : tensor<?x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>,
          tensor<64x128xf32>
    %z = afm.swiglu %x, %wg, %wu, %wd {activation = #afm.gate_activation<gelu_tanh>}
        : tensor<?x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>,
          tensor<64x128xf32>
    ```
  }];
  let arguments = (ins AFM_Activation2D:$input, AFM_LinearWeight:$gate,
                       AFM_LinearWeight:$up, AFM_LinearWeight:$down,
                       DefaultValuedAttr<AFM_GateActivationAttr,
                                         "GateActivation::SiLU">:$activation);
  let results = (outs AFM_Activation2D:$result);
  let assemblyFormat = [{
    $input `,` $gate `,` $up `,` $down attr-dict `:` type($input) `,`
      type($gate) `,` type($up) `,` type($down)
  }];
  let hasVerifier = 1;
}

def AFM_TopKRouterOp : AFM_Op<"topk_router", [Pure]> {
  let summary = "Top-k expert routing with softmax over the selected logits";
  let description = [{
    Router logits `r = input * router^T` (`router [E, d]`); for each token
    the `top_k` largest logits are selected (ties to the lower expert index)
    and their softmax gives the gate weights. Returns the expert indices and
    gates, both `[T, top_k]`.

    Example:

    ```mlir
    %experts, %gates = afm.topk_router %x, %wr {top_k = 2 : i64}
        : tensor<?x64xf32>, tensor<4x64xf32>
          -> tensor<?x2xi32>, tensor<?x2xf32>
    ```
  }];
  let arguments = (ins AFM_Activation2D:$input, 2DTensorOf<[AnyFloat]>:$router,
                       I64Attr:$top_k);
  let results = (outs 2DTensorOf<[I32]>:$experts,
                      2DTensorOf<[AnyFloat]>:$gates);
  let assemblyFormat = [{
    $input `,` $router attr-dict `:` type($input) `,` type($router)
      `->` type($experts) `,` type($gates)
  }];
  let hasVerifier = 1;
}

def AFM_MoEOp : AFM_Op<"moe", [Pure, AttrSizedOperandSegments,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "Mixture-of-experts SwiGLU layer with top-k routing";
  let description = [{
    Routes every token as `afm.topk_router` does and returns
    `sum_e g_e * SwiGLU_e(x)` over the selected experts. Expert `e` has its
    own `gate[e]`, `up[e]` (`[F, d]`) and `down[e]` (`[d, F]`), one per
    router row, each plain or compressed like an `afm.swiglu` weight. No
    token is ever dropped (there is no capacity factor).

    Example:

    ```mlir
    %y = afm.moe %x, %wr gate(%g0, %g1) up(%u0, %u1) down(%d0, %d1)
        {top_k = 1 : i64}
        : tensor<?x64xf32>, tensor<2x64xf32>,
          gate(!afm.q2<128x64, per_channel>, !afm.q2<128x64, per_channel>),
          up(!afm.q2<128x64, per_channel>, !afm.q2<128x64, per_channel>),
          down(!afm.q2<64x128, per_channel>, !afm.q2<64x128, per_channel>)
    ```
  }];
  let arguments = (ins AFM_Activation2D:$input, 2DTensorOf<[AnyFloat]>:$router,
                       Variadic<AFM_LinearWeight>:$gate,
                       Variadic<AFM_LinearWeight>:$up,
                       Variadic<AFM_LinearWeight>:$down, I64Attr:$top_k);
  let results = (outs AFM_Activation2D:$result);
  let assemblyFormat = [{
    $input `,` $router `gate` `(` $gate `)` `up` `(` $up `)`
      `down` `(` $down `)` attr-dict `:` type($input) `,` type($router) `,`
      `gate` `(` type($gate) `)` `,` `up` `(` type($up) `)` `,`
      `down` `(` type($down) `)`
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Parallel tracks
//===----------------------------------------------------------------------===//

def AFM_TrackBlockOp : AFM_Op<"track_block", [RecursiveMemoryEffects,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "A block of parallel tracks synchronized by their mean";
  let description = [{
    One region per track. Every track starts from `input` (the shared
    residual stream, its region's only argument), runs its own layers
    independently and yields its residual stream; the result is the mean of
    the yielded values. This is the only synchronization point: nothing in
    one track may use a value defined in another.

    Example:

    ```mlir
    %h1 = afm.track_block %h : tensor<?x64xf32> {
    ^bb0(%t0: tensor<?x64xf32>):
      ...
      afm.yield %a : tensor<?x64xf32>
    }, {
    ^bb0(%t1: tensor<?x64xf32>):
      ...
      afm.yield %b : tensor<?x64xf32>
    }
    ```
  }];
  let arguments = (ins AFM_FloatTensor:$input);
  let results = (outs AFM_FloatTensor:$result);
  let regions = (region VariadicRegion<SizedRegion<1>>:$tracks);
  let assemblyFormat = "$input `:` type($input) $tracks attr-dict";
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let hasCanonicalizer = 1;
  let extraClassDeclaration = [{
    unsigned getNumTracks() { return getTracks().size(); }
  }];
}

def AFM_YieldOp : AFM_Op<"yield", [Pure, Terminator, ReturnLike,
    HasParent<"TrackBlockOp">]> {
  let summary = "Yield a track's residual stream to its track block";
  let description = [{
    Terminates a track of `afm.track_block`.

    Example:

    ```mlir
    afm.yield %h : tensor<?x64xf32>
    ```
  }];
  let arguments = (ins AFM_FloatTensor:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

//===----------------------------------------------------------------------===//
// Output
//===----------------------------------------------------------------------===//

def AFM_LMHeadOp : AFM_Op<"lm_head", [Pure]> {
  let summary = "Project hidden states to vocabulary logits";
  let description = [{
    `logits = hidden * weight^T` with `weight [V, d]`: the output projection,
    or the (possibly 4-bit) embedding table when input and output
    embeddings are tied. Logits are f32.

    Example:

    ```mlir
    %logits = afm.lm_head %h, %table
        : tensor<1x64xf32>, !afm.q4<256x64, group = 32> -> tensor<1x256xf32>
    ```
  }];
  let arguments = (ins AFM_Activation2D:$hidden, AFM_HeadWeight:$weight);
  let results = (outs 2DTensorOf<[F32]>:$logits);
  let assemblyFormat = [{
    $hidden `,` $weight attr-dict `:` type($hidden) `,` type($weight)
      `->` type($logits)
  }];
  let hasVerifier = 1;
}


#endif // AFM_OPS_TD
