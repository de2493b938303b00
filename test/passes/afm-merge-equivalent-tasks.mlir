// RUN: afm-opt %s -split-input-file -afm-merge-equivalent-tasks | FileCheck %s

// Two layers' tasks of one op differ only in where their layer's weights sit
// in the arena: one task remains, taking the offset as a trailing argument;
// the constant both agree on (the row length) stays a constant. Each call
// passes its own task's offset.
// CHECK-LABEL: func.func private @afm_decode_task0_linear(
// CHECK-SAME: %[[I:.*]]: index, %[[ARENA:.*]]: memref<1024xi8>, %[[Y:.*]]: memref<16xf32>, %[[OFFSET:.*]]: index)
// CHECK: %[[C16:.*]] = arith.constant 16 : index
// CHECK: memref.view %[[ARENA]][%[[OFFSET]]][] : memref<1024xi8> to memref<16xf32>
// CHECK: arith.muli %[[I]], %[[C16]]
// CHECK-NOT: func.func private @afm_decode_task1_linear
// CHECK-LABEL: func.func @afm_decode(
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: afm_cpu.parallel_call @afm_decode_task0_linear(%{{.*}}) host %{{.*}} captures(%{{.*}}, %{{.*}}, %[[C0]] : memref<1024xi8>, memref<16xf32>, index)
// CHECK: %[[C512:.*]] = arith.constant 512 : index
// CHECK: afm_cpu.parallel_call @afm_decode_task0_linear(%{{.*}}) host %{{.*}} captures(%{{.*}}, %{{.*}}, %[[C512]] : memref<1024xi8>, memref<16xf32>, index)
func.func private @afm_decode_task0_linear(%i: index, %arena: memref<1024xi8>, %y: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %w = memref.view %arena[%c0][] : memref<1024xi8> to memref<16xf32>
  %j = arith.muli %i, %c16 : index
  %v = memref.load %w[%j] : memref<16xf32>
  memref.store %v, %y[%j] : memref<16xf32>
  return
}
func.func private @afm_decode_task1_linear(%i: index, %arena: memref<1024xi8>, %y: memref<16xf32>) {
  %c16 = arith.constant 16 : index
  %c512 = arith.constant 512 : index
  %w = memref.view %arena[%c512][] : memref<1024xi8> to memref<16xf32>
  %j = arith.muli %i, %c16 : index
  %v = memref.load %w[%j] : memref<16xf32>
  memref.store %v, %y[%j] : memref<16xf32>
  return
}
func.func @afm_decode(%arena: memref<1024xi8>, %y: memref<16xf32>, %host: !llvm.ptr) {
  %c1 = arith.constant 1 : index
  afm_cpu.parallel_call @afm_decode_task0_linear(%c1) host %host captures(%arena, %y : memref<1024xi8>, memref<16xf32>) : !llvm.ptr
  afm_cpu.parallel_call @afm_decode_task1_linear(%c1) host %host captures(%arena, %y : memref<1024xi8>, memref<16xf32>) : !llvm.ptr
  return
}

// -----

