// RUN: afm-opt %s --split-input-file --afm-set-target=target=x86-64-v4 --afm-pack-gemm | FileCheck %s
// RUN: afm-opt %s --split-input-file --afm-set-target=target=x86-64-v3 --afm-pack-gemm | FileCheck %s --check-prefix=AVX2
// RUN: not afm-opt %s --split-input-file --afm-pack-gemm 2>&1 | FileCheck %s --check-prefix=BAD

// AVX-512 (32 registers of 16 floats): an 8 x 32 register tile. A and C are
// read in place through views; B, an input, is packed block by block at run
// time (the schedule's pack_input = its operand number, in the order n1, k, n0).
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d2, d4)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d4, d0, d3)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d2, d0, d3)>
// CHECK-LABEL: func.func @inputs
// CHECK: %[[AV:.*]] = tensor.expand_shape %arg0 {{\[}}[0, 1], [2]] output_shape [8, 8, 512]
// CHECK: %[[BV:.*]] = tensor.expand_shape %arg1 {{\[}}[0], [1, 2]] output_shape [512, 4, 32]
// CHECK: %[[CV:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2, 3]] output_shape [8, 8, 4, 32]
// CHECK: linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[C]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[AV]], %[[BV]] : {{.*}}) outs(%[[CV]] : {{.*}})
// CHECK-SAME: afm.gemm_schedule = #afm.gemm_schedule<cache_tiles = [1, 0, 0, 0, 128], cache_interchange = [0, 4, 1, 2, 3], register_tiles = [1, 1, 0, 0, 4], pack_input = 1, pack_order = [0, 4, 3]>
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2, 3]] : tensor<8x8x4x32xf32> into tensor<64x128xf32>
// AVX2 (16 registers of 8 floats): a 4 x 16 tile here (6 rows do not divide 64).
// AVX2-LABEL: func.func @inputs
// AVX2: output_shape [16, 4, 512]
// AVX2: output_shape [512, 8, 16]
func.func @inputs(%a: tensor<64x512xf32>, %b: tensor<512x128xf32>) -> tensor<64x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %y = linalg.matmul ins(%a, %b : tensor<64x512xf32>, tensor<512x128xf32>) outs(%c : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %y : tensor<64x128xf32>
}

// -----

// 512 rows of A over a reduction block of 128 (256 KiB) do not fit beside
// B's block in AVX2's 512 KiB L2 (a quarter of it each: 256 rows): the
// schedule also tiles the rows in blocks of 64 register tiles, inside the
// reduction blocks, so B's block is packed once for both row blocks.
// AVX-512's 2 MiB L2 holds all 512 rows: no row blocks.
// AVX2-LABEL: func.func @row_blocks
// AVX2: afm.gemm_schedule = #afm.gemm_schedule<cache_tiles = [2, 64, 0, 0, 128], cache_interchange = [0, 4, 1, 2, 3], register_tiles = [1, 1, 0, 0, 4], pack_input = 1, pack_order = [0, 4, 3]>
// CHECK-LABEL: func.func @row_blocks
// CHECK: afm.gemm_schedule = #afm.gemm_schedule<cache_tiles = [1, 0, 0, 0, 128], cache_interchange = [0, 4, 1, 2, 3], register_tiles = [1, 1, 0, 0, 4], pack_input = 1, pack_order = [0, 4, 3]>
func.func @row_blocks(%a: tensor<512x512xf32>, %w: tensor<128x512xf32>, %c: tensor<512x128xf32>) -> tensor<512x128xf32> {
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
       ins(%a, %w : tensor<512x512xf32>, tensor<128x512xf32>) outs(%c : tensor<512x128xf32>) -> tensor<512x128xf32>
  return %y : tensor<512x128xf32>
}

// -----

// A constant B in [N, K] layout (x * W^T) is packed now, into [N/32, K, 32]
// panels: element (n, k) moves to (n / 32, k, n % 32), so W[n][k] = 4n + k
// becomes the rows 0, 4, 8, ... then 1, 5, 9, ... Nothing is left to pack
// at run time. (A small GEMM, admitted by min-multiply-adds.)
// RUN: afm-opt %s --split-input-file --afm-set-target=target=x86-64-v4 --afm-pack-gemm="min-multiply-adds=1" --mlir-print-elementsattrs-with-hex-if-larger=-1 | FileCheck %s --check-prefix=CONST
// CONST-LABEL: func.func @constant_transposed
// CONST: %[[P:.*]] = arith.constant dense<{{\[\[\[}}0.000000e+00, 4.000000e+00, 8.000000e+00,
// CONST-SAME: {{\]}}, [1.000000e+00, 5.000000e+00, 9.000000e+00,
// CONST-SAME: tensor<1x4x32xf32>
// CONST: linalg.generic
// CONST-SAME: ins(%{{.*}}, %[[P]] : tensor<2x8x4xf32>, tensor<1x4x32xf32>)
// The weights were packed at compile time: the schedule packs nothing.
// CONST-SAME: afm.gemm_schedule = #afm.gemm_schedule<cache_tiles = [{{[0-9, ]*}}], cache_interchange = [{{[0-9, ]*}}], register_tiles = [{{[0-9, ]*}}]>
func.func @constant_transposed(%a: tensor<16x4xf32>, %c: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %w = arith.constant dense<[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0], [12.0, 13.0, 14.0, 15.0], [16.0, 17.0, 18.0, 19.0], [20.0, 21.0, 22.0, 23.0], [24.0, 25.0, 26.0, 27.0], [28.0, 29.0, 30.0, 31.0], [32.0, 33.0, 34.0, 35.0], [36.0, 37.0, 38.0, 39.0], [40.0, 41.0, 42.0, 43.0], [44.0, 45.0, 46.0, 47.0], [48.0, 49.0, 50.0, 51.0], [52.0, 53.0, 54.0, 55.0], [56.0, 57.0, 58.0, 59.0], [60.0, 61.0, 62.0, 63.0], [64.0, 65.0, 66.0, 67.0], [68.0, 69.0, 70.0, 71.0], [72.0, 73.0, 74.0, 75.0], [76.0, 77.0, 78.0, 79.0], [80.0, 81.0, 82.0, 83.0], [84.0, 85.0, 86.0, 87.0], [88.0, 89.0, 90.0, 91.0], [92.0, 93.0, 94.0, 95.0], [96.0, 97.0, 98.0, 99.0], [100.0, 101.0, 102.0, 103.0], [104.0, 105.0, 106.0, 107.0], [108.0, 109.0, 110.0, 111.0], [112.0, 113.0, 114.0, 115.0], [116.0, 117.0, 118.0, 119.0], [120.0, 121.0, 122.0, 123.0], [124.0, 125.0, 126.0, 127.0]]> : tensor<32x4xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
       ins(%a, %w : tensor<16x4xf32>, tensor<32x4xf32>) outs(%c : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}

// -----

// Too small to pay for the blocking (and one register tile of rows): left
// as it is, for the generic tiling.
// CHECK-LABEL: func.func @small
// CHECK: linalg.matmul
// CHECK-NOT: afm.gemm_schedule
func.func @small(%a: tensor<8x64xf32>, %b: tensor<64x32xf32>, %c: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %y = linalg.matmul ins(%a, %b : tensor<8x64xf32>, tensor<64x32xf32>) outs(%c : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %y : tensor<8x32xf32>
}

// BAD: error: the module has no afm.target: run afm-set-target first
