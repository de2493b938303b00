// RUN: afm-opt %s -split-input-file -afm-lower-attention -verify-diagnostics | FileCheck %s

// Local attention over a bound ring-buffer cache of 8 slots, 4 query heads
// sharing 2 KV heads, a chunk of 4 rows of which %count are real.
// CHECK-LABEL: func.func @local
// CHECK-SAME: (%[[Q:.*]]: tensor<4x4x16xf32>, %[[K:.*]]: tensor<4x2x16xf32>, %[[V:.*]]: tensor<4x2x16xf32>, %[[KV:.*]]: memref<2x2x8x16xf32>, %[[POS:.*]]: index, %[[COUNT:.*]]: index)
// Queries are viewed as [T, G, H/G, D] so each KV head serves its group.
// CHECK: %[[Q4:.*]] = tensor.expand_shape %[[Q]] {{\[}}[0], [1, 2], [3]] output_shape [4, 2, 2, 16]
// The cache is read as keys [G, C, D] and values [G, C, D].
// CHECK: %[[KEYS:.*]] = memref.subview %[[KV]][0, 0, 0, 0] [1, 2, 8, 16] [1, 1, 1, 1]
// CHECK: %[[KT:.*]] = bufferization.to_tensor %[[KEYS]] restrict
// CHECK: %[[VALS:.*]] = memref.subview %[[KV]][1, 0, 0, 0] [1, 2, 8, 16] [1, 1, 1, 1]
// CHECK: %[[VT:.*]] = bufferization.to_tensor %[[VALS]] restrict
// Flash attention over the filled part of the cache only: min(pos, 8)
// slots in blocks (here one block of all 8), carrying the row maximum, the
// sum of exponentials and the weighted values.
// CHECK: %[[FILLED:.*]] = arith.minui %[[POS]], %c8
// CHECK: %[[ROUNDED:.*]] = arith.addi %[[FILLED]], %c7
// CHECK: %[[BLOCKS:.*]] = arith.divui %[[ROUNDED]]
// CHECK: scf.for %[[B:.*]] = %c0 to %[[BLOCKS]] step %c1 iter_args(%[[M:.*]] = %{{.*}}, %[[L:.*]] = %{{.*}}, %[[ACC:.*]] = %{{.*}}) -> (tensor<4x2x2xf32>, tensor<4x2x2xf32>, tensor<4x2x2x16xf32>)
// CHECK: %[[FIRST:.*]] = arith.muli %[[B]]
// CHECK: %[[KB:.*]] = tensor.extract_slice %[[KT]][0, %[[FIRST]], 0] [2, 8, 16]
// Scores against the block's slots: each key row in vectors of 16 lanes
// (split-K partial sums), then the lanes summed.
// CHECK: %[[Q5:.*]] = tensor.expand_shape %[[Q4]] {{\[}}[0], [1], [2], [3, 4]] output_shape [4, 2, 2, 1, 16]
// CHECK: %[[K4:.*]] = tensor.expand_shape %[[KB]] {{\[}}[0], [1], [2, 3]] output_shape [2, 8, 1, 16]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%[[Q5]], %[[K4]] : tensor<4x2x2x1x16xf32>, tensor<2x8x1x16xf32>) outs(%{{.*}} : tensor<4x2x2x8x16xf32>)
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<4x2x2x8xf32>)
// Then the slot mask: slot j = first + (index in block) holds position
// filled - 1 - back, where back = (filled - 1 - j) mod 8, from the newest
// slot (filled - 1) mod 8 by a compare and a select; visible if
// j < filled, causal and inside the window (keyPos + 8 > p).
// CHECK: %[[LASTSLOT:.*]] = arith.remui %{{.*}}, %c8
// CHECK: linalg.generic
// CHECK: %[[I:.*]] = linalg.index 3
// CHECK: %[[J:.*]] = arith.addi %[[FIRST]], %[[I]]
// CHECK: arith.cmpi ule, %[[J]], %[[LASTSLOT]]
// CHECK: arith.cmpi ult, %[[J]], %[[POS]]
// CHECK: arith.cmpi ugt
// CHECK: arith.select {{.*}} %cst
// Online softmax: the block's maximum, exponents against max(m, it) (0
// while everything is masked, never NaN), the correction exp(m - m'), then
// l, acc and m updated in place of the loop's arguments.
// CHECK: %[[VB:.*]] = tensor.extract_slice %[[VT]][0, %[[FIRST]], 0] [2, 8, 16]
// CHECK: %[[BMAX:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4x2x2xf32>)
// CHECK: arith.maximumf
// CHECK: %[[SHIFT:.*]] = linalg.generic {{.*}} ins(%[[M]], %[[BMAX]] :
// CHECK: arith.cmpf oeq
// CHECK: %[[CORR:.*]] = linalg.generic {{.*}} ins(%[[M]], %[[SHIFT]] :
// CHECK: math.exp
// CHECK: %[[EXPS:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[SHIFT]] :
// CHECK: math.exp
// CHECK: %[[LC:.*]] = linalg.generic {{.*}} ins(%[[CORR]] : tensor<4x2x2xf32>) outs(%[[L]] : tensor<4x2x2xf32>)
// CHECK: %[[LNEW:.*]] = linalg.generic {{.*}} ins(%[[EXPS]] : tensor<4x2x2x8xf32>) outs(%[[LC]] : tensor<4x2x2xf32>)
// CHECK: %[[AC:.*]] = linalg.generic {{.*}} ins(%[[CORR]] : tensor<4x2x2xf32>) outs(%[[ACC]] : tensor<4x2x2x16xf32>)
// CHECK: %[[ANEW:.*]] = linalg.generic {{.*}} ins(%[[EXPS]], %[[VB]] : tensor<4x2x2x8xf32>, tensor<2x8x16xf32>) outs(%[[AC]] : tensor<4x2x2x16xf32>)
// CHECK: %[[MNEW:.*]] = linalg.generic {{.*}} ins(%[[BMAX]] : tensor<4x2x2xf32>) outs(%[[M]] : tensor<4x2x2xf32>)
// CHECK: scf.yield %[[MNEW]], %[[LNEW]], %[[ANEW]]
// Then the chunk's own rows, causal, folded in the same way.
// CHECK: linalg.generic {{.*}} ins(%[[Q4]], %[[K]] : tensor<4x2x2x16xf32>, tensor<4x2x16xf32>) outs(%{{.*}} : tensor<4x2x2x4xf32>)
// CHECK: arith.cmpi ule
// CHECK: math.exp
// CHECK: math.exp
// Normalization, back to [T, H, D].
// CHECK: arith.divf
// CHECK: %[[OUT:.*]] = tensor.collapse_shape {{.*}} into tensor<4x4x16xf32>
// Only then the real rows are appended at slot (pos + row) mod 8.
// CHECK: scf.for %[[ROW:.*]] = %{{.*}} to %[[COUNT]] step
// CHECK: %[[P:.*]] = arith.addi %[[POS]], %[[ROW]]
// CHECK: %[[SLOT:.*]] = arith.remui %[[P]], %c8
// CHECK: memref.subview %[[KV]][0, 0, %[[SLOT]], 0] [1, 2, 1, 16]
// CHECK: bufferization.materialize_in_destination
// CHECK: memref.subview %[[KV]][1, 0, %[[SLOT]], 0] [1, 2, 1, 16]
// CHECK: bufferization.materialize_in_destination
// CHECK: return %[[OUT]]
func.func @local(%q: tensor<4x4x16xf32>, %k: tensor<4x2x16xf32>, %v: tensor<4x2x16xf32>, %kv: memref<2x2x8x16xf32>, %pos: index, %count: index) -> tensor<4x4x16xf32> {
  %o = afm.attention local %q, %k, %v into %kv at %pos count %count {window = 8} : tensor<4x4x16xf32>, tensor<4x2x16xf32>, tensor<4x2x16xf32>, memref<2x2x8x16xf32> -> tensor<4x4x16xf32>
  return %o : tensor<4x4x16xf32>
}

