// RUN: afm-opt %s -split-input-file -afm-bind-entry-abi -verify-diagnostics | FileCheck %s

// Weights are laid out 64-byte aligned in order of first use; a weight used
// twice (tied embedding) is stored once. Each layer's cache is a view of the
// KV arena; the logits are stored into the runtime's buffer.
// CHECK: module attributes {afm.kv_arena_bytes = 4096 : i64
// CHECK-SAME: afm.kv_layout = [#afm.kv_slot<layer = 0, offset = 0, bytes = 2048, type = !afm.kv_cache<2x8x16, f32>, attention = local>, #afm.kv_slot<layer = 1, offset = 2048, bytes = 2048, type = !afm.kv_cache<2x8x16, f32>, attention = global>]
// CHECK-SAME: afm.weights = [#afm.weight_slot<name = "embed", offset = 0, bytes = 8192, type = tensor<32x64xf32>>, #afm.weight_slot<name = "norm", offset = 8192, bytes = 12, type = tensor<3xf32>, value = dense<1.000000e+00> : tensor<3xf32>>, #afm.weight_slot<name = "head", offset = 8256, bytes = 8192, type = tensor<32x64xf32>>]
// CHECK-SAME: afm.weights_bytes = 16448 : i64
// CHECK-LABEL: func.func @afm_prefill(
// CHECK-SAME: %[[W:.*]]: memref<16448xi8>, %[[TOK:.*]]: memref<4xi32>, %[[COUNT:.*]]: index, %[[POS:.*]]: index, %[[KV:.*]]: memref<4096xi8>, %[[LOGITS:.*]]: memref<32xf32>, %{{.*}}: !llvm.ptr)
// CHECK-SAME: attributes {afm.entry = #afm.entry<prefill>}
// CHECK-DAG: bufferization.to_tensor %[[TOK]] restrict : memref<4xi32> to tensor<4xi32>
// CHECK-DAG: memref.view %[[KV]][%c0{{.*}}][] : memref<4096xi8> to memref<2x2x8x16xf32>
// CHECK-DAG: memref.view %[[KV]][%c2048{{.*}}][] : memref<4096xi8> to memref<2x2x8x16xf32>
// CHECK: afm.attention local {{.*}} at %[[POS]] count %[[COUNT]]
// CHECK: memref.view %[[W]][%c8256{{.*}}][] : memref<16448xi8> to memref<32x64xf32>
// CHECK: bufferization.materialize_in_destination %{{.*}} in restrict writable %[[LOGITS]] : (tensor<32xf32>, memref<32xf32>) -> ()
// CHECK-NEXT: return
// CHECK-LABEL: func.func @afm_decode(
// CHECK-SAME: memref<16448xi8>, %{{.*}}: memref<1xi32>
func.func @prefill(%tokens: tensor<4xi32>, %count: index, %pos: index,
                   %kv0: !afm.kv_cache<2x8x16, f32> {afm.layer = 0 : i64},
                   %kv1: !afm.kv_cache<2x8x16, f32> {afm.layer = 1 : i64}) -> tensor<1x32xf32>
    attributes {afm.entry = #afm.entry<prefill>} {
  %table = afm.weight "embed" : tensor<32x64xf32>
  %n = afm.weight "norm" : tensor<3xf32> = dense<1.0>
  %h = afm.embedding %table[%tokens] : tensor<32x64xf32>, tensor<4xi32> -> tensor<4x64xf32>
  %q = tensor.expand_shape %h [[0], [1, 2]] output_shape [4, 4, 16] : tensor<4x64xf32> into tensor<4x4x16xf32>
  %k = tensor.extract_slice %q[0, 0, 0] [4, 2, 16] [1, 1, 1] : tensor<4x4x16xf32> to tensor<4x2x16xf32>
  %a = afm.attention local %q, %k, %k into %kv0 at %pos count %count {window = 8} : tensor<4x4x16xf32>, tensor<4x2x16xf32>, tensor<4x2x16xf32>, !afm.kv_cache<2x8x16, f32> -> tensor<4x4x16xf32>
  %b = afm.attention global %q, %k, %k into %kv1 at %pos count %count : tensor<4x4x16xf32>, tensor<4x2x16xf32>, tensor<4x2x16xf32>, !afm.kv_cache<2x8x16, f32> -> tensor<4x4x16xf32>
  %f = tensor.collapse_shape %b [[0], [1, 2]] : tensor<4x4x16xf32> into tensor<4x64xf32>
  %row = tensor.extract_slice %f[0, 0] [1, 64] [1, 1] : tensor<4x64xf32> to tensor<1x64xf32>
  %head = afm.weight "head" : tensor<32x64xf32>
  %l = afm.lm_head %row, %head : tensor<1x64xf32>, tensor<32x64xf32> -> tensor<1x32xf32>
  return %l : tensor<1x32xf32>
}
func.func @decode(%tokens: tensor<1xi32>, %count: index, %pos: index,
                  %kv0: !afm.kv_cache<2x8x16, f32> {afm.layer = 0 : i64},
                  %kv1: !afm.kv_cache<2x8x16, f32> {afm.layer = 1 : i64}) -> tensor<32xf32>
    attributes {afm.entry = #afm.entry<decode>} {
  %table = afm.weight "embed" : tensor<32x64xf32>
  %h = afm.embedding %table[%tokens] : tensor<32x64xf32>, tensor<1xi32> -> tensor<1x64xf32>
  %l = afm.lm_head %h, %table : tensor<1x64xf32>, tensor<32x64xf32> -> tensor<1x32xf32>
  %flat = tensor.collapse_shape %l [[0, 1]] : tensor<1x32xf32> into tensor<32xf32>
  return %flat : tensor<32xf32>
}

