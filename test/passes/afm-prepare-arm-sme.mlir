// RUN: afm-opt %s -split-input-file -afm-prepare-arm-sme | FileCheck %s

// The tile afm-tile-for-target vectorizes for an SME target: an m x n x 1
// f32 GEMM step at scalable sizes [4] x [4] x 1, as masked transfers and a
// masked vector.contract. It becomes one masked vector.outerproduct of two
// 1-D operand reads (the unit k dimension dropped from A's m x 1 and B's
// 1 x n buffers: A's column on the left, B's row on the right), whose mask
// is the contraction's k = 0 slice; every transfer takes its mask as an
// operand instead of inside vector.mask.
// CHECK-LABEL: func.func @gemm_tile(
// CHECK-SAME: %[[A:[^:]*]]: memref<?x1xf32>, %[[B:[^:]*]]: memref<1x?xf32>, %[[C:[^:]*]]: memref<?x?xf32>, %[[M:[^:]*]]: index, %[[N:[^:]*]]: index)
// CHECK-DAG: %[[MASK_C:.*]] = vector.create_mask %[[M]], %[[N]] : vector<[4]x[4]xi1>
// CHECK-DAG: %[[MASK_K:.*]] = vector.create_mask %[[M]], %[[N]], %{{.*}} : vector<[4]x[4]x1xi1>
// CHECK-DAG: %[[MASK_M:.*]] = vector.create_mask %[[M]] : vector<[4]xi1>
// CHECK-DAG: %[[MASK_N:.*]] = vector.create_mask %[[N]] : vector<[4]xi1>
// CHECK-DAG: %[[COL_A:.*]] = memref.subview %[[A]][0, 0] [%{{.*}}, 1] [1, 1] : memref<?x1xf32> to memref<?xf32, strided<[1]>>
// CHECK-DAG: %[[READ_A:.*]] = vector.transfer_read %[[COL_A]][%{{.*}}], %{{.*}}, %[[MASK_M]] {in_bounds = [true]} : memref<?xf32, strided<[1]>>, vector<[4]xf32>
// CHECK-DAG: %[[ROW_B:.*]] = memref.subview %[[B]][0, 0] [1, %{{.*}}] [1, 1] : memref<1x?xf32> to memref<?xf32, strided<[1]>>
// CHECK-DAG: %[[READ_B:.*]] = vector.transfer_read %[[ROW_B]][%{{.*}}], %{{.*}}, %[[MASK_N]] {in_bounds = [true]} : memref<?xf32, strided<[1]>>, vector<[4]xf32>
// CHECK-DAG: %[[ACC:.*]] = vector.transfer_read %[[C]][%{{.*}}, %{{.*}}], %{{.*}}, %[[MASK_C]] {in_bounds = [true, true]} : memref<?x?xf32>, vector<[4]x[4]xf32>
// CHECK-DAG: %[[COL_A2:.*]] = vector.shape_cast %[[READ_A]] : vector<[4]xf32> to vector<[4]x1xf32>
// CHECK-DAG: %[[COL_AT:.*]] = vector.transpose %[[COL_A2]], [1, 0] : vector<[4]x1xf32> to vector<1x[4]xf32>
// CHECK-DAG: %[[LHS:.*]] = vector.extract %[[COL_AT]][0] : vector<[4]xf32> from vector<1x[4]xf32>
// CHECK-DAG: %[[MASK_KT:.*]] = vector.transpose %[[MASK_K]], [2, 0, 1] : vector<[4]x[4]x1xi1> to vector<1x[4]x[4]xi1>
// CHECK-DAG: %[[MASK_K0:.*]] = vector.extract %[[MASK_KT]][0] : vector<[4]x[4]xi1> from vector<1x[4]x[4]xi1>
// CHECK-NOT: vector.contract
// CHECK: %[[OUTER:.*]] = vector.mask %[[MASK_K0]] { vector.outerproduct %[[LHS]], %[[READ_B]], %[[ACC]] {kind = #vector.kind<add>} : vector<[4]xf32>, vector<[4]xf32> } : vector<[4]x[4]xi1> -> vector<[4]x[4]xf32>
// CHECK-NEXT: vector.transfer_write %[[OUTER]], %[[C]][%{{.*}}, %{{.*}}], %[[MASK_C]] {in_bounds = [true, true]} : vector<[4]x[4]xf32>, memref<?x?xf32>
// CHECK-NEXT: return
#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#out = affine_map<(m, n, k) -> (m, n)>
func.func @gemm_tile(%a: memref<?x1xf32>, %b: memref<1x?xf32>, %c: memref<?x?xf32>, %m: index, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %pad = arith.constant 0.0 : f32
  %mask_a = vector.create_mask %m, %c1 : vector<[4]x1xi1>
  %mask_b = vector.create_mask %c1, %n : vector<1x[4]xi1>
  %mask_c = vector.create_mask %m, %n : vector<[4]x[4]xi1>
  %mask_k = vector.create_mask %m, %n, %c1 : vector<[4]x[4]x1xi1>
  %lhs = vector.mask %mask_a { vector.transfer_read %a[%c0, %c0], %pad {in_bounds = [true, true]} : memref<?x1xf32>, vector<[4]x1xf32> } : vector<[4]x1xi1> -> vector<[4]x1xf32>
  %rhs = vector.mask %mask_b { vector.transfer_read %b[%c0, %c0], %pad {in_bounds = [true, true]} : memref<1x?xf32>, vector<1x[4]xf32> } : vector<1x[4]xi1> -> vector<1x[4]xf32>
  %acc = vector.mask %mask_c { vector.transfer_read %c[%c0, %c0], %pad {in_bounds = [true, true]} : memref<?x?xf32>, vector<[4]x[4]xf32> } : vector<[4]x[4]xi1> -> vector<[4]x[4]xf32>
  %r = vector.mask %mask_k { vector.contract {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %lhs, %rhs, %acc : vector<[4]x1xf32>, vector<1x[4]xf32> into vector<[4]x[4]xf32> } : vector<[4]x[4]x1xi1> -> vector<[4]x[4]xf32>
  vector.mask %mask_c { vector.transfer_write %r, %c[%c0, %c0] {in_bounds = [true, true]} : vector<[4]x[4]xf32>, memref<?x?xf32> } : vector<[4]x[4]xi1>
  return
}

// -----

// The same step in the form linalg's generic vectorizer gives it: operands
// broadcast to [4] x [4] x 1 by the reads' permutation maps, multiplied, and
// a masked multi-reduction over k. The broadcasts become plain masked reads
// of A's [4] x 1 and B's 1 x [4] (no permutation map), and the multiply and
// reduction one masked vector.outerproduct into the accumulator.
// CHECK-LABEL: func.func @reduction_tile(
// CHECK-SAME: %[[A:[^:]*]]: memref<?x?xf32>, %[[B:[^:]*]]: memref<?x?xf32>, %[[C:[^:]*]]: memref<?x?xf32>, %[[M:[^:]*]]: index, %[[N:[^:]*]]: index)
// CHECK-DAG: %[[MASK_A:.*]] = vector.create_mask %[[M]], %{{.*}} : vector<[4]x1xi1>
// CHECK-DAG: %[[MASK_C:.*]] = vector.create_mask %[[M]], %[[N]] : vector<[4]x[4]xi1>
// CHECK-DAG: %[[READ_A:.*]] = vector.transfer_read %[[A]][%{{.*}}, %{{.*}}], %{{.*}}, %[[MASK_A]] {in_bounds = [true, true]} : memref<?x?xf32>, vector<[4]x1xf32>
// CHECK-DAG: %[[READ_B:.*]] = vector.transfer_read %[[B]][%{{.*}}, %{{.*}}], %{{.*}}, %{{.*}} {in_bounds = [true, true]} : memref<?x?xf32>, vector<1x[4]xf32>
// CHECK-DAG: %[[ACC:.*]] = vector.transfer_read %[[C]][%{{.*}}, %{{.*}}], %{{.*}}, %[[MASK_C]] {in_bounds = [true, true]} : memref<?x?xf32>, vector<[4]x[4]xf32>
// CHECK-DAG: %[[READ_AT:.*]] = vector.transpose %[[READ_A]], [1, 0] : vector<[4]x1xf32> to vector<1x[4]xf32>
// CHECK-DAG: %[[LHS:.*]] = vector.extract %[[READ_AT]][0] : vector<[4]xf32> from vector<1x[4]xf32>
// CHECK-DAG: %[[RHS:.*]] = vector.extract %[[READ_B]][0] : vector<[4]xf32> from vector<1x[4]xf32>
// CHECK-NOT: arith.mulf
// CHECK-NOT: vector.multi_reduction
// CHECK: %[[OUTER:.*]] = vector.mask %{{.*}} { vector.outerproduct %[[LHS]], %[[RHS]], %[[ACC]] {kind = #vector.kind<add>} : vector<[4]xf32>, vector<[4]xf32> } : vector<[4]x[4]xi1> -> vector<[4]x[4]xf32>
// CHECK-NEXT: vector.transfer_write %[[OUTER]], %[[C]][%{{.*}}, %{{.*}}], %[[MASK_C]] {in_bounds = [true, true]} : vector<[4]x[4]xf32>, memref<?x?xf32>
// CHECK-NEXT: return
func.func @reduction_tile(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>, %m: index, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %pad = arith.constant 0.0 : f32
  %mask_a = vector.create_mask %m, %c1 : vector<[4]x1xi1>
  %mask_b = vector.create_mask %c1, %n : vector<1x[4]xi1>
  %mask_c = vector.create_mask %m, %n : vector<[4]x[4]xi1>
  %mask_k = vector.create_mask %m, %n, %c1 : vector<[4]x[4]x1xi1>
  %lhs = vector.mask %mask_a { vector.transfer_read %a[%c0, %c0], %pad {in_bounds = [true, true, true], permutation_map = affine_map<(d0, d1) -> (d0, 0, d1)>} : memref<?x?xf32>, vector<[4]x[4]x1xf32> } : vector<[4]x1xi1> -> vector<[4]x[4]x1xf32>
  %rhs = vector.mask %mask_b { vector.transfer_read %b[%c0, %c0], %pad {in_bounds = [true, true, true], permutation_map = affine_map<(d0, d1) -> (0, d1, d0)>} : memref<?x?xf32>, vector<[4]x[4]x1xf32> } : vector<1x[4]xi1> -> vector<[4]x[4]x1xf32>
  %acc = vector.mask %mask_c { vector.transfer_read %c[%c0, %c0], %pad {in_bounds = [true, true]} : memref<?x?xf32>, vector<[4]x[4]xf32> } : vector<[4]x[4]xi1> -> vector<[4]x[4]xf32>
  %prod = arith.mulf %lhs, %rhs : vector<[4]x[4]x1xf32>
  %r = vector.mask %mask_k { vector.multi_reduction <add>, %prod, %acc [2] : vector<[4]x[4]x1xf32> to vector<[4]x[4]xf32> } : vector<[4]x[4]x1xi1> -> vector<[4]x[4]xf32>
  vector.mask %mask_c { vector.transfer_write %r, %c[%c0, %c0] {in_bounds = [true, true]} : vector<[4]x[4]xf32>, memref<?x?xf32> } : vector<[4]x[4]xi1>
  return
}

// -----

// Vector code with no contraction, mask, permutation map or unit dimension
// is left as it is.
// CHECK-LABEL: func.func @plain(
// CHECK-SAME: %[[X:[^:]*]]: memref<8xf32>, %[[Y:[^:]*]]: memref<8xf32>)
// CHECK: %[[V:.*]] = vector.transfer_read %[[X]][%{{.*}}], %{{.*}} {in_bounds = [true]} : memref<8xf32>, vector<8xf32>
// CHECK-NEXT: %[[W:.*]] = arith.addf %[[V]], %[[V]] : vector<8xf32>
// CHECK-NEXT: vector.transfer_write %[[W]], %[[Y]][%{{.*}}] {in_bounds = [true]} : vector<8xf32>, memref<8xf32>
// CHECK-NEXT: return
func.func @plain(%x: memref<8xf32>, %y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : f32
  %v = vector.transfer_read %x[%c0], %pad {in_bounds = [true]} : memref<8xf32>, vector<8xf32>
  %w = arith.addf %v, %v : vector<8xf32>
  vector.transfer_write %w, %y[%c0] {in_bounds = [true]} : vector<8xf32>, memref<8xf32>
  return
}
