// RUN: afm-opt %s -split-input-file "-afm-lower-moe=row-tile=2" | FileCheck %s

// MoE = routing + one grouped GEMM per expert over the tokens it received.
// CHECK-LABEL: func.func @moe
// CHECK-SAME: (%[[X:.*]]: tensor<4x64xf32>, %[[R:.*]]: tensor<3x64xf32>, %[[G:.*]]: tensor<3x32x64xf32>, %[[U:.*]]: tensor<3x32x64xf32>, %[[D:.*]]: tensor<3x64x32xf32>)
// Router logits, then a scan per token and slot (ties to the lower index).
// CHECK: %[[LOGITS:.*]] = linalg.matmul {{.*}} ins(%[[X]], %[[R]] {{.*}} -> tensor<4x3xf32>
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for
// CHECK: arith.cmpf ogt
// Softmax over the selected logits.
// CHECK: math.exp
// CHECK: arith.divf
// For each expert: compact its tokens, then tiles of 2 rows up to the count.
// CHECK: scf.for %[[E:.*]] = %c0{{.*}} to %c3{{.*}} step %c1
// CHECK: %[[COMPACT:.*]]:3 = scf.for
// CHECK: scf.if
// CHECK: tensor.extract_slice %[[G]][%[[E]], 0, 0] [1, 32, 64] [1, 1, 1] : tensor<3x32x64xf32> to tensor<32x64xf32>
// CHECK: scf.for %[[FIRST:.*]] = %c0{{.*}} to %[[COMPACT]]#2 step %c2
// CHECK: %[[TILE:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x64xf32>)
// CHECK: afm.swiglu %[[TILE]], {{.*}} : tensor<2x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<64x32xf32>
// Gated rows go back to their tokens.
// CHECK: arith.minui
// CHECK: scf.for
// CHECK: tensor.insert_slice
// CHECK-NOT: afm.moe
func.func @moe(%x: tensor<4x64xf32>, %r: tensor<3x64xf32>, %g: tensor<3x32x64xf32>, %u: tensor<3x32x64xf32>, %d: tensor<3x64x32xf32>) -> tensor<4x64xf32> {
  %y = afm.moe %x, %r, %g, %u, %d {top_k = 2} : tensor<4x64xf32>, tensor<3x64xf32>, tensor<3x32x64xf32>, tensor<3x32x64xf32>, tensor<3x64x32xf32>
  return %y : tensor<4x64xf32>
}

// -----

// The router alone.
// CHECK-LABEL: func.func @router
// CHECK: linalg.matmul
// CHECK: scf.for
// CHECK-NOT: afm.topk_router
// CHECK: return %{{.*}}, %{{.*}} : tensor<4x1xi32>, tensor<4x1xf32>
func.func @router(%x: tensor<4x64xf32>, %r: tensor<3x64xf32>) -> (tensor<4x1xi32>, tensor<4x1xf32>) {
  %e, %g = afm.topk_router %x, %r {top_k = 1} : tensor<4x64xf32>, tensor<3x64xf32> -> tensor<4x1xi32>, tensor<4x1xf32>
  return %e, %g : tensor<4x1xi32>, tensor<4x1xf32>
}
