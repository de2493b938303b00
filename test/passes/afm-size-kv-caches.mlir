// RUN: afm-opt %s -split-input-file -afm-size-kv-caches | FileCheck %s

// Layer 0 is only read by local attention (window 8): a ring buffer of 8.
// Layer 1 is read by a global layer: the whole context. Layer 2 is read by
// a 4-row shared-KV reader with window 8, which also needs the 3 positions
// its chunk appended after its first row. Every entry agrees.
// CHECK-LABEL: func.func @prefill
// CHECK-SAME: !afm.kv_cache<2x8x16, f32> {afm.layer = 0 : i64}
// CHECK-SAME: !afm.kv_cache<2x64x16, f32> {afm.layer = 1 : i64}
// CHECK-SAME: !afm.kv_cache<2x11x16, f32> {afm.layer = 2 : i64}
// CHECK-LABEL: func.func @decode
// CHECK-SAME: !afm.kv_cache<2x8x16, f32> {afm.layer = 0 : i64}
// CHECK-SAME: !afm.kv_cache<2x11x16, f32> {afm.layer = 2 : i64}
func.func @prefill(%t: tensor<4xi32>, %count: index, %pos: index,
                   %kv0: !afm.kv_cache<2x64x16, f32> {afm.layer = 0 : i64},
                   %kv1: !afm.kv_cache<2x64x16, f32> {afm.layer = 1 : i64},
                   %kv2: !afm.kv_cache<2x64x16, f32> {afm.layer = 2 : i64}) -> tensor<4x4x16xf32>
    attributes {afm.entry = #afm.entry<prefill>} {
  %q = arith.constant dense<1.0> : tensor<4x4x16xf32>
  %k = arith.constant dense<1.0> : tensor<4x2x16xf32>
  %a = afm.attention local %q, %k, %k into %kv0 at %pos count %count {window = 8} : tensor<4x4x16xf32>, tensor<4x2x16xf32>, tensor<4x2x16xf32>, !afm.kv_cache<2x64x16, f32> -> tensor<4x4x16xf32>
  %b = afm.attention global %a, %k, %k into %kv1 at %pos count %count : tensor<4x4x16xf32>, tensor<4x2x16xf32>, tensor<4x2x16xf32>, !afm.kv_cache<2x64x16, f32> -> tensor<4x4x16xf32>
  %c = afm.attention local %b, %k, %k into %kv2 at %pos count %count {window = 8} : tensor<4x4x16xf32>, tensor<4x2x16xf32>, tensor<4x2x16xf32>, !afm.kv_cache<2x64x16, f32> -> tensor<4x4x16xf32>
  %d = afm.shared_kv_attention local %c from %kv2 at %pos count %count {window = 8} : tensor<4x4x16xf32>, !afm.kv_cache<2x64x16, f32> -> tensor<4x4x16xf32>
  return %d : tensor<4x4x16xf32>
}
func.func @decode(%t: tensor<1xi32>, %count: index, %pos: index,
                  %kv0: !afm.kv_cache<2x64x16, f32> {afm.layer = 0 : i64},
                  %kv2: !afm.kv_cache<2x64x16, f32> {afm.layer = 2 : i64}) -> tensor<1x4x16xf32>
    attributes {afm.entry = #afm.entry<decode>} {
  %q = arith.constant dense<1.0> : tensor<1x4x16xf32>
  %k = arith.constant dense<1.0> : tensor<1x2x16xf32>
  %a = afm.attention local %q, %k, %k into %kv0 at %pos {window = 8} : tensor<1x4x16xf32>, tensor<1x2x16xf32>, tensor<1x2x16xf32>, !afm.kv_cache<2x64x16, f32> -> tensor<1x4x16xf32>
  %d = afm.shared_kv_attention local %a from %kv2 at %pos {window = 8} : tensor<1x4x16xf32>, !afm.kv_cache<2x64x16, f32> -> tensor<1x4x16xf32>
  return %d : tensor<1x4x16xf32>
}

// -----

// A window larger than the context changes nothing.
// CHECK-LABEL: func.func @decode
// CHECK-SAME: !afm.kv_cache<2x64x16, f32> {afm.layer = 0 : i64}
func.func @decode(%t: tensor<1xi32>, %count: index, %pos: index,
                  %kv0: !afm.kv_cache<2x64x16, f32> {afm.layer = 0 : i64}) -> tensor<1x4x16xf32>
    attributes {afm.entry = #afm.entry<decode>} {
  %q = arith.constant dense<1.0> : tensor<1x4x16xf32>
  %k = arith.constant dense<1.0> : tensor<1x2x16xf32>
  %a = afm.attention local %q, %k, %k into %kv0 at %pos {window = 4096} : tensor<1x4x16xf32>, tensor<1x2x16xf32>, tensor<1x2x16xf32>, !afm.kv_cache<2x64x16, f32> -> tensor<1x4x16xf32>
  return %a : tensor<1x4x16xf32>
}

// -----

// A verify entry of 3 rows (speculative decoding) may be rewound by 2
// positions: every ring keeps 2 spare slots, in every entry.
// CHECK-LABEL: func.func @prefill_with_verify
// CHECK-SAME: !afm.kv_cache<2x10x16, f32> {afm.layer = 0 : i64}
// CHECK-LABEL: func.func @verify
// CHECK-SAME: !afm.kv_cache<2x10x16, f32> {afm.layer = 0 : i64}
func.func @prefill_with_verify(%t: tensor<4xi32>, %count: index, %pos: index,
                   %kv0: !afm.kv_cache<2x64x16, f32> {afm.layer = 0 : i64}) -> tensor<4x4x16xf32>
    attributes {afm.entry = #afm.entry<prefill>} {
  %q = arith.constant dense<1.0> : tensor<4x4x16xf32>
  %k = arith.constant dense<1.0> : tensor<4x2x16xf32>
  %a = afm.attention local %q, %k, %k into %kv0 at %pos count %count {window = 8} : tensor<4x4x16xf32>, tensor<4x2x16xf32>, tensor<4x2x16xf32>, !afm.kv_cache<2x64x16, f32> -> tensor<4x4x16xf32>
  return %a : tensor<4x4x16xf32>
}
func.func @verify(%t: tensor<3xi32>, %count: index, %pos: index,
                  %kv0: !afm.kv_cache<2x64x16, f32> {afm.layer = 0 : i64}) -> tensor<3x4x16xf32>
    attributes {afm.entry = #afm.entry<verify>} {
  %q = arith.constant dense<1.0> : tensor<3x4x16xf32>
  %k = arith.constant dense<1.0> : tensor<3x2x16xf32>
  %a = afm.attention local %q, %k, %k into %kv0 at %pos count %count {window = 8} : tensor<3x4x16xf32>, tensor<3x2x16xf32>, tensor<3x2x16xf32>, !afm.kv_cache<2x64x16, f32> -> tensor<3x4x16xf32>
  return %a : tensor<3x4x16xf32>
}
