// A 2-bit GEMV's weight rows are prefetched ahead, one prefetch per cache
// line: on x86-64-v3 a 64-byte group of code bytes is two 8-lane pieces,
// whose unrolled copies prefetched bytes 0 and 32 of one line; the second
// touches nothing the first does not, so only the first stays
// (finishInt8DotLoops). On x86-64-v4-vnni the group is one piece and one
// prefetch. The weights are 2 MiB (streamed: at least 512 KiB).
// RUN: afm-opt %s --afm-set-target=target=x86-64-v3 --afm-select-tiles --afm-tile-for-target | FileCheck %s
// RUN: afm-opt %s --afm-set-target=target=x86-64-v4-vnni --afm-select-tiles --afm-tile-for-target | FileCheck %s

// CHECK-LABEL: func.func @q2_int8_gemv
// CHECK: scf.for %[[G:.*]] = %c0 to %c32 step %c1 iter_args
// CHECK: memref.prefetch %arg1[%{{.*}}, %[[G]], %c0, %c0], read
// CHECK-NOT: memref.prefetch
// CHECK: afm_cpu.dot_bytes
// CHECK-NOT: memref.prefetch
// CHECK: return
#X = affine_map<(t, o, g, j, i, m) -> (t, j, g, i, m)>
#W = affine_map<(t, o, g, j, i, m) -> (o, g, i, m)>
#Y = affine_map<(t, o, g, j, i, m) -> (t, o)>

func.func @q2_int8_gemv(%x: memref<1x4x32x16x4xi8>, %w: memref<1024x32x16x4xi8>,
                        %y: memref<1x1024xi32>) {
  linalg.generic {indexing_maps = [#X, #W, #Y],
                  iterator_types = ["parallel", "parallel", "reduction",
                                    "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x4x32x16x4xi8>, memref<1024x32x16x4xi8>)
      outs(%y : memref<1x1024xi32>) {
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