// -----

// Shared-KV attention reads a cache another layer already filled for these
// positions (filled = pos + count) and appends nothing. One query row is a
// decode step: flash-decoding, tasks of (KV head, block of filled slots)
// in an scf.forall whose partials (maxima, sums, weighted values) are
// folded per query head afterwards.
// CHECK-LABEL: func.func @shared
// CHECK-SAME: %[[KV:[^:]*]]: memref<2x2x64x16xf32>, %[[POS:[^:]*]]: index)
// CHECK: %[[FILLED:.*]] = arith.addi %[[POS]], %c1
// CHECK: %[[SLOTS:.*]] = arith.minui %[[FILLED]], %c64
// CHECK: %[[BLOCKS:.*]] = arith.ceildivui %[[SLOTS]], %c64
// CHECK: %[[TASKS:.*]] = arith.muli %[[BLOCKS]], %c2
// CHECK: %[[PARTS:.*]]:3 = scf.forall (%{{.*}}) in (%[[TASKS]]) shared_outs({{.*}}) -> (tensor<2x1x2xf32>, tensor<2x1x2xf32>, tensor<2x1x2x16xf32>)
// Sixteen slots at a time, each key row read once for both query heads.
// CHECK: scf.for %{{.*}} step %c16 iter_args
// CHECK: vector.load %[[KV]][%c0{{.*}}] : memref<2x2x64x16xf32>, vector<16xf32>
// CHECK-NOT: vector.load
// CHECK: arith.mulf
// CHECK: arith.mulf
// A tree of adds, slot j's score in lane j: each level adds two shuffles
// of its inputs. The wide levels stay within 128-bit lanes (unpack low
// and high of dwords, then of qwords); the last crosses them (128-bit
// lanes 0 2 | 1 3 of each input).
// CHECK: vector.shuffle {{.*}} [0, 16, 1, 17, 4, 20, 5, 21, 8, 24, 9, 25, 12, 28, 13, 29]
// CHECK: vector.shuffle {{.*}} [2, 18, 3, 19, 6, 22, 7, 23, 10, 26, 11, 27, 14, 30, 15, 31]
// CHECK: arith.addf
// CHECK: vector.shuffle {{.*}} [0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29]
// CHECK: vector.shuffle {{.*}} [2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31]
// CHECK: arith.addf
// CHECK: vector.shuffle {{.*}} [0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27]
// CHECK: vector.shuffle {{.*}} [4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31]
// CHECK: arith.addf
// The block's scores in a stack buffer, then its exact maximum.
// CHECK: vector.store {{.*}} : memref<2x64xf32>, vector<16xf32>
// CHECK: vector.reduction <maximumf>
// CHECK: math.exp
// Values slot by slot: each slot's probability broadcast from the buffer.
// CHECK: scf.for %{{.*}} step %c1{{.*}} iter_args
// CHECK: vector.load %[[KV]][%c1{{.*}}] : memref<2x2x64x16xf32>, vector<16xf32>
// CHECK: memref.load {{.*}} : memref<2x64xf32>
// CHECK: vector.broadcast
// CHECK: vector.fma
// CHECK: tensor.parallel_insert_slice
// The combine loops over the filled blocks only.
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %[[BLOCKS]]
// CHECK: tensor.extract %[[PARTS]]#0
// CHECK: tensor.extract %[[PARTS]]#1
// CHECK: vector.transfer_read %[[PARTS]]#2
// CHECK: arith.divf
// CHECK-NOT: materialize_in_destination
func.func @shared(%q: tensor<1x4x16xf32>, %kv: memref<2x2x64x16xf32>, %pos: index) -> tensor<1x4x16xf32> {
  %o = afm.shared_kv_attention global %q from %kv at %pos : tensor<1x4x16xf32>, memref<2x2x64x16xf32> -> tensor<1x4x16xf32>
  return %o : tensor<1x4x16xf32>
}

