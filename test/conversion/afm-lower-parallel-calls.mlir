// RUN: afm-opt %s -afm-lower-parallel-calls | FileCheck %s

// After conversion to LLVM the task takes bare pointers; the call packs its
// captures (a memref's aligned pointer, an index's i64) into a frame and
// calls host->parallel_for(host->pool, count, trampoline, frame).
// CHECK-LABEL: llvm.func internal @task_trampoline(
// CHECK-SAME: %[[CTX:.*]]: !llvm.ptr, %[[I:.*]]: i64)
// CHECK: %[[A0:.*]] = llvm.getelementptr %[[CTX]][0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr, i64)>
// CHECK: %[[P:.*]] = llvm.load %[[A0]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[A1:.*]] = llvm.getelementptr %[[CTX]][0, 1]
// CHECK: %[[K:.*]] = llvm.load %[[A1]] : !llvm.ptr -> i64
// CHECK: llvm.call @task(%[[I]], %[[P]], %[[K]])
// CHECK-LABEL: llvm.func internal @task(
// CHECK-LABEL: llvm.func @afm_decode(
// CHECK-SAME: %[[DESC:.*]]: !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>, %[[N:.*]]: i64, %[[HOST:.*]]: !llvm.ptr)
// CHECK: %[[FRAME:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(ptr, i64)> {alignment = 8 : i64}
// CHECK: %[[ALIGNED:.*]] = llvm.extractvalue %[[DESC]][1]
// CHECK: %[[F0:.*]] = llvm.getelementptr %[[FRAME]][0, 0]
// CHECK: llvm.store %[[ALIGNED]], %[[F0]]
// CHECK: %[[F1:.*]] = llvm.getelementptr %[[FRAME]][0, 1]
// CHECK: llvm.store %[[N]], %[[F1]]
// CHECK: %[[PF:.*]] = llvm.load {{.*}} : !llvm.ptr -> !llvm.ptr
// CHECK: %[[POOL:.*]] = llvm.load {{.*}} : !llvm.ptr -> !llvm.ptr
// CHECK: %[[TR:.*]] = llvm.mlir.addressof @task_trampoline
// CHECK: llvm.call %[[PF]](%[[POOL]], %[[N]], %[[TR]], %[[FRAME]]) : !llvm.ptr, (!llvm.ptr, i64, !llvm.ptr, !llvm.ptr) -> ()
// CHECK-NOT: afm_cpu.parallel_call
llvm.func @task(%i: i64, %p: !llvm.ptr, %k: i64) attributes {sym_visibility = "private"} {
  llvm.return
}
llvm.func @afm_decode(%desc: !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>, %n: i64, %host: !llvm.ptr) {
  %m = builtin.unrealized_conversion_cast %desc : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<32xf32>
  %count = builtin.unrealized_conversion_cast %n : i64 to index
  afm_cpu.parallel_call @task(%count) host %host captures(%m, %count : memref<32xf32>, index) : !llvm.ptr
  llvm.return
}
