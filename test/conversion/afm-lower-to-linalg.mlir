// RUN: afm-opt %s -afm-lower-to-linalg -split-input-file | FileCheck %s

// The gather reads row tokens[t] of the table.
// CHECK-LABEL: func.func @embedding
// CHECK-SAME: (%[[TOK:.*]]: tensor<?xi32>, %[[TABLE:.*]]: tensor<256x64xf32>)
// CHECK: %[[G:.*]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel"]
// CHECK-SAME: ins(%[[TOK]] : tensor<?xi32>)
// CHECK: %[[ROW:.*]] = arith.index_cast
// CHECK: %[[COL:.*]] = linalg.index 1
// CHECK: tensor.extract %[[TABLE]][%[[ROW]], %[[COL]]]
// CHECK: return %[[G]]
func.func @embedding(%tokens: tensor<?xi32>, %table: tensor<256x64xf32>) -> tensor<?x64xf32> {
  %h = afm.embedding %table[%tokens] : tensor<256x64xf32>, tensor<?xi32> -> tensor<?x64xf32>
  return %h : tensor<?x64xf32>
}

// -----

// Sum of squares over the last dimension in f32, then x * rsqrt(mean + eps) * g.
// CHECK-LABEL: func.func @rms_norm_f16
// CHECK: %[[SUM:.*]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: -> tensor<?xf32>
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}}, %[[SUM]], %{{.*}} : tensor<?x64xf16>, tensor<?xf32>, tensor<64xf16>)
// CHECK: %[[MEAN:.*]] = arith.divf %{{.*}}, %{{.*}} : f32
// CHECK: %[[VAR:.*]] = arith.addf %[[MEAN]]
// CHECK: math.rsqrt %[[VAR]] : f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @rms_norm_f16(%x: tensor<?x64xf16>, %g: tensor<64xf16>) -> tensor<?x64xf16> {
  %y = afm.rms_norm %x, %g : tensor<?x64xf16>, tensor<64xf16>
  return %y : tensor<?x64xf16>
}

// -----

// Gemma's (1 + w): the offset is added to the gain inside the kernel.
// CHECK-LABEL: func.func @rms_norm_offset
// CHECK: math.rsqrt
// CHECK: %[[C1:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[GAIN:.*]] = arith.addf %{{.*}}, %[[C1]] : f32
// CHECK: arith.mulf %{{.*}}, %[[GAIN]] : f32
func.func @rms_norm_offset(%x: tensor<?x4x32xf32>, %g: tensor<32xf32>) -> tensor<?x4x32xf32> {
  %y = afm.rms_norm %x, %g {weight_offset = 1.0 : f32} : tensor<?x4x32xf32>, tensor<32xf32>
  return %y : tensor<?x4x32xf32>
}

// -----

// Rotate-half RoPE: the halves x1 = x[..., :hd/2] and x2 = x[..., hd/2:]
// of each head become x1 cos - x2 sin and x2 cos + x1 sin, with the angle
// (pos + t) * theta^(-2 i / hd), i < hd/2, from a constant table of the
// inverse frequencies (theta = 10000, hd = 16: 1, 10000^(-1/8) =
// 0.3162..., ...). cos and sin are [T, hd/2]: once per token and
// frequency, shared by every head. No element is gathered.
// CHECK-LABEL: func.func @rope
// CHECK-SAME: (%[[X:.*]]: tensor<?x4x16xf32>, %[[POS:.*]]: index)
// CHECK: %[[FREQ:.*]] = arith.constant dense<[1.000000e+00, 0.316227764, 1.000000e-01, {{.*}}, 3.16227757E-4]> : tensor<8xf32>
// CHECK: %[[COS:.*]] = linalg.generic {{.*}} ins(%[[FREQ]] : tensor<8xf32>) outs(%{{.*}} : tensor<?x8xf32>)
// CHECK: %[[T:.*]] = linalg.index 0
// CHECK: %[[P:.*]] = arith.addi %[[POS]], %[[T]]
// CHECK: math.cos
// CHECK: %[[SIN:.*]] = linalg.generic {{.*}} ins(%[[FREQ]] : tensor<8xf32>) outs(%{{.*}} : tensor<?x8xf32>)
// CHECK: math.sin
// CHECK: %[[X1:.*]] = tensor.extract_slice %[[X]][0, 0, 0] [%{{.*}}, 4, 8]
// CHECK: %[[X2:.*]] = tensor.extract_slice %[[X]][0, 0, 8] [%{{.*}}, 4, 8]
// CHECK-NOT: tensor.extract %
// CHECK: %[[FIRST:.*]] = linalg.generic {{.*}} ins(%[[X1]], %[[X2]], %[[COS]], %[[SIN]] :
// CHECK: arith.subf
// CHECK: %[[Y:.*]] = tensor.insert_slice %[[FIRST]] into %{{.*}}[0, 0, 0] [%{{.*}}, 4, 8]
// CHECK: %[[SECOND:.*]] = linalg.generic {{.*}} ins(%[[X1]], %[[X2]], %[[COS]], %[[SIN]] :
// CHECK: arith.addf
// CHECK: tensor.insert_slice %[[SECOND]] into %[[Y]][0, 0, 8] [%{{.*}}, 4, 8]
func.func @rope(%x: tensor<?x4x16xf32>, %pos: index) -> tensor<?x4x16xf32> {
  %y = afm.rope %x at %pos {theta = 10000.0 : f32} : tensor<?x4x16xf32>
  return %y : tensor<?x4x16xf32>
}

// -----