// -----

func.func @unbound(%q: tensor<1x4x16xf32>, %kv: !afm.kv_cache<2x64x16, f32>, %pos: index) -> tensor<1x4x16xf32> {
  // expected-error @+1 {{'afm.shared_kv_attention' op cache is not bound to memory: run afm-bind-entry-abi before afm-lower-attention}}
  %o = afm.shared_kv_attention global %q from %kv at %pos : tensor<1x4x16xf32>, !afm.kv_cache<2x64x16, f32> -> tensor<1x4x16xf32>
  return %o : tensor<1x4x16xf32>
}

// -----

// A cache is addressed in the KV arena's layout (rows, or tiles of i8
// keys): a strided view of it is refused, not lowered as if contiguous.
func.func @strided_cache(%q: tensor<8x4x64xf32>, %k: tensor<8x2x64xf32>, %v: tensor<8x2x64xf32>, %kv: memref<2x2x32x64xi8, strided<[8192, 4096, 128, 1]>>, %s: memref<2x2x32xf32>, %pos: index) -> tensor<8x4x64xf32> {
  // expected-error @+1 {{'afm.attention' op needs the cache and its scales as contiguous memrefs (the identity layout afm-bind-entry-abi gives them), got 'memref<2x2x32x64xi8, strided<[8192, 4096, 128, 1]>>'}}
  %o = afm.attention global %q, %k, %v into %kv scales %s at %pos : tensor<8x4x64xf32>, tensor<8x2x64xf32>, tensor<8x2x64xf32>, memref<2x2x32x64xi8, strided<[8192, 4096, 128, 1]>>, memref<2x2x32xf32> -> tensor<8x4x64xf32>
  return %o : tensor<8x4x64xf32>
}

// -----

func.func @bf16_cache(%q: tensor<1x4x16xf32>, %kv: memref<2x2x64x16xbf16>, %pos: index) -> tensor<1x4x16xf32> {
  // expected-error @+1 {{'afm.shared_kv_attention' op lowering supports f32 activations and f32, f16 or i8 caches, got 'f32' and 'bf16'}}
  %o = afm.shared_kv_attention global %q from %kv at %pos : tensor<1x4x16xf32>, memref<2x2x64x16xbf16> -> tensor<1x4x16xf32>
  return %o : tensor<1x4x16xf32>
}

// -----

// An f16 cache, one query row: the decode kernel reads 16 halves of a row
// at a time and widens them (exact); its own key and value are rounded to
// f16 and widened back, as a later step reads them from the cache; what
// the append stores is the rounded rows.
// CHECK-LABEL: func.func @decode_f16
// CHECK-SAME: %[[KV:[^:]*]]: memref<2x2x64x16xf16>
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: scf.forall
// CHECK: %[[HALVES:.*]] = vector.load %[[KV]]{{.*}} : memref<2x2x64x16xf16>, vector<16xf16>
// CHECK: arith.extf %[[HALVES]] : vector<16xf16> to vector<16xf32>
// CHECK: scf.forall.in_parallel
// CHECK: %[[ROW:.*]] = memref.subview %[[KV]]
// CHECK: bufferization.materialize_in_destination {{.*}} : (tensor<2x16xf16>, memref<2x16xf16, {{.*}}>) -> ()
func.func @decode_f16(%q: tensor<1x4x16xf32>, %k: tensor<1x2x16xf32>, %v: tensor<1x2x16xf32>, %kv: memref<2x2x64x16xf16>, %pos: index) -> tensor<1x4x16xf32> {
  %o = afm.attention global %q, %k, %v into %kv at %pos : tensor<1x4x16xf32>, tensor<1x2x16xf32>, tensor<1x2x16xf32>, memref<2x2x64x16xf16> -> tensor<1x4x16xf32>
  return %o : tensor<1x4x16xf32>
}

// -----

// An f16 cache under a prefill chunk of 8 rows: each block's values are
// widened once for all rows (as an i8 cache's are dequantized), the keys
// as they are transposed; the chunk's own rows are read rounded.
// CHECK-LABEL: func.func @prefill_f16
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: scf.for
// CHECK: linalg.generic
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: scf.yield
// CHECK: bufferization.materialize_in_destination {{.*}} : (tensor<2x16xf16>, memref<2x16xf16, {{.*}}>) -> ()
func.func @prefill_f16(%q: tensor<8x4x16xf32>, %k: tensor<8x2x16xf32>, %v: tensor<8x2x16xf32>, %kv: memref<2x2x32x16xf16>, %pos: index) -> tensor<8x4x16xf32> {
  %o = afm.attention global %q, %k, %v into %kv at %pos : tensor<8x4x16xf32>, tensor<8x2x16xf32>, tensor<8x2x16xf32>, memref<2x2x32x16xf16> -> tensor<8x4x16xf32>
  return %o : tensor<8x4x16xf32>
}

// -----