// -----

// An i8 cache is its codes followed, 64-byte aligned, by its f32 scales (one
// per token per head, keys then values), both in the arena and both in
// afm.kv_layout. Layer 0: 2*2*5*16 = 320 code bytes at 0, 2*2*5*4 = 80
// scale bytes at 320. Layer 1: 2*2*8*16 = 512 code bytes at 448, 2*2*8*4 =
// 128 scale bytes at 960, so the arena ends at 1088. Every attention op that
// reads a cache, shared-KV readers included, gets its scales.
// CHECK: module attributes {afm.kv_arena_bytes = 1088 : i64
// CHECK-SAME: afm.kv_layout = [#afm.kv_slot<layer = 0, offset = 0, bytes = 320, type = !afm.kv_cache<2x5x16, i8>, attention = global, scales_offset = 320, scales_bytes = 80>, #afm.kv_slot<layer = 1, offset = 448, bytes = 512, type = !afm.kv_cache<2x8x16, i8>, attention = global, scales_offset = 960, scales_bytes = 128>]
// CHECK-LABEL: func.func @afm_decode(
// CHECK-SAME: %[[KV:[^:]*]]: memref<1088xi8>
// CHECK-DAG: %[[S0:.*]] = memref.view %[[KV]][%c320{{.*}}][] : memref<1088xi8> to memref<2x2x5xf32>
// CHECK-DAG: %[[C0:.*]] = memref.view %[[KV]][%c0{{.*}}][] : memref<1088xi8> to memref<2x2x5x16xi8>
// CHECK-DAG: %[[S1:.*]] = memref.view %[[KV]][%c960{{.*}}][] : memref<1088xi8> to memref<2x2x8xf32>
// CHECK-DAG: %[[C1:.*]] = memref.view %[[KV]][%c448{{.*}}][] : memref<1088xi8> to memref<2x2x8x16xi8>
// CHECK: afm.attention global {{.*}} into %[[C0]] scales %[[S0]] at
// CHECK: afm.attention global {{.*}} into %[[C1]] scales %[[S1]] at
// CHECK: afm.shared_kv_attention global {{.*}} from %[[C1]] scales %[[S1]] at
func.func @decode(%tokens: tensor<1xi32>, %count: index, %pos: index,
                  %kv0: !afm.kv_cache<2x5x16, i8> {afm.layer = 0 : i64},
                  %kv1: !afm.kv_cache<2x8x16, i8> {afm.layer = 1 : i64}) -> tensor<32xf32>
    attributes {afm.entry = #afm.entry<decode>} {
  %table = afm.weight "embed" : tensor<32x64xf32>
  %h = afm.embedding %table[%tokens] : tensor<32x64xf32>, tensor<1xi32> -> tensor<1x64xf32>
  %q = tensor.expand_shape %h [[0], [1, 2]] output_shape [1, 4, 16] : tensor<1x64xf32> into tensor<1x4x16xf32>
  %k = tensor.extract_slice %q[0, 0, 0] [1, 2, 16] [1, 1, 1] : tensor<1x4x16xf32> to tensor<1x2x16xf32>
  %a = afm.attention global %q, %k, %k into %kv0 at %pos : tensor<1x4x16xf32>, tensor<1x2x16xf32>, tensor<1x2x16xf32>, !afm.kv_cache<2x5x16, i8> -> tensor<1x4x16xf32>
  %b = afm.attention global %a, %k, %k into %kv1 at %pos : tensor<1x4x16xf32>, tensor<1x2x16xf32>, tensor<1x2x16xf32>, !afm.kv_cache<2x8x16, i8> -> tensor<1x4x16xf32>
  %c = afm.shared_kv_attention global %b from %kv1 at %pos : tensor<1x4x16xf32>, !afm.kv_cache<2x8x16, i8> -> tensor<1x4x16xf32>
  %f = tensor.collapse_shape %c [[0], [1, 2]] : tensor<1x4x16xf32> into tensor<1x64xf32>
  %l = afm.lm_head %f, %table : tensor<1x64xf32>, tensor<32x64xf32> -> tensor<1x32xf32>
  %flat = tensor.collapse_shape %l [[0, 1]] : tensor<1x32xf32> into tensor<32xf32>
  return %flat : tensor<32xf32>
}

