// Every afm op and type survives parse -> print -> parse, in the custom and
// in the generic form.
// RUN: afm-opt %s | afm-opt | FileCheck %s
// RUN: afm-opt %s --mlir-print-op-generic | afm-opt | FileCheck %s

// CHECK-LABEL: func.func @weights
func.func @weights() {
  // CHECK: afm.weight "external.plain" : tensor<64x32xf32>
  %0 = afm.weight "external.plain" : tensor<64x32xf32>
  // CHECK: afm.weight "inline.norm" : tensor<4xf32> = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]>
  %1 = afm.weight "inline.norm" : tensor<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
  // CHECK: afm.weight "q2" : !afm.q2<64x32, per_tensor>
  %2 = afm.weight "q2" : !afm.q2<64x32, per_tensor>
  // CHECK: afm.weight "q2.inline" : !afm.q2<2x8, per_channel> = #afm.quantized<codes = dense<[27, -28, 0, 1]> : tensor<4xi8>, scales = dense<[2.500000e-01, 5.000000e-01]> : tensor<2xf32>>
  %3 = afm.weight "q2.inline" : !afm.q2<2x8, per_channel> = #afm.quantized<codes = dense<[27, -28, 0, 1]> : tensor<4xi8>, scales = dense<[0.25, 0.5]> : tensor<2xf32>>
  // CHECK: afm.weight "emb" : !afm.q4<256x64, group = 32>
  %4 = afm.weight "emb" : !afm.q4<256x64, group = 32>
  // CHECK: afm.weight "astc" : !afm.astc<4096x4096, block = 6x6, offset = linear_segment>
  %5 = afm.weight "astc" : !afm.astc<4096x4096, block = 6x6, offset = linear_segment>
  // CHECK: afm.weight "astc.inline" : !afm.astc<6x6, block = 6x6, offset = min> = #afm.astc_blocks<blocks = dense_resource<astc_block> : tensor<16xi8>, offsets = dense<-5.000000e-01> : tensor<1xf16>>
  %6 = afm.weight "astc.inline" : !afm.astc<6x6, block = 6x6, offset = min> = #afm.astc_blocks<blocks = dense_resource<astc_block> : tensor<16xi8>, offsets = dense<-0.5> : tensor<1xf16>>
  // CHECK: afm.weight "resource" : tensor<2x2xf32> = dense_resource<plain_weight>
  %7 = afm.weight "resource" : tensor<2x2xf32> = dense_resource<plain_weight>
  // CHECK: afm.dequantize %{{.*}} : !afm.q2<64x32, per_tensor> -> tensor<64x32xf32>
  %8 = afm.dequantize %2 : !afm.q2<64x32, per_tensor> -> tensor<64x32xf32>
  // CHECK: afm.dequantize %{{.*}} : !afm.astc<6x6, block = 6x6, offset = min> -> tensor<6x6xf16>
  %9 = afm.dequantize %6 : !afm.astc<6x6, block = 6x6, offset = min> -> tensor<6x6xf16>
  return
}

