// RUN: afm-opt %s --afm-set-target=target=amd-zen4 -afm-lower-attention | FileCheck %s --check-prefixes=CHECK,L2
// RUN: afm-opt %s --afm-set-target=target=intel-sapphire-rapids -afm-lower-attention | FileCheck %s --check-prefixes=CHECK,L2
// RUN: afm-opt %s --afm-set-target=target=x86-64-v4-vnni -afm-lower-attention | FileCheck %s --check-prefixes=CHECK,NTA

// Decode attention's prefetches of its next task's rows and scales take
// the target's locality hint for data read once
// (TargetDescription::readOncePrefetch.locality): prefetcht2 (locality 1)
// on Zen 4, where it measured 10-13% faster than non-temporal, and on
// Sapphire/Emerald Rapids, where non-temporal was 2.5x slower; non-temporal
// (locality 0) elsewhere. The prefetches of the task's own next rows in
// the scores' loop stay in L1 (locality 3) on all three targets.
// CHECK-LABEL: func.func @decode_next_task_hint
// CHECK-SAME: %[[KV:[^:]*]]: memref<2x2x512x16xi8>, %[[S:[^:]*]]: memref<2x2x512xf32>
// CHECK: scf.forall
// CHECK: memref.prefetch %[[KV]][{{.*}}], read, locality<3>, data
// L2: memref.prefetch %[[S]][%c0{{.*}}], read, locality<1>, data
// L2: memref.prefetch %[[S]][%c1{{.*}}], read, locality<1>, data
// L2: memref.prefetch %[[KV]][%c0{{.*}}], read, locality<1>, data
// L2: memref.prefetch %[[KV]][%c1{{.*}}], read, locality<1>, data
// NTA: memref.prefetch %[[S]][%c0{{.*}}], read, locality<0>, data
// NTA: memref.prefetch %[[S]][%c1{{.*}}], read, locality<0>, data
// NTA: memref.prefetch %[[KV]][%c0{{.*}}], read, locality<0>, data
// NTA: memref.prefetch %[[KV]][%c1{{.*}}], read, locality<0>, data
// L2-NOT: locality<0>
// NTA-NOT: locality<1>
func.func @decode_next_task_hint(%q: tensor<1x4x16xf32>, %kv: memref<2x2x512x16xi8>, %s: memref<2x2x512xf32>, %pos: index) -> tensor<1x4x16xf32> {
  %o = afm.shared_kv_attention global %q from %kv scales %s at %pos : tensor<1x4x16xf32>, memref<2x2x512x16xi8>, memref<2x2x512xf32> -> tensor<1x4x16xf32>
  return %o : tensor<1x4x16xf32>
}

// From 6 MiB of a layer's keys and values read in a step (3072 filled
// slots of 8 KV heads of 128 int8), intel-sapphire-rapids prefetches the
// next task's rows one every 1 KiB (8 rows), the L2 streamer fetching the
// rows between (TargetDescription::readOncePrefetch: spacing and
// sparseFromBytes); below, every row. Zen 4 prefetches every row
// at any length.
// RUN: afm-opt %s --afm-set-target=target=intel-sapphire-rapids -afm-lower-attention | FileCheck %s --check-prefix=SPARSE
// RUN: afm-opt %s --afm-set-target=target=amd-zen4 -afm-lower-attention | FileCheck %s --check-prefix=DENSE
// SPARSE-LABEL: func.func @decode_next_rows_spacing
// SPARSE: scf.forall
// SPARSE: %[[EVERY:.*]] = arith.cmpi ult, %{{.*}}, %c3072 : index
// SPARSE: %[[AT:.*]] = arith.remui %{{.*}}, %c8{{(_[0-9]+)?}} : index
// SPARSE: %[[ON:.*]] = arith.cmpi eq, %[[AT]], %c0
// SPARSE: %[[DUE:.*]] = arith.ori %[[EVERY]], %[[ON]] : i1
// SPARSE: scf.if %[[DUE]] {
// SPARSE: memref.prefetch %{{.*}}, read, locality<1>, data
// DENSE-LABEL: func.func @decode_next_rows_spacing
// DENSE-NOT: arith.ori
// DENSE: return
func.func @decode_next_rows_spacing(%q: tensor<1x24x128xf32>, %kv: memref<2x8x4096x128xi8>, %s: memref<2x8x4096xf32>, %pos: index) -> tensor<1x24x128xf32> {
  %o = afm.shared_kv_attention global %q from %kv scales %s at %pos {int8_query} : tensor<1x24x128xf32>, memref<2x8x4096x128xi8>, memref<2x8x4096xf32> -> tensor<1x24x128xf32>
  return %o : tensor<1x24x128xf32>
}