// An i8 cache: codes [2, G, C, D] and one f32 scale per token per head
// [2, G, C]. Cached keys and values are dequantized (scale * code) inside
// the contractions that read them: no f32 copy of the cache.
// CHECK-LABEL: func.func @int8
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x16xf32>, %[[K:.*]]: tensor<2x2x16xf32>, %[[V:.*]]: tensor<2x2x16xf32>, %[[KV:.*]]: memref<2x2x8x16xi8>, %[[S:.*]]: memref<2x2x8xf32>, %[[POS:.*]]: index)
// CHECK: %[[KC:.*]] = memref.subview %[[KV]][0, 0, 0, 0] [1, 2, 8, 16]
// CHECK: %[[KCT:.*]] = bufferization.to_tensor %[[KC]] restrict {{.*}} to tensor<2x8x16xi8>
// CHECK: %[[KS:.*]] = memref.subview %[[S]][0, 0, 0] [1, 2, 8]
// CHECK: %[[KST:.*]] = bufferization.to_tensor %[[KS]] restrict {{.*}} to tensor<2x8xf32>
// CHECK: %[[VC:.*]] = memref.subview %[[KV]][1, 0, 0, 0] [1, 2, 8, 16]
// CHECK: %[[VCT:.*]] = bufferization.to_tensor %[[VC]] restrict {{.*}} to tensor<2x8x16xi8>
// CHECK: %[[VS:.*]] = memref.subview %[[S]][1, 0, 0] [1, 2, 8]
// CHECK: %[[VST:.*]] = bufferization.to_tensor %[[VS]] restrict {{.*}} to tensor<2x8xf32>
// CHECK-NOT: outs(%{{.*}} : tensor<2x8x16xf32>)
// The new rows are quantized per token per head: scale = absmax / 127,
// code = clamp(round(x / scale), -127, 127), rounding ties away from zero
// (truncate, then step by the sign of a remainder of at least one half);
// a zero scale gives zero codes.
// CHECK: %[[KMAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[K]] : tensor<2x2x16xf32>) outs(%{{.*}} : tensor<2x2xf32>)
// CHECK: math.absf
// CHECK: arith.maximumf
// CHECK: %[[KSCALE:.*]] = linalg.generic {{.*}} ins(%[[KMAX]] : tensor<2x2xf32>)
// CHECK: arith.divf %{{.*}}, %{{.*}} : f32
// CHECK: %[[KCODES:.*]] = linalg.generic {{.*}} ins(%[[K]], %[[KSCALE]] : tensor<2x2x16xf32>, tensor<2x2xf32>) outs(%{{.*}} : tensor<2x2x16xi8>)
// CHECK: %[[ZERO:.*]] = arith.cmpf oeq
// CHECK: %[[RATIO:.*]] = arith.divf
// CHECK: arith.select %[[ZERO]], %{{.*}}, %[[RATIO]]
// CHECK: arith.maximumf
// CHECK: %[[CLAMPED:.*]] = arith.minimumf
// CHECK: %[[TRUNC:.*]] = arith.fptosi %[[CLAMPED]] : f32 to i32
// CHECK: arith.sitofp %[[TRUNC]]
// CHECK: %[[REM:.*]] = arith.subf %[[CLAMPED]]
// CHECK: arith.cmpf oge, %[[REM]]
// CHECK: arith.cmpf ole, %[[REM]]
// CHECK: arith.trunci %{{.*}} : i32 to i8
// CHECK: %[[VMAX:.*]] = linalg.generic {{.*}} ins(%[[V]] : tensor<2x2x16xf32>)
// CHECK: %[[VSCALE:.*]] = linalg.generic {{.*}} ins(%[[VMAX]] :
// CHECK: %[[VCODES:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x2x16xi8>)
// The chunk's own rows are also read dequantized, as a later step would.
// CHECK: %[[NEWKEYS:.*]] = linalg.generic {{.*}} ins(%[[KCODES]], %[[KSCALE]] : tensor<2x2x16xi8>, tensor<2x2xf32>) outs(%{{.*}} : tensor<2x2x16xf32>)
// CHECK: %[[NEWVALUES:.*]] = linalg.generic {{.*}} ins(%[[VCODES]], %[[VSCALE]] :
// Scores against a block of the cache: q * (scale * code), summed over the
// head dim.
// CHECK: scf.for
// CHECK: %[[KSB:.*]] = tensor.extract_slice %[[KST]][0, %{{.*}}] [2, 8]
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %[[KSB]] : tensor<2x2x2x1x16xf32>, tensor<2x8x1x16xi8>, tensor<2x8xf32>)
// CHECK: %[[KCODE:.*]] = arith.sitofp %{{.*}} : i8 to f32
// CHECK: %[[KVAL:.*]] = arith.mulf %{{.*}}, %[[KCODE]] : f32
// CHECK: arith.mulf %{{.*}}, %[[KVAL]] : f32
// CHECK: %[[VCB:.*]] = tensor.extract_slice %[[VCT]][0, %{{.*}}, 0] [2, 8, 16]
// CHECK: %[[VSB:.*]] = tensor.extract_slice %[[VST]][0, %{{.*}}] [2, 8]
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[VCB]], %[[VSB]] : tensor<2x2x2x8xf32>, tensor<2x8x16xi8>, tensor<2x8xf32>)
// CHECK: arith.sitofp %{{.*}} : i8 to f32
// CHECK: scf.yield
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[NEWKEYS]] : tensor<2x2x2x16xf32>, tensor<2x2x16xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[NEWVALUES]] : tensor<2x2x2x2xf32>, tensor<2x2x16xf32>)
// Appending stores each real row's codes and scales at its slot.
// CHECK: scf.for %[[ROW:.*]] = %{{.*}} to %c2 step
// CHECK: %[[SLOT:.*]] = arith.remui %{{.*}}, %c8
// CHECK: %[[KDEST:.*]] = memref.subview %[[KV]][0, 0, %[[SLOT]], 0] [1, 2, 1, 16]
// CHECK: %[[KROW:.*]] = tensor.extract_slice %[[KCODES]][%[[ROW]], 0, 0] [1, 2, 16]
// CHECK: bufferization.materialize_in_destination %[[KROW]] in restrict writable %[[KDEST]]
// CHECK: memref.subview %[[KV]][1, 0, %[[SLOT]], 0] [1, 2, 1, 16]
// CHECK: tensor.extract_slice %[[VCODES]][%[[ROW]], 0, 0]
// CHECK: %[[KSDEST:.*]] = memref.subview %[[S]][0, 0, %[[SLOT]]] [1, 2, 1]
// CHECK: %[[KSROW:.*]] = tensor.extract_slice %[[KSCALE]][%[[ROW]], 0] [1, 2]
// CHECK: bufferization.materialize_in_destination %[[KSROW]] in restrict writable %[[KSDEST]]
// CHECK: memref.subview %[[S]][1, 0, %[[SLOT]]] [1, 2, 1]
// CHECK: tensor.extract_slice %[[VSCALE]][%[[ROW]], 0]
func.func @int8(%q: tensor<2x4x16xf32>, %k: tensor<2x2x16xf32>, %v: tensor<2x2x16xf32>, %kv: memref<2x2x8x16xi8>, %s: memref<2x2x8xf32>, %pos: index) -> tensor<2x4x16xf32> {
  %o = afm.attention global %q, %k, %v into %kv scales %s at %pos : tensor<2x4x16xf32>, tensor<2x2x16xf32>, tensor<2x2x16xf32>, memref<2x2x8x16xi8>, memref<2x2x8xf32> -> tensor<2x4x16xf32>
  return %o : tensor<2x4x16xf32>
}

