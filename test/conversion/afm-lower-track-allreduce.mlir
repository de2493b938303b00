// RUN: afm-opt %s -split-input-file -afm-lower-parallel-calls -verify-diagnostics | FileCheck %s

// afm_cpu.track_allreduce becomes host->track_allreduce(host->track_ctx,
// data, count): fields 5 and 6 of afm_host_api, the buffer's aligned
// pointer and its element count.
// CHECK-LABEL: llvm.func @afm_decode(
// CHECK-SAME: %[[DESC:.*]]: !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>, %[[HOST:.*]]: !llvm.ptr)
// CHECK: %[[DATA:.*]] = llvm.extractvalue %[[DESC]][1]
// CHECK: %[[N:.*]] = llvm.mlir.constant(128 : i64) : i64
// CHECK: %[[FP:.*]] = llvm.getelementptr %[[HOST]][0, 5] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr, ptr, i64, i64, i64, ptr, ptr)>
// CHECK: %[[F:.*]] = llvm.load %[[FP]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[CP:.*]] = llvm.getelementptr %[[HOST]][0, 6]
// CHECK: %[[C:.*]] = llvm.load %[[CP]] : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.call %[[F]](%[[C]], %[[DATA]], %[[N]]) : !llvm.ptr, (!llvm.ptr, !llvm.ptr, i64) -> ()
// CHECK-NOT: afm_cpu.track_allreduce
llvm.func @afm_decode(%desc: !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>, %host: !llvm.ptr) {
  %m = builtin.unrealized_conversion_cast %desc : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)> to memref<2x64xf32>
  afm_cpu.track_allreduce %m host %host : memref<2x64xf32>, !llvm.ptr
  llvm.return
}

// -----

func.func @strided(%m: memref<2x64xf32, strided<[128, 1]>>, %host: !llvm.ptr) {
  // expected-error @+1 {{buffer must be a static, contiguous memref (the host reduces it as one array)}}
  afm_cpu.track_allreduce %m host %host : memref<2x64xf32, strided<[128, 1]>>, !llvm.ptr
  return
}

// -----

func.func @not_a_pointer(%m: memref<2x64xf32>, %host: i64) {
  // expected-error @+1 {{host must be an !llvm.ptr to the runtime's afm_host_api}}
  afm_cpu.track_allreduce %m host %host : memref<2x64xf32>, i64
  return
}