// x * w^T is a linalg.matmul whose B map is transposed.
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @linear
// CHECK-SAME: (%[[X:.*]]: tensor<?x64xf32>, %[[W:.*]]: tensor<128x64xf32>)
// CHECK: %[[ZERO:.*]] = linalg.fill
// CHECK: %[[Y:.*]] = linalg.matmul indexing_maps = [#[[A]], #[[B]], #[[C]]] ins(%[[X]], %[[W]] : tensor<?x64xf32>, tensor<128x64xf32>) outs(%[[ZERO]] : tensor<?x128xf32>)
// CHECK: return %[[Y]]
func.func @linear(%x: tensor<?x64xf32>, %w: tensor<128x64xf32>) -> tensor<?x128xf32> {
  %y = afm.linear %x, %w : tensor<?x64xf32>, tensor<128x64xf32> -> tensor<?x128xf32>
  return %y : tensor<?x128xf32>
}

// -----

// A 2-bit linear layer reads the packed codes. K splits into (group of 32
// bytes, 16 here; byte; code in byte); each output keeps a sum per byte
// column of a group (split-K), the lanes a reduction that one register
// tile spans whole (afm.whole_tile_dims: rows one at a time, and the
// lanes), so they are summed once per output, not stored every step. The
// activations are moved to code planes ([T, 4, groups, lanes]), plane p
// divided by 4^p; a step reads a code byte once, widens it to i32 once and
// masks its four codes in place (3, 12, 48, 192: 4^p times the code, no
// shift), each multiplied (fma) by its plane's activation. A step is only
// products, marked reassoc (the lanes may take them over two accumulators,
// test/passes/afm-tile-for-target.mlir @lanes_fma_chain), from zero; the
// step's sum goes into the output with one add. The balanced level (q -
// 1.5) is -1.5 times the row of activations, computed once per call, added
// to each output once with the per-channel scale. No [128, 64] float
// weight appears.
// CHECK-LABEL: func.func @linear_q2
// CHECK-SAME: (%[[X:.*]]: tensor<?x64xf32>, %[[CODES:.*]]: tensor<128x16xi8>, %[[SCALES:.*]]: tensor<128xf32>)
// CHECK: %[[XS:.*]] = tensor.expand_shape %[[X]] {{\[}}[0], [1, 2, 3]] output_shape [%{{.*}}, 1, 16, 4]
// CHECK: %[[CG:.*]] = tensor.expand_shape %[[CODES]] {{\[}}[0, 1], [2, 3]] output_shape [128, 1, 1, 16]
// CHECK: %[[FACTORS:.*]] = arith.constant dense<[1.000000e+00, 2.500000e-01, 6.250000e-02, 1.562500e-02]> : tensor<4xf32>
// CHECK: %[[XT:.*]] = linalg.generic {{.*}} ins(%[[XS]], %[[FACTORS]] : tensor<?x1x16x4xf32>, tensor<4xf32>) outs(%{{.*}} : tensor<?x4x1x16xf32>)
// CHECK: arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK: %[[OFFSETS:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<?x64xf32>) outs(%{{.*}} : tensor<?xf32>)
// CHECK: %[[HALVES:.*]] = arith.constant -1.500000e+00 : f32
// CHECK: math.fma %{{.*}}, %[[HALVES]], %{{.*}} : f32
// CHECK: %[[P0:.*]] = tensor.extract_slice %[[XT]][0, 0, 0, 0]
// CHECK: %[[P1:.*]] = tensor.extract_slice %[[XT]][0, 1, 0, 0]
// CHECK: %[[P2:.*]] = tensor.extract_slice %[[XT]][0, 2, 0, 0]
// CHECK: %[[P3:.*]] = tensor.extract_slice %[[XT]][0, 3, 0, 0]
// CHECK: %[[PART:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[P0]], %[[P1]], %[[P2]], %[[P3]], %[[CG]] : {{.*}}) outs(%{{.*}} : tensor<?x128x1xf32>) attrs = {afm.whole_tile_dims = array<i64: 2, 4>}
// CHECK: ^bb0(%[[X0:.*]]: f32, %[[X1:.*]]: f32, %[[X2:.*]]: f32, %[[X3:.*]]: f32, %[[BYTE:.*]]: i8, %[[ACC:.*]]: f32):
// CHECK: %[[WORD:.*]] = arith.extui %[[BYTE]] : i8 to i32
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NOT: arith.shrui
// CHECK: arith.andi %[[WORD]], %c3_i32
// CHECK: %[[C0:.*]] = arith.sitofp
// CHECK: %[[S0:.*]] = math.fma %[[X0]], %[[C0]], %[[ZERO]] fastmath<reassoc> : f32
// CHECK: arith.andi %[[WORD]], %c12_i32
// CHECK: %[[C1:.*]] = arith.sitofp
// CHECK: %[[S1:.*]] = math.fma %[[X1]], %[[C1]], %[[S0]] fastmath<reassoc> : f32
// CHECK: arith.andi %[[WORD]], %c48_i32
// CHECK: %[[C2:.*]] = arith.sitofp
// CHECK: %[[S2:.*]] = math.fma %[[X2]], %[[C2]], %[[S1]] fastmath<reassoc> : f32
// CHECK: arith.andi %[[WORD]], %c192_i32
// CHECK: %[[C3:.*]] = arith.sitofp
// CHECK: %[[S3:.*]] = math.fma %[[X3]], %[[C3]], %[[S2]] fastmath<reassoc> : f32
// CHECK-NOT: arith.shrui
// CHECK: %[[NEXT:.*]] = arith.addf %[[ACC]], %[[S3]] : f32
// CHECK: linalg.yield %[[NEXT]] : f32
// CHECK: %[[SUMS:.*]] = tensor.collapse_shape %[[PART]] {{\[}}[0], [1, 2]] : tensor<?x128x1xf32> into tensor<?x128xf32>
// CHECK: linalg.generic {{.*}} ins(%[[SUMS]], %[[OFFSETS]], %[[SCALES]] : tensor<?x128xf32>, tensor<?xf32>, tensor<128xf32>)
// CHECK: %[[LEVELS:.*]] = arith.addf
// CHECK: arith.mulf %[[LEVELS]]
// CHECK-NOT: tensor<128x64xf32>
func.func @linear_q2(%x: tensor<?x64xf32>, %codes: tensor<128x16xi8>, %scales: tensor<128xf32>) -> tensor<?x128xf32> {
  %w = afm.bound_weight %codes, %scales : tensor<128x16xi8>, tensor<128xf32> -> !afm.q2<128x64, per_channel>
  %y = afm.linear %x, %w : tensor<?x64xf32>, !afm.q2<128x64, per_channel> -> tensor<?x128xf32>
  return %y : tensor<?x128xf32>
}