// -----

// Shared-KV attention over an i8 cache: codes widened to f32 as they are
// read; the key scales multiply the scores, the value scales the
// probabilities. Nothing is quantized or appended.
// CHECK-LABEL: func.func @shared_int8
// CHECK-SAME: %[[KV:[^:]*]]: memref<2x2x64x16xi8>, %[[S:[^:]*]]: memref<2x2x64xf32>
// CHECK: scf.forall
// CHECK: %[[CODES:.*]] = vector.load %[[KV]][%c0{{.*}}] : memref<2x2x64x16xi8>, vector<16xi8>
// CHECK: %[[WIDE:.*]] = arith.extsi %[[CODES]] : vector<16xi8> to vector<16xi32>
// CHECK: arith.sitofp %[[WIDE]] : vector<16xi32> to vector<16xf32>
// CHECK: vector.load %[[S]][%c0{{.*}}] : memref<2x2x64xf32>, vector<16xf32>
// CHECK: vector.load %[[S]][%c1{{.*}}] : memref<2x2x64xf32>, vector<16xf32>
// CHECK-NOT: arith.fptosi
// CHECK-NOT: materialize_in_destination
func.func @shared_int8(%q: tensor<1x4x16xf32>, %kv: memref<2x2x64x16xi8>, %s: memref<2x2x64xf32>, %pos: index) -> tensor<1x4x16xf32> {
  %o = afm.shared_kv_attention global %q from %kv scales %s at %pos : tensor<1x4x16xf32>, memref<2x2x64x16xi8>, memref<2x2x64xf32> -> tensor<1x4x16xf32>
  return %o : tensor<1x4x16xf32>
}

// -----

// A decode step of a local layer that owns its i8 cache: the new row is
// quantized for the cache, and attention folds its dequantized key and
// value in after the cache's partials; slots are visible within the window
// (key position + window > query position); the row is appended after
// every read.
// CHECK-LABEL: func.func @decode_local_int8
// CHECK-SAME: %[[KV:[^:]*]]: memref<2x2x64x16xi8>, %[[S:[^:]*]]: memref<2x2x64xf32>, %[[POS:[^:]*]]: index)
// CHECK: arith.fptosi
// CHECK: %[[SLOTS:.*]] = arith.minui %[[POS]], %c64
// CHECK: scf.forall
// CHECK: arith.constant dense<32> : vector<16xi32>
// CHECK: arith.cmpi ugt
// CHECK: vector.fma
// CHECK: scf.forall.in_parallel
// CHECK: vector.reduction <add>
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: scf.for
// CHECK: %[[ROW:.*]] = memref.subview %[[KV]]
// CHECK: bufferization.materialize_in_destination {{.*}} in restrict writable %[[ROW]]
// CHECK-NOT: vector.load %[[KV]]
func.func @decode_local_int8(%q: tensor<1x4x16xf32>, %k: tensor<1x2x16xf32>, %v: tensor<1x2x16xf32>, %kv: memref<2x2x64x16xi8>, %s: memref<2x2x64xf32>, %pos: index) -> tensor<1x4x16xf32> {
  %o = afm.attention local %q, %k, %v into %kv scales %s at %pos {window = 32} : tensor<1x4x16xf32>, tensor<1x2x16xf32>, tensor<1x2x16xf32>, memref<2x2x64x16xi8>, memref<2x2x64xf32> -> tensor<1x4x16xf32>
  return %o : tensor<1x4x16xf32>
}

// -----

