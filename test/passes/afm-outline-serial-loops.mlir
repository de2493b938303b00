// RUN: afm-opt %s -split-input-file -afm-outline-parallel-loops="outline-serial-loops=true" | FileCheck %s

// With outline-serial-loops, the outermost sequential loop of an entry
// point becomes a private function named after the op its location names
// ("_loop", not "_task": profiles count it as serial code) and a call of
// it; constants and views are recomputed inside, scalars and static memrefs
// captured. Its LLVM linkage is internal (not exported, every call known).
// Its stack buffer moves to the new function's entry. A parallel
// loop still becomes a task, and is not outlined again.
// CHECK-LABEL: func.func private @afm_decode_task0(
// CHECK-LABEL: func.func private @afm_decode_loop0_rms_norm(
// CHECK-SAME: %[[SCALE:.*]]: f32, %[[W:.*]]: memref<256xi8>, %[[Y:.*]]: memref<32xf32>)
// CHECK-SAME: attributes {llvm.linkage = #llvm.linkage<internal>}
// CHECK-NEXT: memref.alloca() : memref<16xf32>
// CHECK: memref.view %[[W]]
// CHECK: scf.for
// CHECK: arith.mulf {{.*}}, %[[SCALE]]
// CHECK-LABEL: func.func @afm_decode(
// CHECK-SAME: %[[SC:.*]]: f32, %[[WB:.*]]: memref<256xi8>, %[[YB:.*]]: memref<32xf32>, %[[HOST:.*]]: !llvm.ptr)
// CHECK: afm_cpu.parallel_call @afm_decode_task0(
// CHECK: call @afm_decode_loop0_rms_norm(%[[SC]], %[[WB]], %[[YB]]) : (f32, memref<256xi8>, memref<32xf32>) -> ()
// CHECK-NOT: scf.for
// CHECK: return
func.func @afm_decode(%scale: f32, %w: memref<256xi8>, %y: memref<32xf32>, %host: !llvm.ptr) attributes {afm.entry = #afm.entry<decode>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %v = memref.view %w[%c0][] : memref<256xi8> to memref<64xf32>
  scf.for %i = %c0 to %c32 step %c8 {
    %x = memref.load %v[%i] : memref<64xf32>
    memref.store %x, %y[%i] : memref<32xf32>
  } {afm.parallel}
  scf.for %i = %c0 to %c32 step %c1 {
    %buffer = memref.alloca() : memref<16xf32>
    %x = memref.load %v[%i] : memref<64xf32>
    %s = arith.mulf %x, %scale : f32
    memref.store %s, %buffer[%c0] : memref<16xf32>
    %t = memref.load %buffer[%c0] : memref<16xf32>
    %u = arith.addf %t, %s : f32
    memref.store %u, %y[%i] : memref<32xf32>
  } loc("rms_norm"("model.mlir":3:1))
  return
}

// -----

// Loops that stay: one too small to be worth a call, one with results, one
// that needs a dynamically shaped memref, and any loop of a function that
// is neither an entry point nor a graph with a host argument.
// CHECK-LABEL: func.func @afm_prefill(
// CHECK-NOT: call
// CHECK: scf.for
// CHECK: scf.for
// CHECK: iter_args
// CHECK: scf.for
// CHECK-LABEL: func.func @plain(
// CHECK-NOT: call
// CHECK: scf.for
// CHECK-NOT: func.func private
func.func @afm_prefill(%y: memref<32xf32>, %d: memref<?xf32>, %host: !llvm.ptr) attributes {afm.entry = #afm.entry<prefill>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %f = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c32 step %c1 {
    memref.store %f, %y[%i] : memref<32xf32>
  }
  %sum = scf.for %i = %c0 to %c32 step %c1 iter_args(%acc = %f) -> (f32) {
    %x = memref.load %y[%i] : memref<32xf32>
    %a = arith.addf %acc, %x : f32
    %b = arith.mulf %a, %a : f32
    %c = arith.addf %b, %x : f32
    %e = arith.mulf %c, %c : f32
    %g = arith.addf %e, %x : f32
    scf.yield %g : f32
  }
  scf.for %i = %c0 to %c32 step %c1 {
    %x = memref.load %d[%i] : memref<?xf32>
    %a = arith.addf %sum, %x : f32
    %b = arith.mulf %a, %a : f32
    %c = arith.addf %b, %x : f32
    %e = arith.mulf %c, %c : f32
    memref.store %e, %d[%i] : memref<?xf32>
  }
  return
}
func.func @plain(%y: memref<32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %f = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c32 step %c1 {
    %x = memref.load %y[%i] : memref<32xf32>
    %a = arith.addf %f, %x : f32
    %b = arith.mulf %a, %a : f32
    %c = arith.addf %b, %x : f32
    %e = arith.mulf %c, %c : f32
    memref.store %e, %y[%i] : memref<32xf32>
  }
  return
}

// -----

// A task's own outermost sequential loops are outlined too, named after
// the task and their op: a PT track's task holds its whole layer stack,
// which LLVM would otherwise optimize as one function per track. The
// nested loop marked parallel runs inside its task, so it is outlined as
// a sequential one.
// CHECK-LABEL: func.func private @afm_decode_task0_track_block_loop0_linear(
// CHECK-SAME: %[[X:.*]]: memref<2x64xf32>, %[[I:.*]]: index)
// CHECK-SAME: attributes {llvm.linkage = #llvm.linkage<internal>}
// CHECK: scf.for
// CHECK: memref.load %[[X]][%[[I]],
// CHECK-LABEL: func.func private @afm_decode_task0_track_block_loop1_linear(
// CHECK-LABEL: func.func private @afm_decode_task0_track_block(
// CHECK-SAME: %[[T:.*]]: index, %[[XT:.*]]: memref<2x64xf32>)
// CHECK: call @afm_decode_task0_track_block_loop0_linear(%[[XT]], %{{.*}})
// CHECK: call @afm_decode_task0_track_block_loop1_linear(%[[XT]], %{{.*}})
// CHECK-NOT: scf.for
// CHECK: return
// CHECK-LABEL: func.func @afm_decode(
// CHECK: afm_cpu.parallel_call @afm_decode_task0_track_block(
func.func @afm_decode(%x: memref<2x64xf32>, %host: !llvm.ptr) attributes {afm.entry = #afm.entry<decode>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %f = arith.constant 2.0 : f32
  scf.forall (%t) in (2) {
    scf.for %i = %c0 to %c64 step %c1 {
      %v = memref.load %x[%t, %i] : memref<2x64xf32>
      %a = arith.mulf %v, %f : f32
      %b = arith.addf %a, %v : f32
      %c = arith.mulf %b, %f : f32
      %d = arith.addf %c, %b : f32
      memref.store %d, %x[%t, %i] : memref<2x64xf32>
    } loc("linear"("model.mlir":4:1))
    scf.for %i = %c0 to %c64 step %c2 {
      %v = memref.load %x[%t, %i] : memref<2x64xf32>
      %a = arith.mulf %v, %f : f32
      %b = arith.addf %a, %v : f32
      %c = arith.mulf %b, %f : f32
      %d = arith.addf %c, %b : f32
      memref.store %d, %x[%t, %i] : memref<2x64xf32>
    } {afm.parallel} loc("linear"("model.mlir":5:1))
  } loc("track_block"("model.mlir":3:1))
  return
}
