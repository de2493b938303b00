// RUN: afm-opt %s -split-input-file -afm-outline-parallel-loops | FileCheck %s

// A marked tile loop becomes a private task over its iterations and an
// afm_cpu.parallel_call with the entry point's host. Views and constants are
// recomputed in the task; static memrefs and scalars are captured.
// CHECK-LABEL: func.func private @afm_decode_task0(
// CHECK-SAME: %[[I:.*]]: index, %[[SCALE:.*]]: f32, %[[W:.*]]: memref<256xi8>, %[[Y:.*]]: memref<32xf32>)
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[VIEW:.*]] = memref.view %[[W]][%[[C0]]][] : memref<256xi8> to memref<64xf32>
// CHECK: %[[OFF:.*]] = arith.muli %[[I]], %[[C8]]
// CHECK: %[[IV:.*]] = arith.addi %[[C0]], %[[OFF]]
// CHECK: memref.load %[[VIEW]][%[[IV]]]
// CHECK: arith.mulf {{.*}}, %[[SCALE]]
// CHECK: memref.store {{.*}}, %[[Y]][%[[IV]]]
// CHECK: return
// CHECK-LABEL: func.func @afm_decode(
// CHECK-SAME: %[[SC:.*]]: f32, %[[WB:.*]]: memref<256xi8>, %[[YB:.*]]: memref<32xf32>, %[[HOST:.*]]: !llvm.ptr)
// CHECK-NOT: scf.for
// CHECK: %[[N:.*]] = arith.ceildivsi
// CHECK: afm_cpu.parallel_call @afm_decode_task0(%[[N]]) host %[[HOST]] captures(%[[SC]], %[[WB]], %[[YB]] : f32, memref<256xi8>, memref<32xf32>) : !llvm.ptr
func.func @afm_decode(%scale: f32, %w: memref<256xi8>, %y: memref<32xf32>, %host: !llvm.ptr) attributes {afm.entry = #afm.entry<decode>} {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %v = memref.view %w[%c0][] : memref<256xi8> to memref<64xf32>
  scf.for %i = %c0 to %c32 step %c8 {
    %x = memref.load %v[%i] : memref<64xf32>
    %s = arith.mulf %x, %scale : f32
    memref.store %s, %y[%i] : memref<32xf32>
  } {afm.parallel}
  return
}

// -----

// A loop that would need a dynamically shaped memref stays sequential and
// loses its mark.
// CHECK-LABEL: func.func @afm_prefill(
// CHECK-NOT: afm_cpu.parallel_call
// CHECK: scf.for
// CHECK-NOT: afm.parallel
// CHECK: return
func.func @afm_prefill(%y: memref<?xf32>, %host: !llvm.ptr) attributes {afm.entry = #afm.entry<prefill>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %f = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %f, %y[%i] : memref<?xf32>
  } {afm.parallel}
  return
}

// -----

// A graph function names its host argument with afm.host_argument (here
// first, as afm-add-host-argument puts it, before the output): it need not
// be an entry point, and its last argument is not the host.
// CHECK-LABEL: func.func private @main_task0(
// CHECK-SAME: %{{.*}}: index, %{{.*}}: memref<16xf32>)
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[HOST:.*]]: !llvm.ptr, %[[OUT:.*]]: memref<16xf32>)
// CHECK: afm_cpu.parallel_call @main_task0(%{{.*}}) host %[[HOST]] captures(%[[OUT]] : memref<16xf32>) : !llvm.ptr
func.func @main(%host: !llvm.ptr, %y: memref<16xf32>) attributes {afm.host_argument = 0 : i64} {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %f = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c16 step %c8 {
    memref.store %f, %y[%i] : memref<16xf32>
  } {afm.parallel}
  return
}

// -----

// Neither an entry point nor a named host argument: nothing to run tasks
// on, the loop stays sequential.
// CHECK-LABEL: func.func @plain(
// CHECK-NOT: afm_cpu.parallel_call
// CHECK: scf.for
func.func @plain(%y: memref<16xf32>, %host: !llvm.ptr) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %f = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c16 step %c8 {
    memref.store %f, %y[%i] : memref<16xf32>
  } {afm.parallel}
  return
}