// A decode task computes its weighted values from cache (the value rows
// came in with its scores), so meanwhile it prefetches, with the
// target's hint for data read once (without a target, locality 0:
// non-temporal; afm-lower-attention-target.mlir), the next task's key
// and value rows (one a slot) and their scales (a line of 16 a step of
// 16 slots): task + 1, the last task its own, as (KV head, first slot of
// its block). The exponentials go one step of 16 slots ahead in the same
// loop.
// CHECK-LABEL: func.func @decode_prefetches_next_task
// CHECK-SAME: %[[KV:[^:]*]]: memref<2x2x512x16xi8>, %[[S:[^:]*]]: memref<2x2x512xf32>
// CHECK: %[[BLOCKS:.*]] = arith.ceildivui %{{.*}}, %c256
// CHECK: %[[TASKS:.*]] = arith.muli %[[BLOCKS]], %c2
// CHECK: scf.forall (%[[TASK:.*]]) in (%[[TASKS]])
// CHECK: %[[AFTER:.*]] = arith.addi %[[TASK]], %c1
// CHECK: %[[LAST:.*]] = arith.subi %[[TASKS]], %c1
// CHECK: %[[NEXT:.*]] = arith.minui %[[AFTER]], %[[LAST]]
// CHECK: %[[HEAD:.*]] = arith.divui %[[NEXT]], %[[BLOCKS]]
// CHECK: %[[BLOCK:.*]] = arith.remui %[[NEXT]], %[[BLOCKS]]
// CHECK: arith.muli %[[BLOCK]], %c256
// CHECK: math.exp
// CHECK: scf.for %{{.*}} step %c16{{.*}} iter_args
// CHECK: memref.prefetch %[[S]][%c0{{.*}}, %[[HEAD]], %{{.*}}], read, locality<0>, data
// CHECK: memref.prefetch %[[S]][%c1{{.*}}, %[[HEAD]], %{{.*}}], read, locality<0>, data
// CHECK: scf.if
// CHECK: math.exp
// CHECK: scf.for %{{.*}} step %c1{{.*}} iter_args
// CHECK: memref.prefetch %[[KV]][%c0{{.*}}, %[[HEAD]], %{{.*}}, %c0{{.*}}], read, locality<0>, data
// CHECK: memref.prefetch %[[KV]][%c1{{.*}}, %[[HEAD]], %{{.*}}, %c0{{.*}}], read, locality<0>, data
// CHECK: vector.fma
func.func @decode_prefetches_next_task(%q: tensor<1x4x16xf32>, %kv: memref<2x2x512x16xi8>, %s: memref<2x2x512xf32>, %pos: index) -> tensor<1x4x16xf32> {
  %o = afm.shared_kv_attention global %q from %kv scales %s at %pos : tensor<1x4x16xf32>, memref<2x2x512x16xi8>, memref<2x2x512xf32> -> tensor<1x4x16xf32>
  return %o : tensor<1x4x16xf32>
}

// -----