// CHECK-LABEL: func.func @token_wise
// CHECK-SAME: (%[[TOK:.*]]: tensor<?xi32>, %[[POS:.*]]: index)
func.func @token_wise(%tokens: tensor<?xi32>, %pos: index) -> tensor<?x128xf32> {
  %table = afm.weight "emb" : !afm.q4<256x64, group = 32>
  // CHECK: %[[H:.*]] = afm.embedding %{{.*}}[%[[TOK]]] : !afm.q4<256x64, group = 32>, tensor<?xi32> -> tensor<?x64xf32>
  %h = afm.embedding %table[%tokens] : !afm.q4<256x64, group = 32>, tensor<?xi32> -> tensor<?x64xf32>
  %plain = afm.weight "emb.plain" : tensor<256x64xf32>
  // CHECK: afm.embedding %{{.*}}[%[[TOK]]] : tensor<256x64xf32>, tensor<?xi32> -> tensor<?x64xf32>
  %h2 = afm.embedding %plain[%tokens] : tensor<256x64xf32>, tensor<?xi32> -> tensor<?x64xf32>
  %g = afm.weight "norm" : tensor<64xf32>
  // CHECK: %[[N:.*]] = afm.rms_norm %[[H]], %{{.*}} {epsilon = 9.99999997E-7 : f32} : tensor<?x64xf32>, tensor<64xf32>
  %n = afm.rms_norm %h, %g {epsilon = 1.0e-6 : f32} : tensor<?x64xf32>, tensor<64xf32>
  // CHECK: afm.rms_norm %[[H]], %{{.*}} : tensor<?x64xf32>, tensor<64xf32>
  %n2 = afm.rms_norm %h, %g : tensor<?x64xf32>, tensor<64xf32>
  // CHECK: afm.rms_norm %[[H]], %{{.*}} {weight_offset = 1.000000e+00 : f32} : tensor<?x64xf32>, tensor<64xf32>
  %n3 = afm.rms_norm %h, %g {weight_offset = 1.0 : f32} : tensor<?x64xf32>, tensor<64xf32>
  %w = afm.weight "up" : !afm.q2<128x64, per_channel>
  // CHECK: %[[Y:.*]] = afm.linear %[[N]], %{{.*}} : tensor<?x64xf32>, !afm.q2<128x64, per_channel> -> tensor<?x128xf32>
  %y = afm.linear %n, %w : tensor<?x64xf32>, !afm.q2<128x64, per_channel> -> tensor<?x128xf32>
  %wa = afm.weight "up.astc" : !afm.astc<128x64, block = 6x6, offset = linear_segment>
  // CHECK: afm.linear %[[N]], %{{.*}} : tensor<?x64xf32>, !afm.astc<128x64, block = 6x6, offset = linear_segment> -> tensor<?x128xf32>
  %ya = afm.linear %n, %wa : tensor<?x64xf32>, !afm.astc<128x64, block = 6x6, offset = linear_segment> -> tensor<?x128xf32>
  %a = afm.weight "up.lora_a" : tensor<32x64xf32>
  %b = afm.weight "up.lora_b" : tensor<128x32xf32>
  // CHECK: %[[L:.*]] = afm.lora %[[Y]], %[[N]], %{{.*}}, %{{.*}} {alpha = 3.200000e+01 : f32} : tensor<?x128xf32>, tensor<?x64xf32>, tensor<32x64xf32>, tensor<128x32xf32>
  %l = afm.lora %y, %n, %a, %b {alpha = 32.0 : f32} : tensor<?x128xf32>, tensor<?x64xf32>, tensor<32x64xf32>, tensor<128x32xf32>
  // CHECK: return %[[L]]
  return %l : tensor<?x128xf32>
}

// Scaled RoPE (Llama 3): one inverse frequency per pair of a head.
// CHECK-LABEL: func.func @rope_scaled
func.func @rope_scaled(%k: tensor<?x2x8xf32>, %pos: index) -> tensor<?x2x8xf32> {
  // CHECK: afm.rope %{{.*}} at %{{.*}} {inv_freq = array<f64: 1.000000e+00, 5.000000e-01, 2.500000e-01, 1.250000e-01>} : tensor<?x2x8xf32>
  %kr = afm.rope %k at %pos {inv_freq = array<f64: 1.0, 0.5, 0.25, 0.125>} : tensor<?x2x8xf32>
  return %kr : tensor<?x2x8xf32>
}

// CHECK-LABEL: func.func @attention
func.func @attention(%q: tensor<?x4x16xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x16xf32>,
                     %local: !afm.kv_cache<2x8x16, f32>, %global: !afm.kv_cache<2x4096x16, i8>,
                     %pos: index) -> (tensor<?x4x16xf32>, tensor<?x4x16xf32>, tensor<?x4x16xf32>) {
  // CHECK: %[[QR:.*]] = afm.rope %{{.*}} at %{{.*}} {theta = 1.000000e+04 : f32} : tensor<?x4x16xf32>
  %qr = afm.rope %q at %pos {theta = 10000.0 : f32} : tensor<?x4x16xf32>
  // CHECK: afm.rope %{{.*}} at %{{.*}} : tensor<?x2x16xf32>
  %kr = afm.rope %k at %pos : tensor<?x2x16xf32>
  // CHECK: afm.attention local %[[QR]], %{{.*}}, %{{.*}} into %{{.*}} at %{{.*}} {window = 8 : i64} : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, !afm.kv_cache<2x8x16, f32> -> tensor<?x4x16xf32>
  %o1 = afm.attention local %qr, %kr, %v into %local at %pos {window = 8} : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, !afm.kv_cache<2x8x16, f32> -> tensor<?x4x16xf32>
  // CHECK: afm.attention global %{{.*}}, %{{.*}}, %{{.*}} into %{{.*}} at %{{.*}} {scale = 2.500000e-01 : f32} : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, !afm.kv_cache<2x4096x16, i8> -> tensor<?x4x16xf32>
  %o2 = afm.attention global %q, %k, %v into %global at %pos {scale = 0.25 : f32} : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, !afm.kv_cache<2x4096x16, i8> -> tensor<?x4x16xf32>
  // CHECK: afm.shared_kv_attention global %{{.*}} from %{{.*}} at %{{.*}} : tensor<?x4x16xf32>, !afm.kv_cache<2x4096x16, i8> -> tensor<?x4x16xf32>
  %o3 = afm.shared_kv_attention global %q from %global at %pos : tensor<?x4x16xf32>, !afm.kv_cache<2x4096x16, i8> -> tensor<?x4x16xf32>
  // CHECK: afm.shared_kv_attention local %{{.*}} from %{{.*}} at %{{.*}} {window = 8 : i64}
  %o4 = afm.shared_kv_attention local %qr from %local at %pos {window = 8} : tensor<?x4x16xf32>, !afm.kv_cache<2x8x16, f32> -> tensor<?x4x16xf32>
  return %o1, %o2, %o4 : tensor<?x4x16xf32>, tensor<?x4x16xf32>, tensor<?x4x16xf32>
}