// -----

// Constant globals and poison paddings are recomputed in the task, not
// captured: LLVM still sees the constants there (a captured shift table
// turns immediate shifts into variable ones).
// CHECK-LABEL: func.func private @afm_decode_task0(
// CHECK-SAME: %{{.*}}: index, %{{.*}}: memref<16xi8>)
// CHECK-DAG: memref.get_global @shifts
// CHECK-DAG: ub.poison : i8
memref.global "private" constant @shifts : memref<4xi8> = dense<[0, 2, 4, 6]>
func.func @afm_decode(%y: memref<16xi8>, %host: !llvm.ptr) attributes {afm.entry = #afm.entry<decode>} {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %shifts = memref.get_global @shifts : memref<4xi8>
  %pad = ub.poison : i8
  scf.for %i = %c0 to %c16 step %c4 {
    %v = vector.transfer_read %shifts[%c0], %pad {in_bounds = [true]} : memref<4xi8>, vector<4xi8>
    vector.transfer_write %v, %y[%i] {in_bounds = [true]} : vector<4xi8>, memref<16xi8>
  } {afm.parallel}
  return
}

// -----

// A loop whose location holds a name (afm-tag-op-locations puts the afm
// op's there) gives its task that name, kept to identifier characters, so
// profiles can say which op a task belongs to.
// CHECK-LABEL: func.func private @afm_decode_task0_lm_head(
// CHECK-LABEL: func.func private @afm_decode_task1_odd_name_(
// CHECK-LABEL: func.func @afm_decode(
// CHECK: afm_cpu.parallel_call @afm_decode_task0_lm_head(
// CHECK: afm_cpu.parallel_call @afm_decode_task1_odd_name_(
func.func @afm_decode(%y: memref<32xf32>, %host: !llvm.ptr) attributes {afm.entry = #afm.entry<decode>} {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %f = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c32 step %c8 {
    memref.store %f, %y[%i] : memref<32xf32>
  } {afm.parallel} loc(fused["lm_head"("head.mlir":1:1), "other"("x":1:1)])
  scf.for %i = %c0 to %c32 step %c8 {
    memref.store %f, %y[%i] : memref<32xf32>
  } {afm.parallel} loc("odd name!"("y":2:2))
  return
}

// -----

// A stack buffer in a loop that stays sequential (here a function without
// a host argument) moves to the function's entry: left in the body, it
// would take new stack on every iteration. One inside a task stays where
// the task's body starts, its entry.
// CHECK-LABEL: func.func @sequential_buffer(
// CHECK-NEXT: %[[BUFFER:.*]] = memref.alloca() : memref<4x16xf32>
// CHECK: scf.for
// CHECK-NOT: memref.alloca
// CHECK: vector.store %{{.*}}, %[[BUFFER]]
func.func @sequential_buffer(%y: memref<32xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %z = arith.constant dense<0.0> : vector<16xf32>
  scf.for %i = %c0 to %c32 step %c8 {
    %buffer = memref.alloca() : memref<4x16xf32>
    vector.store %z, %buffer[%c0, %c0] : memref<4x16xf32>, vector<16xf32>
    %v = memref.load %buffer[%c0, %c0] : memref<4x16xf32>
    memref.store %v, %y[%i] : memref<32xf32>
  }
  return
}

// -----

// CHECK-LABEL: func.func private @afm_decode_task0(
// CHECK-NOT: scf.for
// CHECK: memref.alloca() : memref<16xf32>
// CHECK-LABEL: func.func @afm_decode(
// CHECK-NOT: memref.alloca
func.func @afm_decode(%y: memref<32xf32>, %host: !llvm.ptr) attributes {afm.entry = #afm.entry<decode>} {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %f = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c32 step %c8 {
    %buffer = memref.alloca() : memref<16xf32>
    memref.store %f, %buffer[%c0] : memref<16xf32>
    %v = memref.load %buffer[%c0] : memref<16xf32>
    memref.store %v, %y[%i] : memref<32xf32>
  } {afm.parallel}
  return
}
