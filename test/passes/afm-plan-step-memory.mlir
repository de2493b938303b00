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
  func.func @afm_decode(%w: memref<16xi8>, %t: memref<1xi32>, %n: index, %p: index, %arena: memref<100xi8>, %out: memref<16xf32>) attributes {afm.entry = #afm.entry<decode>} {
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

// -----

// PT-MoE tracks run concurrently, one scf.index_switch case per track (the
// last track in the default region). Each case is planned on its own, and
// the cases lie side by side in one region live while the forall runs:
// track 0's 64 + 64 bytes (%t0a and %t0b live at once) at 128, track 1's
// 64 bytes after them at 256. %before, dead when the forall starts, shares
// bytes with track 0; %after, allocated once it ends, reuses them too.
// CHECK-LABEL: module attributes
// CHECK-SAME: afm.scratch_bytes = 192 : i64
// CHECK: func.func @afm_decode({{.*}}, %[[ARENA:.*]]: memref<320xi8>,
// CHECK: memref.view %[[ARENA]][%c128{{.*}}][] : memref<320xi8> to memref<16xf32>
// CHECK: scf.forall
// CHECK: case 0 {
// CHECK: memref.view %[[ARENA]][%c128{{.*}}][] : memref<320xi8> to memref<16xf32>
// CHECK: memref.view %[[ARENA]][%c192{{.*}}][] : memref<320xi8> to memref<16xf32>
// CHECK: default {
// CHECK: memref.view %[[ARENA]][%c256{{.*}}][] : memref<320xi8> to memref<16xf32>
// CHECK: memref.view %[[ARENA]][%c128{{.*}}][] : memref<320xi8> to memref<16xf32>
// CHECK-NOT: memref.alloc()
module attributes {afm.kv_arena_bytes = 100 : i64} {
  func.func @afm_decode(%w: memref<16xi8>, %t: memref<1xi32>, %n: index, %p: index, %arena: memref<100xi8>, %out: memref<2x16xf32>) attributes {afm.entry = #afm.entry<decode>} {
    %zero = arith.constant 0.0 : f32
    %before = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
    linalg.fill ins(%zero : f32) outs(%before : memref<16xf32>)
    scf.forall (%track) in (2) {
      %slice = memref.subview %out[%track, 0] [1, 16] [1, 1] : memref<2x16xf32> to memref<16xf32, strided<[1], offset: ?>>
      scf.index_switch %track
      case 0 {
        %t0a = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
        %t0b = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
        linalg.fill ins(%zero : f32) outs(%t0a : memref<16xf32>)
        memref.copy %t0a, %t0b : memref<16xf32> to memref<16xf32>
        memref.copy %t0b, %slice : memref<16xf32> to memref<16xf32, strided<[1], offset: ?>>
        scf.yield
      }
      default {
        %t1 = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
        linalg.fill ins(%zero : f32) outs(%t1 : memref<16xf32>)
        memref.copy %t1, %slice : memref<16xf32> to memref<16xf32, strided<[1], offset: ?>>
        scf.yield
      }
    }
    %after = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
    linalg.fill ins(%zero : f32) outs(%after : memref<16xf32>)
    return
  }
}

// -----

// A default region left more than one track runs in several iterations at
// once: it keeps its heap allocation (the case is planned).
// CHECK-LABEL: module attributes
// CHECK: case 0 {
// CHECK: memref.view
// CHECK: default {
// CHECK: memref.alloc()
module attributes {afm.kv_arena_bytes = 64 : i64} {
  func.func @afm_decode(%w: memref<16xi8>, %t: memref<1xi32>, %n: index, %p: index, %arena: memref<64xi8>, %out: memref<16xf32>) attributes {afm.entry = #afm.entry<decode>} {
    %zero = arith.constant 0.0 : f32
    scf.forall (%track) in (3) {
      scf.index_switch %track
      case 0 {
        %a = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
        linalg.fill ins(%zero : f32) outs(%a : memref<16xf32>)
        scf.yield
      }
      default {
        %b = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
        linalg.fill ins(%zero : f32) outs(%b : memref<16xf32>)
        memref.dealloc %b : memref<16xf32>
        scf.yield
      }
    }
    return
  }
}

// -----

// In a sequential loop: a buffer that an inner loop hands from iteration
// to iteration and back is planned (one buffer serves every iteration of
// the outer loop); one that the outer loop itself carries into its next
// iteration stays on the heap. (The planned one is allocated once, before
// the loop.)
// CHECK-LABEL: module attributes
// CHECK: memref.view %{{.*}} : memref<160xi8> to memref<8xf32>
// CHECK: memref.view %{{.*}} : memref<160xi8> to memref<16xf32>
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.alloc() {{.*}} : memref<8xf32>
module attributes {afm.kv_arena_bytes = 64 : i64} {
  func.func @afm_decode(%w: memref<16xi8>, %t: memref<1xi32>, %n: index, %p: index, %arena: memref<64xi8>, %out: memref<16xf32>) attributes {afm.entry = #afm.entry<decode>} {
    %zero = arith.constant 0.0 : f32
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %init = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
    linalg.fill ins(%zero : f32) outs(%init : memref<8xf32>)
    %carried = scf.for %i = %c0 to %c4 step %c1 iter_args(%prev = %init) -> (memref<8xf32>) {
      %acc = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
      %inner = scf.for %j = %c0 to %c4 step %c1 iter_args(%x = %acc) -> (memref<16xf32>) {
        linalg.fill ins(%zero : f32) outs(%x : memref<16xf32>)
        scf.yield %x : memref<16xf32>
      }
      memref.copy %inner, %out : memref<16xf32> to memref<16xf32>
      %next = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
      memref.copy %prev, %next : memref<8xf32> to memref<8xf32>
      scf.yield %next : memref<8xf32>
    }
    return
  }
}

// -----

// Buffers take the data layout's bytes per element: an index is 8 (it has
// no bit width of its own), an i1 is a byte, not a bit. Scratch starts at
// 64: 4 indices (32 bytes), then 16 i1 (16 bytes) at the next 64-byte
// boundary, 128: the arena ends at 144.
// CHECK-LABEL: module attributes
// CHECK-SAME: afm.kv_arena_bytes = 144 : i64
// CHECK-SAME: afm.scratch_bytes = 80 : i64
// CHECK: memref.view %{{.*}}[%c64{{.*}}][] : memref<144xi8> to memref<4xindex>
// CHECK: memref.view %{{.*}}[%c128{{.*}}][] : memref<144xi8> to memref<16xi1>
module attributes {afm.kv_arena_bytes = 64 : i64} {
  func.func @afm_decode(%w: memref<16xi8>, %t: memref<1xi32>, %n: index, %p: index, %arena: memref<64xi8>, %out: memref<4xindex>, %mask: memref<16xi1>) attributes {afm.entry = #afm.entry<decode>} {
    %c0 = arith.constant 0 : index
    %true = arith.constant true
    %counts = memref.alloc() {alignment = 64 : i64} : memref<4xindex>
    %flags = memref.alloc() {alignment = 64 : i64} : memref<16xi1>
    linalg.fill ins(%c0 : index) outs(%counts : memref<4xindex>)
    linalg.fill ins(%true : i1) outs(%flags : memref<16xi1>)
    memref.copy %counts, %out : memref<4xindex> to memref<4xindex>
    memref.copy %flags, %mask : memref<16xi1> to memref<16xi1>
    return
  }
}

// -----

// Tracks split between processes: the switch sits in the then-block of the
// scf.if that runs it for this process's tracks only (afm-lower-tracks).
// Its cases are planned as above; the else-block allocates nothing.
// CHECK-LABEL: module attributes
// CHECK-SAME: afm.scratch_bytes = 128 : i64
// CHECK: scf.forall
// CHECK: scf.if
// CHECK: case 0 {
// CHECK: memref.view %{{.*}}[%c128{{.*}}][] : memref<256xi8> to memref<16xf32>
// CHECK: default {
// CHECK: memref.view %{{.*}}[%c192{{.*}}][] : memref<256xi8> to memref<16xf32>
// CHECK-NOT: memref.alloc()
module attributes {afm.kv_arena_bytes = 100 : i64} {
  func.func @afm_decode(%w: memref<16xi8>, %t: memref<1xi32>, %n: index, %p: index, %arena: memref<100xi8>, %out: memref<2x16xf32>) attributes {afm.entry = #afm.entry<decode>} {
    %zero = arith.constant 0.0 : f32
    scf.forall (%track) in (2) {
      %slice = memref.subview %out[%track, 0] [1, 16] [1, 1] : memref<2x16xf32> to memref<16xf32, strided<[1], offset: ?>>
      %owned = arith.cmpi slt, %track, %n : index
      scf.if %owned {
        scf.index_switch %track
        case 0 {
          %t0 = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
          linalg.fill ins(%zero : f32) outs(%t0 : memref<16xf32>)
          memref.copy %t0, %slice : memref<16xf32> to memref<16xf32, strided<[1], offset: ?>>
          scf.yield
        }
        default {
          %t1 = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
          linalg.fill ins(%zero : f32) outs(%t1 : memref<16xf32>)
          memref.copy %t1, %slice : memref<16xf32> to memref<16xf32, strided<[1], offset: ?>>
          scf.yield
        }
      } else {
        linalg.fill ins(%zero : f32) outs(%slice : memref<16xf32, strided<[1], offset: ?>>)
      }
    }
    return
  }
}
