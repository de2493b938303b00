// RUN: afm-opt %s -split-input-file -afm-lower-tracks -verify-diagnostics | FileCheck %s

// In an entry point bound to the kernel ABI (its last argument the
// afm_host_api pointer) the tracks may be split between processes: the
// host's track_begin and track_end (fields 3 and 4) say which tracks run
// here, the others yield zeros, and the block's sum goes through exactly
// one afm_cpu.track_allreduce, in place, before the mean. The module
// records the tracks per block.
// CHECK: module attributes {afm.track_count = 2 : i64}
// CHECK-LABEL: func.func @afm_decode
// CHECK-SAME: %[[HOST:[^:]*]]: !llvm.ptr)
// CHECK: %[[BP:.*]] = llvm.getelementptr %[[HOST]][0, 3] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr, ptr, i64, i64, i64, ptr, ptr)>
// CHECK: %[[B64:.*]] = llvm.load %[[BP]] : !llvm.ptr -> i64
// CHECK: %[[BEGIN:.*]] = arith.index_cast %[[B64]] : i64 to index
// CHECK: %[[EP:.*]] = llvm.getelementptr %[[HOST]][0, 4]
// CHECK: %[[END:.*]] = arith.index_cast
// CHECK: scf.forall (%[[T:.*]]) in (2)
// CHECK: %[[GE:.*]] = arith.cmpi sge, %[[T]], %[[BEGIN]] : index
// CHECK: %[[LT:.*]] = arith.cmpi slt, %[[T]], %[[END]] : index
// CHECK: %[[OWNED:.*]] = arith.andi %[[GE]], %[[LT]] : i1
// CHECK: scf.if %[[OWNED]] -> (tensor<1x64xf32>)
// CHECK: scf.index_switch %[[T]]
// CHECK: } else {
// CHECK: linalg.fill
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "parallel"]
// CHECK: %[[BUF:.*]] = memref.alloc() : memref<1x64xf32>
// CHECK: bufferization.materialize_in_destination %[[SUM]] in restrict writable %[[BUF]]
// CHECK: afm_cpu.track_allreduce %[[BUF]] host %[[HOST]] : memref<1x64xf32>, !llvm.ptr
// CHECK: %[[ALL:.*]] = bufferization.to_tensor %[[BUF]] restrict writable
// CHECK: linalg.generic {{.*}} ins(%[[ALL]]
// CHECK: arith.constant 5.000000e-01 : f32
// CHECK-NOT: afm_cpu.track_allreduce
module attributes {afm.track_count = 7 : i64} {
func.func @afm_decode(%h: tensor<1x64xf32>, %w0: tensor<64x64xf32>, %w1: tensor<64x64xf32>, %host: !llvm.ptr) -> tensor<1x64xf32>
    attributes {afm.entry = #afm.entry<decode>} {
  %t = afm.track_block %h : tensor<1x64xf32> {
  ^bb0(%a: tensor<1x64xf32>):
    %y = afm.linear %a, %w0 : tensor<1x64xf32>, tensor<64x64xf32> -> tensor<1x64xf32>
    afm.yield %y : tensor<1x64xf32>
  }, {
  ^bb0(%b: tensor<1x64xf32>):
    %y = afm.linear %b, %w1 : tensor<1x64xf32>, tensor<64x64xf32> -> tensor<1x64xf32>
    afm.yield %y : tensor<1x64xf32>
  }
  return %t : tensor<1x64xf32>
}
}

// -----

// Blocks of different track counts cannot be split by one range.
func.func @afm_decode(%h: tensor<1x64xf32>, %w0: tensor<64x64xf32>, %host: !llvm.ptr) -> tensor<1x64xf32>
    attributes {afm.entry = #afm.entry<decode>} {
  %t = afm.track_block %h : tensor<1x64xf32> {
  ^bb0(%a: tensor<1x64xf32>):
    afm.yield %a : tensor<1x64xf32>
  }, {
  ^bb0(%b: tensor<1x64xf32>):
    afm.yield %b : tensor<1x64xf32>
  }
  // expected-error @+1 {{has 3 tracks, another block 2: the tracks cannot be split between processes}}
  %u = afm.track_block %t : tensor<1x64xf32> {
  ^bb0(%a: tensor<1x64xf32>):
    afm.yield %a : tensor<1x64xf32>
  }, {
  ^bb0(%b: tensor<1x64xf32>):
    afm.yield %b : tensor<1x64xf32>
  }, {
  ^bb0(%c: tensor<1x64xf32>):
    afm.yield %c : tensor<1x64xf32>
  }
  return %u : tensor<1x64xf32>
}
