// RUN: afm-opt %s -split-input-file -afm-lower-attention -verify-diagnostics | FileCheck %s

// Local attention over a bound ring-buffer cache of 8 slots, 4 query heads
// sharing 2 KV heads, a chunk of 4 rows of which %count are real.
// CHECK-LABEL: func.func @local
// CHECK-SAME: (%[[Q:.*]]: tensor<4x4x16xf32>, %[[K:.*]]: tensor<4x2x16xf32>, %[[V:.*]]: tensor<4x2x16xf32>, %[[KV:.*]]: memref<2x2x8x16xf32>, %[[POS:.*]]: index, %[[COUNT:.*]]: index)
// Queries are viewed as [T, G, H/G, D] so each KV head serves its group.
// CHECK: %[[Q4:.*]] = tensor.expand_shape %[[Q]] {{\[}}[0], [1, 2], [3]] output_shape [4, 2, 2, 16]
// The cache is read as keys [G, C, D] and values [G, C, D].
// CHECK: %[[KEYS:.*]] = memref.subview %[[KV]][0, 0, 0, 0] [1, 2, 8, 16] [1, 1, 1, 1]
// CHECK: %[[KT:.*]] = bufferization.to_tensor %[[KEYS]] restrict
// CHECK: %[[VALS:.*]] = memref.subview %[[KV]][1, 0, 0, 0] [1, 2, 8, 16] [1, 1, 1, 1]
// Scores against every slot, then the slot mask: slot j holds position
// filled - 1 - ((filled - 1 - j) mod 8), visible if j < filled, causal and
// inside the window (keyPos + 8 > p).
// CHECK: linalg.generic {{.*}} ins(%[[Q4]], %[[KT]] : tensor<4x2x2x16xf32>, tensor<2x8x16xf32>) outs(%{{.*}} : tensor<4x2x2x8xf32>)
// CHECK: linalg.generic
// CHECK: %[[J:.*]] = linalg.index 3
// CHECK: arith.remui %{{.*}}, %c8
// CHECK: arith.cmpi ult, %[[J]], %[[POS]]
// CHECK: arith.cmpi ugt
// CHECK: arith.select {{.*}} %cst
// Scores against the chunk's own rows, causal.
// CHECK: linalg.generic {{.*}} ins(%[[Q4]], %[[K]] : tensor<4x2x2x16xf32>, tensor<4x2x16xf32>) outs(%{{.*}} : tensor<4x2x2x4xf32>)
// CHECK: arith.cmpi ule
// Softmax over both parts, values, normalization, back to [T, H, D].
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: %[[OUT:.*]] = tensor.collapse_shape {{.*}} into tensor<4x4x16xf32>
// Only then the real rows are appended at slot (pos + row) mod 8.
// CHECK: scf.for %[[ROW:.*]] = %c0 to %[[COUNT]] step %c1
// CHECK: %[[P:.*]] = arith.addi %[[POS]], %[[ROW]]
// CHECK: %[[SLOT:.*]] = arith.remui %[[P]], %c8
// CHECK: memref.subview %[[KV]][0, 0, %[[SLOT]], 0] [1, 2, 1, 16]
// CHECK: bufferization.materialize_in_destination
// CHECK: memref.subview %[[KV]][1, 0, %[[SLOT]], 0] [1, 2, 1, 16]
// CHECK: bufferization.materialize_in_destination
// CHECK: return %[[OUT]]
func.func @local(%q: tensor<4x4x16xf32>, %k: tensor<4x2x16xf32>, %v: tensor<4x2x16xf32>, %kv: memref<2x2x8x16xf32>, %pos: index, %count: index) -> tensor<4x4x16xf32> {
  %o = afm.attention local %q, %k, %v into %kv at %pos count %count {window = 8} : tensor<4x4x16xf32>, tensor<4x2x16xf32>, tensor<4x2x16xf32>, memref<2x2x8x16xf32> -> tensor<4x4x16xf32>
  return %o : tensor<4x4x16xf32>
}

// -----

// Shared-KV attention reads a cache another layer already filled for these
// positions (filled = pos + count) and appends nothing.
// CHECK-LABEL: func.func @shared
// CHECK-SAME: %[[POS:[^:]*]]: index)
// CHECK: %[[FILLED:.*]] = arith.addi %[[POS]], %c1
// CHECK-NOT: tensor<1x2x2x1xf32>
// CHECK: arith.subi %[[FILLED]], %c1
// CHECK-NOT: scf.for
// CHECK-NOT: materialize_in_destination
func.func @shared(%q: tensor<1x4x16xf32>, %kv: memref<2x2x64x16xf32>, %pos: index) -> tensor<1x4x16xf32> {
  %o = afm.shared_kv_attention global %q from %kv at %pos : tensor<1x4x16xf32>, memref<2x2x64x16xf32> -> tensor<1x4x16xf32>
  return %o : tensor<1x4x16xf32>
}

// -----

func.func @unbound(%q: tensor<1x4x16xf32>, %kv: !afm.kv_cache<2x64x16, f32>, %pos: index) -> tensor<1x4x16xf32> {
  // expected-error @+1 {{'afm.shared_kv_attention' op cache is not bound to memory: run afm-bind-entry-abi before afm-lower-attention}}
  %o = afm.shared_kv_attention global %q from %kv at %pos : tensor<1x4x16xf32>, !afm.kv_cache<2x64x16, f32> -> tensor<1x4x16xf32>
  return %o : tensor<1x4x16xf32>
}

// -----

func.func @int8_cache(%q: tensor<1x4x16xf32>, %kv: memref<2x2x64x16xi8>, %pos: index) -> tensor<1x4x16xf32> {
  // expected-error @+1 {{'afm.shared_kv_attention' op lowering supports f32 activations and caches, got 'f32' and 'i8'}}
  %o = afm.shared_kv_attention global %q from %kv at %pos : tensor<1x4x16xf32>, memref<2x2x64x16xi8> -> tensor<1x4x16xf32>
  return %o : tensor<1x4x16xf32>
}
