// RUN: afm-opt %s -split-input-file -afm-fuse-min-shift | FileCheck %s
// RUN: afm-opt %s -split-input-file -afm-fuse-min-shift=dequantize=true | FileCheck %s --check-prefix=UNFUSED
// RUN: afm-opt %s -split-input-file -afm-fuse-min-shift --mlir-print-debuginfo | FileCheck %s --check-prefix=LOC

// Before: x (D + broadcast(m))^T on an ASTC weight. After: the offsets m
// meet the per-block sums of x in afm.min_shift, which becomes the
// accumulator init of a linear layer over the offset-free blocks D.
// CHECK-LABEL: func.func @astc_linear
// CHECK-SAME: (%[[X:.*]]: tensor<?x64xf32>, %[[W:.*]]: !afm.astc<32x64, block = 6x6, offset = min>)
// CHECK: %[[D:.*]] = afm.astc_decode %[[W]] : <32x64, block = 6x6, offset = min> -> tensor<32x64xf32>
// CHECK: %[[M:.*]] = afm.astc_offsets %[[W]] : <32x64, block = 6x6, offset = min> -> tensor<6x11xf32>
// CHECK: %[[S:.*]] = afm.min_shift %[[X]], %[[M]] {block = array<i64: 6, 6>} : tensor<?x64xf32>, tensor<6x11xf32> -> tensor<?x32xf32>
// CHECK: %[[Y:.*]] = afm.linear %[[X]], %[[D]] acc(%[[S]] : tensor<?x32xf32>) : tensor<?x64xf32>, tensor<32x64xf32> -> tensor<?x32xf32>
// CHECK: return %[[Y]]
// The unfused reference math materializes the reconstructed weight.
// UNFUSED-LABEL: func.func @astc_linear
// UNFUSED: %[[W:.*]] = afm.dequantize %{{.*}} : !afm.astc<32x64, block = 6x6, offset = min> -> tensor<32x64xf32>
// UNFUSED: afm.linear %{{.*}}, %[[W]] : tensor<?x64xf32>, tensor<32x64xf32> -> tensor<?x32xf32>
func.func @astc_linear(%x: tensor<?x64xf32>, %w: !afm.astc<32x64, block = 6x6, offset = min>) -> tensor<?x32xf32> {
  %y = afm.linear %x, %w : tensor<?x64xf32>, !afm.astc<32x64, block = 6x6, offset = min> -> tensor<?x32xf32>
  return %y : tensor<?x32xf32>
}

// -----

// The explicit unfused form, linear over dequantize, fuses the same way.
// CHECK-LABEL: func.func @explicit_dequantize
// CHECK: afm.astc_decode
// CHECK: afm.min_shift
// CHECK: afm.linear %{{.*}}, %{{.*}} acc(
func.func @explicit_dequantize(%x: tensor<1x64xf32>, %w: !afm.astc<32x64, block = 6x6, offset = linear_segment>) -> tensor<1x32xf32> {
  %d = afm.dequantize %w : !afm.astc<32x64, block = 6x6, offset = linear_segment> -> tensor<32x64xf32>
  %y = afm.linear %x, %d : tensor<1x64xf32>, tensor<32x64xf32> -> tensor<1x32xf32>
  return %y : tensor<1x32xf32>
}

// -----

// An existing accumulator is added to the offset term.
// CHECK-LABEL: func.func @with_acc
// CHECK-SAME: (%[[X:.*]]: tensor<1x64xf32>, %[[W:.*]]: !afm.astc<32x64, block = 6x6, offset = min>, %[[A:.*]]: tensor<1x32xf32>)
// CHECK: %[[S:.*]] = afm.min_shift %[[X]]
// CHECK: %[[SUM:.*]] = arith.addf %[[A]], %[[S]] : tensor<1x32xf32>
// CHECK: afm.linear %[[X]], %{{.*}} acc(%[[SUM]] : tensor<1x32xf32>)
func.func @with_acc(%x: tensor<1x64xf32>, %w: !afm.astc<32x64, block = 6x6, offset = min>, %a: tensor<1x32xf32>) -> tensor<1x32xf32> {
  %y = afm.linear %x, %w acc(%a : tensor<1x32xf32>) : tensor<1x64xf32>, !afm.astc<32x64, block = 6x6, offset = min> -> tensor<1x32xf32>
  return %y : tensor<1x32xf32>
}