// int8_query, one query row, an i8 cache with tiled keys (capacity a
// multiple of 16, head dimension of 64): each query head is rounded to
// int8 codes (round half to even of x * 127 / absmax) once, before the
// tasks, into [H, D / 4] words of four codes, with 128 * the codes' sum
// (the excess) and the score scale per head. A task reads 64 bytes of a
// tile at a time (dimensions 4i..4i+3 of 16 slots: row slot0 + i of the
// [C, D] bytes when D = 64), flips their sign bits (+ 128, unsigned) and
// takes afm_cpu.dot_bytes against each head's word i broadcast, two sums
// per head alternating over i; lane j is slot j's score, minus the
// excess. No f32 product touches a key and no shuffle sums a slot.
// CHECK-LABEL: func.func @decode_int8_query
// CHECK-SAME: %[[KV:[^:]*]]: memref<2x2x64x64xi8>
// CHECK: %[[WORDS:.*]] = memref.alloca() : memref<4x16xi32>
// CHECK: %[[EXCESSES:.*]] = memref.alloca() : memref<4xi32>
// CHECK: scf.for %[[H:.*]] = %c0
// CHECK: math.roundeven
// CHECK: %[[SUM:.*]] = vector.reduction <add>, %{{.*}} : vector<16xi32> into i32
// CHECK: %[[EXCESS:.*]] = arith.muli %[[SUM]], %c128{{.*}} : i32
// CHECK: %[[WORD4:.*]] = vector.bitcast %{{.*}} : vector<16xi8> to vector<4xi32>
// CHECK: vector.store %[[WORD4]], %[[WORDS]][%[[H]], %c0{{.*}}] : memref<4x16xi32>, vector<4xi32>
// CHECK: memref.store %[[EXCESS]], %[[EXCESSES]][%[[H]]] : memref<4xi32>
// CHECK: scf.forall
// CHECK-NOT: math.roundeven
// CHECK: %[[HEAD0:.*]] = arith.addi %{{.*}}, %c0{{.*}} : index
// CHECK: %[[EXCESS0:.*]] = memref.load %[[EXCESSES]][%[[HEAD0]]]
// CHECK: %[[HEAD1:.*]] = arith.addi %{{.*}}, %c1{{.*}} : index
// CHECK: scf.for %[[SLOT0:.*]] = {{.*}} step %c16
// CHECK: memref.prefetch %[[KV]][%c0
// CHECK: arith.constant dense<-128> : vector<64xi8>
// CHECK: %[[ROW0:.*]] = arith.addi %[[SLOT0]], %c0{{.*}} : index
// CHECK: %[[PIECE0:.*]] = vector.load %[[KV]][%c0{{.*}}, %{{.*}}, %[[ROW0]], %c0{{.*}}] : memref<2x2x64x64xi8>, vector<64xi8>
// CHECK: %[[FLIPPED0:.*]] = arith.xori %[[PIECE0]], %{{.*}} : vector<64xi8>
// CHECK: %[[KEYS0:.*]] = vector.bitcast %[[FLIPPED0]] : vector<64xi8> to vector<16xi32>
// CHECK: %[[Q00:.*]] = memref.load %[[WORDS]][%[[HEAD0]], %c0{{.*}}] : memref<4x16xi32>
// CHECK: %[[B00:.*]] = vector.broadcast %[[Q00]] : i32 to vector<16xi32>
// CHECK: %[[S00:.*]] = afm_cpu.dot_bytes %{{.*}}, %[[KEYS0]], %[[B00]] : vector<16xi32>
// CHECK: memref.load %[[WORDS]][%[[HEAD1]], %c0{{.*}}]
// CHECK: afm_cpu.dot_bytes
// CHECK: %[[ROW1:.*]] = arith.addi %[[SLOT0]], %c1{{.*}} : index
// CHECK: vector.load %[[KV]][%c0{{.*}}, %{{.*}}, %[[ROW1]], %c0{{.*}}]
// CHECK: %[[Q01:.*]] = memref.load %[[WORDS]][%[[HEAD0]], %c1{{.*}}]
// CHECK: %[[S01:.*]] = afm_cpu.dot_bytes %{{.*}}, %{{.*}}, %{{.*}} : vector<16xi32>
// CHECK: %[[ROW2:.*]] = arith.addi %[[SLOT0]], %c2{{.*}} : index
// CHECK: vector.load %[[KV]][%c0{{.*}}, %{{.*}}, %[[ROW2]], %c0{{.*}}]
// CHECK: memref.load %[[WORDS]][%[[HEAD0]], %c2{{.*}}]
// CHECK: afm_cpu.dot_bytes %[[S00]],
// CHECK: %[[EXCESSV:.*]] = vector.broadcast %[[EXCESS0]] : i32 to vector<16xi32>
// CHECK: arith.subi %{{.*}}, %[[EXCESSV]] : vector<16xi32>
// CHECK: arith.sitofp {{.*}} : vector<16xi32> to vector<16xf32>
// CHECK-NOT: vector.shuffle
// CHECK: scf.yield
// CHECK: scf.forall.in_parallel
func.func @decode_int8_query(%q: tensor<1x4x64xf32>, %kv: memref<2x2x64x64xi8>, %s: memref<2x2x64xf32>, %pos: index) -> tensor<1x4x64xf32> {
  %o = afm.shared_kv_attention global %q from %kv scales %s at %pos {int8_query} : tensor<1x4x64xf32>, memref<2x2x64x64xi8>, memref<2x2x64xf32> -> tensor<1x4x64xf32>
  return %o : tensor<1x4x64xf32>
}

// -----

// An f32 query over tiled keys: each head's dimensions 4i..4i+3 repeated
// over 16 lanes into a [R, D / 4, 16] buffer once per task; per group of
// 16 slots, a tile's 64 bytes of dimensions 4i..4i+3 converted 16 bytes
// (4 slots) at a time and multiplied by them, four sums per head; two
// in-lane levels sum each slot's four lanes and one permutation puts the
// slots in lane order.
// CHECK-LABEL: func.func @decode_tiled_f32_query
// CHECK-SAME: %[[KV:[^:]*]]: memref<2x2x64x64xi8>
// CHECK: scf.forall
// CHECK: %[[QUADS:.*]] = memref.alloca() : memref<2x16x16xf32>
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [4, 5, 6, 7, 4, 5, 6, 7, 4, 5, 6, 7, 4, 5, 6, 7]
// CHECK: scf.for {{.*}} step %c16
// CHECK: vector.load %[[KV]][%c0{{.*}}, %{{.*}}, %{{.*}}, %c48{{.*}}] : memref<2x2x64x64xi8>, vector<16xi8>
// CHECK: %[[QUAD:.*]] = vector.load %[[QUADS]][%c0{{.*}}, %c0{{.*}}, %c0{{.*}}] : memref<2x16x16xf32>, vector<16xf32>
// CHECK: arith.mulf %{{.*}}, %[[QUAD]] : vector<16xf32>
// CHECK: vector.fma
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15]
// CHECK: scf.yield
func.func @decode_tiled_f32_query(%q: tensor<1x4x64xf32>, %kv: memref<2x2x64x64xi8>, %s: memref<2x2x64xf32>, %pos: index) -> tensor<1x4x64xf32> {
  %o = afm.shared_kv_attention global %q from %kv scales %s at %pos : tensor<1x4x64xf32>, memref<2x2x64x64xi8>, memref<2x2x64xf32> -> tensor<1x4x64xf32>
  return %o : tensor<1x4x64xf32>
}

// -----