// -----

// The fused ASTC form (afm-fuse-min-shift's output) on the CPU form: the
// min-shift term sums x over each 6-column block (x padded 64 -> 96, the
// 16 stored block columns) and multiplies by the stored f16 biases (zero
// in the padding block columns 11..15) once per block row, not per row,
// with rows of any count a GEMM (linalg.matmul over the biases in f32);
// the rows of a block row share the sum. The block kernel is split-K: x padded to the 16
// stored block columns and copied once by a transposing op to
// [T, column, group, lane], one contiguous slice per block column (an
// element-wise copy of a strided slice folds away, and the kernel then
// gathered its activations); then over (t, block row, row pair, row of the
// pair, group, lane) one partial sum per output and lane: the row's six
// nibbles of the codes [Nb, 3, Kb] (columns 0..3) and tail codes (4, 5),
// shifted by 4 * (row of the pair), times the six columns, times the f16
// scale of the lane's block; the six rows of a block row are one register
// tile (afm.whole_tile_dims). Then one horizontal sum per output, plus the
// min-shift term. The kernel never reads D or D + m as a [32, 64] tensor
// (the dead lowering of afm.astc_decode goes at the next canonicalization).
// CHECK-LABEL: func.func @linear_astc_fused
// CHECK-SAME: (%[[X:.*]]: tensor<?x64xf32>, %[[CODES:.*]]: tensor<6x3x16xi32>, %[[TAIL:.*]]: tensor<6x3x16xi16>, %[[S:.*]]: tensor<6x16xf16>, %[[BIAS:.*]]: tensor<6x16xf16>)
// CHECK: tensor.pad %[[X]] low[0, 0] high[0, 32]
// CHECK: %[[BLOCKSUMS:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}} : tensor<?x16x6xf32>) outs(%{{.*}} : tensor<?x16xf32>)
// CHECK: %[[BIASES:.*]] = linalg.generic {{.*}} ins(%[[BIAS]] : tensor<6x16xf16>) outs(%{{.*}} : tensor<6x16xf32>)
// CHECK: %[[M:.*]] = linalg.matmul {{.*}} ins(%[[BLOCKSUMS]], %[[BIASES]] : tensor<?x16xf32>, tensor<6x16xf32>) outs(%{{.*}} : tensor<?x6xf32>)
// CHECK: %[[PM:.*]] = tensor.expand_shape %[[M]] {{\[}}[0], [1, 2]] output_shape [%{{.*}}, 6, 1] : tensor<?x6xf32> into tensor<?x6x1xf32>
// CHECK: %[[SHIFT:.*]] = linalg.generic {{.*}} ins(%[[PM]] : tensor<?x6x1xf32>) outs(%{{.*}} : tensor<?x6x6xf32>)
// CHECK: %[[ACC:.*]] = tensor.extract_slice %{{.*}}[0, 0] [%{{.*}}, 32] [1, 1] : tensor<?x36xf32> to tensor<?x32xf32>
// CHECK: %[[C:.*]] = tensor.expand_shape %[[CODES]] {{\[}}[0], [1], [2, 3]] output_shape [6, 3, 1, 16] : tensor<6x3x16xi32> into tensor<6x3x1x16xi32>
// CHECK: %[[T:.*]] = tensor.expand_shape %[[TAIL]] {{\[}}[0], [1], [2, 3]] output_shape [6, 3, 1, 16] : tensor<6x3x16xi16> into tensor<6x3x1x16xi16>
// CHECK: %[[SC:.*]] = tensor.expand_shape %[[S]] {{\[}}[0], [1, 2]] output_shape [6, 1, 16] : tensor<6x16xf16> into tensor<6x1x16xf16>
// CHECK: tensor.pad %[[X]] low[0, 0] high[0, 32]
// CHECK: %[[XT:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<?x1x16x6xf32>) outs(%{{.*}} : tensor<?x6x1x16xf32>)
// CHECK: %[[X0:.*]] = tensor.extract_slice %[[XT]][0, 0, 0, 0] [%{{.*}}, 1, 1, 16] [1, 1, 1, 1] : tensor<?x6x1x16xf32> to tensor<?x1x16xf32>
// CHECK-COUNT-5: tensor.extract_slice %[[XT]][0, {{[1-5]}}, 0, 0] [%{{.*}}, 1, 1, 16] [1, 1, 1, 1] : tensor<?x6x1x16xf32> to tensor<?x1x16xf32>
// CHECK: %[[P:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%[[C]], %[[T]], %[[X0]], {{.*}}, %[[SC]] : tensor<6x3x1x16xi32>, tensor<6x3x1x16xi16>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<6x1x16xf16>) outs(%{{.*}} : tensor<?x6x3x2x16xf32>) attrs =  {afm.whole_tile_dims = array<i64: 2, 3>}
// CHECK: %[[ROW:.*]] = linalg.index 3 : index
// CHECK-COUNT-4: arith.shrui %{{.*}}, %{{.*}} : i32
// CHECK-COUNT-2: arith.extui %{{.*}} : i16 to i32
// CHECK-NOT: arith.uitofp
// CHECK: math.fma
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: tensor.collapse_shape %[[P]] {{\[}}[0], [1, 2, 3], [4]] : tensor<?x6x3x2x16xf32> into tensor<?x36x16xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}} : tensor<?x36x16xf32>) outs(%{{.*}} : tensor<?x36xf32>)
// CHECK: %[[SUMS:.*]] = tensor.extract_slice %{{.*}}[0, 0] [%{{.*}}, 32] [1, 1] : tensor<?x36xf32> to tensor<?x32xf32>
// CHECK: linalg.generic {{.*}} ins(%[[SUMS]], %[[ACC]] : tensor<?x32xf32>, tensor<?x32xf32>) outs(%{{.*}} : tensor<?x32xf32>)
// CHECK-NOT: linalg.generic {{.*}} outs(%{{.*}} : tensor<32x64xf32>)
func.func @linear_astc_fused(%x: tensor<?x64xf32>, %codes: tensor<6x3x16xi32>, %tail: tensor<6x3x16xi16>, %s: tensor<6x16xf16>, %bias: tensor<6x16xf16>) -> tensor<?x32xf32> {
  %w = afm.bound_weight %codes, %tail, %s, %bias : tensor<6x3x16xi32>, tensor<6x3x16xi16>, tensor<6x16xf16>, tensor<6x16xf16> -> !afm.astc<32x64, block = 6x6, offset = linear_segment>
  %d = afm.astc_decode %w : !afm.astc<32x64, block = 6x6, offset = linear_segment> -> tensor<32x64xf32>
  %m = afm.astc_offsets %w : !afm.astc<32x64, block = 6x6, offset = linear_segment> -> tensor<6x11xf32>
  %acc = afm.min_shift %x, %m {block = array<i64: 6, 6>} : tensor<?x64xf32>, tensor<6x11xf32> -> tensor<?x32xf32>
  %y = afm.linear %x, %d acc(%acc : tensor<?x32xf32>) : tensor<?x64xf32>, tensor<32x64xf32> -> tensor<?x32xf32>
  return %y : tensor<?x32xf32>
}