// Equal bodies of different ops stay apart (profiles attribute time by the
// op a task's name carries); so do bodies whose float constants differ,
// and bodies that differ in structure.
// CHECK-LABEL: func.func private @afm_decode_task0_linear(
// CHECK-LABEL: func.func private @afm_decode_task1_swiglu(
// CHECK-LABEL: func.func private @afm_decode_task2_linear(
// CHECK-LABEL: func.func private @afm_decode_task3_linear(
// CHECK-LABEL: func.func @afm_decode(
// CHECK: afm_cpu.parallel_call @afm_decode_task0_linear(%{{.*}}) host %{{.*}} captures(%{{.*}} : memref<16xf32>)
// CHECK: afm_cpu.parallel_call @afm_decode_task1_swiglu(%{{.*}}) host %{{.*}} captures(%{{.*}} : memref<16xf32>)
// CHECK: afm_cpu.parallel_call @afm_decode_task2_linear(%{{.*}}) host %{{.*}} captures(%{{.*}} : memref<16xf32>)
// CHECK: afm_cpu.parallel_call @afm_decode_task3_linear(%{{.*}}) host %{{.*}} captures(%{{.*}} : memref<16xf32>)
func.func private @afm_decode_task0_linear(%i: index, %y: memref<16xf32>) {
  %f = arith.constant 1.0 : f32
  memref.store %f, %y[%i] : memref<16xf32>
  return
}
func.func private @afm_decode_task1_swiglu(%i: index, %y: memref<16xf32>) {
  %f = arith.constant 1.0 : f32
  memref.store %f, %y[%i] : memref<16xf32>
  return
}
func.func private @afm_decode_task2_linear(%i: index, %y: memref<16xf32>) {
  %f = arith.constant 2.0 : f32
  memref.store %f, %y[%i] : memref<16xf32>
  return
}
func.func private @afm_decode_task3_linear(%i: index, %y: memref<16xf32>) {
  %f = arith.constant 1.0 : f32
  %g = arith.addf %f, %f : f32
  memref.store %g, %y[%i] : memref<16xf32>
  return
}
func.func @afm_decode(%y: memref<16xf32>, %host: !llvm.ptr) {
  %c1 = arith.constant 1 : index
  afm_cpu.parallel_call @afm_decode_task0_linear(%c1) host %host captures(%y : memref<16xf32>) : !llvm.ptr
  afm_cpu.parallel_call @afm_decode_task1_swiglu(%c1) host %host captures(%y : memref<16xf32>) : !llvm.ptr
  afm_cpu.parallel_call @afm_decode_task2_linear(%c1) host %host captures(%y : memref<16xf32>) : !llvm.ptr
  afm_cpu.parallel_call @afm_decode_task3_linear(%c1) host %host captures(%y : memref<16xf32>) : !llvm.ptr
  return
}

// -----

// Outlined serial loops (func.call) merge the same way; a constant used
// twice is one argument, and constants inside nested regions count too.
// CHECK-LABEL: func.func private @afm_decode_loop0_rope(
// CHECK-SAME: %[[B:.*]]: memref<64xf32>, %[[LB:.*]]: index, %[[SCALE:.*]]: i32)
// CHECK: scf.for %{{.*}} = %[[LB]] to
// CHECK: arith.addi %{{.*}}, %[[LB]]
// CHECK: arith.sitofp %[[SCALE]]
// CHECK-NOT: func.func private @afm_decode_loop1_rope
// CHECK-LABEL: func.func @afm_decode(
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : i32
// CHECK: call @afm_decode_loop0_rope(%{{.*}}, %[[C0]], %[[C3]]) : (memref<64xf32>, index, i32) -> ()
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG: %[[C5:.*]] = arith.constant 5 : i32
// CHECK: call @afm_decode_loop0_rope(%{{.*}}, %[[C32]], %[[C5]]) : (memref<64xf32>, index, i32) -> ()
func.func private @afm_decode_loop0_rope(%b: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c16 step %c1 {
    %j = arith.addi %i, %c0 : index
    %s = arith.constant 3 : i32
    %f = arith.sitofp %s : i32 to f32
    memref.store %f, %b[%j] : memref<64xf32>
  }
  return
}
func.func private @afm_decode_loop1_rope(%b: memref<64xf32>) {
  %c32 = arith.constant 32 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c32 to %c16 step %c1 {
    %j = arith.addi %i, %c32 : index
    %s = arith.constant 5 : i32
    %f = arith.sitofp %s : i32 to f32
    memref.store %f, %b[%j] : memref<64xf32>
  }
  return
}
func.func @afm_decode(%b: memref<64xf32>) {
  call @afm_decode_loop0_rope(%b) : (memref<64xf32>) -> ()
  call @afm_decode_loop1_rope(%b) : (memref<64xf32>) -> ()
  return
}

// -----