// -----

// An LM head over ASTC blocks (lm_head_format "astc") is the same product
// without an accumulator: it becomes the fused linear layer, and keeps the
// head's location.
// CHECK-LABEL: func.func @astc_lm_head
// CHECK-SAME: (%[[H:.*]]: tensor<1x64xf32>, %[[W:.*]]: !afm.astc<256x64, block = 6x6, offset = linear_segment>)
// CHECK: %[[D:.*]] = afm.astc_decode %[[W]]
// CHECK: %[[M:.*]] = afm.astc_offsets %[[W]]
// CHECK: %[[S:.*]] = afm.min_shift %[[H]], %[[M]] {block = array<i64: 6, 6>} : tensor<1x64xf32>, tensor<43x11xf32> -> tensor<1x256xf32>
// CHECK: %[[Y:.*]] = afm.linear %[[H]], %[[D]] acc(%[[S]] : tensor<1x256xf32>) : tensor<1x64xf32>, tensor<256x64xf32> -> tensor<1x256xf32>
// CHECK-NOT: afm.lm_head
// LOC-LABEL: func.func @astc_lm_head
// LOC: afm.linear {{.*}} loc(#[[HEAD:loc[0-9]*]])
// LOC: #[[HEAD]] = loc("lm_head")
// UNFUSED-LABEL: func.func @astc_lm_head
// UNFUSED: %[[W:.*]] = afm.dequantize %{{.*}} : !afm.astc<256x64, block = 6x6, offset = linear_segment> -> tensor<256x64xf32>
// UNFUSED: afm.lm_head %{{.*}}, %[[W]] : tensor<1x64xf32>, tensor<256x64xf32> -> tensor<1x256xf32>
func.func @astc_lm_head(%h: tensor<1x64xf32>, %w: !afm.astc<256x64, block = 6x6, offset = linear_segment>) -> tensor<1x256xf32> {
  %l = afm.lm_head %h, %w : tensor<1x64xf32>, !afm.astc<256x64, block = 6x6, offset = linear_segment> -> tensor<1x256xf32> loc("lm_head")
  return %l : tensor<1x256xf32>
}

// -----

// Other weights are left alone.
// CHECK-LABEL: func.func @q2
// CHECK-NOT: afm.min_shift
// CHECK: afm.linear %{{.*}}, %{{.*}} : tensor<1x64xf32>, !afm.q2<32x64, per_tensor>
func.func @q2(%x: tensor<1x64xf32>, %w: !afm.q2<32x64, per_tensor>) -> tensor<1x32xf32> {
  %y = afm.linear %x, %w : tensor<1x64xf32>, !afm.q2<32x64, per_tensor> -> tensor<1x32xf32>
  return %y : tensor<1x32xf32>
}

// -----