// -----

// The same with 40 rows (a prompt chunk of 32 rows or more): the blocks are
// decoded once per call to f32 and multiplied by a GEMM. The decode runs
// over the storage's own shape [Nb, 3, 2, 6, Kb'] (block row, row pair,
// row of the pair, column in the block, block column), its innermost loop
// over contiguous codes and scales with the tail codes for columns 4 and
// 5; collapsed, each weight row holds its columns in the order
// (column in the block, block column), the padding block columns
// included, and x's columns are permuted to match (padded 64 -> 96, then
// [T, 1, 16, 6] moved to [T, 6, 1, 16] by the split-K kernels' own
// transposing copy). The min-shift term is the GEMM's accumulator.
// CHECK-LABEL: func.func @linear_astc_decoded_rows
// CHECK-SAME: (%[[X:.*]]: tensor<40x64xf32>, %[[CODES:.*]]: tensor<6x3x16xi32>, %[[TAIL:.*]]: tensor<6x3x16xi16>, %[[S:.*]]: tensor<6x16xf16>, %[[BIAS:.*]]: tensor<6x16xf16>)
// CHECK: %[[ACC:.*]] = tensor.extract_slice %{{.*}}[0, 0] [40, 32] [1, 1] : tensor<40x36xf32> to tensor<40x32xf32>
// CHECK: %[[PX:.*]] = tensor.pad %[[X]] low[0, 0] high[0, 32]
// CHECK: %[[XB:.*]] = tensor.expand_shape %[[PX]] {{\[}}[0], [1, 2, 3]] output_shape [40, 1, 16, 6] : tensor<40x96xf32> into tensor<40x1x16x6xf32>
// CHECK: %[[XT:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[XB]] : tensor<40x1x16x6xf32>) outs(%{{.*}} : tensor<40x6x1x16xf32>)
// CHECK: %[[XP:.*]] = tensor.collapse_shape %[[XT]] {{\[}}[0], [1, 2, 3]] : tensor<40x6x1x16xf32> into tensor<40x96xf32>
// CHECK: %[[D:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[CODES]], %[[TAIL]], %[[S]] : tensor<6x3x16xi32>, tensor<6x3x16xi16>, tensor<6x16xf16>) outs(%{{.*}} : tensor<6x3x2x6x16xf32>)
// CHECK: arith.select
// CHECK: arith.uitofp
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: %[[DF:.*]] = tensor.collapse_shape %[[D]] {{\[}}[0, 1, 2], [3, 4]] : tensor<6x3x2x6x16xf32> into tensor<36x96xf32>
// CHECK: %[[W:.*]] = tensor.extract_slice %[[DF]][0, 0] [32, 96] [1, 1] : tensor<36x96xf32> to tensor<32x96xf32>
// CHECK: linalg.matmul {{.*}} ins(%[[XP]], %[[W]] : tensor<40x96xf32>, tensor<32x96xf32>) outs(%[[ACC]] : tensor<40x32xf32>)
// CHECK-NOT: outs(%{{.*}} : tensor<32x64xf32>)
func.func @linear_astc_decoded_rows(%x: tensor<40x64xf32>, %codes: tensor<6x3x16xi32>, %tail: tensor<6x3x16xi16>, %s: tensor<6x16xf16>, %bias: tensor<6x16xf16>) -> tensor<40x32xf32> {
  %w = afm.bound_weight %codes, %tail, %s, %bias : tensor<6x3x16xi32>, tensor<6x3x16xi16>, tensor<6x16xf16>, tensor<6x16xf16> -> !afm.astc<32x64, block = 6x6, offset = linear_segment>
  %d = afm.astc_decode %w : !afm.astc<32x64, block = 6x6, offset = linear_segment> -> tensor<32x64xf32>
  %m = afm.astc_offsets %w : !afm.astc<32x64, block = 6x6, offset = linear_segment> -> tensor<6x11xf32>
  %acc = afm.min_shift %x, %m {block = array<i64: 6, 6>} : tensor<40x64xf32>, tensor<6x11xf32> -> tensor<40x32xf32>
  %y = afm.linear %x, %d acc(%acc : tensor<40x32xf32>) : tensor<40x64xf32>, tensor<32x64xf32> -> tensor<40x32xf32>
  return %y : tensor<40x32xf32>
}

