// RUN: afm-opt %s -split-input-file --afm-lower-to-linalg=int8-activations=true | FileCheck %s
// RUN: afm-opt %s -split-input-file --afm-lower-to-linalg | FileCheck %s --check-prefix=FLOAT

// A 2-bit linear layer with int8 activations: max|x| per row (split-K: 16
// running maxima, then their maximum), the row rounded to int8 codes in the
// kernel's plane order [T, 4, groups, lanes], their sum, one i32 dot
// product per output over (group, plane, lane, byte) with the plane's shift
// from the loop index, and y = s * amax / 127 * (2 dot - 3 sum) / 2.
// Without the option the f32 kernel runs.
// CHECK-LABEL: func.func @linear_q2
// CHECK-SAME: (%[[X:.*]]: tensor<?x64xf32>, %[[CODES:.*]]: tensor<128x16xi8>, %[[SCALES:.*]]: tensor<128xf32>)
// CHECK: %[[PMAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]} ins(%{{.*}} : tensor<?x4x16xf32>) outs(%{{.*}} : tensor<?x16xf32>)
// CHECK: math.absf
// CHECK: %[[AMAX:.*]] = linalg.generic {{.*}} ins(%[[PMAX]] : tensor<?x16xf32>) outs(%{{.*}} : tensor<?xf32>)
// CHECK-NOT: math.absf
// CHECK: arith.maximumf
// CHECK: %[[XQ:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[AMAX]] : tensor<?x1x16x4xf32>, tensor<?xf32>) outs(%{{.*}} : tensor<?x4x1x16xi8>)
// CHECK: math.roundeven
// CHECK: arith.fptosi %{{.*}} : f32 to i8
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[XQ]] : tensor<?x4x1x16xi8>) outs(%{{.*}} : tensor<?xi32>)
// CHECK: %[[XQ5:.*]] = tensor.expand_shape %[[XQ]]
// CHECK: %[[W:.*]] = tensor.expand_shape %[[CODES]] {{\[}}[0], [1, 2, 3]] output_shape [128, 1, 4, 4]
// CHECK: %[[DOT:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]} ins(%[[XQ5]], %[[W]] : tensor<?x4x1x4x4xi8>, tensor<128x1x4x4xi8>) outs(%{{.*}} : tensor<?x128xi32>)
// CHECK: linalg.index 3
// CHECK: arith.shrui
// CHECK: arith.andi %{{.*}}, %c3_i8
// CHECK: arith.extui %{{.*}} : i8 to i32
// CHECK: arith.extsi %{{.*}} : i8 to i32
// CHECK: arith.muli
// CHECK: linalg.generic {{.*}} ins(%[[DOT]], %[[SUM]], %[[AMAX]], %[[SCALES]] : tensor<?x128xi32>, tensor<?xi32>, tensor<?xf32>, tensor<128xf32>)
// CHECK: arith.subi
// CHECK: arith.sitofp
// CHECK-NOT: tensor<128x64xf32>
// FLOAT-LABEL: func.func @linear_q2
// FLOAT-NOT: math.roundeven
// FLOAT: arith.extui %{{.*}} : i8 to i32
// FLOAT: arith.sitofp %{{.*}} : i32 to f32
// FLOAT: math.fma
func.func @linear_q2(%x: tensor<?x64xf32>, %codes: tensor<128x16xi8>, %scales: tensor<128xf32>) -> tensor<?x128xf32> {
  %w = afm.bound_weight %codes, %scales : tensor<128x16xi8>, tensor<128xf32> -> !afm.q2<128x64, per_channel>
  %y = afm.linear %x, %w : tensor<?x64xf32>, !afm.q2<128x64, per_channel> -> tensor<?x128xf32>
  return %y : tensor<?x128xf32>
}

// -----

// A model imported with "linear_activations": "int8" asks for it in its
// afm.model attribute. 40 rows (a long prompt, a multiple of 4) take the
// integer GEMM: both sides read as i32 words (views, nothing copied),
// register tiles of 4 rows of x by 2 outputs (afm.whole_tile_dims), four
// afm_cpu.dot_bytes per code word (one per 2-bit plane).
// CHECK-LABEL: func.func @prompt
// CHECK: memref.view %{{.*}} : memref<2048xi8> to memref<128x1x4xi32>
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<10x4x64x2x4xi32>) attrs = {afm.whole_tile_dims = array<i64: 2, 3>}
// CHECK-COUNT-4: afm_cpu.dot_bytes
// CHECK-NOT: linalg.matmul
// FLOAT-LABEL: func.func @prompt
// FLOAT-NOT: linalg.matmul
// FLOAT: afm_cpu.dot_bytes
module attributes {afm.model = #afm.model<linear_activations = "int8", vocab_size = 32, context_length = 16, prefill_chunk = 4>} {
  func.func @prompt(%x: tensor<40x64xf32>, %codes: tensor<128x16xi8>, %scales: tensor<1xf32>) -> tensor<40x128xf32> {
    %w = afm.bound_weight %codes, %scales : tensor<128x16xi8>, tensor<1xf32> -> !afm.q2<128x64, per_tensor>
    %y = afm.linear %x, %w : tensor<40x64xf32>, !afm.q2<128x64, per_tensor> -> tensor<40x128xf32>
    return %y : tensor<40x128xf32>
  }
}

