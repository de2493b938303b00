// A tiny two-layer decoder in afm IR: d=64, 4 query heads and 2 KV heads of
// dimension 16, vocabulary 256. Layer 0 is local (window 8, RoPE), layer 1
// is global (NoPE). Weights are external: they are named, and resolved from
// the model's safetensors file when the model is packaged.
module attributes {afm.weights_file = "tiny-decoder.safetensors"} {
  func.func @prefill(%tokens: tensor<?xi32>, %pos: index,
                     %kv0: !afm.kv_cache<2x8x16, f32>,
                     %kv1: !afm.kv_cache<2x512x16, f32>) -> tensor<1x256xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %t = tensor.dim %tokens, %c0 : tensor<?xi32>
    %table = afm.weight "embed_tokens" : tensor<256x64xf32>
    %h0 = afm.embedding %table[%tokens] : tensor<256x64xf32>, tensor<?xi32> -> tensor<?x64xf32>

    // Layer 0: local attention with RoPE, SwiGLU FFN.
    %g0 = afm.weight "layers.0.attn_norm" : tensor<64xf32>
    %n0 = afm.rms_norm %h0, %g0 : tensor<?x64xf32>, tensor<64xf32>
    %wq0 = afm.weight "layers.0.attn.q_proj" : tensor<64x64xf32>
    %wk0 = afm.weight "layers.0.attn.k_proj" : tensor<32x64xf32>
    %wv0 = afm.weight "layers.0.attn.v_proj" : tensor<32x64xf32>
    %q0 = afm.linear %n0, %wq0 : tensor<?x64xf32>, tensor<64x64xf32> -> tensor<?x64xf32>
    %k0 = afm.linear %n0, %wk0 : tensor<?x64xf32>, tensor<32x64xf32> -> tensor<?x32xf32>
    %v0 = afm.linear %n0, %wv0 : tensor<?x64xf32>, tensor<32x64xf32> -> tensor<?x32xf32>
    %q0h = tensor.expand_shape %q0 [[0], [1, 2]] output_shape [%t, 4, 16] : tensor<?x64xf32> into tensor<?x4x16xf32>
    %k0h = tensor.expand_shape %k0 [[0], [1, 2]] output_shape [%t, 2, 16] : tensor<?x32xf32> into tensor<?x2x16xf32>
    %v0h = tensor.expand_shape %v0 [[0], [1, 2]] output_shape [%t, 2, 16] : tensor<?x32xf32> into tensor<?x2x16xf32>
    %q0r = afm.rope %q0h at %pos : tensor<?x4x16xf32>
    %k0r = afm.rope %k0h at %pos : tensor<?x2x16xf32>
    %a0 = afm.attention local %q0r, %k0r, %v0h into %kv0 at %pos {window = 8} : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, !afm.kv_cache<2x8x16, f32> -> tensor<?x4x16xf32>
    %a0f = tensor.collapse_shape %a0 [[0], [1, 2]] : tensor<?x4x16xf32> into tensor<?x64xf32>
    %wo0 = afm.weight "layers.0.attn.o_proj" : tensor<64x64xf32>
    %o0 = afm.linear %a0f, %wo0 : tensor<?x64xf32>, tensor<64x64xf32> -> tensor<?x64xf32>
    %h1 = arith.addf %h0, %o0 : tensor<?x64xf32>
    %f0 = afm.weight "layers.0.ffn_norm" : tensor<64xf32>
    %m0 = afm.rms_norm %h1, %f0 : tensor<?x64xf32>, tensor<64xf32>
    %wg0 = afm.weight "layers.0.ffn.gate_proj" : tensor<128x64xf32>
    %wu0 = afm.weight "layers.0.ffn.up_proj" : tensor<128x64xf32>
    %wd0 = afm.weight "layers.0.ffn.down_proj" : tensor<64x128xf32>
    %y0 = afm.swiglu %m0, %wg0, %wu0, %wd0 : tensor<?x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>
    %h2 = arith.addf %h1, %y0 : tensor<?x64xf32>

    // Layer 1: global attention, no positional embedding.
    %g1 = afm.weight "layers.1.attn_norm" : tensor<64xf32>
    %n1 = afm.rms_norm %h2, %g1 : tensor<?x64xf32>, tensor<64xf32>
    %wq1 = afm.weight "layers.1.attn.q_proj" : tensor<64x64xf32>
    %wk1 = afm.weight "layers.1.attn.k_proj" : tensor<32x64xf32>
    %wv1 = afm.weight "layers.1.attn.v_proj" : tensor<32x64xf32>
    %q1 = afm.linear %n1, %wq1 : tensor<?x64xf32>, tensor<64x64xf32> -> tensor<?x64xf32>
    %k1 = afm.linear %n1, %wk1 : tensor<?x64xf32>, tensor<32x64xf32> -> tensor<?x32xf32>
    %v1 = afm.linear %n1, %wv1 : tensor<?x64xf32>, tensor<32x64xf32> -> tensor<?x32xf32>
    %q1h = tensor.expand_shape %q1 [[0], [1, 2]] output_shape [%t, 4, 16] : tensor<?x64xf32> into tensor<?x4x16xf32>
    %k1h = tensor.expand_shape %k1 [[0], [1, 2]] output_shape [%t, 2, 16] : tensor<?x32xf32> into tensor<?x2x16xf32>
    %v1h = tensor.expand_shape %v1 [[0], [1, 2]] output_shape [%t, 2, 16] : tensor<?x32xf32> into tensor<?x2x16xf32>
    %a1 = afm.attention global %q1h, %k1h, %v1h into %kv1 at %pos : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, !afm.kv_cache<2x512x16, f32> -> tensor<?x4x16xf32>
    %a1f = tensor.collapse_shape %a1 [[0], [1, 2]] : tensor<?x4x16xf32> into tensor<?x64xf32>
    %wo1 = afm.weight "layers.1.attn.o_proj" : tensor<64x64xf32>
    %o1 = afm.linear %a1f, %wo1 : tensor<?x64xf32>, tensor<64x64xf32> -> tensor<?x64xf32>
    %h3 = arith.addf %h2, %o1 : tensor<?x64xf32>
    %f1 = afm.weight "layers.1.ffn_norm" : tensor<64xf32>
    %m1 = afm.rms_norm %h3, %f1 : tensor<?x64xf32>, tensor<64xf32>
    %wg1 = afm.weight "layers.1.ffn.gate_proj" : tensor<128x64xf32>
    %wu1 = afm.weight "layers.1.ffn.up_proj" : tensor<128x64xf32>
    %wd1 = afm.weight "layers.1.ffn.down_proj" : tensor<64x128xf32>
    %y1 = afm.swiglu %m1, %wg1, %wu1, %wd1 : tensor<?x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>
    %h4 = arith.addf %h3, %y1 : tensor<?x64xf32>

    // Final norm and tied LM head on the last position.
    %last = arith.subi %t, %c1 : index
    %hl = tensor.extract_slice %h4[%last, 0] [1, 64] [1, 1] : tensor<?x64xf32> to tensor<1x64xf32>
    %gf = afm.weight "norm" : tensor<64xf32>
    %nf = afm.rms_norm %hl, %gf : tensor<1x64xf32>, tensor<64xf32>
    %logits = afm.lm_head %nf, %table : tensor<1x64xf32>, tensor<256x64xf32> -> tensor<1x256xf32>
    return %logits : tensor<1x256xf32>
  }
}
