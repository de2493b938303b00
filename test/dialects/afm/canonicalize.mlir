// RUN: afm-opt %s -canonicalize -split-input-file | FileCheck %s

// A single track synchronizes nothing: its body replaces the block.
// CHECK-LABEL: func.func @single_track
// CHECK-SAME: (%[[H:.*]]: tensor<1x64xf32>, %[[G:.*]]: tensor<64xf32>)
// CHECK-NOT: afm.track_block
// CHECK: %[[N:.*]] = afm.rms_norm %[[H]], %[[G]]
// CHECK: return %[[N]]
func.func @single_track(%h: tensor<1x64xf32>, %g: tensor<64xf32>) -> tensor<1x64xf32> {
  %t = afm.track_block %h : tensor<1x64xf32> {
  ^bb0(%a: tensor<1x64xf32>):
    %n = afm.rms_norm %a, %g : tensor<1x64xf32>, tensor<64xf32>
    afm.yield %n : tensor<1x64xf32>
  }
  return %t : tensor<1x64xf32>
}

// -----

// Two tracks are averaged: the block stays.
// CHECK-LABEL: func.func @two_tracks
// CHECK: afm.track_block
// CHECK-COUNT-2: afm.yield
func.func @two_tracks(%h: tensor<1x64xf32>, %g: tensor<64xf32>) -> tensor<1x64xf32> {
  %t = afm.track_block %h : tensor<1x64xf32> {
  ^bb0(%a: tensor<1x64xf32>):
    %n = afm.rms_norm %a, %g : tensor<1x64xf32>, tensor<64xf32>
    afm.yield %n : tensor<1x64xf32>
  }, {
  ^bb0(%b: tensor<1x64xf32>):
    afm.yield %b : tensor<1x64xf32>
  }
  return %t : tensor<1x64xf32>
}