// -----

// An FFN taking bound ASTC weights whole (as afm-lower-moe's expert tiles
// do, after afm-fuse-min-shift has run) fuses each of its three products
// itself: the block sums of its input times the stored biases (split-K,
// one decode row), then the block kernel, whose sums add to that term.
// No reconstructed weight is ever materialized.
// CHECK-LABEL: func.func @swiglu_astc_whole
// CHECK-SAME: (%[[X:.*]]: tensor<1x64xf32>, %[[CODES:.*]]: tensor<6x3x16xi32>, %[[TAIL:.*]]: tensor<6x3x16xi16>, %[[S:.*]]: tensor<6x16xf16>, %[[BIAS:.*]]: tensor<6x16xf16>,
// CHECK-NOT: tensor<32x64xf32>
// CHECK: %[[B:.*]] = tensor.expand_shape %[[BIAS]] {{\[}}[0], [1, 2]] output_shape [6, 1, 16] : tensor<6x16xf16> into tensor<6x1x16xf16>
// CHECK: %[[PM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%{{.*}}, %[[B]] : tensor<1x1x16xf32>, tensor<6x1x16xf16>) outs(%{{.*}} : tensor<1x6x16xf32>)
// CHECK: %[[SHIFT:.*]] = tensor.extract_slice %{{.*}}[0, 0] [1, 32] [1, 1] : tensor<1x36xf32> to tensor<1x32xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<6x3x1x16xi32>, tensor<6x3x1x16xi16>, {{.*}}) outs(%{{.*}} : tensor<1x6x3x2x16xf32>) attrs =  {afm.whole_tile_dims = array<i64: 2, 3>}
// CHECK: %[[SUMS:.*]] = tensor.extract_slice %{{.*}}[0, 0] [1, 32] [1, 1] : tensor<1x36xf32> to tensor<1x32xf32>
// CHECK: %[[GATE:.*]] = linalg.generic {{.*}} ins(%[[SUMS]], %[[SHIFT]] : tensor<1x32xf32>, tensor<1x32xf32>) outs(%{{.*}} : tensor<1x32xf32>)
// CHECK: outs(%{{.*}} : tensor<1x6x3x2x16xf32>) attrs =  {afm.whole_tile_dims = array<i64: 2, 3>}
// CHECK: outs(%{{.*}} : tensor<1x11x3x2x16xf32>) attrs =  {afm.whole_tile_dims = array<i64: 2, 3>}
// CHECK-NOT: tensor<64x32xf32>
// CHECK: return
func.func @swiglu_astc_whole(%x: tensor<1x64xf32>, %c: tensor<6x3x16xi32>, %t: tensor<6x3x16xi16>, %s: tensor<6x16xf16>, %bias: tensor<6x16xf16>, %c2: tensor<11x3x16xi32>, %t2: tensor<11x3x16xi16>, %s2: tensor<11x16xf16>, %b2: tensor<11x16xf16>) -> tensor<1x64xf32> {
  %w = afm.bound_weight %c, %t, %s, %bias : tensor<6x3x16xi32>, tensor<6x3x16xi16>, tensor<6x16xf16>, tensor<6x16xf16> -> !afm.astc<32x64, block = 6x6, offset = linear_segment>
  %d = afm.bound_weight %c2, %t2, %s2, %b2 : tensor<11x3x16xi32>, tensor<11x3x16xi16>, tensor<11x16xf16>, tensor<11x16xf16> -> !afm.astc<64x32, block = 6x6, offset = linear_segment>
  %y = afm.swiglu %x, %w, %w, %d : tensor<1x64xf32>, !afm.astc<32x64, block = 6x6, offset = linear_segment>, !afm.astc<32x64, block = 6x6, offset = linear_segment>, !afm.astc<64x32, block = 6x6, offset = linear_segment>
  return %y : tensor<1x64xf32>
}

// -----

