// RUN: afm-opt %s -afm-tag-op-locations -mlir-print-debuginfo | FileCheck %s
// RUN: afm-opt %s -afm-tag-op-locations -afm-tag-op-locations -mlir-print-debuginfo | FileCheck %s

// Every afm op's location is wrapped in a name: the op's, without the
// dialect. Other ops keep theirs, and a second run does not nest names.
// CHECK-LABEL: func.func @layer(
// CHECK: afm.rms_norm {{.*}} loc(#[[NORM:loc[0-9]*]])
// CHECK: afm.linear {{.*}} loc(#[[LINEAR:loc[0-9]*]])
// CHECK: arith.addf {{.*}} loc(#[[ADD:loc[0-9]*]])
// CHECK-DAG: #[[NORMFILE:loc[0-9]*]] = loc("layer.mlir":1:1)
// CHECK-DAG: #[[LINEARFILE:loc[0-9]*]] = loc("layer.mlir":2:1)
// CHECK-DAG: #[[ADD]] = loc("layer.mlir":3:1)
// CHECK-DAG: #[[NORM]] = loc("rms_norm"(#[[NORMFILE]]))
// CHECK-DAG: #[[LINEAR]] = loc("linear"(#[[LINEARFILE]]))
func.func @layer(%x: tensor<4x64xf32>, %g: tensor<64xf32>, %w: tensor<64x64xf32>) -> tensor<4x64xf32> {
  %n = afm.rms_norm %x, %g : tensor<4x64xf32>, tensor<64xf32> loc("layer.mlir":1:1)
  %y = afm.linear %n, %w : tensor<4x64xf32>, tensor<64x64xf32> -> tensor<4x64xf32> loc("layer.mlir":2:1)
  %r = arith.addf %x, %y : tensor<4x64xf32> loc("layer.mlir":3:1)
  return %r : tensor<4x64xf32>
}