// Integer constants are compared use by use: CSE shares one constant
// between uses that happen to agree (an MoE expert's index and a loop step
// of the same value), so which uses share one is no difference in
// structure. Each use whose value differs reads an argument, and uses whose
// values agree in every body (a layer's offset used twice) share one.
// CHECK-LABEL: func.func private @afm_decode_loop0_rope(
// CHECK-SAME: %[[B:.*]]: memref<64xf32>, %[[K:.*]]: index, %[[L:.*]]: index)
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: memref.store %{{.*}}, %[[B]][%[[C4]]]
// CHECK: memref.store %{{.*}}, %[[B]][%[[K]]]
// CHECK: memref.store %{{.*}}, %[[B]][%[[L]]]
// CHECK: memref.store %{{.*}}, %[[B]][%[[L]]]
// CHECK-NOT: @afm_decode_loop1_rope(
// CHECK-LABEL: func.func @afm_decode(
// CHECK: %[[K0:.*]] = arith.constant 4 : index
// CHECK: %[[L0:.*]] = arith.constant 12 : index
// CHECK: call @afm_decode_loop0_rope(%{{.*}}, %[[K0]], %[[L0]])
// CHECK: %[[K1:.*]] = arith.constant 8 : index
// CHECK: %[[L1:.*]] = arith.constant 16 : index
// CHECK: call @afm_decode_loop0_rope(%{{.*}}, %[[K1]], %[[L1]])
func.func private @afm_decode_loop0_rope(%b: memref<64xf32>) {
  %c4 = arith.constant 4 : index
  %c12 = arith.constant 12 : index
  %f = arith.constant 1.0 : f32
  memref.store %f, %b[%c4] : memref<64xf32>
  memref.store %f, %b[%c4] : memref<64xf32>
  memref.store %f, %b[%c12] : memref<64xf32>
  memref.store %f, %b[%c12] : memref<64xf32>
  return
}
func.func private @afm_decode_loop1_rope(%b: memref<64xf32>) {
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %f = arith.constant 1.0 : f32
  memref.store %f, %b[%c4] : memref<64xf32>
  memref.store %f, %b[%c8] : memref<64xf32>
  memref.store %f, %b[%c16] : memref<64xf32>
  memref.store %f, %b[%c16] : memref<64xf32>
  return
}
func.func @afm_decode(%b: memref<64xf32>) {
  call @afm_decode_loop0_rope(%b) : (memref<64xf32>) -> ()
  call @afm_decode_loop1_rope(%b) : (memref<64xf32>) -> ()
  return
}

// -----

// Tasks called from two functions, or whose symbol has another use (here a
// public task), are left alone: a merge would have to rewrite what it
// cannot see.
// CHECK-LABEL: func.func private @afm_decode_task0_linear(
// CHECK-LABEL: func.func private @afm_decode_task1_linear(
// CHECK-LABEL: func.func @afm_decode_task2_linear(
// CHECK-LABEL: func.func @afm_decode(
// CHECK: afm_cpu.parallel_call @afm_decode_task0_linear(
// CHECK: afm_cpu.parallel_call @afm_decode_task1_linear(
// CHECK: afm_cpu.parallel_call @afm_decode_task2_linear(
// CHECK-LABEL: func.func @afm_prefill(
// CHECK: afm_cpu.parallel_call @afm_decode_task0_linear(
func.func private @afm_decode_task0_linear(%i: index, %y: memref<16xf32>) {
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  memref.store %f, %y[%c1] : memref<16xf32>
  return
}
func.func private @afm_decode_task1_linear(%i: index, %y: memref<16xf32>) {
  %c2 = arith.constant 2 : index
  %f = arith.constant 1.0 : f32
  memref.store %f, %y[%c2] : memref<16xf32>
  return
}
func.func @afm_decode_task2_linear(%i: index, %y: memref<16xf32>) {
  %c3 = arith.constant 3 : index
  %f = arith.constant 1.0 : f32
  memref.store %f, %y[%c3] : memref<16xf32>
  return
}
func.func @afm_decode(%y: memref<16xf32>, %host: !llvm.ptr) {
  %c1 = arith.constant 1 : index
  afm_cpu.parallel_call @afm_decode_task0_linear(%c1) host %host captures(%y : memref<16xf32>) : !llvm.ptr
  afm_cpu.parallel_call @afm_decode_task1_linear(%c1) host %host captures(%y : memref<16xf32>) : !llvm.ptr
  afm_cpu.parallel_call @afm_decode_task2_linear(%c1) host %host captures(%y : memref<16xf32>) : !llvm.ptr
  return
}
func.func @afm_prefill(%y: memref<16xf32>, %host: !llvm.ptr) {
  %c1 = arith.constant 1 : index
  afm_cpu.parallel_call @afm_decode_task0_linear(%c1) host %host captures(%y : memref<16xf32>) : !llvm.ptr
  return
}