// With 8 query heads per KV head (64 over 8), pass 3 takes two chunks of a
// value row at a time (their 16 accumulators half of the 32 zmm), so it
// makes four passes: two deal out the next task's key rows, two its value
// rows, each pass the rows at its own phase of them: every other row while
// the cache is short, every other one of the rows 1 KiB apart beyond it.
// RUN: afm-opt %s --afm-set-target=target=intel-sapphire-rapids -afm-lower-attention | FileCheck %s --check-prefix=DEALT
// DEALT-LABEL: func.func @decode_next_rows_dealt
// DEALT: %[[EVERY:.*]] = arith.cmpi ult, %{{.*}}, %c3072 : index
// DEALT: %[[AT1:.*]] = arith.remui %[[OFFSET:.*]], %c2{{(_[0-9]+)?}} : index
// DEALT: %[[ON1:.*]] = arith.cmpi eq, %[[AT1]], %c0
// DEALT: %[[AT8:.*]] = arith.remui %[[OFFSET]], %c16{{(_[0-9]+)?}} : index
// DEALT: %[[ON8:.*]] = arith.cmpi eq, %[[AT8]], %c0
// DEALT: %[[DUE:.*]] = arith.select %[[EVERY]], %[[ON1]], %[[ON8]] : i1
// DEALT: scf.if %[[DUE]] {
// DEALT: memref.prefetch %{{.*}}, read, locality<1>, data
// The second pass: the odd rows, and the rows 8 past each multiple of 16.
// DEALT: arith.remui %{{.*}}, %c2{{(_[0-9]+)?}} : index
// DEALT: arith.cmpi eq, %{{.*}}, %c1{{(_[0-9]+)?}} : index
// DEALT: arith.remui %{{.*}}, %c16{{(_[0-9]+)?}} : index
// DEALT: arith.cmpi eq, %{{.*}}, %c8{{(_[0-9]+)?}} : index
// DEALT: arith.select %[[EVERY]]
func.func @decode_next_rows_dealt(%q: tensor<1x64x128xf32>, %kv: memref<2x8x4096x128xi8>, %s: memref<2x8x4096xf32>, %pos: index) -> tensor<1x64x128xf32> {
  %o = afm.shared_kv_attention global %q from %kv scales %s at %pos {int8_query} : tensor<1x64x128xf32>, memref<2x8x4096x128xi8>, memref<2x8x4096xf32> -> tensor<1x64x128xf32>
  return %o : tensor<1x64x128xf32>
}

// Integer scores (int8_query over tiled keys) on a target whose int8 dot
// product takes unsigned bytes below 128 only (x86-64-v3: vpmaddubsw)
// multiply the key codes' magnitudes, masked below 128, once per tile for
// every head, by each head's query codes with the keys' signs
// (afm_cpu.sign_bytes); with vpdpbusd (x86-64-v4-vnni) the key codes +
// 128 multiply the query codes.
// RUN: afm-opt %s --afm-set-target=target=x86-64-v3 -afm-lower-attention | FileCheck %s --check-prefix=SMALL
// RUN: afm-opt %s --afm-set-target=target=x86-64-v4-vnni -afm-lower-attention | FileCheck %s --check-prefix=FLIP
// SMALL-LABEL: func.func @decode_integer_scores_signs
// SMALL-SAME: %[[KV:[^:]*]]: memref<2x2x512x64xi8>
// SMALL-NOT: math.absi
// SMALL: scf.forall
// SMALL: %[[TILE:.*]] = vector.load %[[KV]]{{.*}} : memref<2x2x512x64xi8>, vector<64xi8>
// SMALL: %[[ABS:.*]] = math.absi %[[TILE]] : vector<64xi8>
// SMALL: %[[AW:.*]] = vector.bitcast %[[ABS]] : vector<64xi8> to vector<16xi32>
// SMALL: %[[MAG:.*]] = arith.andi %[[AW]], %{{.*}} : vector<16xi32>
// SMALL: %[[QB:.*]] = vector.bitcast %{{.*}} : vector<16xi32> to vector<64xi8>
// SMALL: %[[QS:.*]] = afm_cpu.sign_bytes %[[QB]], %[[TILE]] : vector<64xi8>
// SMALL: %[[QW:.*]] = vector.bitcast %[[QS]] : vector<64xi8> to vector<16xi32>
// SMALL: afm_cpu.dot_bytes %{{.*}}, %[[MAG]], %[[QW]] : vector<16xi32>
// Nothing is subtracted from its sums: the signed queries add no excess.
// SMALL: %[[RAW:.*]] = arith.addi %{{.*}}, %{{.*}} : vector<16xi32>
// SMALL-NEXT: arith.sitofp %[[RAW]] : vector<16xi32> to vector<16xf32>
// FLIP-LABEL: func.func @decode_integer_scores_signs
// FLIP-NOT: math.absi
// FLIP-NOT: afm_cpu.sign_bytes
// FLIP: arith.xori %{{.*}}, %{{.*}} : vector<64xi8>
// FLIP: afm_cpu.dot_bytes
// FLIP: %[[RAW:.*]] = arith.addi %{{.*}}, %{{.*}} : vector<16xi32>
// FLIP-NEXT: %[[EXCESS:.*]] = vector.broadcast %{{.*}} : i32 to vector<16xi32>
// FLIP-NEXT: %[[LESS:.*]] = arith.subi %[[RAW]], %[[EXCESS]] : vector<16xi32>
// FLIP-NEXT: arith.sitofp %[[LESS]] : vector<16xi32> to vector<16xf32>
func.func @decode_integer_scores_signs(%q: tensor<1x4x64xf32>, %kv: memref<2x2x512x64xi8>, %s: memref<2x2x512xf32>, %pos: index) -> tensor<1x4x64xf32> {
  %o = afm.shared_kv_attention global %q from %kv scales %s at %pos {int8_query} : tensor<1x4x64xf32>, memref<2x2x512x64xi8>, memref<2x2x512xf32> -> tensor<1x4x64xf32>
  return %o : tensor<1x4x64xf32>
}