// -----

// expected-error @+1 {{no function has an afm.entry attribute; nothing to bind}}
module {
  func.func @f() {
    return
  }
}

// -----

// expected-error @+1 {{'func.func' op entry point tokens must be a static tensor<Nxi32>, got 'tensor<?xi32>'}}
func.func @prefill(%tokens: tensor<?xi32>, %count: index, %pos: index) -> tensor<32xf32>
    attributes {afm.entry = #afm.entry<prefill>} {
  %z = arith.constant dense<0.0> : tensor<32xf32>
  return %z : tensor<32xf32>
}

// -----

// expected-error @+1 {{'func.func' op entry point cache argument 3 needs an afm.layer attribute}}
func.func @decode(%tokens: tensor<1xi32>, %count: index, %pos: index, %kv: !afm.kv_cache<2x8x16, f32>) -> tensor<32xf32>
    attributes {afm.entry = #afm.entry<decode>} {
  %z = arith.constant dense<0.0> : tensor<32xf32>
  return %z : tensor<32xf32>
}

// -----

// A verify entry returns one row of logits per token it reads.
// expected-error @+1 {{'func.func' op entry point (verify) must return tensor<3xVxf32>, one row per token, got 'tensor<32xf32>'}}
func.func @verify(%tokens: tensor<3xi32>, %count: index, %pos: index) -> tensor<32xf32>
    attributes {afm.entry = #afm.entry<verify>} {
  %z = arith.constant dense<0.0> : tensor<32xf32>
  return %z : tensor<32xf32>
}

// -----

// One entry of each kind: a second would take the same ABI symbol.
func.func @verify(%tokens: tensor<3xi32>, %count: index, %pos: index) -> tensor<3x32xf32>
    attributes {afm.entry = #afm.entry<verify>} {
  %z = arith.constant dense<0.0> : tensor<3x32xf32>
  return %z : tensor<3x32xf32>
}
// expected-error @+1 {{'func.func' op is a second verify entry (@verify is one already)}}
func.func @verify2(%tokens: tensor<4xi32>, %count: index, %pos: index) -> tensor<4x32xf32>
    attributes {afm.entry = #afm.entry<verify>} {
  %z = arith.constant dense<0.0> : tensor<4x32xf32>
  return %z : tensor<4x32xf32>
}

