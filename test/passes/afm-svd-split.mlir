// RUN: afm-opt %s -split-input-file -afm-svd-split | FileCheck %s
// RUN: afm-opt %s -split-input-file -afm-svd-split=rank=4 | FileCheck %s --check-prefix=RANK4

// The rank comes from afm.model (the config's lora_rank): every compressed
// external weight of a linear layer gets a LoRA adapter whose factors the
// packager computes from the weight's SVD; the weight itself is marked so
// that only the residual is compressed.
// CHECK-LABEL: func.func @decode
// CHECK: %[[W:.*]] = afm.weight "wq" : !afm.q2<32x64, per_tensor> {afm.svd_residual = #afm.svd_residual<rank = 8>}
// CHECK: %[[Y:.*]] = afm.linear %[[X:.*]], %[[W]]
// CHECK: %[[A:.*]] = afm.weight "wq.svd_a" : tensor<8x64xf32> {afm.svd_factor = #afm.svd_factor<source = "wq", factor = "a", rank = 8, alpha = 1.600000e+01 : f32, rows = 32, cols = 64>}
// CHECK: %[[B:.*]] = afm.weight "wq.svd_b" : tensor<32x8xf32> {afm.svd_factor = #afm.svd_factor<source = "wq", factor = "b", rank = 8, alpha = 1.600000e+01 : f32, rows = 32, cols = 64>}
// CHECK: %[[L:.*]] = afm.lora %[[Y]], %[[X]], %[[A]], %[[B]] {alpha = 1.600000e+01 : f32}
// CHECK: afm.rms_norm %[[L]]
// Plain weights get no adapter.
// CHECK-NOT: svd_a
// CHECK: return
// With an explicit rank option, alpha defaults to the rank.
// RANK4: afm.weight "wq.svd_a" : tensor<4x64xf32> {afm.svd_factor = #afm.svd_factor<source = "wq", factor = "a", rank = 4, alpha = 4.000000e+00 : f32
module attributes {afm.model = #afm.model<lora_rank = 8, lora_alpha = 16.0 : f32, vocab_size = 32, context_length = 16, prefill_chunk = 4>} {
  func.func @decode(%x: tensor<1x64xf32>, %g: tensor<32xf32>) -> tensor<1x32xf32> {
    %w = afm.weight "wq" : !afm.q2<32x64, per_tensor>
    %y = afm.linear %x, %w : tensor<1x64xf32>, !afm.q2<32x64, per_tensor> -> tensor<1x32xf32>
    %n = afm.rms_norm %y, %g : tensor<1x32xf32>, tensor<32xf32>
    %p = afm.weight "plain" : tensor<32x32xf32>
    %z = afm.linear %n, %p : tensor<1x32xf32>, tensor<32x32xf32> -> tensor<1x32xf32>
    return %z : tensor<1x32xf32>
  }
}

// -----

// Without a lora_rank the pass does nothing.
// CHECK-LABEL: func.func @none
// CHECK-NOT: afm.lora
module {
  func.func @none(%x: tensor<1x64xf32>) -> tensor<1x32xf32> {
    %w = afm.weight "wq" : !afm.q2<32x64, per_tensor>
    %y = afm.linear %x, %w : tensor<1x64xf32>, !afm.q2<32x64, per_tensor> -> tensor<1x32xf32>
    return %y : tensor<1x32xf32>
  }
}

// -----

// A SwiGLU FFN over compressed weights is split into its three linear
// layers and silu(g) * u (g / (1 + exp(-g)) * u), each linear layer with
// its adapter.
// CHECK-LABEL: func.func @ffn
// CHECK-SAME: (%[[X:.*]]: tensor<2x64xf32>)
// CHECK: %[[G:.*]] = afm.linear %[[X]], %{{.*}} : tensor<2x64xf32>, !afm.q2<128x64, per_tensor> -> tensor<2x128xf32>
// CHECK: %[[GA:.*]] = afm.lora %[[G]], %[[X]]
// CHECK: %[[U:.*]] = afm.linear %[[X]], %{{.*}} : tensor<2x64xf32>, !afm.q2<128x64, per_tensor> -> tensor<2x128xf32>
// CHECK: %[[UA:.*]] = afm.lora %[[U]], %[[X]]
// CHECK: %[[NEG:.*]] = arith.negf %[[GA]] : tensor<2x128xf32>
// CHECK: %[[EXP:.*]] = math.exp %[[NEG]] : tensor<2x128xf32>
// CHECK: %[[DEN:.*]] = arith.addf %{{.*}}, %[[EXP]] : tensor<2x128xf32>
// CHECK: %[[SILU:.*]] = arith.divf %[[GA]], %[[DEN]] : tensor<2x128xf32>
// CHECK: %[[H:.*]] = arith.mulf %[[SILU]], %[[UA]] : tensor<2x128xf32>
// CHECK: %[[D:.*]] = afm.linear %[[H]], %{{.*}} : tensor<2x128xf32>, !afm.q2<64x128, per_tensor> -> tensor<2x64xf32>
// CHECK: %[[DA:.*]] = afm.lora %[[D]], %[[H]]
// CHECK: return %[[DA]]
// CHECK-NOT: afm.swiglu
module attributes {afm.model = #afm.model<lora_rank = 4, vocab_size = 32, context_length = 16, prefill_chunk = 4>} {
  func.func @ffn(%x: tensor<2x64xf32>) -> tensor<2x64xf32> {
    %g = afm.weight "gate" : !afm.q2<128x64, per_tensor>
    %u = afm.weight "up" : !afm.q2<128x64, per_tensor>
    %d = afm.weight "down" : !afm.q2<64x128, per_tensor>
    %y = afm.swiglu %x, %g, %u, %d : tensor<2x64xf32>, !afm.q2<128x64, per_tensor>, !afm.q2<128x64, per_tensor>, !afm.q2<64x128, per_tensor>
    return %y : tensor<2x64xf32>
  }
}
