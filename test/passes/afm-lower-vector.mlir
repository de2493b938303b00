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