// A 4-bit embedding dequantizes only the looked-up rows: byte col/2 of row
// tokens[t], its nibble sign-extended (shift left, then arithmetic right),
// times the scale of group col/32.
// CHECK-LABEL: func.func @embedding_q4
// CHECK-SAME: (%[[TOK:.*]]: tensor<?xi32>, %[[CODES:.*]]: tensor<256x32xi8>, %[[SCALES:.*]]: tensor<256x2xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[TOK]] : tensor<?xi32>) outs(%{{.*}} : tensor<?x64xf32>)
// CHECK: %[[ROW:.*]] = arith.index_cast %{{.*}} : i32 to index
// CHECK: tensor.extract %[[CODES]][%[[ROW]], %{{.*}}] : tensor<256x32xi8>
// CHECK: arith.shli
// CHECK: arith.shrsi %{{.*}}, %c4_i8{{.*}} : i8
// CHECK: arith.sitofp
// CHECK: tensor.extract %[[SCALES]][%[[ROW]], %{{.*}}] : tensor<256x2xf32>
func.func @embedding_q4(%tokens: tensor<?xi32>, %codes: tensor<256x32xi8>, %scales: tensor<256x2xf32>) -> tensor<?x64xf32> {
  %t = afm.bound_weight %codes, %scales : tensor<256x32xi8>, tensor<256x2xf32> -> !afm.q4<256x64, group = 32>
  %h = afm.embedding %t[%tokens] : !afm.q4<256x64, group = 32>, tensor<?xi32> -> tensor<?x64xf32>
  return %h : tensor<?x64xf32>
}

// -----

// A tied 4-bit head in plain code order (64 columns: 2 groups, not 16)
// over one decode row is split-K: one partial sum per byte of a group (16
// lanes), the lanes and 2 rows one register tile (afm.whole_tile_dims)
// summed once per output. A step reads a code byte once: its sign bits
// flipped (xor 0x88: each nibble's code + 8, unsigned), widened to i32
// once, the nibbles masked in place (15, 240: no shift) and multiplied
// (fma) by the low column's activations and the high column's divided by
// 16; -8 times both columns' activations (once per call) starts the sum,
// which the group's scale multiplies into the output with one add, both
// contractable (an fma once the lanes are carried in registers).
// CHECK-LABEL: func.func @lm_head_q4_plain
// CHECK-SAME: (%[[X:.*]]: tensor<1x64xf32>, %[[CODES:.*]]: tensor<256x32xi8>, %[[SCALES:.*]]: tensor<256x2xf32>)
// CHECK: %[[XS:.*]] = tensor.expand_shape %[[X]] {{\[}}[0], [1, 2, 3]] output_shape [1, 2, 16, 2]
// CHECK: %[[FACTORS:.*]] = arith.constant dense<[1.000000e+00, 6.250000e-02]> : tensor<2xf32>
// CHECK: %[[XT:.*]] = linalg.generic {{.*}} ins(%[[XS]], %[[FACTORS]] : tensor<1x2x16x2xf32>, tensor<2xf32>) outs(%{{.*}} : tensor<1x2x2x16xf32>)
// CHECK: %[[OFFSETS:.*]] = linalg.generic {{.*}} ins(%[[XS]] : tensor<1x2x16x2xf32>) outs(%{{.*}} : tensor<1x2x16xf32>)
// CHECK: math.fma %{{.*}}, %cst{{.*}}, %{{.*}} : f32
// CHECK: %[[C:.*]] = tensor.expand_shape %[[CODES]] {{\[}}[0, 1], [2, 3]] output_shape [128, 2, 2, 16]
// CHECK: %[[S:.*]] = tensor.expand_shape %[[SCALES]] {{\[}}[0, 1], [2]] output_shape [128, 2, 2]
// CHECK: %[[LO:.*]] = tensor.extract_slice %[[XT]][0, 0, 0, 0]
// CHECK: %[[HI:.*]] = tensor.extract_slice %[[XT]][0, 1, 0, 0]
// CHECK: %[[PART:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[LO]], %[[HI]], %[[C]], %[[S]], %[[OFFSETS]] : {{.*}}) outs(%{{.*}} : tensor<1x128x2xf32>) attrs = {afm.whole_tile_dims = array<i64: 2, 4>}
// CHECK: ^bb0(%[[XL:.*]]: f32, %[[XH:.*]]: f32, %[[BYTE:.*]]: i8, %[[SCALE:.*]]: f32, %[[OFF:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK: %[[FLIP:.*]] = arith.xori %[[BYTE]], %c-120_i8 : i8
// CHECK: %[[WORD:.*]] = arith.extui %[[FLIP]] : i8 to i32
// CHECK-NOT: arith.shrui
// CHECK: arith.andi %[[WORD]], %c15_i32
// CHECK: %[[L:.*]] = arith.sitofp
// CHECK: %[[S0:.*]] = math.fma %[[XL]], %[[L]], %[[OFF]] : f32
// CHECK: arith.andi %[[WORD]], %c240_i32
// CHECK: %[[H:.*]] = arith.sitofp
// CHECK: %[[S1:.*]] = math.fma %[[XH]], %[[H]], %[[S0]] : f32
// CHECK: %[[SCALED:.*]] = arith.mulf %[[SCALE]], %[[S1]] fastmath<contract> : f32
// CHECK: %[[NEXT:.*]] = arith.addf %[[ACC]], %[[SCALED]] fastmath<contract> : f32
// CHECK: linalg.yield %[[NEXT]] : f32
// CHECK: tensor.collapse_shape %[[PART]] {{\[}}[0], [1, 2]] : tensor<1x128x2xf32> into tensor<1x256xf32>
// CHECK-NOT: tensor<256x64xf32>
func.func @lm_head_q4_plain(%h: tensor<1x64xf32>, %codes: tensor<256x32xi8>, %scales: tensor<256x2xf32>) -> tensor<1x256xf32> {
  %t = afm.bound_weight %codes, %scales : tensor<256x32xi8>, tensor<256x2xf32> -> !afm.q4<256x64, group = 32>
  %l = afm.lm_head %h, %t : tensor<1x64xf32>, !afm.q4<256x64, group = 32> -> tensor<1x256xf32>
  return %l : tensor<1x256xf32>
}

// -----

