// RUN: afm-opt %s -afm-lower-tracks | FileCheck %s

// Two tracks become the iterations of one scf.forall: each runs its own
// layers from the shared input and stores its stream in its slice; the
// block's result is the mean. Nothing else synchronizes the tracks.
// CHECK-LABEL: func.func @block
// CHECK-SAME: (%[[H:.*]]: tensor<4x64xf32>, %[[W0:.*]]: tensor<64x64xf32>, %[[W1:.*]]: tensor<64x64xf32>)
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<2x4x64xf32>
// CHECK: %[[ALL:.*]] = scf.forall (%[[T:.*]]) in (2) shared_outs(%[[OUT:.*]] = %[[INIT]]) -> (tensor<2x4x64xf32>)
// CHECK: %[[Y:.*]] = scf.index_switch %[[T]] -> tensor<4x64xf32>
// CHECK: case 0 {
// CHECK: afm.linear %[[H]], %[[W0]]
// CHECK: default {
// CHECK: afm.linear %[[H]], %[[W1]]
// CHECK: scf.forall.in_parallel
// CHECK: tensor.parallel_insert_slice %[[Y]] into %[[OUT]][%[[T]], 0, 0] [1, 4, 64] [1, 1, 1]
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "parallel"]} ins(%[[ALL]] : tensor<2x4x64xf32>)
// CHECK: %[[MEAN:.*]] = linalg.generic {{.*}} ins(%[[SUM]]
// CHECK: arith.constant 5.000000e-01 : f32
// CHECK: return %[[MEAN]]
func.func @block(%h: tensor<4x64xf32>, %w0: tensor<64x64xf32>, %w1: tensor<64x64xf32>) -> tensor<4x64xf32> {
  %t = afm.track_block %h : tensor<4x64xf32> {
  ^bb0(%a: tensor<4x64xf32>):
    %y = afm.linear %a, %w0 : tensor<4x64xf32>, tensor<64x64xf32> -> tensor<4x64xf32>
    afm.yield %y : tensor<4x64xf32>
  }, {
  ^bb0(%b: tensor<4x64xf32>):
    %y = afm.linear %b, %w1 : tensor<4x64xf32>, tensor<64x64xf32> -> tensor<4x64xf32>
    afm.yield %y : tensor<4x64xf32>
  }
  return %t : tensor<4x64xf32>
}
