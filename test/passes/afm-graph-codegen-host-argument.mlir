// RUN: afm-opt %s -split-input-file --afm-graph-codegen=host-argument=true | FileCheck %s

// With host-argument, the graph takes the afm_host_api pointer first, then
// its inputs, then the caller-allocated result; a big enough op's tile
// loop becomes a task run through host->parallel_for (field 0 of the API).
// CHECK-LABEL: llvm.func internal @main_task0_linear_trampoline(
// CHECK-LABEL: llvm.func @main(
// CHECK-SAME: %[[HOST:[^:]*]]: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK-SAME: afm.host_argument = 0 : i64
// CHECK-DAG: %[[TRAMPOLINE:.*]] = llvm.mlir.addressof @main_task0_linear_trampoline
// CHECK-DAG: %[[FIELD:.*]] = llvm.getelementptr %[[HOST]][0, 0]
// CHECK: %[[FOR:.*]] = llvm.load %[[FIELD]] : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.call %[[FOR]](%{{.*}}, %{{.*}}, %[[TRAMPOLINE]], %{{.*}})
func.func @main(%x: tensor<1x1024xf32>, %w: tensor<512x1024xf32>) -> tensor<1x512xf32> {
  %y = afm.linear %x, %w : tensor<1x1024xf32>, tensor<512x1024xf32> -> tensor<1x512xf32>
  return %y : tensor<1x512xf32>
}

// -----

// Attention over an int8 cache the caller binds (memref arguments) is
// lowered in graphs too: the position comes in a tensor.
// CHECK-LABEL: llvm.func @main(
// CHECK-SAME: %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK-NOT: afm.attention
func.func @main(%q: tensor<1x4x16xf32>, %k: tensor<1x2x16xf32>, %v: tensor<1x2x16xf32>, %pos: tensor<1xi64>, %cache: memref<2x2x8x16xi8>, %scales: memref<2x2x8xf32>) -> tensor<1x4x16xf32> {
  %c0 = arith.constant 0 : index
  %p64 = tensor.extract %pos[%c0] : tensor<1xi64>
  %p = arith.index_cast %p64 : i64 to index
  %o = afm.attention global %q, %k, %v into %cache scales %scales at %p : tensor<1x4x16xf32>, tensor<1x2x16xf32>, tensor<1x2x16xf32>, memref<2x2x8x16xi8>, memref<2x2x8xf32> -> tensor<1x4x16xf32>
  return %o : tensor<1x4x16xf32>
}