// A prefill chunk over tiled keys: the key half's bytes viewed as
// [G, C / 16, D / 4, 16, 4]; each block's tiles transposed back to rows
// [G, block, D] before the scores; each new key row written into its
// slot's place in its tile ([G, D / 4, 4] at [tile, :, slot mod 16, :]).
// Values stay rows.
// CHECK-LABEL: func.func @prefill_tiled_keys
// CHECK-SAME: %[[KV:[^:]*]]: memref<2x2x32x64xi8>
// CHECK: %[[KEYS:.*]] = memref.subview %[[KV]][0, 0, 0, 0] [1, 2, 32, 64]
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %[[KEYS]] {{\[\[}}0], [1, 2]]
// CHECK: %[[TILES:.*]] = memref.expand_shape %[[FLAT]] {{\[\[}}0], [1, 2, 3, 4]] output_shape [2, 2, 16, 16, 4]
// CHECK: %[[TILET:.*]] = bufferization.to_tensor %[[TILES]]
// CHECK: scf.for
// CHECK: %[[BLOCK:.*]] = tensor.extract_slice %[[TILET]][0, %{{.*}}, 0, 0, 0] [2, 2, 16, 16, 4]
// CHECK: %[[ROWS:.*]] = linalg.transpose ins(%[[BLOCK]] : tensor<2x2x16x16x4xi8>) {{.*}} permutation = [0, 1, 3, 2, 4]
// CHECK: tensor.collapse_shape %[[ROWS]] {{\[\[}}0], [1, 2], [3, 4]] : tensor<2x2x16x16x4xi8> into tensor<2x32x64xi8>
// CHECK: scf.yield
// CHECK: scf.for
// CHECK: %[[SLOT:.*]] = arith.remui %{{.*}}, %c32
// CHECK: %[[TILE:.*]] = arith.divui %[[SLOT]], %c16
// CHECK: %[[WITHIN:.*]] = arith.remui %[[SLOT]], %c16
// CHECK: %[[PLACE:.*]] = memref.subview %{{.*}}[0, %[[TILE]], 0, %[[WITHIN]], 0] [2, 1, 16, 1, 4]
// CHECK: %[[PIECES:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [2, 16, 4]
// CHECK: bufferization.materialize_in_destination %[[PIECES]] in restrict writable %[[PLACE]]
// CHECK: memref.subview %[[KV]][1, 0, %[[SLOT]], 0] [1, 2, 1, 64]
func.func @prefill_tiled_keys(%q: tensor<8x4x64xf32>, %k: tensor<8x2x64xf32>, %v: tensor<8x2x64xf32>, %kv: memref<2x2x32x64xi8>, %s: memref<2x2x32xf32>, %pos: index) -> tensor<8x4x64xf32> {
  %o = afm.attention global %q, %k, %v into %kv scales %s at %pos : tensor<8x4x64xf32>, tensor<8x2x64xf32>, tensor<8x2x64xf32>, memref<2x2x32x64xi8>, memref<2x2x32xf32> -> tensor<8x4x64xf32>
  return %o : tensor<8x4x64xf32>
}

// -----

// int8_query over many query rows (the general lowering): the query is
// rounded per head vector before the scores, as the decode kernel rounds
// it.
// CHECK-LABEL: func.func @prefill_int8_query
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<2x4x16xf32> into tensor<8x16xf32>
// CHECK: math.roundeven
// CHECK: tensor.expand_shape
// CHECK: scf.for
func.func @prefill_int8_query(%q: tensor<2x4x16xf32>, %kv: memref<2x2x8x16xi8>, %s: memref<2x2x8xf32>, %pos: index) -> tensor<2x4x16xf32> {
  %o = afm.shared_kv_attention global %q from %kv scales %s at %pos {int8_query} : tensor<2x4x16xf32>, memref<2x2x8x16xi8>, memref<2x2x8xf32> -> tensor<2x4x16xf32>
  return %o : tensor<2x4x16xf32>
}

// -----

// A prefill chunk (8 rows or more) reads each block of an i8 cache once:
// the keys dequantized and transposed to [G, D, J], the values
// dequantized, then contractions along contiguous slots (keys) and
// dimensions (values) with no per-element conversion inside them.
// CHECK-LABEL: func.func @prefill_block_copies
// CHECK: scf.for
// CHECK: %[[KB:.*]] = tensor.extract_slice %{{.*}}[0, %{{.*}}, 0] [2, 8, 16]
// CHECK: %[[KSB:.*]] = tensor.extract_slice %{{.*}}[0, %{{.*}}] [2, 8]
// CHECK: %[[KEYST:.*]] = linalg.generic {{.*}} ins(%[[KB]], %[[KSB]] : tensor<2x8x16xi8>, tensor<2x8xf32>) outs(%{{.*}} : tensor<2x16x8xf32>)
// CHECK: arith.sitofp
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[KEYST]] : tensor<8x2x2x16xf32>, tensor<2x16x8xf32>) outs(%{{.*}} : tensor<8x2x2x8xf32>)
// CHECK-NOT: arith.sitofp
// CHECK: %[[VB:.*]] = tensor.extract_slice %{{.*}}[0, %{{.*}}, 0] [2, 8, 16]
// CHECK: %[[VSB:.*]] = tensor.extract_slice %{{.*}}[0, %{{.*}}] [2, 8]
// CHECK: %[[VALUES:.*]] = linalg.generic {{.*}} ins(%[[VB]], %[[VSB]] : tensor<2x8x16xi8>, tensor<2x8xf32>) outs(%{{.*}} : tensor<2x8x16xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[VALUES]] : tensor<8x2x2x8xf32>, tensor<2x8x16xf32>)
// CHECK: scf.yield
func.func @prefill_block_copies(%q: tensor<8x4x16xf32>, %k: tensor<8x2x16xf32>, %v: tensor<8x2x16xf32>, %kv: memref<2x2x8x16xi8>, %s: memref<2x2x8xf32>, %pos: index) -> tensor<8x4x16xf32> {
  %o = afm.attention global %q, %k, %v into %kv scales %s at %pos : tensor<8x4x16xf32>, tensor<8x2x16xf32>, tensor<8x2x16xf32>, memref<2x2x8x16xi8>, memref<2x2x8xf32> -> tensor<8x4x16xf32>
  return %o : tensor<8x4x16xf32>
}
