// On intel-sapphire-rapids a GEMV's parallel row loop runs the rows of
// the two halves of its weights in turn (TargetDescription's
// interleaveRowHalves): iteration k computes row (k mod 2) * N/2 + k / 2,
// so a thread reads two streams half the matrix apart. Other targets keep
// the rows in order. The weights are 1 MiB (streamed: at least 512 KiB).
// RUN: afm-opt %s -split-input-file --afm-set-target=target=intel-sapphire-rapids --afm-select-tiles --afm-tile-for-target | FileCheck %s --check-prefix=HALVES
// RUN: afm-opt %s -split-input-file --afm-set-target=target=x86-64-v4-vnni --afm-select-tiles --afm-tile-for-target | FileCheck %s --check-prefix=IN-ORDER

#X = affine_map<(t, o, g, j, i, m) -> (t, j, g, i, m)>
#W = affine_map<(t, o, g, j, i, m) -> (o, g, i, m)>
#Y = affine_map<(t, o, g, j, i, m) -> (t, o, i)>

// HALVES-LABEL: func.func @q2_int8_gemv
// HALVES: scf.for %[[K:.*]] = %c0 to %c2048 step %c1
// HALVES-NEXT: %[[HALF:.*]] = arith.remui %[[K]], %c2
// HALVES-NEXT: %[[WITHIN:.*]] = arith.divui %[[K]], %c2
// HALVES-NEXT: %[[FIRST:.*]] = arith.muli %[[HALF]], %c1024
// HALVES-NEXT: %[[ROW:.*]] = arith.addi %[[FIRST]], %[[WITHIN]]
// HALVES-NEXT: memref.subview %arg2[%c0, %[[ROW]], %c0]
// The weights' prefetch runs 4 rows (the target's 2 KiB) ahead within the
// row's half.
// HALVES-NEXT: %[[NEXT:.*]] = arith.addi %[[ROW]], %c4
// HALVES-NEXT: %[[AHEAD:.*]] = arith.minui %[[NEXT]], %c2047
// HALVES: scf.for %[[G:.*]] = %c0 to %c8
// HALVES-NEXT: memref.subview %arg1[%[[ROW]], %[[G]], %c0, %c0]
// HALVES: memref.prefetch %arg1[%[[AHEAD]], %[[G]], %c0, %c0]
// HALVES: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// HALVES: } {afm.parallel}
// IN-ORDER-LABEL: func.func @q2_int8_gemv
// IN-ORDER: scf.for %[[K:.*]] = %c0 to %c2048 step %c1
// IN-ORDER-NOT: arith.remui
// IN-ORDER: memref.subview %arg2[%c0, %[[K]], %c0]
func.func @q2_int8_gemv(%x: memref<1x4x8x16x4xi8>, %w: memref<2048x8x16x4xi8>,
                        %y: memref<1x2048x16xi32>) {
  linalg.generic {indexing_maps = [#X, #W, #Y],
                  iterator_types = ["parallel", "parallel", "reduction",
                                    "reduction", "parallel", "reduction"]}
      ins(%x, %w : memref<1x4x8x16x4xi8>, memref<2048x8x16x4xi8>)
      outs(%y : memref<1x2048x16xi32>) {
  ^bb0(%xq: i8, %byte: i8, %acc: i32):
    %j = linalg.index 3 : index
    %plane = arith.index_cast %j : index to i8
    %c1 = arith.constant 1 : i8
    %shift = arith.shli %plane, %c1 : i8
    %shifted = arith.shrui %byte, %shift : i8
    %c3 = arith.constant 3 : i8
    %code = arith.andi %shifted, %c3 : i8
    %u = arith.extui %code : i8 to i32
    %s = arith.extsi %xq : i8 to i32
    %p = arith.muli %u, %s : i32
    %sum = arith.addi %acc, %p : i32
    linalg.yield %sum : i32
  }
  return
}

// -----

// An odd number of rows has no two equal halves: the rows stay in order.
// HALVES-LABEL: func.func @odd_rows
// HALVES: scf.for %[[K:.*]] = %c0 to %c1025 step %c1
// HALVES-NOT: arith.remui
// HALVES: memref.subview %arg2[%c0, %[[K]], %c0]
// HALVES: } {afm.parallel}
#X = affine_map<(t, o, g, j, i, m) -> (t, j, g, i, m)>
#W = affine_map<(t, o, g, j, i, m) -> (o, g, i, m)>
#Y = affine_map<(t, o, g, j, i, m) -> (t, o, i)>
func.func @odd_rows(%x: memref<1x4x8x16x4xi8>, %w: memref<1025x8x16x4xi8>,
                    %y: memref<1x1025x16xi32>) {
  linalg.generic {indexing_maps = [#X, #W, #Y],
                  iterator_types = ["parallel", "parallel", "reduction",
                                    "reduction", "parallel", "reduction"]}
      ins(%x, %w : memref<1x4x8x16x4xi8>, memref<1025x8x16x4xi8>)
      outs(%y : memref<1x1025x16xi32>) {
  ^bb0(%xq: i8, %byte: i8, %acc: i32):
    %j = linalg.index 3 : index
    %plane = arith.index_cast %j : index to i8
    %c1 = arith.constant 1 : i8
    %shift = arith.shli %plane, %c1 : i8
    %shifted = arith.shrui %byte, %shift : i8
    %c3 = arith.constant 3 : i8
    %code = arith.andi %shifted, %c3 : i8
    %u = arith.extui %code : i8 to i32
    %s = arith.extsi %xq : i8 to i32
    %p = arith.muli %u, %s : i32
    %sum = arith.addi %acc, %p : i32
    linalg.yield %sum : i32
  }
  return
}
