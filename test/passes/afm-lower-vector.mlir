// A reduction over a wide innermost dimension is halved element-wise until
// the dimension is narrow (8), so no dependent chain of one scalar op per
// element is left: log2(64 / 8) = 3 halvings of each row here.
// RUN: afm-opt %s --afm-lower-vector | FileCheck %s

// CHECK-LABEL: func.func @row_max
// CHECK-COUNT-3: arith.maximumf {{.*}} : vector<4x{{32|16|8}}xf32>
// CHECK-NOT: vector.multi_reduction
func.func @row_max(%x: vector<4x64xf32>, %acc: vector<4xf32>) -> vector<4xf32> {
  %r = vector.multi_reduction <maximumf>, %x, %acc [1] : vector<4x64xf32> to vector<4xf32>
  return %r : vector<4xf32>
}

// A reduction over an outer dimension (split-K partial sums) is left to
// the element-wise lowering.
// CHECK-LABEL: func.func @column_sum
// CHECK-NOT: vector.extract_strided_slice
// CHECK: arith.addf {{.*}} : vector<64xf32>
func.func @column_sum(%x: vector<4x64xf32>, %acc: vector<64xf32>) -> vector<64xf32> {
  %r = vector.multi_reduction <add>, %x, %acc [0] : vector<4x64xf32> to vector<64xf32>
  return %r : vector<64xf32>
}

// A sum of products whose result keeps a wide innermost dimension is a
// contraction tile (here attention scores: 4 query rows against 16 keys
// stored transposed, [D, J]). It is not halved: the contraction lowering
// makes it one FMA along the 16 keys per row and reduced element, 4 x 64,
// with no shuffle tree (which took 460 shuffles and no FMA).
// CHECK-LABEL: func.func @scores_tile
// CHECK-NOT: vector.shuffle
// CHECK-COUNT-256: vector.fma {{.*}} : vector<16xf32>
// CHECK-NOT: vector.shuffle
// CHECK: return
func.func @scores_tile(%q: vector<4x64xf32>, %kt: vector<64x16xf32>, %acc: vector<4x16xf32>) -> vector<4x16xf32> {
  %qb = vector.broadcast %q : vector<4x64xf32> to vector<16x4x64xf32>
  %qt = vector.transpose %qb, [1, 0, 2] : vector<16x4x64xf32> to vector<4x16x64xf32>
  %k = vector.transpose %kt, [1, 0] : vector<64x16xf32> to vector<16x64xf32>
  %kb = vector.broadcast %k : vector<16x64xf32> to vector<4x16x64xf32>
  %p = arith.mulf %qt, %kb : vector<4x16x64xf32>
  %r = vector.multi_reduction <add>, %p, %acc [2] : vector<4x16x64xf32> to vector<4x16xf32>
  return %r : vector<4x16xf32>
}

// A plain dot product per row (a norm's sum of squares: the result's
// innermost dimension is narrow) still gets the tree.
// CHECK-LABEL: func.func @sum_of_squares
// CHECK-COUNT-3: arith.addf {{.*}} : vector<4x{{32|16|8}}xf32>
func.func @sum_of_squares(%x: vector<4x64xf32>, %acc: vector<4xf32>) -> vector<4xf32> {
  %p = arith.mulf %x, %x : vector<4x64xf32>
  %r = vector.multi_reduction <add>, %p, %acc [1] : vector<4x64xf32> to vector<4xf32>
  return %r : vector<4xf32>
}
