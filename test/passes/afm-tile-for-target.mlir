// afm-tile-for-target applies the tile plans of afm-select-tiles
// (test/passes/afm-select-tiles.mlir): loops, then one vector op per tile.
// RUN: afm-opt %s -split-input-file --afm-set-target=target=x86-64-v3 --afm-select-tiles --afm-tile-for-target | FileCheck %s --check-prefix=VEC
// RUN: afm-opt %s -split-input-file --afm-set-target=target=apple-m2 --afm-select-tiles --afm-tile-for-target | FileCheck %s --check-prefix=VEC-M2
// RUN: afm-opt %s -split-input-file --afm-set-target=target=x86-64-v4 --afm-select-tiles --afm-tile-for-target | FileCheck %s --check-prefix=SPLITK

#A = affine_map<(m, n, k) -> (m, k)>
#B = affine_map<(m, n, k) -> (n, k)>
#C = affine_map<(m, n, k) -> (m, n)>

// A contraction gets [rows, 2 x lanes, lanes]: AVX2 has 8 f32 lanes and 16
// registers (6 rows fit, 4 divides 16); AVX-512 16 lanes and 32 registers;
// NEON 4 lanes and 32 registers.

// Each tile is one vector.contract of the register tile's shape.
// VEC-LABEL: func.func @linear
// VEC: scf.for {{.*}} step %c4
// VEC: scf.for {{.*}} step %c16
// VEC: scf.for {{.*}} step %c8
// VEC: vector.contract {{.*}} : vector<4x8xf32>, vector<16x8xf32> into vector<4x16xf32>
// VEC-NOT: linalg.matmul
// VEC-M2-LABEL: func.func @linear
// VEC-M2: vector.contract {{.*}} : vector<8x4xf32>, vector<8x4xf32> into vector<8x8xf32>
func.func @linear(%x: memref<16x64xf32>, %w: memref<128x64xf32>, %y: memref<16x128xf32>) {
  linalg.matmul indexing_maps = [#A, #B, #C] ins(%x, %w : memref<16x64xf32>, memref<128x64xf32>) outs(%y : memref<16x128xf32>)
  return
}

// -----

// Element-wise ops get one vector register along the innermost dimension.
// VEC-LABEL: func.func @elementwise
// VEC: vector.transfer_read {{.*}} vector<1x8xf32>
// VEC: math.exp {{.*}} : vector<1x8xf32>
// VEC-M2-LABEL: func.func @elementwise
// VEC-M2: math.exp {{.*}} : vector<1x4xf32>
func.func @elementwise(%x: memref<16x64xf32>, %y: memref<16x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<16x64xf32>) outs(%y : memref<16x64xf32>) {
  ^bb0(%a: f32, %b: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// Tiles divide the sizes: 6 rows would not divide 9, so 3 are used.
func.func @odd_rows(%x: memref<9x64xf32>, %w: memref<32x64xf32>, %y: memref<9x32xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] ins(%x, %w : memref<9x64xf32>, memref<32x64xf32>) outs(%y : memref<9x32xf32>)
  return
}

// -----

// Copies become vectorized linalg.copy tiles, so no runtime copy call is needed.
// VEC-LABEL: func.func @copy
// VEC-NOT: memref.copy
// VEC: vector.transfer_read {{.*}} vector<1x8xf32>
// VEC: vector.transfer_write
func.func @copy(%x: memref<4x16xf32>, %y: memref<4x16xf32, strided<[32, 1]>>) {
  memref.copy %x, %y : memref<4x16xf32> to memref<4x16xf32, strided<[32, 1]>>
  return
}

// -----

// Split-K partial sums (the 2-bit kernel): the output's innermost dimension
// is the innermost loop, so the reductions are tiled by 1 and every step
// is an element-wise vector FMA into accumulators that stay in registers.
// (A plain multiply-add body would be a contraction and tiled as one.)
// VEC-LABEL: func.func @split_k
// VEC: scf.for {{.*}} to %c4 step %c1
// VEC: scf.for {{.*}} to %c16 step %c1
// VEC: arith.mulf {{.*}} : vector<1x1x1x1x8xf32>
// VEC: vector.multi_reduction <add>, {{.*}} [2, 3] : vector<1x1x1x1x8xf32> to vector<1x1x8xf32>
func.func @split_k(%x: memref<1x4x16x64xf32>, %w: memref<256x16x64xf32>, %out: memref<1x256x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(t, o, j, g, l) -> (t, j, g, l)>,
                                   affine_map<(t, o, j, g, l) -> (o, g, l)>,
                                   affine_map<(t, o, j, g, l) -> (t, o, l)>],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel"]}
      ins(%x, %w : memref<1x4x16x64xf32>, memref<256x16x64xf32>) outs(%out : memref<1x256x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %half = arith.constant 1.5 : f32
    %level = arith.subf %b, %half : f32
    %p = arith.mulf %a, %level : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#X = affine_map<(t, n, g, l) -> (t, g, l)>
#W = affine_map<(t, n, g, l) -> (n, g, l)>
#P = affine_map<(t, n, g, l) -> (t, n, l)>

// A one-row GEMV in split-K form (afm.linear over f32 weights for a decode
// step): a contraction over the groups whose innermost loop is a lane of
// every operand. It is tiled as partial sums (one vector FMA per step, no
// vector.contract), and the weights (1 MiB or more) are prefetched ahead.
// SPLITK-LABEL: func.func @gemv_split_k
// SPLITK-NOT: vector.contract
// SPLITK: scf.for
// SPLITK: memref.prefetch %{{.*}}, read, locality<3>, data : memref<1024x16x16xf32>
// SPLITK: arith.mulf {{.*}} : vector<1x1x1x16xf32>
// SPLITK-NOT: vector.contract
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

// -----

#C = affine_map<(t, n, g, l) -> (n, g, l)>
#A = affine_map<(t, n, g, l) -> (t, g, l)>
#S = affine_map<(t, n, g, l) -> (n, g, l)>
#O = affine_map<(t, n, g, l) -> (t, n, l)>

// Split-K partial sums whose products are i16 (4-bit codes times int8
// activations, block sums in i16):
// a register holds twice the f32 lanes, so the lane tile is 32 on
// AVX-512, and the integer ops are vector<32xi16>.
// SPLITK-LABEL: func.func @split_k_i16_products
// SPLITK: arith.muli {{.*}} : vector<1x1x1x32xi16>
// SPLITK: arith.sitofp {{.*}} : vector<1x1x1x32xi16> to vector<1x1x1x32xf32>
func.func @split_k_i16_products(%codes: memref<64x4x64xi8>, %x: memref<1x4x64xi16>,
                                %s: memref<64x4x64xf16>, %p: memref<1x64x64xf32>) {
  linalg.generic {indexing_maps = [#C, #A, #S, #O],
                  iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%codes, %x, %s : memref<64x4x64xi8>, memref<1x4x64xi16>, memref<64x4x64xf16>)
      outs(%p : memref<1x64x64xf32>) {
  ^bb0(%c: i8, %a: i16, %scale: f16, %acc: f32):
    %q = arith.extui %c : i8 to i16
    %d = arith.muli %q, %a : i16
    %f = arith.sitofp %d : i16 to f32
    %w = arith.extf %scale : f16 to f32
    %m = arith.mulf %f, %w : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#C = affine_map<(t, n, i, h, g, l) -> (n, i, g, l)>
#A = affine_map<(t, n, i, h, g, l) -> (t, g, l)>
#S = affine_map<(t, n, i, h, g, l) -> (n, g, l)>
#O = affine_map<(t, n, i, h, g, l) -> (t, n, i, h, l)>
// Loops a kernel asks to tile whole (afm.whole_tile_dims; the ASTC
// kernels' row pair and row of the pair): one register tile spans them, so
// the code vector is read once for both rows of a pair and the activation
// and scale vectors once for all six; the lane tiles are outside the
// reduction, whose accumulators are its iter_args (in registers).
// SPLITK-LABEL: func.func @whole_tile_dims
// SPLITK: scf.for %[[N:.*]] = %{{.*}} to %c2048 step %c1
// SPLITK: scf.for %[[L:.*]] = %{{.*}} to %c32 step %c16
// SPLITK: %[[SUMS:.*]] = scf.for %[[G:.*]] = %{{.*}} to %c4 step %c1 iter_args(%{{.*}}) -> (vector<1x1x3x2x16xf32>)
// SPLITK: memref.subview %{{.*}}[%[[N]], %{{.*}}, %[[G]], %[[L]]] [1, 3, 1, 16]
// The weights (codes and scales, 512 KiB or more) are prefetched a block
// row ahead, each cache line of the tile: the three row pairs' codes.
// SPLITK-COUNT-3: memref.prefetch %{{.*}}, read, locality<3>, data : memref<2048x3x4x32xi32>
// SPLITK: memref.prefetch %{{.*}}, read, locality<3>, data : memref<2048x4x32xf16>
// SPLITK: afm_cpu.dot_bytes {{.*}} : vector<1x1x3x2x1x16xi32>
// The block's scale and the add into the row's partial sums are marked
// contractable: the step adds the product (the reduction over the one
// block of the tile) with the flag kept, which LLVM makes one fma.
// SPLITK: %[[P:.*]] = arith.mulf {{.*}} fastmath<contract> : vector<1x1x3x2x1x16xf32>
// SPLITK-NOT: vector.multi_reduction
// SPLITK: %[[PS:.*]] = vector.shape_cast %[[P]] : vector<1x1x3x2x1x16xf32> to vector<1x1x3x2x16xf32>
// SPLITK-NEXT: arith.addf %{{.*}}, %[[PS]] fastmath<contract> : vector<1x1x3x2x16xf32>
// SPLITK: scf.yield
// SPLITK: vector.transfer_write %[[SUMS]]
func.func @whole_tile_dims(%codes: memref<2048x3x4x32xi32>, %x: memref<1x4x32xi32>,
                           %s: memref<2048x4x32xf16>, %p: memref<1x2048x3x2x32xf32>) {
  linalg.generic {indexing_maps = [#C, #A, #S, #O],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%codes, %x, %s : memref<2048x3x4x32xi32>, memref<1x4x32xi32>, memref<2048x4x32xf16>)
      outs(%p : memref<1x2048x3x2x32xf32>) attrs = {afm.whole_tile_dims = array<i64: 2, 3>} {
  ^bb0(%c: i32, %a: i32, %scale: f16, %acc: f32):
    %h = linalg.index 3 : index
    %hi = arith.index_cast %h : index to i32
    %c2 = arith.constant 2 : i32
    %shift = arith.shli %hi, %c2 : i32
    %q = arith.shrui %c, %shift : i32
    %zero = arith.constant 0 : i32
    %d = afm_cpu.dot_bytes %zero, %q, %a : i32
    %f = arith.sitofp %d : i32 to f32
    %w = arith.extf %scale : f16 to f32
    %m = arith.mulf %f, %w fastmath<contract> : f32
    %r = arith.addf %acc, %m fastmath<contract> : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Index elements have no bit width of their own; their bytes come from the
// data layout (this used to crash).
// VEC-LABEL: func.func @index_elements
// VEC: scf.for
// VEC: arith.addi %{{.*}}, %{{.*}} : vector<8xindex>
#id = affine_map<(d0) -> (d0)>
func.func @index_elements(%a: memref<4096xindex>, %b: memref<4096xindex>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : memref<4096xindex>) outs(%b : memref<4096xindex>) {
  ^bb0(%x: index, %y: index):
    %c1 = arith.constant 1 : index
    %s = arith.addi %x, %c1 : index
    linalg.yield %s : index
  }
  return
}

// -----

#X = affine_map<(t, n, g, l) -> (t, g, l)>
#W = affine_map<(t, n, g, l) -> (n, g, l)>
#P = affine_map<(t, n, g, l) -> (t, n, l)>

// The prefetch distance counts whole rows of the source: here a view of
// every other 1 KiB of a 2 KiB row (interleaved parts, as the 4-bit head's
// code words are), so 8 KiB ahead is 4 rows, not the 8 that the view's
// own 1 KiB would give.
// SPLITK-LABEL: func.func @gemv_strided_rows
// SPLITK: %[[C4:.*]] = arith.constant 4 : index
// SPLITK: scf.for %[[N:.*]] = %{{.*}} to %c1024 step %c1
// SPLITK: %[[AHEAD:.*]] = arith.addi %[[N]], %[[C4]] : index
// SPLITK: %[[ROW:.*]] = arith.minui %[[AHEAD]], %{{.*}} : index
// SPLITK: memref.prefetch %{{.*}}[%[[ROW]], {{.*}} : memref<1024x16x16xf32, strided<[512, 16, 1]>>
func.func @gemv_strided_rows(%x: memref<1x16x16xf32>, %w: memref<1024x16x16xf32, strided<[512, 16, 1]>>,
                             %p: memref<1x1024x16xf32>) {
  linalg.generic {indexing_maps = [#X, #W, #P],
                  iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<1x16x16xf32>, memref<1024x16x16xf32, strided<[512, 16, 1]>>)
      outs(%p : memref<1x1024x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A reduction whose combined value is the same on every iteration (here a
// count: out + 1 over 3x5 elements, 15) stays a scalar linalg.generic in its
// tile: upstream's vectorizer adds such a value once per tile, not once per
// element (the sum came out as 1).
// VEC-LABEL: func.func @count
// VEC: linalg.generic
// VEC-SAME: iterator_types = ["reduction", "reduction"]
// VEC: arith.addf
// VEC-NOT: vector.
// VEC: return
func.func @count(%in: memref<3x5xf32>, %out: memref<f32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<f32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>],
                  iterator_types = ["reduction", "reduction"]}
      ins(%in : memref<3x5xf32>) outs(%out : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %one = arith.constant 1.0 : f32
    %sum = arith.addf %acc, %one : f32
    linalg.yield %sum : f32
  }
  return
}

// -----

#W = affine_map<(t, n, i, g, l) -> (n, i, g, l)>
#X = affine_map<(t, n, i, g, l) -> (t, g, l)>
#V = affine_map<(t, n, i, g, l) -> (n, i, g, l)>
#Y = affine_map<(t, n, i, g, l) -> (t, n, i)>
// A whole-tile kernel whose lanes are a reduction its output lacks (the
// 4-bit LM head: y[t, row] sums 6 sets of 16 lanes of group sums): a
// split-K tile all the same. The loop over the sets carries the lanes as
// a vector and its weights are prefetched; the lanes are summed once per
// row, after the loop, into the row's one output (no partial sums in
// memory).
// SPLITK-LABEL: func.func @lanes_reduced_whole_tile
// Two arrays stream (codes and scales), so each is prefetched half the
// target's 8 KiB ahead: 11 rows of 384 bytes.
// SPLITK: scf.for %[[N:.*]] = %{{.*}} to %c4096 step %c1
// SPLITK: %[[AHEAD:.*]] = arith.addi %[[N]], %c11 : index
// SPLITK: %[[ROW:.*]] = arith.minui %[[AHEAD]], %c4095 : index
// SPLITK: scf.for %{{.*}} = %{{.*}} to %c16 step %c16
// SPLITK: %[[SUMS:.*]]:2 = scf.for %{{.*}} = %{{.*}} to %c6 step %c1 iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (vector<1x1x1xf32>, vector<1x1x1x1x16xf32>)
// SPLITK: memref.prefetch %{{.*}}[%[[ROW]], {{.*}} read, locality<3>, data : memref<4096x1x6x16xi32>
// SPLITK: memref.prefetch %{{.*}}[%[[ROW]], {{.*}} read, locality<3>, data : memref<4096x1x6x16xf32>
// SPLITK: afm_cpu.dot_bytes {{.*}} : vector<1x1x1x1x16xi32>
// SPLITK-NOT: vector.multi_reduction
// SPLITK: arith.addf %{{[^ ]*}}, %{{[^ ]*}} : vector<1x1x1x1x16xf32>
// SPLITK: scf.yield
// SPLITK: vector.multi_reduction <add>, %[[SUMS]]#1, %{{.*}} [3, 4] : vector<1x1x1x1x16xf32> to vector<1x1x1xf32>
// SPLITK: vector.transfer_write
func.func @lanes_reduced_whole_tile(%codes: memref<4096x1x6x16xi32>, %x: memref<1x6x16xi32>,
                                    %s: memref<4096x1x6x16xf32>, %y: memref<1x4096x1xf32>) {
  linalg.generic {indexing_maps = [#W, #X, #V, #Y],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%codes, %x, %s : memref<4096x1x6x16xi32>, memref<1x6x16xi32>, memref<4096x1x6x16xf32>)
      outs(%y : memref<1x4096x1xf32>) attrs = {afm.whole_tile_dims = array<i64: 2, 4>} {
  ^bb0(%c: i32, %a: i32, %scale: f32, %acc: f32):
    %zero = arith.constant 0 : i32
    %d = afm_cpu.dot_bytes %zero, %c, %a : i32
    %f = arith.sitofp %d : i32 to f32
    %m = arith.mulf %f, %scale : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#W = affine_map<(t, n, i, g, l) -> (n, i, g, l)>
#X = affine_map<(t, n, i, g, l) -> (t, g, l)>
#V = affine_map<(t, n, i, g, l) -> (n, i, g, l)>
#Y = affine_map<(t, n, i, g, l) -> (t, n, i)>
// The same with the scaling product contractable (fastmath<contract>, as
// the plain-order 4-bit head's): the add that carries the lanes keeps the
// flag, so LLVM fuses the two into an fma; without it (above) the add has
// none.
// SPLITK-LABEL: func.func @lanes_reduced_contractable
// SPLITK: scf.for
// SPLITK: arith.mulf {{.*}} fastmath<contract> : vector<1x1x1x1x16xf32>
// SPLITK-NEXT: arith.addf {{.*}} fastmath<contract> : vector<1x1x1x1x16xf32>
// SPLITK: scf.yield
func.func @lanes_reduced_contractable(%codes: memref<4096x1x6x16xi32>, %x: memref<1x6x16xi32>,
                                      %s: memref<4096x1x6x16xf32>, %y: memref<1x4096x1xf32>) {
  linalg.generic {indexing_maps = [#W, #X, #V, #Y],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%codes, %x, %s : memref<4096x1x6x16xi32>, memref<1x6x16xi32>, memref<4096x1x6x16xf32>)
      outs(%y : memref<1x4096x1xf32>) attrs = {afm.whole_tile_dims = array<i64: 2, 4>} {
  ^bb0(%c: i32, %a: i32, %scale: f32, %acc: f32):
    %zero = arith.constant 0 : i32
    %d = afm_cpu.dot_bytes %zero, %c, %a : i32
    %f = arith.sitofp %d : i32 to f32
    %m = arith.mulf %f, %scale fastmath<contract> : f32
    %r = arith.addf %acc, %m fastmath<contract> : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#W = affine_map<(t, n, i, g, l) -> (n, i, g, l)>
#X = affine_map<(t, n, i, g, l) -> (t, g, l)>
#Y = affine_map<(t, n, i, g, l) -> (t, n, i)>
// A step that is only products, from zero, each fma marked reassoc (the
// 2-bit kernel with f32 activations): the lanes take them directly, dealt
// over two carried accumulators (products 0 and 2 into one, 1 and 3 into
// the other: no add a step, chains half as long), summed once after the
// loop.
// SPLITK-LABEL: func.func @lanes_fma_chain
// SPLITK: %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : vector<1x1x1x1x32xf32>
// SPLITK: %[[SUMS:.*]]:3 = scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %[[A:.*]] = %[[ZEROS]], %[[B:.*]] = %[[ZEROS]])
// SPLITK: %[[A0:.*]] = math.fma %{{.*}}, %{{.*}}, %[[A]] fastmath<reassoc> : vector<1x1x1x1x32xf32>
// SPLITK: %[[B0:.*]] = math.fma %{{.*}}, %{{.*}}, %[[B]] fastmath<reassoc>
// SPLITK: %[[A1:.*]] = math.fma %{{.*}}, %{{.*}}, %[[A0]] fastmath<reassoc>
// SPLITK: %[[B1:.*]] = math.fma %{{.*}}, %{{.*}}, %[[B0]] fastmath<reassoc>
// SPLITK-NOT: arith.addf
// SPLITK: scf.yield %{{.*}}, %[[A1]], %[[B1]]
// SPLITK: %[[BOTH:.*]] = arith.addf %[[SUMS]]#1, %[[SUMS]]#2 : vector<1x1x1x1x32xf32>
// SPLITK: vector.multi_reduction <add>, %[[BOTH]], %{{.*}} [3, 4]
func.func @lanes_fma_chain(%codes: memref<4096x1x32x32xi8>, %x0: memref<1x32x32xf32>, %x1: memref<1x32x32xf32>,
    %x2: memref<1x32x32xf32>, %x3: memref<1x32x32xf32>, %y: memref<1x4096x1xf32>) {
  linalg.generic {indexing_maps = [#W, #X, #X, #X, #X, #Y],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%codes, %x0, %x1, %x2, %x3 : memref<4096x1x32x32xi8>, memref<1x32x32xf32>, memref<1x32x32xf32>,
          memref<1x32x32xf32>, memref<1x32x32xf32>)
      outs(%y : memref<1x4096x1xf32>) attrs = {afm.whole_tile_dims = array<i64: 2, 4>} {
  ^bb0(%c: i8, %a0: f32, %a1: f32, %a2: f32, %a3: f32, %acc: f32):
    %w = arith.extui %c : i8 to i32
    %zero = arith.constant 0.0 : f32
    %m0 = arith.constant 3 : i32
    %m1 = arith.constant 12 : i32
    %m2 = arith.constant 48 : i32
    %m3 = arith.constant 192 : i32
    %c0 = arith.andi %w, %m0 : i32
    %f0 = arith.sitofp %c0 : i32 to f32
    %s0 = math.fma %a0, %f0, %zero fastmath<reassoc> : f32
    %c1 = arith.andi %w, %m1 : i32
    %f1 = arith.sitofp %c1 : i32 to f32
    %s1 = math.fma %a1, %f1, %s0 fastmath<reassoc> : f32
    %c2 = arith.andi %w, %m2 : i32
    %f2 = arith.sitofp %c2 : i32 to f32
    %s2 = math.fma %a2, %f2, %s1 fastmath<reassoc> : f32
    %c3 = arith.andi %w, %m3 : i32
    %f3 = arith.sitofp %c3 : i32 to f32
    %s3 = math.fma %a3, %f3, %s2 fastmath<reassoc> : f32
    %r = arith.addf %acc, %s3 : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#W = affine_map<(t, n, i, g, l) -> (n, i, g, l)>
#X = affine_map<(t, n, i, g, l) -> (t, g, l)>
#Y = affine_map<(t, n, i, g, l) -> (t, n, i)>
// The same chain without reassoc keeps its order: one accumulator, the
// step's sum added into it.
// SPLITK-LABEL: func.func @lanes_fma_chain_ordered
// SPLITK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %[[A:.*]] = %{{.*}}) -> (vector<1x1x1xf32>, vector<1x1x1x1x32xf32>)
// SPLITK-COUNT-4: math.fma
// SPLITK: arith.addf %[[A]], %{{.*}} : vector<1x1x1x1x32xf32>
func.func @lanes_fma_chain_ordered(%codes: memref<4096x1x32x32xi8>, %x0: memref<1x32x32xf32>, %x1: memref<1x32x32xf32>,
    %x2: memref<1x32x32xf32>, %x3: memref<1x32x32xf32>, %y: memref<1x4096x1xf32>) {
  linalg.generic {indexing_maps = [#W, #X, #X, #X, #X, #Y],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%codes, %x0, %x1, %x2, %x3 : memref<4096x1x32x32xi8>, memref<1x32x32xf32>, memref<1x32x32xf32>,
          memref<1x32x32xf32>, memref<1x32x32xf32>)
      outs(%y : memref<1x4096x1xf32>) attrs = {afm.whole_tile_dims = array<i64: 2, 4>} {
  ^bb0(%c: i8, %a0: f32, %a1: f32, %a2: f32, %a3: f32, %acc: f32):
    %w = arith.extui %c : i8 to i32
    %zero = arith.constant 0.0 : f32
    %m0 = arith.constant 3 : i32
    %m1 = arith.constant 12 : i32
    %m2 = arith.constant 48 : i32
    %m3 = arith.constant 192 : i32
    %c0 = arith.andi %w, %m0 : i32
    %f0 = arith.sitofp %c0 : i32 to f32
    %s0 = math.fma %a0, %f0, %zero : f32
    %c1 = arith.andi %w, %m1 : i32
    %f1 = arith.sitofp %c1 : i32 to f32
    %s1 = math.fma %a1, %f1, %s0 : f32
    %c2 = arith.andi %w, %m2 : i32
    %f2 = arith.sitofp %c2 : i32 to f32
    %s2 = math.fma %a2, %f2, %s1 : f32
    %c3 = arith.andi %w, %m3 : i32
    %f3 = arith.sitofp %c3 : i32 to f32
    %s3 = math.fma %a3, %f3, %s2 : f32
    %r = arith.addf %acc, %s3 : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#W = affine_map<(t, n, i, g, l) -> (n, i, g, l)>
#X = affine_map<(t, n, i, g, l) -> (t, g, l)>
#Y = affine_map<(t, n, i, g, l) -> (t, n, i)>
// A chain that starts from a value (an offset) is not only products: one
// accumulator, as above.
// SPLITK-LABEL: func.func @lanes_fma_chain_from_offset
// SPLITK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %[[A:.*]] = %{{.*}}) -> (vector<1x1x1xf32>, vector<1x1x1x1x32xf32>)
// SPLITK-COUNT-4: math.fma
// SPLITK: arith.addf %[[A]], %{{.*}} : vector<1x1x1x1x32xf32>
func.func @lanes_fma_chain_from_offset(%codes: memref<4096x1x32x32xi8>, %x0: memref<1x32x32xf32>, %x1: memref<1x32x32xf32>,
    %x2: memref<1x32x32xf32>, %x3: memref<1x32x32xf32>, %o: memref<1x32x32xf32>, %y: memref<1x4096x1xf32>) {
  linalg.generic {indexing_maps = [#W, #X, #X, #X, #X, #X, #Y],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%codes, %x0, %x1, %x2, %x3, %o : memref<4096x1x32x32xi8>, memref<1x32x32xf32>, memref<1x32x32xf32>,
          memref<1x32x32xf32>, memref<1x32x32xf32>, memref<1x32x32xf32>)
      outs(%y : memref<1x4096x1xf32>) attrs = {afm.whole_tile_dims = array<i64: 2, 4>} {
  ^bb0(%c: i8, %a0: f32, %a1: f32, %a2: f32, %a3: f32, %off: f32, %acc: f32):
    %w = arith.extui %c : i8 to i32
    %zero = arith.constant 0.0 : f32
    %m0 = arith.constant 3 : i32
    %m1 = arith.constant 12 : i32
    %m2 = arith.constant 48 : i32
    %m3 = arith.constant 192 : i32
    %c0 = arith.andi %w, %m0 : i32
    %f0 = arith.sitofp %c0 : i32 to f32
    %s0 = math.fma %a0, %f0, %off fastmath<reassoc> : f32
    %c1 = arith.andi %w, %m1 : i32
    %f1 = arith.sitofp %c1 : i32 to f32
    %s1 = math.fma %a1, %f1, %s0 fastmath<reassoc> : f32
    %c2 = arith.andi %w, %m2 : i32
    %f2 = arith.sitofp %c2 : i32 to f32
    %s2 = math.fma %a2, %f2, %s1 fastmath<reassoc> : f32
    %c3 = arith.andi %w, %m3 : i32
    %f3 = arith.sitofp %c3 : i32 to f32
    %s3 = math.fma %a3, %f3, %s2 fastmath<reassoc> : f32
    %r = arith.addf %acc, %s3 : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#W = affine_map<(t, n, i, g, l) -> (n, i, g, l)>
#X = affine_map<(t, n, i, g, l) -> (t, g, l)>
#Y = affine_map<(t, n, i, g, l) -> (t, n, i)>
// Two inputs that are views of one array (the 4-bit head's code words, a
// word of each group apiece) are one stream: the full 8 KiB ahead, 11 rows
// of the array's 768 bytes (two arrays would make it 6).
// SPLITK-LABEL: func.func @two_views_one_array
// SPLITK: scf.for %[[N:.*]] = %{{.*}} to %c4096 step %c1
// SPLITK: %{{.*}} = arith.addi %[[N]], %c11 : index
// SPLITK-COUNT-2: memref.prefetch %{{.*}} read, locality<3>, data : memref<4096x1x6x16xi32, strided<[192, 96, 16, 1]
func.func @two_views_one_array(%codes: memref<4096x2x6x16xi32>, %x: memref<1x6x16xi32>,
                               %y: memref<1x4096x1xf32>) {
  %w0 = memref.subview %codes[0, 0, 0, 0] [4096, 1, 6, 16] [1, 1, 1, 1]
      : memref<4096x2x6x16xi32> to memref<4096x1x6x16xi32, strided<[192, 96, 16, 1]>>
  %w1 = memref.subview %codes[0, 1, 0, 0] [4096, 1, 6, 16] [1, 1, 1, 1]
      : memref<4096x2x6x16xi32> to memref<4096x1x6x16xi32, strided<[192, 96, 16, 1], offset: 96>>
  linalg.generic {indexing_maps = [#W, #W, #X, #Y],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%w0, %w1, %x : memref<4096x1x6x16xi32, strided<[192, 96, 16, 1]>>,
                         memref<4096x1x6x16xi32, strided<[192, 96, 16, 1], offset: 96>>,
                         memref<1x6x16xi32>)
      outs(%y : memref<1x4096x1xf32>) attrs = {afm.whole_tile_dims = array<i64: 2, 4>} {
  ^bb0(%c0: i32, %c1: i32, %a: i32, %acc: f32):
    %zero = arith.constant 0 : i32
    %d0 = afm_cpu.dot_bytes %zero, %c0, %a : i32
    %d = afm_cpu.dot_bytes %d0, %c1, %a : i32
    %f = arith.sitofp %d : i32 to f32
    %r = arith.addf %acc, %f : f32
    linalg.yield %r : f32
  }
  return
}
