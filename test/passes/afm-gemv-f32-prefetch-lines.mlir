// An f32 GEMV in split-K form (afm.linear over f32 weights for a decode
// step) prefetches its weight rows ahead, one prefetch per cache line. On
// x86-64-v3 a 64-byte group of 16 lanes is two 8-lane steps of the
// innermost loop, which LLVM unrolls: each copy prefetched its own 32
// bytes, two prefetches a line. Only the steps that start a line (the
// step's lane offset a multiple of 16) prefetch now. On x86-64-v4 a step
// is the whole line: no guard.
// RUN: afm-opt %s --afm-set-target=target=x86-64-v3 --afm-select-tiles --afm-tile-for-target | FileCheck %s --check-prefix=AVX2
// RUN: afm-opt %s --afm-set-target=target=x86-64-v4 --afm-select-tiles --afm-tile-for-target | FileCheck %s --check-prefix=AVX512

// AVX2-LABEL: func.func @gemv_split_k
// AVX2-DAG: %[[C0:.*]] = arith.constant 0 : index
// AVX2-DAG: %[[C16:.*]] = arith.constant 16 : index
// AVX2-DAG: %[[C8:.*]] = arith.constant 8 : index
// AVX2: scf.for %[[L:.*]] = %[[C0]] to %[[C16]] step %[[C8]]
// AVX2: %[[FROM:.*]] = arith.subi %[[L]], %[[C0]] : index
// AVX2: %[[AT:.*]] = arith.remui %[[FROM]], %[[C16]] : index
// AVX2: %[[DUE:.*]] = arith.cmpi eq, %[[AT]], %[[C0]] : index
// AVX2: scf.if %[[DUE]] {
// AVX2-NEXT: memref.prefetch %arg1[%{{.*}}, %{{.*}}, %[[L]]], read, locality<3>, data : memref<1024x16x16xf32>
// AVX2-NEXT: }
// AVX2-NOT: memref.prefetch
// AVX2: arith.mulf {{.*}} : vector<1x1x1x8xf32>

// AVX512-LABEL: func.func @gemv_split_k
// AVX512-NOT: scf.if
// AVX512: memref.prefetch %arg1[{{.*}}], read, locality<3>, data : memref<1024x16x16xf32>
// AVX512-NOT: memref.prefetch
// AVX512: arith.mulf {{.*}} : vector<1x1x1x16xf32>
#X = affine_map<(t, n, g, l) -> (t, g, l)>
#W = affine_map<(t, n, g, l) -> (n, g, l)>
#P = affine_map<(t, n, g, l) -> (t, n, l)>

func.func @gemv_split_k(%x: memref<1x16x16xf32>, %w: memref<1024x16x16xf32>,
                        %p: memref<1x1024x16xf32>) {
  linalg.generic {indexing_maps = [#X, #W, #P],
                  iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<1x16x16xf32>, memref<1024x16x16xf32>)
      outs(%p : memref<1x1024x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}
