// RUN: afm-opt %s --afm-graph-codegen=min-parallel-work=0 | FileCheck %s

// A graph of tensors becomes a function over bare pointers: the inputs,
// then the caller-allocated result, and no return value.
// CHECK-LABEL: llvm.func @main(
// CHECK-SAME: %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) {
// CHECK-NOT: tosa.
func.func @main(%a: tensor<3x4xf32>, %b: tensor<1x4xf32>) -> tensor<3x4xf32> {
  %sum = tosa.add %a, %b : (tensor<3x4xf32>, tensor<1x4xf32>) -> tensor<3x4xf32>
  %exp = tosa.exp %sum : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return %exp : tensor<3x4xf32>
}