// A tied 4-bit head 16 groups of 32 wide keeps its codes interleaved: one
// i32 word per group and lane (four words a group), each group's sum in
// one lane. With f32 activations the activation of nibble n = 2m + j of a
// word is scaled by 16^-n beforehand ([m, j] below; the top nibble's by
// 1), and each group's sum starts at -8 times its sum of activations. In
// the kernel each word's sign bits are flipped once (u = q + 8); nibble n
// is masked in place (u * 16^n exactly), the top one shifted down, and the
// group's 32 products alternate between two fma chains (the first starting
// at the offset, the second with a multiply), added once, then scaled by
// the group's scale into the output with one add.
// CHECK-LABEL: func.func @lm_head_q4_interleaved
// CHECK: arith.constant dense<{{\[}}[1.000000e+00, 6.250000e-02], [3.906250e-03, 2.44140625E-4], [1.52587891E-5, 9.53674316E-7], [5.96046448E-8, 1.000000e+00]]> : tensor<4x2xf32>
// CHECK: arith.constant -8.000000e+00 : f32
// CHECK: linalg.generic {{.*}} attrs = {afm.whole_tile_dims = array<i64: 2, 4>}
// CHECK: ^bb0(%{{[^:]*}}: i32, %{{[^:]*}}: i32, %{{[^:]*}}: i32, %{{[^:]*}}: i32, %[[OFFSET:[^:]*]]: f32,
// CHECK: %[[U:.*]] = arith.xori %{{.*}}, %c-2004318072_i32 : i32
// CHECK: %[[N0:.*]] = arith.andi %[[U]], %c15_i32 : i32
// CHECK: %[[V0:.*]] = arith.sitofp %[[N0]] : i32 to f32
// CHECK: %[[A0:.*]] = math.fma %[[V0]], %{{.*}}, %[[OFFSET]] : f32
// CHECK: %[[N1:.*]] = arith.andi %[[U]], %c240_i32 : i32
// CHECK: %[[V1:.*]] = arith.sitofp %[[N1]] : i32 to f32
// CHECK: %[[B0:.*]] = arith.mulf %[[V1]], %{{.*}} : f32
// CHECK: arith.andi %[[U]], %c3840_i32 : i32
// CHECK: %[[A1:.*]] = math.fma %{{.*}}, %{{.*}}, %[[A0]] : f32
// CHECK: arith.andi %[[U]], %c61440_i32 : i32
// CHECK: %[[B1:.*]] = math.fma %{{.*}}, %{{.*}}, %[[B0]] : f32
// CHECK: arith.andi %[[U]], %c251658240_i32 : i32
// CHECK: %[[TOP:.*]] = arith.shrui %[[U]], %c28_i32 : i32
// CHECK: arith.sitofp %[[TOP]] : i32 to f32
// CHECK-COUNT-25: math.fma
// CHECK-NOT: math.fma
// CHECK: %[[BOTH:.*]] = arith.addf %[[A:.*]], %[[B:.*]] : f32
// CHECK: %[[SCALED:.*]] = arith.mulf %[[BOTH]], %{{.*}} : f32
// CHECK: %[[NEXT:.*]] = arith.addf %{{.*}}, %[[SCALED]] : f32
// CHECK: linalg.yield %[[NEXT]] : f32
func.func @lm_head_q4_interleaved(%h: tensor<1x512xf32>, %codes: tensor<32x256xi8>, %scales: tensor<32x16xf32>) -> tensor<1x32xf32> {
  %w = afm.bound_weight %codes, %scales : tensor<32x256xi8>, tensor<32x16xf32> -> !afm.q4<32x512, group = 32>
  %y = afm.lm_head %h, %w : tensor<1x512xf32>, !afm.q4<32x512, group = 32> -> tensor<1x32xf32>
  return %y : tensor<1x32xf32>
}

// -----

// LoRA: (x a^T) scaled by alpha / r = 16 / 8, then multiplied by b^T into the base.
// CHECK-LABEL: func.func @lora
// CHECK-SAME: (%[[BASE:.*]]: tensor<?x128xf32>, %[[X:.*]]: tensor<?x64xf32>, %[[A:.*]]: tensor<8x64xf32>, %[[B:.*]]: tensor<128x8xf32>)
// CHECK: %[[XA:.*]] = linalg.matmul {{.*}} ins(%[[X]], %[[A]] : {{.*}}) outs(%{{.*}} : tensor<?x8xf32>)
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%[[XA]]
// CHECK: arith.constant 2.000000e+00 : f32
// CHECK: %[[Y:.*]] = linalg.matmul {{.*}} ins(%[[S]], %[[B]] : {{.*}}) outs(%[[BASE]] : tensor<?x128xf32>)
// CHECK: return %[[Y]]
func.func @lora(%base: tensor<?x128xf32>, %x: tensor<?x64xf32>, %a: tensor<8x64xf32>, %b: tensor<128x8xf32>) -> tensor<?x128xf32> {
  %y = afm.lora %base, %x, %a, %b {alpha = 16.0 : f32} : tensor<?x128xf32>, tensor<?x64xf32>, tensor<8x64xf32>, tensor<128x8xf32>
  return %y : tensor<?x128xf32>
}

// -----

// One decode row reads a through the split-K GEMV of plain linear layers
// (its 8 outputs are too few to share out by rows): a as [8, 4, 16],
// partial sums over 16 lanes, then their sum.
// CHECK-LABEL: func.func @lora_decode
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [8, 4, 16] : tensor<8x64xf32> into tensor<8x4x16xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "parallel"]
// CHECK: linalg.matmul
func.func @lora_decode(%base: tensor<1x128xf32>, %x: tensor<1x64xf32>, %a: tensor<8x64xf32>, %b: tensor<128x8xf32>) -> tensor<1x128xf32> {
  %y = afm.lora %base, %x, %a, %b {alpha = 8.0 : f32} : tensor<1x128xf32>, tensor<1x64xf32>, tensor<8x64xf32>, tensor<128x8xf32>
  return %y : tensor<1x128xf32>
}