// -----

// expected-error @+1 {{'func.func' op 'afm.entry' must be #afm.entry<prefill>, #afm.entry<decode> or #afm.entry<verify>, got "train"}}
func.func @train(%tokens: tensor<1xi32>, %count: index, %pos: index) -> tensor<32xf32>
    attributes {afm.entry = "train"} {
  %z = arith.constant dense<0.0> : tensor<32xf32>
  return %z : tensor<32xf32>
}

// -----

// ASTC blocks of odd width have no CPU form (two 4-bit codes per byte).
func.func @decode(%tokens: tensor<1xi32>, %count: index, %pos: index) -> tensor<32xf32>
    attributes {afm.entry = #afm.entry<decode>} {
  // expected-error @+1 {{'afm.weight' op weights of type '!afm.astc<32x64, block = 5x5, offset = min>' cannot be bound: only static tensors, 2-bit, 4-bit and ASTC weights in 6x6 blocks are}}
  %w = afm.weight "w" : !afm.astc<32x64, block = 5x5, offset = min>
  %z = arith.constant dense<0.0> : tensor<32xf32>
  return %z : tensor<32xf32>
}

// -----

func.func @decode(%tokens: tensor<1xi32>, %count: index, %pos: index, %kv: !afm.kv_cache<2x16x16, f32> {afm.layer = 0 : i64}) -> tensor<32xf32>
    attributes {afm.entry = #afm.entry<decode>} {
  %z = arith.constant dense<0.0> : tensor<32xf32>
  return %z : tensor<32xf32>
}
// expected-error @+1 {{'func.func' op cache of layer 0 is '!afm.kv_cache<2x8x16, f32>' here but '!afm.kv_cache<2x16x16, f32>' in another entry point}}
func.func @prefill(%tokens: tensor<4xi32>, %count: index, %pos: index, %kv: !afm.kv_cache<2x8x16, f32> {afm.layer = 0 : i64}) -> tensor<32xf32>
    attributes {afm.entry = #afm.entry<prefill>} {
  %z = arith.constant dense<0.0> : tensor<32xf32>
  return %z : tensor<32xf32>
}

// -----