// After ABI binding the cache is runtime memory (keys, then values), and a
// prefill chunk says how many of its rows are real.
// CHECK-LABEL: func.func @bound_attention
func.func @bound_attention(%q: tensor<16x4x16xf32>, %k: tensor<16x2x16xf32>, %kv: memref<2x2x512x16xf32>,
                           %pos: index, %n: index) -> (tensor<16x4x16xf32>, tensor<16x4x16xf32>) {
  // CHECK: afm.attention global %{{.*}}, %{{.*}}, %{{.*}} into %{{.*}} at %{{.*}} count %{{.*}} : tensor<16x4x16xf32>, tensor<16x2x16xf32>, tensor<16x2x16xf32>, memref<2x2x512x16xf32> -> tensor<16x4x16xf32>
  %o = afm.attention global %q, %k, %k into %kv at %pos count %n : tensor<16x4x16xf32>, tensor<16x2x16xf32>, tensor<16x2x16xf32>, memref<2x2x512x16xf32> -> tensor<16x4x16xf32>
  // CHECK: afm.shared_kv_attention global %{{.*}} from %{{.*}} at %{{.*}} count %{{.*}} : tensor<16x4x16xf32>, memref<2x2x512x16xf32> -> tensor<16x4x16xf32>
  %s = afm.shared_kv_attention global %q from %kv at %pos count %n : tensor<16x4x16xf32>, memref<2x2x512x16xf32> -> tensor<16x4x16xf32>
  return %o, %s : tensor<16x4x16xf32>, tensor<16x4x16xf32>
}

// A bound i8 cache holds only codes; its scales (one f32 per token per
// head, keys then values) come after `scales`, for the owner and for
// shared-KV readers alike.
// CHECK-LABEL: func.func @bound_int8_attention
func.func @bound_int8_attention(%q: tensor<16x4x16xf32>, %k: tensor<16x2x16xf32>, %kv: memref<2x2x512x16xi8>,
                                %scales: memref<2x2x512xf32>, %pos: index, %n: index) -> (tensor<16x4x16xf32>, tensor<16x4x16xf32>) {
  // CHECK: afm.attention global %{{.*}}, %{{.*}}, %{{.*}} into %{{.*}} scales %{{.*}} at %{{.*}} count %{{.*}} : tensor<16x4x16xf32>, tensor<16x2x16xf32>, tensor<16x2x16xf32>, memref<2x2x512x16xi8>, memref<2x2x512xf32> -> tensor<16x4x16xf32>
  %o = afm.attention global %q, %k, %k into %kv scales %scales at %pos count %n : tensor<16x4x16xf32>, tensor<16x2x16xf32>, tensor<16x2x16xf32>, memref<2x2x512x16xi8>, memref<2x2x512xf32> -> tensor<16x4x16xf32>
  // CHECK: afm.shared_kv_attention global %{{.*}} from %{{.*}} scales %{{.*}} at %{{.*}} : tensor<16x4x16xf32>, memref<2x2x512x16xi8>, memref<2x2x512xf32> -> tensor<16x4x16xf32>
  %s = afm.shared_kv_attention global %q from %kv scales %scales at %pos : tensor<16x4x16xf32>, memref<2x2x512x16xi8>, memref<2x2x512xf32> -> tensor<16x4x16xf32>
  return %o, %s : tensor<16x4x16xf32>, tensor<16x4x16xf32>
}