// Pass 3 (the weighted values) takes as many 16-lane chunks of a value row
// at a time as keep its accumulators (R heads x chunks) within half the
// target's vector registers: on x86-64-v3 (16 ymm, two a chunk) one chunk
// for 3 heads, 8 passes over the block; on x86-64-v4 (32 zmm) 4 chunks,
// 2 passes. The next task's rows go keys in the first half of the passes
// and values in the second, each half's rows dealt out over its passes in
// turn (row o in pass o mod 4 of its half), its lines of scales likewise
// by steps of 16.
// RUN: afm-opt %s --afm-set-target=target=x86-64-v3 -afm-lower-attention | FileCheck %s --check-prefix=YMM
// RUN: afm-opt %s --afm-set-target=target=x86-64-v4-vnni -afm-lower-attention | FileCheck %s --check-prefix=ZMM
// YMM-LABEL: func.func @decode_value_groups
// YMM-SAME: %[[KV:[^:]*]]: memref<2x8x4096x128xi8>, %[[S:[^:]*]]: memref<2x8x4096xf32>
// YMM: math.exp
// Pass 0 of 8: keys' scales of steps 0, 4, 8, ..., key rows 0, 4, 8, ...
// YMM: %[[STEP0:.*]] = arith.remui %{{.*}}, %c64{{(_[0-9]+)?}} : index
// YMM: arith.cmpi eq, %[[STEP0]], %c0{{(_[0-9]+)?}} : index
// YMM: memref.prefetch %[[S]][%c0
// YMM: step %c1{{(_[0-9]+)?}} iter_args(%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>)
// YMM: %[[ROW0:.*]] = arith.remui %{{.*}}, %c4{{(_[0-9]+)?}} : index
// YMM: arith.cmpi eq, %[[ROW0]], %c0{{(_[0-9]+)?}} : index
// YMM: memref.prefetch %[[KV]][%c0
// Pass 1: steps 1, 5, ..., key rows 1, 5, ...
// YMM: %[[STEP1:.*]] = arith.remui %{{.*}}, %c64{{(_[0-9]+)?}} : index
// YMM: arith.cmpi eq, %[[STEP1]], %c16{{(_[0-9]+)?}} : index
// YMM: memref.prefetch %[[S]][%c0
// YMM: step %c1{{(_[0-9]+)?}} iter_args(%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>)
// YMM: %[[ROW1:.*]] = arith.remui %{{.*}}, %c4{{(_[0-9]+)?}} : index
// YMM: arith.cmpi eq, %[[ROW1]], %c1{{(_[0-9]+)?}} : index
// YMM: memref.prefetch %[[KV]][%c0
// Passes 2, 3 (keys), then 4: values' scales and rows from 0.
// YMM-COUNT-2: step %c1{{(_[0-9]+)?}} iter_args(%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>)
// YMM: %[[STEP4:.*]] = arith.remui %{{.*}}, %c64{{(_[0-9]+)?}} : index
// YMM: arith.cmpi eq, %[[STEP4]], %c0{{(_[0-9]+)?}} : index
// YMM: memref.prefetch %[[S]][%c1
// YMM: step %c1{{(_[0-9]+)?}} iter_args(%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>)
// YMM: %[[ROW4:.*]] = arith.remui %{{.*}}, %c4{{(_[0-9]+)?}} : index
// YMM: arith.cmpi eq, %[[ROW4]], %c0{{(_[0-9]+)?}} : index
// YMM: memref.prefetch %[[KV]][%c1
// YMM-COUNT-3: step %c1{{(_[0-9]+)?}} iter_args(%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>)
// YMM-NOT: step %c1{{(_[0-9]+)?}} iter_args({{.*}}) -> (vector<16xf32>
// YMM: return
// ZMM-LABEL: func.func @decode_value_groups
// ZMM-COUNT-2: step %c1{{(_[0-9]+)?}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// ZMM-NOT: step %c1{{(_[0-9]+)?}} iter_args({{.*}}) -> (vector<16xf32>
// ZMM-NOT: arith.remui %{{.*}}, %c4
// ZMM: return
func.func @decode_value_groups(%q: tensor<1x24x128xf32>, %kv: memref<2x8x4096x128xi8>, %s: memref<2x8x4096xf32>, %pos: index) -> tensor<1x24x128xf32> {
  %o = afm.shared_kv_attention global %q from %kv scales %s at %pos {int8_query} : tensor<1x24x128xf32>, memref<2x8x4096x128xi8>, memref<2x8x4096xf32> -> tensor<1x24x128xf32>
  return %o : tensor<1x24x128xf32>
}