// A compressed weight is bound to its buffers (2-bit: codes then scales;
// ASTC CPU form: codes, f16 scales, f16 biases), each 64-byte aligned, and
// kept as a compressed value through afm.bound_weight. The layout names
// each part with its role and the weight's format; annotations of passes
// (here afm-svd-split's) travel with it to the packager.
// CHECK: afm.weights = [#afm.weight_slot<name = "w2", offset = 0, bytes = 512, type = tensor<32x16xi8>, part = "codes", format = !afm.q2<32x64, per_tensor>, svd_residual = <rank = 4>>, #afm.weight_slot<name = "w2", offset = 512, bytes = 4, type = tensor<1xf32>, part = "scales", format = !afm.q2<32x64, per_tensor>, svd_residual = <rank = 4>>, #afm.weight_slot<name = "wa", offset = 576, bytes = 1152, type = tensor<6x3x16xi32>, part = "codes", format = !afm.astc<32x64, block = 6x6, offset = linear_segment>>, #afm.weight_slot<name = "wa", offset = 1728, bytes = 576, type = tensor<6x3x16xi16>, part = "tail_codes", format = !afm.astc<32x64, block = 6x6, offset = linear_segment>>, #afm.weight_slot<name = "wa", offset = 2304, bytes = 192, type = tensor<6x16xf16>, part = "scales", format = !afm.astc<32x64, block = 6x6, offset = linear_segment>>, #afm.weight_slot<name = "wa", offset = 2496, bytes = 192, type = tensor<6x16xf16>, part = "biases", format = !afm.astc<32x64, block = 6x6, offset = linear_segment>>]
// CHECK-LABEL: func.func @afm_decode(
// CHECK: %[[C:.*]] = memref.view %{{.*}}[%c0{{.*}}][] : memref<2688xi8> to memref<32x16xi8>
// CHECK: %[[CT:.*]] = bufferization.to_tensor %[[C]]
// CHECK: %[[S:.*]] = memref.view %{{.*}}[%c512{{.*}}][] : memref<2688xi8> to memref<1xf32>
// CHECK: %[[ST:.*]] = bufferization.to_tensor %[[S]]
// CHECK: %[[W:.*]] = afm.bound_weight %[[CT]], %[[ST]] : tensor<32x16xi8>, tensor<1xf32> -> !afm.q2<32x64, per_tensor>
// CHECK: afm.bound_weight %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<6x3x16xi32>, tensor<6x3x16xi16>, tensor<6x16xf16>, tensor<6x16xf16> -> !afm.astc<32x64, block = 6x6, offset = linear_segment>
func.func @decode(%tokens: tensor<1xi32>, %count: index, %pos: index) -> tensor<32xf32>
    attributes {afm.entry = #afm.entry<decode>} {
  %w = afm.weight "w2" : !afm.q2<32x64, per_tensor> {afm.svd_residual = #afm.svd_residual<rank = 4>}
  %a = afm.weight "wa" : !afm.astc<32x64, block = 6x6, offset = linear_segment>
  %x = arith.constant dense<1.0> : tensor<1x64xf32>
  %y = afm.linear %x, %w : tensor<1x64xf32>, !afm.q2<32x64, per_tensor> -> tensor<1x32xf32>
  %z = afm.linear %x, %a acc(%y : tensor<1x32xf32>) : tensor<1x64xf32>, !afm.astc<32x64, block = 6x6, offset = linear_segment> -> tensor<1x32xf32>
  %r = tensor.collapse_shape %z [[0, 1]] : tensor<1x32xf32> into tensor<32xf32>
  return %r : tensor<32xf32>
}

// -----

// Run-time adapter factors follow the caches in the arena, 64-byte aligned,
// in order of first use; both entries read the same slots. The cache ends
// at 2*2*8*16*4 = 2048; a [2, 64] at 2048 (512 bytes), b [64, 2] at 2560,
// and the arena ends at 3072. A layout the input carried is replaced.
// CHECK: module attributes {afm.adapter_layout = [#afm.adapter_slot<name = "q.lora_a", offset = 2048, bytes = 512, rows = 2, cols = 64>, #afm.adapter_slot<name = "q.lora_b", offset = 2560, bytes = 512, rows = 64, cols = 2>], afm.kv_arena_bytes = 3072 : i64
// CHECK-LABEL: func.func @afm_prefill(
// CHECK-SAME: %[[KV:[^:]*]]: memref<3072xi8>
// CHECK-DAG: %[[AV:.*]] = memref.view %[[KV]][%c2048{{.*}}][] : memref<3072xi8> to memref<2x64xf32>
// CHECK-DAG: %[[BV:.*]] = memref.view %[[KV]][%c2560{{.*}}][] : memref<3072xi8> to memref<64x2xf32>
// CHECK-DAG: %[[A:.*]] = bufferization.to_tensor %[[AV]] restrict : memref<2x64xf32> to tensor<2x64xf32>
// CHECK-DAG: %[[B:.*]] = bufferization.to_tensor %[[BV]] restrict : memref<64x2xf32> to tensor<64x2xf32>
// CHECK: afm.lora %{{.*}}, %{{.*}}, %[[A]], %[[B]]
// CHECK-LABEL: func.func @afm_decode(
// CHECK: memref.view %{{.*}}[%c2048{{.*}}][] : memref<3072xi8> to memref<2x64xf32>
module attributes {afm.adapter_layout = [#afm.adapter_slot<name = "stale.lora_a", offset = 0, bytes = 4, rows = 1, cols = 1>]} {
func.func @prefill(%tokens: tensor<4xi32>, %count: index, %pos: index,
                   %kv0: !afm.kv_cache<2x8x16, f32> {afm.layer = 0 : i64}) -> tensor<1x32xf32>
    attributes {afm.entry = #afm.entry<prefill>} {
  %table = afm.weight "embed" : tensor<32x64xf32>
  %h = afm.embedding %table[%tokens] : tensor<32x64xf32>, tensor<4xi32> -> tensor<4x64xf32>
  %wq = afm.weight "q" : tensor<64x64xf32>
  %y = afm.linear %h, %wq : tensor<4x64xf32>, tensor<64x64xf32> -> tensor<4x64xf32>
  %a = afm.adapter_weight "q.lora_a" : tensor<2x64xf32>
  %b = afm.adapter_weight "q.lora_b" : tensor<64x2xf32>
  %z = afm.lora %y, %h, %a, %b {alpha = 2.0 : f32} : tensor<4x64xf32>, tensor<4x64xf32>, tensor<2x64xf32>, tensor<64x2xf32>
  %q = tensor.expand_shape %z [[0], [1, 2]] output_shape [4, 4, 16] : tensor<4x64xf32> into tensor<4x4x16xf32>
  %k = tensor.extract_slice %q[0, 0, 0] [4, 2, 16] [1, 1, 1] : tensor<4x4x16xf32> to tensor<4x2x16xf32>
  %o = afm.attention global %q, %k, %k into %kv0 at %pos count %count : tensor<4x4x16xf32>, tensor<4x2x16xf32>, tensor<4x2x16xf32>, !afm.kv_cache<2x8x16, f32> -> tensor<4x4x16xf32>
  %row = tensor.extract_slice %z[0, 0] [1, 64] [1, 1] : tensor<4x64xf32> to tensor<1x64xf32>
  %l = afm.lm_head %row, %table : tensor<1x64xf32>, tensor<32x64xf32> -> tensor<1x32xf32>
  return %l : tensor<1x32xf32>
}
func.func @decode(%tokens: tensor<1xi32>, %count: index, %pos: index,
                  %kv0: !afm.kv_cache<2x8x16, f32> {afm.layer = 0 : i64}) -> tensor<32xf32>
    attributes {afm.entry = #afm.entry<decode>} {
  %table = afm.weight "embed" : tensor<32x64xf32>
  %h = afm.embedding %table[%tokens] : tensor<32x64xf32>, tensor<1xi32> -> tensor<1x64xf32>
  %a = afm.adapter_weight "q.lora_a" : tensor<2x64xf32>
  %b = afm.adapter_weight "q.lora_b" : tensor<64x2xf32>
  %z = afm.lora %h, %h, %a, %b {alpha = 2.0 : f32} : tensor<1x64xf32>, tensor<1x64xf32>, tensor<2x64xf32>, tensor<64x2xf32>
  %l = afm.lm_head %z, %table : tensor<1x64xf32>, tensor<32x64xf32> -> tensor<1x32xf32>
  %flat = tensor.collapse_shape %l [[0, 1]] : tensor<1x32xf32> into tensor<32xf32>
  return %flat : tensor<32xf32>
}
}

// -----

func.func @prefill(%tokens: tensor<4xi32>, %count: index, %pos: index) -> tensor<1x32xf32>
    attributes {afm.entry = #afm.entry<prefill>} {
  %table = afm.weight "embed" : tensor<32x64xf32>
  %h = afm.embedding %table[%tokens] : tensor<32x64xf32>, tensor<4xi32> -> tensor<4x64xf32>
  %a = afm.adapter_weight "q.lora_a" : tensor<2x64xf32>
  // expected-error @+1 {{adapter slot 'q.lora_a' is used as 'tensor<4x64xf32>' and as 'tensor<2x64xf32>'}}
  %a4 = afm.adapter_weight "q.lora_a" : tensor<4x64xf32>
  %b = afm.adapter_weight "q.lora_b" : tensor<64x2xf32>
  %z = afm.lora %h, %h, %a, %b {alpha = 2.0 : f32} : tensor<4x64xf32>, tensor<4x64xf32>, tensor<2x64xf32>, tensor<64x2xf32>
  %row = tensor.extract_slice %z[0, 0] [1, 64] [1, 1] : tensor<4x64xf32> to tensor<1x64xf32>
  %l = afm.lm_head %row, %table : tensor<1x64xf32>, tensor<32x64xf32> -> tensor<1x32xf32>
  return %l : tensor<1x32xf32>
}
