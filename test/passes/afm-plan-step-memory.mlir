// RUN: afm-opt %s -split-input-file -afm-plan-step-memory | FileCheck %s

// The arena holds 100 bytes of KV cache; the scratch region starts at the
// next 64-byte boundary, 128. %big (128 bytes) and %a (64) are live at the
// same time and get disjoint bytes; %c is allocated after %a's last use
// (through a view of it) and reuses %a's bytes. The arena argument grows by
// the scratch region, and the module records both sizes.
// CHECK-LABEL: module attributes
// CHECK-SAME: afm.kv_arena_bytes = 320 : i64
// CHECK-SAME: afm.scratch_bytes = 192 : i64
// CHECK: func.func @afm_decode({{.*}}, %[[ARENA:.*]]: memref<320xi8>, %{{.*}}: memref<16xf32>)
// CHECK: %[[BIG:.*]] = memref.view %[[ARENA]][%c128{{.*}}][] : memref<320xi8> to memref<32xf32>
// CHECK: %[[A:.*]] = memref.view %[[ARENA]][%c256{{.*}}][] : memref<320xi8> to memref<16xf32>
// CHECK: memref.subview %[[A]]
// CHECK: %[[C:.*]] = memref.view %[[ARENA]][%c256{{.*}}][] : memref<320xi8> to memref<16xf32>
// CHECK-NOT: memref.alloc()
// A dynamically shaped buffer stays on the heap.
// CHECK: memref.alloc(%{{.*}}) : memref<?xf32>
module attributes {afm.kv_arena_bytes = 100 : i64} {
  func.func @afm_decode(%w: memref<16xi8>, %t: memref<1xi32>, %n: index, %p: index, %arena: memref<100xi8>, %out: memref<16xf32>) attributes {afm.entry = "decode"} {
    %zero = arith.constant 0.0 : f32
    %big = memref.alloc() {alignment = 64 : i64} : memref<32xf32>
    %a = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
    linalg.fill ins(%zero : f32) outs(%big : memref<32xf32>)
    %half = memref.subview %a[0] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1]>>
    linalg.fill ins(%zero : f32) outs(%half : memref<8xf32, strided<[1]>>)
    %c = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
    %head = memref.subview %big[0] [16] [1] : memref<32xf32> to memref<16xf32, strided<[1]>>
    memref.copy %head, %c : memref<16xf32, strided<[1]>> to memref<16xf32>
    memref.copy %c, %out : memref<16xf32> to memref<16xf32>
    %dyn = memref.alloc(%n) : memref<?xf32>
    memref.dealloc %dyn : memref<?xf32>
    return
  }
}

// -----

// Functions that are not entry points are left alone.
// CHECK-LABEL: func.func @helper
// CHECK: memref.alloc()
module attributes {afm.kv_arena_bytes = 64 : i64} {
  func.func @helper(%arena: memref<64xi8>) {
    %a = memref.alloc() : memref<4xf32>
    memref.dealloc %a : memref<4xf32>
    return
  }
}