// An f16 cache: a block of 256 value rows of 128 lanes is 64 KiB, beyond
// x86-64-v3's 32 KiB L1, so every pass over the rows after the first would
// read them again from L2. Pass 3 then takes 4 chunks at a time (12
// accumulators for 3 heads, though they spill) in 2 passes. At 64 slots a
// block is 16 KiB, the rows stay in L1 and the register rule holds: 1
// chunk, 8 passes (after the scores' loop, also of 3 accumulators). f32
// rows (128 KiB a block) take 2 passes too.
// RUN: afm-opt %s --afm-set-target=target=x86-64-v3 -afm-lower-attention | FileCheck %s --check-prefix=F16
// F16-LABEL: func.func @decode_value_groups_f16(
// F16-COUNT-2: step %c16{{(_[0-9]+)?}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// F16-NOT: step %c16{{(_[0-9]+)?}} iter_args({{.*}}) -> (vector<16xf32>
// F16-LABEL: func.func @decode_value_groups_f16_in_l1(
// F16-COUNT-9: step %c16{{(_[0-9]+)?}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>)
// F16-NOT: step %c16{{(_[0-9]+)?}} iter_args({{.*}}) -> (vector<16xf32>
// F16-LABEL: func.func @decode_value_groups_f32(
// F16-COUNT-2: step %c16{{(_[0-9]+)?}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// F16-NOT: step %c16{{(_[0-9]+)?}} iter_args({{.*}}) -> (vector<16xf32>
// F16: return
func.func @decode_value_groups_f16(%q: tensor<1x24x128xf32>, %kv: memref<2x8x4096x128xf16>, %pos: index) -> tensor<1x24x128xf32> {
  %o = afm.shared_kv_attention global %q from %kv at %pos : tensor<1x24x128xf32>, memref<2x8x4096x128xf16> -> tensor<1x24x128xf32>
  return %o : tensor<1x24x128xf32>
}
func.func @decode_value_groups_f16_in_l1(%q: tensor<1x24x128xf32>, %kv: memref<2x8x64x128xf16>, %pos: index) -> tensor<1x24x128xf32> {
  %o = afm.shared_kv_attention global %q from %kv at %pos : tensor<1x24x128xf32>, memref<2x8x64x128xf16> -> tensor<1x24x128xf32>
  return %o : tensor<1x24x128xf32>
}
func.func @decode_value_groups_f32(%q: tensor<1x24x128xf32>, %kv: memref<2x8x4096x128xf32>, %pos: index) -> tensor<1x24x128xf32> {
  %o = afm.shared_kv_attention global %q from %kv at %pos : tensor<1x24x128xf32>, memref<2x8x4096x128xf32> -> tensor<1x24x128xf32>
  return %o : tensor<1x24x128xf32>
}