// -----

// SwiGLU: two projections, silu(g) * u = g / (1 + exp(-g)) * u, down projection.
// CHECK-LABEL: func.func @swiglu
// CHECK-SAME: (%[[X:.*]]: tensor<?x64xf32>, %[[WG:.*]]: tensor<128x64xf32>, %[[WU:.*]]: tensor<128x64xf32>, %[[WD:.*]]: tensor<64x128xf32>)
// CHECK: %[[G:.*]] = linalg.matmul {{.*}} ins(%[[X]], %[[WG]]
// CHECK: %[[U:.*]] = linalg.matmul {{.*}} ins(%[[X]], %[[WU]]
// CHECK: %[[H:.*]] = linalg.generic {{.*}} ins(%[[G]], %[[U]]
// CHECK: ^bb0(%[[GV:.*]]: f32, %[[UV:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[NEG:.*]] = arith.negf %[[GV]]
// CHECK: %[[E:.*]] = math.exp %[[NEG]]
// CHECK: %[[D:.*]] = arith.addf %{{.*}}, %[[E]]
// CHECK: %[[SILU:.*]] = arith.divf %[[GV]], %[[D]]
// CHECK: arith.mulf %[[SILU]], %[[UV]]
// CHECK: %[[Y:.*]] = linalg.matmul {{.*}} ins(%[[H]], %[[WD]]
// CHECK: return %[[Y]]
func.func @swiglu(%x: tensor<?x64xf32>, %wg: tensor<128x64xf32>, %wu: tensor<128x64xf32>, %wd: tensor<64x128xf32>) -> tensor<?x64xf32> {
  %y = afm.swiglu %x, %wg, %wu, %wd : tensor<?x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>
  return %y : tensor<?x64xf32>
}

// -----

// GeGLU (Gemma): gelu_tanh(g) * u = 0.5 g (1 + tanh(sqrt(2/pi) (g + 0.044715 g^3))) * u.
// CHECK-LABEL: func.func @geglu
// CHECK: linalg.generic
// CHECK: ^bb0(%[[GV:.*]]: f32, %[[UV:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[SQ:.*]] = arith.mulf %[[GV]], %[[GV]]
// CHECK: %[[CUBE:.*]] = arith.mulf %[[SQ]], %[[GV]]
// CHECK: arith.mulf %{{.*}}, %[[CUBE]]
// CHECK: %[[T:.*]] = math.tanh
// CHECK: %[[HALF:.*]] = arith.mulf %{{.*}}, %[[GV]]
// CHECK: %[[ONE:.*]] = arith.addf %{{.*}}, %[[T]]
// CHECK: %[[GELU:.*]] = arith.mulf %[[HALF]], %[[ONE]]
// CHECK: arith.mulf %[[GELU]], %[[UV]]
// CHECK-NOT: math.exp
func.func @geglu(%x: tensor<?x64xf32>, %wg: tensor<128x64xf32>, %wu: tensor<128x64xf32>, %wd: tensor<64x128xf32>) -> tensor<?x64xf32> {
  %y = afm.swiglu %x, %wg, %wu, %wd {activation = #afm.gate_activation<gelu_tanh>} : tensor<?x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>
  return %y : tensor<?x64xf32>
}

// -----

// One row (a decode step): the split-K GEMV. W is read as [256, 4, 16],
// each output keeps 16 partial sums over contiguous columns, summed once.
// CHECK-LABEL: func.func @lm_head
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2]] output_shape [256, 4, 16]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "parallel"]} {{.*}} outs(%{{.*}} : tensor<1x256x16xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}} : tensor<1x256x16xf32>)
// CHECK-NOT: linalg.matmul
func.func @lm_head(%h: tensor<1x64xf32>, %w: tensor<256x64xf32>) -> tensor<1x256xf32> {
  %l = afm.lm_head %h, %w : tensor<1x64xf32>, tensor<256x64xf32> -> tensor<1x256xf32>
  return %l : tensor<1x256xf32>
}

// -----

// Inside a track block the layers are lowered; the block itself is left to
// afm-lower-tracks.
// CHECK-LABEL: func.func @track_block
// CHECK: afm.track_block
// CHECK: linalg.generic
// CHECK: afm.yield
func.func @track_block(%h: tensor<1x64xf32>, %w0: tensor<64x64xf32>) -> tensor<1x64xf32> {
  %t = afm.track_block %h : tensor<1x64xf32> {
  ^bb0(%a: tensor<1x64xf32>):
    %y = afm.linear %a, %w0 : tensor<1x64xf32>, tensor<64x64xf32> -> tensor<1x64xf32>
    afm.yield %y : tensor<1x64xf32>
  }
  return %t : tensor<1x64xf32>
}

// -----

// Scaled RoPE: the table holds the op's inverse frequencies, one per
// pair of the head's halves.
// CHECK-LABEL: func.func @rope_scaled
// CHECK: arith.constant dense<[1.000000e+00, 6.250000e-02]> : tensor<2xf32>
func.func @rope_scaled(%x: tensor<?x2x4xf32>, %pos: index) -> tensor<?x2x4xf32> {
  %y = afm.rope %x at %pos {inv_freq = array<f64: 1.0, 0.0625>} : tensor<?x2x4xf32>
  return %y : tensor<?x2x4xf32>
}