// CHECK-LABEL: func.func @ffn_and_moe
func.func @ffn_and_moe(%x: tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x2xi32>, tensor<?x2xf32>) {
  %wg = afm.weight "ffn.gate" : !afm.q2<128x64, per_tensor>
  %wu = afm.weight "ffn.up" : tensor<128x64xf32>
  %wd = afm.weight "ffn.down" : !afm.astc<64x128, block = 6x6, offset = min>
  // CHECK: afm.swiglu %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<?x64xf32>, !afm.q2<128x64, per_tensor>, tensor<128x64xf32>, !afm.astc<64x128, block = 6x6, offset = min>
  %f = afm.swiglu %x, %wg, %wu, %wd : tensor<?x64xf32>, !afm.q2<128x64, per_tensor>, tensor<128x64xf32>, !afm.astc<64x128, block = 6x6, offset = min>
  // CHECK: afm.swiglu %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {activation = #afm.gate_activation<gelu_tanh>} : tensor<?x64xf32>
  %f2 = afm.swiglu %x, %wg, %wu, %wd {activation = #afm.gate_activation<gelu_tanh>} : tensor<?x64xf32>, !afm.q2<128x64, per_tensor>, tensor<128x64xf32>, !afm.astc<64x128, block = 6x6, offset = min>
  %wr = afm.weight "moe.router" : tensor<4x64xf32>
  // CHECK: %{{.*}}, %{{.*}} = afm.topk_router %{{.*}}, %{{.*}} {top_k = 2 : i64} : tensor<?x64xf32>, tensor<4x64xf32> -> tensor<?x2xi32>, tensor<?x2xf32>
  %e, %gates = afm.topk_router %x, %wr {top_k = 2} : tensor<?x64xf32>, tensor<4x64xf32> -> tensor<?x2xi32>, tensor<?x2xf32>
  // Each expert has its own weights, plain or compressed.
  %eg = afm.weight "moe.experts.0.gate" : !afm.q2<128x64, per_channel>
  %eu = afm.weight "moe.experts.0.up" : !afm.q2<128x64, per_channel>
  %ed = afm.weight "moe.experts.0.down" : !afm.q2<64x128, per_channel>
  // CHECK: afm.moe %{{.*}}, %{{.*}} gate(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) up(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) down(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {top_k = 2 : i64} : tensor<?x64xf32>, tensor<4x64xf32>, gate(!afm.q2<128x64, per_channel>, !afm.q2<128x64, per_tensor>, tensor<128x64xf32>, !afm.q2<128x64, per_channel>), up(!afm.q2<128x64, per_channel>, tensor<128x64xf32>, tensor<128x64xf32>, !afm.q2<128x64, per_channel>), down(!afm.q2<64x128, per_channel>, !afm.astc<64x128, block = 6x6, offset = min>, !afm.astc<64x128, block = 6x6, offset = min>, !afm.q2<64x128, per_channel>)
  %m = afm.moe %x, %wr gate(%eg, %wg, %wu, %eg) up(%eu, %wu, %wu, %eu) down(%ed, %wd, %wd, %ed) {top_k = 2}
      : tensor<?x64xf32>, tensor<4x64xf32>,
        gate(!afm.q2<128x64, per_channel>, !afm.q2<128x64, per_tensor>, tensor<128x64xf32>, !afm.q2<128x64, per_channel>),
        up(!afm.q2<128x64, per_channel>, tensor<128x64xf32>, tensor<128x64xf32>, !afm.q2<128x64, per_channel>),
        down(!afm.q2<64x128, per_channel>, !afm.astc<64x128, block = 6x6, offset = min>, !afm.astc<64x128, block = 6x6, offset = min>, !afm.q2<64x128, per_channel>)
  return %f, %m, %e, %gates : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x2xi32>, tensor<?x2xf32>
}

// CHECK-LABEL: func.func @tracks_and_head
func.func @tracks_and_head(%h: tensor<1x64xf32>) -> tensor<1x256xf32> {
  // CHECK: %[[T:.*]] = afm.track_block %{{.*}} : tensor<1x64xf32> {
  // CHECK-NEXT: ^bb0(%[[A:.*]]: tensor<1x64xf32>):
  // CHECK: afm.yield %{{.*}} : tensor<1x64xf32>
  // CHECK-NEXT: }, {
  // CHECK-NEXT: ^bb0(%[[B:.*]]: tensor<1x64xf32>):
  // CHECK-NEXT: afm.yield %[[B]] : tensor<1x64xf32>
  // CHECK-NEXT: }
  %t = afm.track_block %h : tensor<1x64xf32> {
  ^bb0(%a: tensor<1x64xf32>):
    %g = afm.weight "track0.norm" : tensor<64xf32>
    %n = afm.rms_norm %a, %g : tensor<1x64xf32>, tensor<64xf32>
    afm.yield %n : tensor<1x64xf32>
  }, {
  ^bb0(%b: tensor<1x64xf32>):
    afm.yield %b : tensor<1x64xf32>
  }
  %table = afm.weight "emb" : !afm.q4<256x64, group = 32>
  // CHECK: afm.lm_head %[[T]], %{{.*}} : tensor<1x64xf32>, !afm.q4<256x64, group = 32> -> tensor<1x256xf32>
  %logits = afm.lm_head %t, %table : tensor<1x64xf32>, !afm.q4<256x64, group = 32> -> tensor<1x256xf32>
  return %logits : tensor<1x256xf32>
}

// Compressed weights after binding, the ASTC split and the min-shift term.
// CHECK-LABEL: func.func @compressed_parts
// CHECK: afm.bound_weight %{{.*}}, %{{.*}} : tensor<32x16xi8>, tensor<1xf32> -> !afm.q2<32x64, per_tensor>
// CHECK: afm.bound_weight %{{.*}}, %{{.*}} : tensor<256x32xi8>, tensor<256x2xf32> -> !afm.q4<256x64, group = 32>
// CHECK: %[[A:.*]] = afm.bound_weight %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<6x3x16xi32>, tensor<6x3x16xi16>, tensor<6x16xf16>, tensor<6x16xf16> -> !afm.astc<32x64, block = 6x6, offset = min>
// CHECK: %[[D:.*]] = afm.astc_decode %[[A]] : <32x64, block = 6x6, offset = min> -> tensor<32x64xf32>
// CHECK: %[[M:.*]] = afm.astc_offsets %[[A]] : <32x64, block = 6x6, offset = min> -> tensor<6x11xf32>
// CHECK: %[[S:.*]] = afm.min_shift %{{.*}}, %[[M]] {block = array<i64: 6, 6>} : tensor<?x64xf32>, tensor<6x11xf32> -> tensor<?x32xf32>
// CHECK: afm.linear %{{.*}}, %[[D]] acc(%[[S]] : tensor<?x32xf32>) : tensor<?x64xf32>, tensor<32x64xf32> -> tensor<?x32xf32>
func.func @compressed_parts(%x: tensor<?x64xf32>, %c2: tensor<32x16xi8>, %s2: tensor<1xf32>,
                            %c4: tensor<256x32xi8>, %s4: tensor<256x2xf32>,
                            %ca: tensor<6x3x16xi32>, %ta: tensor<6x3x16xi16>, %sa: tensor<6x16xf16>, %ba: tensor<6x16xf16>)
    -> (!afm.q2<32x64, per_tensor>, !afm.q4<256x64, group = 32>, tensor<?x32xf32>) {
  %q2 = afm.bound_weight %c2, %s2 : tensor<32x16xi8>, tensor<1xf32> -> !afm.q2<32x64, per_tensor>
  %q4 = afm.bound_weight %c4, %s4 : tensor<256x32xi8>, tensor<256x2xf32> -> !afm.q4<256x64, group = 32>
  %a = afm.bound_weight %ca, %ta, %sa, %ba : tensor<6x3x16xi32>, tensor<6x3x16xi16>, tensor<6x16xf16>, tensor<6x16xf16> -> !afm.astc<32x64, block = 6x6, offset = min>
  %d = afm.astc_decode %a : !afm.astc<32x64, block = 6x6, offset = min> -> tensor<32x64xf32>
  %m = afm.astc_offsets %a : !afm.astc<32x64, block = 6x6, offset = min> -> tensor<6x11xf32>
  %s = afm.min_shift %x, %m {block = array<i64: 6, 6>} : tensor<?x64xf32>, tensor<6x11xf32> -> tensor<?x32xf32>
  %y = afm.linear %x, %d acc(%s : tensor<?x32xf32>) : tensor<?x64xf32>, tensor<32x64xf32> -> tensor<?x32xf32>
  return %q2, %q4, %y : !afm.q2<32x64, per_tensor>, !afm.q4<256x64, group = 32>, tensor<?x32xf32>
}

{-#
  dialect_resources: {
    builtin: {
      astc_block: "0x01000000FCFD0000000000000000000000000000",
      plain_weight: "0x040000000000803F000000400000404000008040"
    }
  }
#-}
