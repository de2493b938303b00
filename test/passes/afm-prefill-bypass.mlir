// RUN: afm-opt %s -split-input-file -afm-prefill-bypass | FileCheck %s

// A Block-2 layer (RoPE on its queries, shared-KV attention, projection,
// residual) after the last KV-writing attention: its work moves onto the
// last real row, which sits at position pos + count - 1.
// CHECK-LABEL: func.func @prefill
// CHECK-SAME: %[[COUNT:[^:]*]]: index, %[[POS:[^:]*]]: index
// CHECK: %[[LAST:.*]] = arith.subi %[[COUNT]], %c1
// CHECK: %[[A:.*]] = afm.attention local {{.*}} : {{.*}} -> tensor<4x4x16xf32>
// CHECK-DAG: %[[ROW:.*]] = tensor.extract_slice %[[A]][%[[LAST]], 0, 0] [1, 4, 16] [1, 1, 1] : tensor<4x4x16xf32> to tensor<1x4x16xf32>
// CHECK-DAG: %[[P1:.*]] = arith.addi %[[POS]], %[[LAST]]
// CHECK: %[[Q:.*]] = afm.rope %[[ROW]] at %[[P1]]{{.*}} : tensor<1x4x16xf32>
// CHECK: %[[P2:.*]] = arith.addi %[[POS]], %[[LAST]]
// CHECK: afm.shared_kv_attention local %[[Q]] from %{{.*}} at %[[P2]] count %c1{{.*}} {window = 8 : i64} : tensor<1x4x16xf32>
// CHECK: afm.linear {{.*}} : tensor<1x64xf32>, tensor<64x64xf32> -> tensor<1x64xf32>
// CHECK: arith.addf {{.*}} : tensor<1x64xf32>
// CHECK-NOT: tensor<4x64xf32>
// CHECK: return
func.func @prefill(%tokens: tensor<4xi32>, %count: index, %pos: index,
                   %kv: !afm.kv_cache<2x8x16, f32> {afm.layer = 0 : i64}) -> tensor<1x64xf32>
    attributes {afm.entry = #afm.entry<prefill>} {
  %q = arith.constant dense<1.0> : tensor<4x4x16xf32>
  %k = arith.constant dense<1.0> : tensor<4x2x16xf32>
  %a = afm.attention local %q, %k, %k into %kv at %pos count %count {window = 8} : tensor<4x4x16xf32>, tensor<4x2x16xf32>, tensor<4x2x16xf32>, !afm.kv_cache<2x8x16, f32> -> tensor<4x4x16xf32>
  %r = afm.rope %a at %pos : tensor<4x4x16xf32>
  %s = afm.shared_kv_attention local %r from %kv at %pos count %count {window = 8} : tensor<4x4x16xf32>, !afm.kv_cache<2x8x16, f32> -> tensor<4x4x16xf32>
  %f = tensor.collapse_shape %s [[0], [1, 2]] : tensor<4x4x16xf32> into tensor<4x64xf32>
  %w = afm.weight "o" : tensor<64x64xf32>
  %o = afm.linear %f, %w : tensor<4x64xf32>, tensor<64x64xf32> -> tensor<4x64xf32>
  %h = arith.addf %f, %o : tensor<4x64xf32>
  %c1 = arith.constant 1 : index
  %last = arith.subi %count, %c1 : index
  %row = tensor.extract_slice %h[%last, 0] [1, 64] [1, 1] : tensor<4x64xf32> to tensor<1x64xf32>
  return %row : tensor<1x64xf32>
}

// -----

// Shared-KV attention is only moved for the last real row: for another row
// the ring buffer would hold positions past the query's.
// CHECK-LABEL: func.func @prefill
// CHECK: %[[S:.*]] = afm.shared_kv_attention local {{.*}} -> tensor<4x4x16xf32>
// CHECK: tensor.extract_slice %[[S]][1, 0, 0] [1, 4, 16]
func.func @prefill(%tokens: tensor<4xi32>, %count: index, %pos: index,
                   %kv: !afm.kv_cache<2x8x16, f32> {afm.layer = 0 : i64}) -> tensor<1x4x16xf32>
    attributes {afm.entry = #afm.entry<prefill>} {
  %q = arith.constant dense<1.0> : tensor<4x4x16xf32>
  %s = afm.shared_kv_attention local %q from %kv at %pos count %count {window = 8} : tensor<4x4x16xf32>, !afm.kv_cache<2x8x16, f32> -> tensor<4x4x16xf32>
  %row = tensor.extract_slice %s[1, 0, 0] [1, 4, 16] [1, 1, 1] : tensor<4x4x16xf32> to tensor<1x4x16xf32>
  return %row : tensor<1x4x16xf32>
}

// -----

// Decode entries are left alone; so are ops whose result has other uses.
// CHECK-LABEL: func.func @decode
// CHECK: %[[N:.*]] = afm.rms_norm {{.*}} : tensor<2x64xf32>
// CHECK: tensor.extract_slice %[[N]]
func.func @decode(%x: tensor<2x64xf32>, %g: tensor<64xf32>) -> tensor<1x64xf32> attributes {afm.entry = #afm.entry<decode>} {
  %n = afm.rms_norm %x, %g : tensor<2x64xf32>, tensor<64xf32>
  %row = tensor.extract_slice %n[1, 0] [1, 64] [1, 1] : tensor<2x64xf32> to tensor<1x64xf32>
  return %row : tensor<1x64xf32>
}