// -----

// 42 rows (not a multiple of the 4-row tile) round x to int8 and back,
// then multiply the decoded weights in f32.
// CHECK-LABEL: func.func @prompt_odd
// CHECK: math.roundeven
// CHECK: arith.fptosi %{{.*}} : f32 to i8
// CHECK: arith.sitofp %{{.*}} : i8 to f32
// CHECK: linalg.matmul
module attributes {afm.model = #afm.model<linear_activations = "int8", vocab_size = 32, context_length = 16, prefill_chunk = 4>} {
  func.func @prompt_odd(%x: tensor<42x64xf32>, %codes: tensor<128x16xi8>, %scales: tensor<1xf32>) -> tensor<42x128xf32> {
    %w = afm.bound_weight %codes, %scales : tensor<128x16xi8>, tensor<1xf32> -> !afm.q2<128x64, per_tensor>
    %y = afm.linear %x, %w : tensor<42x64xf32>, !afm.q2<128x64, per_tensor> -> tensor<42x128xf32>
    return %y : tensor<42x128xf32>
  }
}

// -----

// The fused ASTC form with int8 activations: the block kernel rounds x to
// int8 packed as the codes are, columns 0..3 of each block in one i32 lane
// and columns 4, 5 in another, and per (row, group of 16 blocks) sums each
// block's six byte products exactly with two afm_cpu.dot_bytes (the row's
// nibbles of the codes and of the tail codes), converts the block sum once
// and multiplies it by the block's f16 scale; amax / 127 multiplies each
// output once. The min-shift term sums the same rounded activations.
// CHECK-LABEL: func.func @linear_astc
// CHECK-SAME: (%[[X:.*]]: tensor<1x64xf32>, %[[CODES:.*]]: tensor<6x3x16xi32>, %[[TAIL:.*]]: tensor<6x3x16xi16>, %[[S:.*]]: tensor<6x16xf16>, %[[BIAS:.*]]: tensor<6x16xf16>)
// CHECK: math.roundeven
// CHECK: %[[PM:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x6x16xf32>)
// CHECK: %[[HEAD:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1x16xi32>)
// CHECK-COUNT-4: math.roundeven
// CHECK: %[[XTAIL:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1x16xi32>)
// CHECK-COUNT-2: math.roundeven
// CHECK: %[[P:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%{{.*}}, %{{.*}}, %[[HEAD]], %[[XTAIL]], %{{.*}} : tensor<6x3x1x16xi32>, tensor<6x3x1x16xi16>, tensor<1x1x16xi32>, tensor<1x1x16xi32>, tensor<6x1x16xf16>) outs(%{{.*}} : tensor<1x6x3x2x16xf32>) attrs =  {afm.whole_tile_dims = array<i64: 2, 3>}
// CHECK: %[[D:.*]] = afm_cpu.dot_bytes %{{.*}}, %{{.*}}, %{{.*}} : i32
// CHECK: afm_cpu.dot_bytes %[[D]], %{{.*}}, %{{.*}} : i32
// CHECK: arith.sitofp %{{.*}} : i32 to f32
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK-NOT: linalg.generic {{.*}} outs(%{{.*}} : tensor<32x64xf32>)
// FLOAT-LABEL: func.func @linear_astc
// FLOAT-NOT: math.roundeven
// FLOAT-NOT: afm_cpu.dot_bytes
func.func @linear_astc(%x: tensor<1x64xf32>, %codes: tensor<6x3x16xi32>, %tail: tensor<6x3x16xi16>, %s: tensor<6x16xf16>, %bias: tensor<6x16xf16>) -> tensor<1x32xf32> {
  %w = afm.bound_weight %codes, %tail, %s, %bias : tensor<6x3x16xi32>, tensor<6x3x16xi16>, tensor<6x16xf16>, tensor<6x16xf16> -> !afm.astc<32x64, block = 6x6, offset = linear_segment>
  %d = afm.astc_decode %w : !afm.astc<32x64, block = 6x6, offset = linear_segment> -> tensor<32x64xf32>
  %m = afm.astc_offsets %w : !afm.astc<32x64, block = 6x6, offset = linear_segment> -> tensor<6x11xf32>
  %acc = afm.min_shift %x, %m {block = array<i64: 6, 6>} : tensor<1x64xf32>, tensor<6x11xf32> -> tensor<1x32xf32>
  %y = afm.linear %x, %d acc(%acc : tensor<1x32xf32>) : tensor<1x64xf32>, tensor<32x64xf32> -> tensor<1x32xf32>
  return %y : tensor<1x32xf32>
}
