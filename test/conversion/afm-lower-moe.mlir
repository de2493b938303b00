// RUN: afm-opt %s -split-input-file "-afm-lower-moe=row-tile=2" | FileCheck %s

// MoE = routing + one grouped GEMM per expert over the tokens it received.
// CHECK-LABEL: func.func @moe
// CHECK-SAME: (%[[X:.*]]: tensor<4x64xf32>, %[[R:.*]]: tensor<3x64xf32>, %[[G:.*]]: tensor<32x64xf32>, %[[U:.*]]: tensor<32x64xf32>, %[[D:.*]]: tensor<64x32xf32>, %[[Q:.*]]: !afm.q2<32x64, per_channel>)
// Router logits, then a scan per token and slot (ties to the lower index).
// CHECK: %[[LOGITS:.*]] = linalg.matmul {{.*}} ins(%[[X]], %[[R]] {{.*}} -> tensor<4x3xf32>
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for
// CHECK: arith.cmpf ogt
// Softmax over the selected logits.
// CHECK: math.exp
// CHECK: arith.divf
// One pass over the routing lists each expert's tokens and gates
// ([E, T] each) and counts them ([E]).
// CHECK: %[[ROUTED:.*]]:3 = scf.for {{.*}} -> (tensor<3x4xi32>, tensor<3x4xf32>, tensor<3xi32>)
// CHECK: tensor.insert {{.*}} : tensor<3xi32>
// Each expert in turn (unrolled): tiles of 2 rows up to its count, through
// its own weights.
// CHECK: %[[N0:.*]] = tensor.extract %[[ROUTED]]#2[%{{.*}}] : tensor<3xi32>
// CHECK: %[[COUNT0:.*]] = arith.index_cast %[[N0]] : i32 to index
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %[[COUNT0]] step %c2
// CHECK: %[[TILE:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x64xf32>)
// CHECK: afm.swiglu %[[TILE]], %[[G]], %[[U]], %[[D]] : tensor<2x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<64x32xf32>
// Gated rows go back to their tokens.
// CHECK: arith.minui
// CHECK: scf.for
// CHECK: tensor.insert_slice
// CHECK: %[[N1:.*]] = tensor.extract %[[ROUTED]]#2[%{{.*}}] : tensor<3xi32>
// CHECK: %[[COUNT1:.*]] = arith.index_cast %[[N1]] : i32 to index
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %[[COUNT1]] step %c2
// CHECK: afm.swiglu %{{.*}}, %[[Q]], %[[U]], %[[D]] : tensor<2x64xf32>, !afm.q2<32x64, per_channel>, tensor<32x64xf32>, tensor<64x32xf32>
// CHECK: %[[N2:.*]] = tensor.extract %[[ROUTED]]#2[%{{.*}}] : tensor<3xi32>
// CHECK: %[[COUNT2:.*]] = arith.index_cast %[[N2]] : i32 to index
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %[[COUNT2]] step %c2
// CHECK: afm.swiglu %{{.*}}, %[[G]], %[[G]], %[[D]]
// CHECK-NOT: afm.moe
func.func @moe(%x: tensor<4x64xf32>, %r: tensor<3x64xf32>, %g: tensor<32x64xf32>, %u: tensor<32x64xf32>, %d: tensor<64x32xf32>, %q: !afm.q2<32x64, per_channel>) -> tensor<4x64xf32> {
  %y = afm.moe %x, %r gate(%g, %q, %g) up(%u, %u, %g) down(%d, %d, %d) {top_k = 2}
      : tensor<4x64xf32>, tensor<3x64xf32>,
        gate(tensor<32x64xf32>, !afm.q2<32x64, per_channel>, tensor<32x64xf32>),
        up(tensor<32x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>),
        down(tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x32xf32>)
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