// A SwiGLU FFN with an ASTC weight is split into its three linear layers
// (gate and up in f32, silu(g) = g / (1 + exp(-g)) times up, then down),
// each fused: no afm.swiglu is left to materialize D + m. The layer's
// afm.int8_activations goes to every linear layer and min-shift.
// CHECK-LABEL: func.func @astc_swiglu
// CHECK-SAME: (%[[X:.*]]: tensor<1x64xf32>, %[[G:.*]]: !afm.astc<128x64, {{.*}}>, %[[U:.*]]: !afm.astc<128x64, {{.*}}>, %[[DN:.*]]: !afm.astc<64x128, {{.*}}>)
// CHECK-NOT: afm.swiglu
// CHECK: afm.astc_decode %[[G]]
// CHECK: %[[GS:.*]] = afm.min_shift %[[X]], %{{.*}} {afm.int8_activations, block = array<i64: 6, 6>}
// CHECK: %[[GATE:.*]] = afm.linear %[[X]], %{{.*}} acc(%[[GS]] : tensor<1x128xf32>) {afm.int8_activations}
// CHECK: afm.astc_decode %[[U]]
// CHECK: %[[UP:.*]] = afm.linear %[[X]], %{{.*}} acc(%{{.*}} : tensor<1x128xf32>) {afm.int8_activations}
// CHECK: %[[E:.*]] = math.exp %{{.*}} : tensor<1x128xf32>
// CHECK: %[[DEN:.*]] = arith.addf %{{.*}}, %[[E]] : tensor<1x128xf32>
// CHECK: %[[SILU:.*]] = arith.divf %[[GATE]], %[[DEN]] : tensor<1x128xf32>
// CHECK: %[[H:.*]] = arith.mulf %[[SILU]], %[[UP]] : tensor<1x128xf32>
// CHECK: afm.astc_decode %[[DN]]
// CHECK: %[[DS:.*]] = afm.min_shift %[[H]]
// CHECK: %[[Y:.*]] = afm.linear %[[H]], %{{.*}} acc(%[[DS]] : tensor<1x64xf32>) {afm.int8_activations}
// CHECK: return %[[Y]]
// UNFUSED-LABEL: func.func @astc_swiglu
// UNFUSED-COUNT-3: afm.dequantize
// UNFUSED: afm.swiglu
func.func @astc_swiglu(%x: tensor<1x64xf32>, %g: !afm.astc<128x64, block = 6x6, offset = linear_segment>, %u: !afm.astc<128x64, block = 6x6, offset = linear_segment>, %d: !afm.astc<64x128, block = 6x6, offset = linear_segment>) -> tensor<1x64xf32> {
  %y = afm.swiglu %x, %g, %u, %d {afm.int8_activations} : tensor<1x64xf32>, !afm.astc<128x64, block = 6x6, offset = linear_segment>, !afm.astc<128x64, block = 6x6, offset = linear_segment>, !afm.astc<64x128, block = 6x6, offset = linear_segment>
  return %y : tensor<1x64xf32>
}

// -----

// GeGLU (Gemma's gate): 0.5 g (1 + tanh(sqrt(2/pi) (g + 0.044715 g^3))).
// A SwiGLU over plain weights stays whole.
// CHECK-LABEL: func.func @astc_geglu
// CHECK-NOT: afm.swiglu
// CHECK: %[[GATE:.*]] = afm.linear
// CHECK: %[[UP:.*]] = afm.linear
// CHECK: arith.constant dense<4.471500e-02> : tensor<1x128xf32>
// CHECK: arith.constant dense<0.797884583> : tensor<1x128xf32>
// CHECK: math.tanh %{{.*}} : tensor<1x128xf32>
// CHECK: arith.constant dense<5.000000e-01> : tensor<1x128xf32>
// CHECK: %[[HALF:.*]] = arith.mulf %{{.*}}, %[[GATE]] : tensor<1x128xf32>
// CHECK: %[[ONEPLUS:.*]] = arith.addf %{{.*}}, %{{.*}} : tensor<1x128xf32>
// CHECK: %[[ACT:.*]] = arith.mulf %[[HALF]], %[[ONEPLUS]] : tensor<1x128xf32>
// CHECK: arith.mulf %[[ACT]], %[[UP]] : tensor<1x128xf32>
// CHECK-LABEL: func.func @plain_swiglu
// CHECK: afm.swiglu
func.func @astc_geglu(%x: tensor<1x64xf32>, %g: !afm.astc<128x64, block = 6x6, offset = min>, %u: tensor<128x64xf32>, %d: tensor<64x128xf32>) -> tensor<1x64xf32> {
  %y = afm.swiglu %x, %g, %u, %d {activation = #afm.gate_activation<gelu_tanh>} : tensor<1x64xf32>, !afm.astc<128x64, block = 6x6, offset = min>, tensor<128x64xf32>, tensor<64x128xf32>
  return %y : tensor<1x64xf32>
}
func.func @plain_swiglu(%x: tensor<1x64xf32>, %g: tensor<128x64xf32>, %u: tensor<128x64xf32>, %d: tensor<64x128xf32>) -> tensor<1x64xf32> {
  %y = afm.swiglu %x, %g, %u, %d : tensor<1x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>
  return %y : tensor<1x64xf32>
}
