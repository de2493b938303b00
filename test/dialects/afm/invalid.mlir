// Every verifier diagnostic of the afm dialect, one case each.
// RUN: afm-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect

//===----------------------------------------------------------------------===//
// Types and attributes
//===----------------------------------------------------------------------===//

// expected-error @+1 {{expected a matrix shape with 2 dimensions, got 3}}
func.func private @matrix_rank(!afm.q2<4x4x4, per_tensor>)

// -----

// expected-error @+1 {{weight shape must be positive, got 0x4}}
func.func private @empty_weight(!afm.q2<0x4, per_tensor>)

// -----

// expected-error @+1 {{group size 5 must be positive and divide the row length 64}}
func.func private @q4_group(!afm.q4<16x64, group = 5>)

// -----

// expected-error @+1 {{block 7x7 is not an ASTC 2D footprint; valid footprints are 4x4, 4x5, 5x5, 5x6, 6x6, 5x8, 6x8, 8x8, 5x10, 6x10, 8x10, 10x10, 10x12, 12x12}}
func.func private @astc_block(!afm.astc<12x12, block = 7x7, offset = min>)

// -----

// expected-error @+1 {{expected a cache shape (kv heads x capacity x head dim) with 3 dimensions, got 2}}
func.func private @cache_rank(!afm.kv_cache<2x8, f32>)

// -----

// expected-error @+1 {{KV cache shape must be positive, got 2x0x16}}
func.func private @cache_empty(!afm.kv_cache<2x0x16, f32>)

// -----

// expected-error @+1 {{KV cache element type must be f32, f16, bf16 or i8, got 'i4'}}
func.func private @cache_element(!afm.kv_cache<2x8x16, i4>)

// -----

func.func @codes_type() {
  // expected-error @+1 {{codes must be a 1-D tensor of 'i8', got 'tensor<4xi32>'}}
  %w = afm.weight "w" : !afm.q2<2x8, per_tensor> = #afm.quantized<codes = dense<0> : tensor<4xi32>, scales = dense<1.0> : tensor<1xf32>>
  return
}

// -----

func.func @scales_type() {
  // expected-error @+1 {{scales must be a 1-D tensor of 'f32', got 'tensor<1xf16>'}}
  %w = afm.weight "w" : !afm.q2<2x8, per_tensor> = #afm.quantized<codes = dense<0> : tensor<4xi8>, scales = dense<1.0> : tensor<1xf16>>
  return
}

// -----

func.func @blocks_type() {
  // expected-error @+1 {{blocks must be a 1-D tensor of 'i8', got 'tensor<2x16xi8>'}}
  %w = afm.weight "w" : !afm.astc<6x6, block = 6x6, offset = min> = #afm.astc_blocks<blocks = dense<0> : tensor<2x16xi8>, offsets = dense<0.0> : tensor<1xf16>>
  return
}

// -----

func.func @offsets_type() {
  // expected-error @+1 {{offsets must be a 1-D tensor of 'f16', got 'tensor<1xf32>'}}
  %w = afm.weight "w" : !afm.astc<6x6, block = 6x6, offset = min> = #afm.astc_blocks<blocks = dense<0> : tensor<16xi8>, offsets = dense<0.0> : tensor<1xf32>>
  return
}

// -----

func.func @blocks_partial() {
  // expected-error @+1 {{blocks must hold 16 bytes per ASTC block, got 20 bytes}}
  %w = afm.weight "w" : !afm.astc<6x6, block = 6x6, offset = min> = #afm.astc_blocks<blocks = dense<0> : tensor<20xi8>, offsets = dense<0.0> : tensor<1xf16>>
  return
}

//===----------------------------------------------------------------------===//
// afm.weight and afm.dequantize
//===----------------------------------------------------------------------===//

// -----

func.func @weight_name() {
  // expected-error @+1 {{'afm.weight' op weight name must not be empty}}
  %w = afm.weight "" : tensor<2xf32>
  return
}

// -----

func.func @weight_value_kind() {
  // expected-error @+1 {{'afm.weight' op inline value of a tensor weight must be an elements attribute, got 1.000000e+00 : f32}}
  %w = "afm.weight"() {name = "w", value = 1.0 : f32} : () -> tensor<2xf32>
  return
}

// -----

func.func @weight_value_type() {
  // expected-error @+1 {{'afm.weight' op inline value of type 'tensor<3xf32>' does not match result type 'tensor<2xf32>'}}
  %w = "afm.weight"() {name = "w", value = dense<1.0> : tensor<3xf32>} : () -> tensor<2xf32>
  return
}

// -----

func.func @weight_q2_value_kind() {
  // expected-error @+1 {{'afm.weight' op inline value of a '!afm.q2<2x8, per_tensor>' weight must be #afm.quantized, got dense<0> : tensor<4xi8>}}
  %w = afm.weight "w" : !afm.q2<2x8, per_tensor> = dense<0> : tensor<4xi8>
  return
}

// -----

func.func @weight_q2_codes() {
  // expected-error @+1 {{'afm.weight' op inline codes has 3 elements, but the weight type needs 4}}
  %w = afm.weight "w" : !afm.q2<2x8, per_tensor> = #afm.quantized<codes = dense<0> : tensor<3xi8>, scales = dense<1.0> : tensor<1xf32>>
  return
}

// -----

func.func @weight_q4_scales() {
  // expected-error @+1 {{'afm.weight' op inline scales has 1 elements, but the weight type needs 4}}
  %w = afm.weight "w" : !afm.q4<2x8, group = 4> = #afm.quantized<codes = dense<0> : tensor<8xi8>, scales = dense<1.0> : tensor<1xf32>>
  return
}

// -----

func.func @weight_astc_value_kind() {
  // expected-error @+1 {{'afm.weight' op inline value of a '!afm.astc<6x6, block = 6x6, offset = min>' weight must be #afm.astc_blocks}}
  %w = afm.weight "w" : !afm.astc<6x6, block = 6x6, offset = min> = #afm.quantized<codes = dense<0> : tensor<16xi8>, scales = dense<1.0> : tensor<1xf32>>
  return
}

// -----

func.func @weight_astc_blocks() {
  // expected-error @+1 {{'afm.weight' op inline blocks has 16 elements, but the weight type needs 32}}
  %w = afm.weight "w" : !afm.astc<6x7, block = 6x6, offset = min> = #afm.astc_blocks<blocks = dense<0> : tensor<16xi8>, offsets = dense<0.0> : tensor<2xf16>>
  return
}

// -----

func.func @weight_astc_offsets() {
  // expected-error @+1 {{'afm.weight' op inline offsets has 1 elements, but the weight type needs 2}}
  %w = afm.weight "w" : !afm.astc<6x7, block = 6x6, offset = min> = #afm.astc_blocks<blocks = dense<0> : tensor<32xi8>, offsets = dense<0.0> : tensor<1xf16>>
  return
}

// -----

func.func @dequantize_shape(%w: !afm.q2<64x32, per_tensor>) {
  // expected-error @+1 {{'afm.dequantize' op result shape 'tensor<32x64xf32>' must be the weight's shape 64x32}}
  %d = afm.dequantize %w : !afm.q2<64x32, per_tensor> -> tensor<32x64xf32>
  return
}

//===----------------------------------------------------------------------===//
// Token-wise layers
//===----------------------------------------------------------------------===//

// -----

func.func @embedding_tokens(%t: tensor<5xi32>, %table: tensor<16x8xf32>) {
  // expected-error @+1 {{'afm.embedding' op result token count (4) must match token count (5)}}
  %h = afm.embedding %table[%t] : tensor<16x8xf32>, tensor<5xi32> -> tensor<4x8xf32>
  return
}

// -----

func.func @embedding_width(%t: tensor<?xi32>, %table: !afm.q4<16x8, group = 4>) {
  // expected-error @+1 {{'afm.embedding' op result hidden size (9) must match embedding width (8)}}
  %h = afm.embedding %table[%t] : !afm.q4<16x8, group = 4>, tensor<?xi32> -> tensor<?x9xf32>
  return
}

// -----

func.func @rms_norm_rank(%x: tensor<f32>, %g: tensor<1xf32>) {
  // expected-error @+1 {{'afm.rms_norm' op input must have at least one dimension}}
  %y = afm.rms_norm %x, %g : tensor<f32>, tensor<1xf32>
  return
}

// -----

func.func @rms_norm_weight(%x: tensor<?x64xf32>, %g: tensor<32xf32>) {
  // expected-error @+1 {{'afm.rms_norm' op weight size (32) must match normalized dimension (64)}}
  %y = afm.rms_norm %x, %g : tensor<?x64xf32>, tensor<32xf32>
  return
}

// -----

func.func @rms_norm_epsilon(%x: tensor<?x64xf32>, %g: tensor<64xf32>) {
  // expected-error @+1 {{'afm.rms_norm' op epsilon must be positive, got 0}}
  %y = afm.rms_norm %x, %g {epsilon = 0.0 : f32} : tensor<?x64xf32>, tensor<64xf32>
  return
}

// -----

func.func @rope_odd(%x: tensor<?x4x15xf32>, %p: index) {
  // expected-error @+1 {{'afm.rope' op head dimension must be static and even, got 15}}
  %y = afm.rope %x at %p : tensor<?x4x15xf32>
  return
}

// -----

func.func @rope_dynamic(%x: tensor<?x4x?xf32>, %p: index) {
  // expected-error @+1 {{'afm.rope' op head dimension must be static and even, got ?}}
  %y = afm.rope %x at %p : tensor<?x4x?xf32>
  return
}

// -----

func.func @rope_theta(%x: tensor<?x4x16xf32>, %p: index) {
  // expected-error @+1 {{'afm.rope' op theta must be positive, got -1}}
  %y = afm.rope %x at %p {theta = -1.0 : f32} : tensor<?x4x16xf32>
  return
}

// -----

func.func @rope_inv_freq_size(%x: tensor<?x4x16xf32>, %p: index) {
  // expected-error @+1 {{'afm.rope' op inv_freq must have head dimension / 2 = 8 entries, got 4}}
  %y = afm.rope %x at %p {inv_freq = array<f64: 1.0, 0.5, 0.25, 0.125>} : tensor<?x4x16xf32>
  return
}

// -----

func.func @rope_inv_freq_value(%x: tensor<?x4x4xf32>, %p: index) {
  // expected-error @+1 {{'afm.rope' op inv_freq[1] must be positive and finite, got 0}}
  %y = afm.rope %x at %p {inv_freq = array<f64: 1.0, 0.0>} : tensor<?x4x4xf32>
  return
}

// -----

func.func @linear_features(%x: tensor<?x64xf32>, %w: tensor<128x32xf32>) {
  // expected-error @+1 {{'afm.linear' op input features (64) must match weight columns (32)}}
  %y = afm.linear %x, %w : tensor<?x64xf32>, tensor<128x32xf32> -> tensor<?x128xf32>
  return
}

// -----

func.func @linear_rows(%x: tensor<3x64xf32>, %w: !afm.q2<128x64, per_tensor>) {
  // expected-error @+1 {{'afm.linear' op result rows (4) must match input rows (3)}}
  %y = afm.linear %x, %w : tensor<3x64xf32>, !afm.q2<128x64, per_tensor> -> tensor<4x128xf32>
  return
}

// -----

func.func @linear_outputs(%x: tensor<?x64xf32>, %w: !afm.astc<128x64, block = 6x6, offset = min>) {
  // expected-error @+1 {{'afm.linear' op result features (96) must match weight rows (128)}}
  %y = afm.linear %x, %w : tensor<?x64xf32>, !afm.astc<128x64, block = 6x6, offset = min> -> tensor<?x96xf32>
  return
}

// -----

func.func @linear_weight_kind(%x: tensor<?x64xf32>, %w: !afm.q4<128x64, group = 32>) {
  // expected-error @+1 {{'afm.linear' op operand #1 must be plain, 2-bit or ASTC weight matrix}}
  %y = afm.linear %x, %w : tensor<?x64xf32>, !afm.q4<128x64, group = 32> -> tensor<?x128xf32>
  return
}

// -----

func.func @lm_head_vocab(%h: tensor<1x64xf32>, %w: !afm.q4<256x64, group = 32>) {
  // expected-error @+1 {{'afm.lm_head' op result features (255) must match weight rows (256)}}
  %y = afm.lm_head %h, %w : tensor<1x64xf32>, !afm.q4<256x64, group = 32> -> tensor<1x255xf32>
  return
}

// -----

func.func @lora_rank(%y: tensor<?x128xf32>, %x: tensor<?x64xf32>, %a: tensor<?x64xf32>, %b: tensor<128x32xf32>) {
  // expected-error @+1 {{'afm.lora' op adapter rank must be static and positive, got ?}}
  %z = afm.lora %y, %x, %a, %b {alpha = 1.0 : f32} : tensor<?x128xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<128x32xf32>
  return
}

// -----

func.func @lora_a(%y: tensor<?x128xf32>, %x: tensor<?x32xf32>, %a: tensor<32x64xf32>, %b: tensor<128x32xf32>) {
  // expected-error @+1 {{'afm.lora' op columns of a (64) must match input features (32)}}
  %z = afm.lora %y, %x, %a, %b {alpha = 1.0 : f32} : tensor<?x128xf32>, tensor<?x32xf32>, tensor<32x64xf32>, tensor<128x32xf32>
  return
}

// -----

func.func @lora_b_rank(%y: tensor<?x128xf32>, %x: tensor<?x64xf32>, %a: tensor<32x64xf32>, %b: tensor<128x16xf32>) {
  // expected-error @+1 {{'afm.lora' op columns of b (16) must match adapter rank (32)}}
  %z = afm.lora %y, %x, %a, %b {alpha = 1.0 : f32} : tensor<?x128xf32>, tensor<?x64xf32>, tensor<32x64xf32>, tensor<128x16xf32>
  return
}

// -----

func.func @lora_b_rows(%y: tensor<?x128xf32>, %x: tensor<?x64xf32>, %a: tensor<32x64xf32>, %b: tensor<64x32xf32>) {
  // expected-error @+1 {{'afm.lora' op rows of b (64) must match base features (128)}}
  %z = afm.lora %y, %x, %a, %b {alpha = 1.0 : f32} : tensor<?x128xf32>, tensor<?x64xf32>, tensor<32x64xf32>, tensor<64x32xf32>
  return
}

// -----

func.func @lora_tokens(%y: tensor<2x128xf32>, %x: tensor<3x64xf32>, %a: tensor<32x64xf32>, %b: tensor<128x32xf32>) {
  // expected-error @+1 {{'afm.lora' op input rows (3) must match base rows (2)}}
  %z = afm.lora %y, %x, %a, %b {alpha = 1.0 : f32} : tensor<2x128xf32>, tensor<3x64xf32>, tensor<32x64xf32>, tensor<128x32xf32>
  return
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

// -----

func.func @attention_result(%q: tensor<?x4x16xf32>, %k: tensor<?x2x16xf32>, %c: !afm.kv_cache<2x8x16, f32>, %p: index) {
  // expected-error @+1 {{'afm.attention' op result type 'tensor<?x4x8xf32>' must match query type 'tensor<?x4x16xf32>'}}
  %o = afm.attention global %q, %k, %k into %c at %p : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, !afm.kv_cache<2x8x16, f32> -> tensor<?x4x8xf32>
  return
}

// -----

func.func @attention_dynamic_heads(%q: tensor<?x?x16xf32>, %k: tensor<?x2x16xf32>, %c: !afm.kv_cache<2x8x16, f32>, %p: index) {
  // expected-error @+1 {{'afm.attention' op query heads and head dimension must be static}}
  %o = afm.attention global %q, %k, %k into %c at %p : tensor<?x?x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, !afm.kv_cache<2x8x16, f32> -> tensor<?x?x16xf32>
  return
}

// -----

func.func @attention_cache_memref(%q: tensor<?x4x16xf32>, %c: memref<3x2x8x16xf32>, %p: index) {
  // expected-error @+1 {{'afm.shared_kv_attention' op cache memref must be static with a leading dimension of 2 (keys, values), got 'memref<3x2x8x16xf32>'}}
  %o = afm.shared_kv_attention global %q from %c at %p : tensor<?x4x16xf32>, memref<3x2x8x16xf32> -> tensor<?x4x16xf32>
  return
}

// -----

func.func @int8_cache_without_scales(%q: tensor<1x4x16xf32>, %kv: memref<2x2x64x16xi8>, %p: index) {
  // expected-error @+1 {{'afm.shared_kv_attention' op an i8 cache memref needs its scales operand}}
  %o = afm.shared_kv_attention global %q from %kv at %p : tensor<1x4x16xf32>, memref<2x2x64x16xi8> -> tensor<1x4x16xf32>
  return
}

// -----

func.func @f32_cache_with_scales(%q: tensor<1x4x16xf32>, %k: tensor<1x2x16xf32>, %kv: memref<2x2x64x16xf32>, %s: memref<2x2x64xf32>, %p: index) {
  // expected-error @+1 {{'afm.attention' op scales are only allowed with an i8 cache memref, got cache 'memref<2x2x64x16xf32>'}}
  %o = afm.attention global %q, %k, %k into %kv scales %s at %p : tensor<1x4x16xf32>, tensor<1x2x16xf32>, tensor<1x2x16xf32>, memref<2x2x64x16xf32>, memref<2x2x64xf32> -> tensor<1x4x16xf32>
  return
}

// -----

// An unbound cache carries its scales in its type.
func.func @unbound_cache_with_scales(%q: tensor<1x4x16xf32>, %kv: !afm.kv_cache<2x64x16, i8>, %s: memref<2x2x64xf32>, %p: index) {
  // expected-error @+1 {{'afm.shared_kv_attention' op scales are only allowed with an i8 cache memref, got cache '!afm.kv_cache<2x64x16, i8>'}}
  %o = afm.shared_kv_attention global %q from %kv scales %s at %p : tensor<1x4x16xf32>, !afm.kv_cache<2x64x16, i8>, memref<2x2x64xf32> -> tensor<1x4x16xf32>
  return
}

// -----

func.func @scales_shape(%q: tensor<1x4x16xf32>, %kv: memref<2x2x64x16xi8>, %s: memref<2x2x32xf32>, %p: index) {
  // expected-error @+1 {{'afm.shared_kv_attention' op scales must be memref<2x2x64xf32> to match the cache, got 'memref<2x2x32xf32>'}}
  %o = afm.shared_kv_attention global %q from %kv scales %s at %p : tensor<1x4x16xf32>, memref<2x2x64x16xi8>, memref<2x2x32xf32> -> tensor<1x4x16xf32>
  return
}

// -----

func.func @attention_gqa(%q: tensor<?x4x16xf32>, %k: tensor<?x3x16xf32>, %c: !afm.kv_cache<3x8x16, f32>, %p: index) {
  // expected-error @+1 {{'afm.attention' op query heads (4) must be a multiple of KV heads (3)}}
  %o = afm.attention global %q, %k, %k into %c at %p : tensor<?x4x16xf32>, tensor<?x3x16xf32>, tensor<?x3x16xf32>, !afm.kv_cache<3x8x16, f32> -> tensor<?x4x16xf32>
  return
}

// -----

func.func @attention_head_dim(%q: tensor<?x4x8xf32>, %c: !afm.kv_cache<2x8x16, f32>, %p: index) {
  // expected-error @+1 {{'afm.shared_kv_attention' op query head dimension (8) must match cache head dimension (16)}}
  %o = afm.shared_kv_attention global %q from %c at %p : tensor<?x4x8xf32>, !afm.kv_cache<2x8x16, f32> -> tensor<?x4x8xf32>
  return
}

// -----

func.func @attention_local_needs_window(%q: tensor<?x4x16xf32>, %k: tensor<?x2x16xf32>, %c: !afm.kv_cache<2x8x16, f32>, %p: index) {
  // expected-error @+1 {{'afm.attention' op local attention requires a window}}
  %o = afm.attention local %q, %k, %k into %c at %p : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, !afm.kv_cache<2x8x16, f32> -> tensor<?x4x16xf32>
  return
}

// -----

func.func @attention_window(%q: tensor<?x4x16xf32>, %c: !afm.kv_cache<2x8x16, f32>, %p: index) {
  // expected-error @+1 {{'afm.shared_kv_attention' op window must be positive, got 0}}
  %o = afm.shared_kv_attention local %q from %c at %p {window = 0} : tensor<?x4x16xf32>, !afm.kv_cache<2x8x16, f32> -> tensor<?x4x16xf32>
  return
}

// -----

func.func @attention_global_window(%q: tensor<?x4x16xf32>, %k: tensor<?x2x16xf32>, %c: !afm.kv_cache<2x8x16, f32>, %p: index) {
  // expected-error @+1 {{'afm.attention' op global attention must not have a window}}
  %o = afm.attention global %q, %k, %k into %c at %p {window = 8} : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, !afm.kv_cache<2x8x16, f32> -> tensor<?x4x16xf32>
  return
}

// -----

func.func @attention_scale(%q: tensor<?x4x16xf32>, %c: !afm.kv_cache<2x8x16, f32>, %p: index) {
  // expected-error @+1 {{'afm.shared_kv_attention' op scale must be positive, got -5.000000e-01}}
  %o = afm.shared_kv_attention global %q from %c at %p {scale = -0.5 : f32} : tensor<?x4x16xf32>, !afm.kv_cache<2x8x16, f32> -> tensor<?x4x16xf32>
  return
}

// -----

func.func @attention_key_tokens(%q: tensor<3x4x16xf32>, %k: tensor<2x2x16xf32>, %c: !afm.kv_cache<2x8x16, f32>, %p: index) {
  // expected-error @+1 {{'afm.attention' op key token count (2) must match query token count (3)}}
  %o = afm.attention global %q, %k, %k into %c at %p : tensor<3x4x16xf32>, tensor<2x2x16xf32>, tensor<2x2x16xf32>, !afm.kv_cache<2x8x16, f32> -> tensor<3x4x16xf32>
  return
}

// -----

func.func @attention_value_heads(%q: tensor<?x4x16xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x4x16xf32>, %c: !afm.kv_cache<2x8x16, f32>, %p: index) {
  // expected-error @+1 {{'afm.attention' op value heads (4) must match cache KV heads (2)}}
  %o = afm.attention global %q, %k, %v into %c at %p : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x4x16xf32>, !afm.kv_cache<2x8x16, f32> -> tensor<?x4x16xf32>
  return
}

// -----

func.func @attention_key_head_dim(%q: tensor<?x4x16xf32>, %k: tensor<?x2x8xf32>, %c: !afm.kv_cache<2x8x16, f32>, %p: index) {
  // expected-error @+1 {{'afm.attention' op key head dimension (8) must match cache head dimension (16)}}
  %o = afm.attention global %q, %k, %k into %c at %p : tensor<?x4x16xf32>, tensor<?x2x8xf32>, tensor<?x2x8xf32>, !afm.kv_cache<2x8x16, f32> -> tensor<?x4x16xf32>
  return
}

//===----------------------------------------------------------------------===//
// Feed-forward and mixture of experts
//===----------------------------------------------------------------------===//

// -----

func.func @swiglu_gate(%x: tensor<?x64xf32>, %g: tensor<128x32xf32>, %d: tensor<64x128xf32>) {
  // expected-error @+1 {{'afm.swiglu' op gate columns (32) must match hidden size (64)}}
  %y = afm.swiglu %x, %g, %g, %d : tensor<?x64xf32>, tensor<128x32xf32>, tensor<128x32xf32>, tensor<64x128xf32>
  return
}

// -----

func.func @swiglu_up_rows(%x: tensor<?x64xf32>, %g: tensor<128x64xf32>, %u: tensor<96x64xf32>, %d: tensor<64x128xf32>) {
  // expected-error @+1 {{'afm.swiglu' op up shape (96) must match gate rows (128)}}
  %y = afm.swiglu %x, %g, %u, %d : tensor<?x64xf32>, tensor<128x64xf32>, tensor<96x64xf32>, tensor<64x128xf32>
  return
}

// -----

func.func @swiglu_up_cols(%x: tensor<?x64xf32>, %g: tensor<128x64xf32>, %u: !afm.q2<128x32, per_tensor>, %d: tensor<64x128xf32>) {
  // expected-error @+1 {{'afm.swiglu' op up columns (32) must match hidden size (64)}}
  %y = afm.swiglu %x, %g, %u, %d : tensor<?x64xf32>, tensor<128x64xf32>, !afm.q2<128x32, per_tensor>, tensor<64x128xf32>
  return
}

// -----

func.func @swiglu_down_rows(%x: tensor<?x64xf32>, %g: tensor<128x64xf32>, %d: tensor<32x128xf32>) {
  // expected-error @+1 {{'afm.swiglu' op down rows (32) must match hidden size (64)}}
  %y = afm.swiglu %x, %g, %g, %d : tensor<?x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<32x128xf32>
  return
}

// -----

func.func @swiglu_down_cols(%x: tensor<?x64xf32>, %g: tensor<128x64xf32>, %d: tensor<64x64xf32>) {
  // expected-error @+1 {{'afm.swiglu' op down columns (64) must match FFN width (gate rows) (128)}}
  %y = afm.swiglu %x, %g, %g, %d : tensor<?x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x64xf32>
  return
}

// -----

func.func @router_dynamic_experts(%x: tensor<?x64xf32>, %r: tensor<?x64xf32>) {
  // expected-error @+1 {{'afm.topk_router' op number of experts must be static}}
  %e, %g = afm.topk_router %x, %r {top_k = 2} : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x2xi32>, tensor<?x2xf32>
  return
}

// -----

func.func @router_columns(%x: tensor<?x64xf32>, %r: tensor<4x32xf32>) {
  // expected-error @+1 {{'afm.topk_router' op router columns (32) must match hidden size (64)}}
  %e, %g = afm.topk_router %x, %r {top_k = 2} : tensor<?x64xf32>, tensor<4x32xf32> -> tensor<?x2xi32>, tensor<?x2xf32>
  return
}

// -----

func.func @router_top_k_zero(%x: tensor<?x64xf32>, %r: tensor<4x64xf32>) {
  // expected-error @+1 {{'afm.topk_router' op top_k must be at least 1, got 0}}
  %e, %g = afm.topk_router %x, %r {top_k = 0} : tensor<?x64xf32>, tensor<4x64xf32> -> tensor<?x0xi32>, tensor<?x0xf32>
  return
}

// -----

func.func @router_top_k_too_large(%x: tensor<?x64xf32>, %r: tensor<4x64xf32>) {
  // expected-error @+1 {{'afm.topk_router' op top_k (5) must not exceed the number of experts (4)}}
  %e, %g = afm.topk_router %x, %r {top_k = 5} : tensor<?x64xf32>, tensor<4x64xf32> -> tensor<?x5xi32>, tensor<?x5xf32>
  return
}

// -----

func.func @router_result_rows(%x: tensor<3x64xf32>, %r: tensor<4x64xf32>) {
  // expected-error @+1 {{'afm.topk_router' op gates rows (2) must match token count (3)}}
  %e, %g = afm.topk_router %x, %r {top_k = 2} : tensor<3x64xf32>, tensor<4x64xf32> -> tensor<3x2xi32>, tensor<2x2xf32>
  return
}

// -----

func.func @router_result_columns(%x: tensor<?x64xf32>, %r: tensor<4x64xf32>) {
  // expected-error @+1 {{'afm.topk_router' op experts columns (3) must match top_k (2)}}
  %e, %g = afm.topk_router %x, %r {top_k = 2} : tensor<?x64xf32>, tensor<4x64xf32> -> tensor<?x3xi32>, tensor<?x2xf32>
  return
}

// -----

func.func @moe_top_k(%x: tensor<?x64xf32>, %r: tensor<2x64xf32>, %w0: tensor<128x64xf32>, %w1: tensor<64x128xf32>) {
  // expected-error @+1 {{'afm.moe' op top_k (8) must not exceed the number of experts (2)}}
  %y = afm.moe %x, %r gate(%w0, %w0) up(%w0, %w0) down(%w1, %w1) {top_k = 8} : tensor<?x64xf32>, tensor<2x64xf32>, gate(tensor<128x64xf32>, tensor<128x64xf32>), up(tensor<128x64xf32>, tensor<128x64xf32>), down(tensor<64x128xf32>, tensor<64x128xf32>)
  return
}

// -----

func.func @moe_gate_experts(%x: tensor<?x64xf32>, %r: tensor<2x64xf32>, %w0: tensor<128x64xf32>, %w1: tensor<64x128xf32>) {
  // expected-error @+1 {{'afm.moe' op gate weights (1) must match router experts (2)}}
  %y = afm.moe %x, %r gate(%w0) up(%w0, %w0) down(%w1, %w1) {top_k = 1} : tensor<?x64xf32>, tensor<2x64xf32>, gate(tensor<128x64xf32>), up(tensor<128x64xf32>, tensor<128x64xf32>), down(tensor<64x128xf32>, tensor<64x128xf32>)
  return
}

// -----

func.func @moe_up_experts(%x: tensor<?x64xf32>, %r: tensor<2x64xf32>, %w0: tensor<128x64xf32>, %w1: tensor<64x128xf32>) {
  // expected-error @+1 {{'afm.moe' op up weights (3) must match router experts (2)}}
  %y = afm.moe %x, %r gate(%w0, %w0) up(%w0, %w0, %w0) down(%w1, %w1) {top_k = 1} : tensor<?x64xf32>, tensor<2x64xf32>, gate(tensor<128x64xf32>, tensor<128x64xf32>), up(tensor<128x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>), down(tensor<64x128xf32>, tensor<64x128xf32>)
  return
}

// -----

func.func @moe_down_experts(%x: tensor<?x64xf32>, %r: tensor<2x64xf32>, %w0: tensor<128x64xf32>, %w1: tensor<64x128xf32>) {
  // expected-error @+1 {{'afm.moe' op down weights (1) must match router experts (2)}}
  %y = afm.moe %x, %r gate(%w0, %w0) up(%w0, %w0) down(%w1) {top_k = 1} : tensor<?x64xf32>, tensor<2x64xf32>, gate(tensor<128x64xf32>, tensor<128x64xf32>), up(tensor<128x64xf32>, tensor<128x64xf32>), down(tensor<64x128xf32>)
  return
}

// -----

func.func @moe_gate_rows(%x: tensor<?x64xf32>, %r: tensor<2x64xf32>, %w0: tensor<128x64xf32>, %w1: tensor<64x128xf32>, %w2: tensor<96x64xf32>) {
  // expected-error @+1 {{'afm.moe' op expert 1 gate rows (96) must match expert 0's gate rows (128)}}
  %y = afm.moe %x, %r gate(%w0, %w2) up(%w0, %w0) down(%w1, %w1) {top_k = 1} : tensor<?x64xf32>, tensor<2x64xf32>, gate(tensor<128x64xf32>, tensor<96x64xf32>), up(tensor<128x64xf32>, tensor<128x64xf32>), down(tensor<64x128xf32>, tensor<64x128xf32>)
  return
}

// -----

func.func @moe_gate_cols(%x: tensor<?x64xf32>, %r: tensor<2x64xf32>, %w0: tensor<128x32xf32>, %w1: tensor<128x64xf32>, %w2: tensor<64x128xf32>) {
  // expected-error @+1 {{'afm.moe' op expert 0 gate columns (32) must match hidden size (64)}}
  %y = afm.moe %x, %r gate(%w0, %w0) up(%w1, %w1) down(%w2, %w2) {top_k = 1} : tensor<?x64xf32>, tensor<2x64xf32>, gate(tensor<128x32xf32>, tensor<128x32xf32>), up(tensor<128x64xf32>, tensor<128x64xf32>), down(tensor<64x128xf32>, tensor<64x128xf32>)
  return
}

// -----

func.func @moe_up_rows(%x: tensor<?x64xf32>, %r: tensor<2x64xf32>, %w0: tensor<128x64xf32>, %w1: tensor<64x128xf32>, %w2: tensor<96x64xf32>) {
  // expected-error @+1 {{'afm.moe' op expert 1 up rows (96) must match gate rows (128)}}
  %y = afm.moe %x, %r gate(%w0, %w0) up(%w0, %w2) down(%w1, %w1) {top_k = 1} : tensor<?x64xf32>, tensor<2x64xf32>, gate(tensor<128x64xf32>, tensor<128x64xf32>), up(tensor<128x64xf32>, tensor<96x64xf32>), down(tensor<64x128xf32>, tensor<64x128xf32>)
  return
}

// -----

func.func @moe_up_cols(%x: tensor<?x64xf32>, %r: tensor<2x64xf32>, %w0: !afm.q2<128x64, per_channel>, %w1: tensor<128x32xf32>, %w2: tensor<128x64xf32>, %w3: tensor<64x128xf32>) {
  // expected-error @+1 {{'afm.moe' op expert 0 up columns (32) must match hidden size (64)}}
  %y = afm.moe %x, %r gate(%w0, %w0) up(%w1, %w2) down(%w3, %w3) {top_k = 1} : tensor<?x64xf32>, tensor<2x64xf32>, gate(!afm.q2<128x64, per_channel>, !afm.q2<128x64, per_channel>), up(tensor<128x32xf32>, tensor<128x64xf32>), down(tensor<64x128xf32>, tensor<64x128xf32>)
  return
}

// -----

func.func @moe_down_rows(%x: tensor<?x64xf32>, %r: tensor<2x64xf32>, %w0: tensor<128x64xf32>, %w1: tensor<32x128xf32>, %w2: tensor<64x128xf32>) {
  // expected-error @+1 {{'afm.moe' op expert 0 down rows (32) must match hidden size (64)}}
  %y = afm.moe %x, %r gate(%w0, %w0) up(%w0, %w0) down(%w1, %w2) {top_k = 1} : tensor<?x64xf32>, tensor<2x64xf32>, gate(tensor<128x64xf32>, tensor<128x64xf32>), up(tensor<128x64xf32>, tensor<128x64xf32>), down(tensor<32x128xf32>, tensor<64x128xf32>)
  return
}

// -----

func.func @moe_down_cols(%x: tensor<?x64xf32>, %r: tensor<2x64xf32>, %w0: tensor<128x64xf32>, %w1: tensor<64x128xf32>, %w2: tensor<64x64xf32>) {
  // expected-error @+1 {{'afm.moe' op expert 1 down columns (64) must match FFN width (gate rows) (128)}}
  %y = afm.moe %x, %r gate(%w0, %w0) up(%w0, %w0) down(%w1, %w2) {top_k = 1} : tensor<?x64xf32>, tensor<2x64xf32>, gate(tensor<128x64xf32>, tensor<128x64xf32>), up(tensor<128x64xf32>, tensor<128x64xf32>), down(tensor<64x128xf32>, tensor<64x64xf32>)
  return
}

//===----------------------------------------------------------------------===//
// Parallel tracks
//===----------------------------------------------------------------------===//

// -----

func.func @no_tracks(%h: tensor<1x64xf32>) {
  // expected-error @+1 {{'afm.track_block' op must have at least one track}}
  %t = "afm.track_block"(%h) : (tensor<1x64xf32>) -> tensor<1x64xf32>
  return
}

// -----

func.func @track_argument(%h: tensor<1x64xf32>) {
  // expected-error @+1 {{'afm.track_block' op track 1 must take exactly one argument of type 'tensor<1x64xf32>'}}
  %t = afm.track_block %h : tensor<1x64xf32> {
  ^bb0(%a: tensor<1x64xf32>):
    afm.yield %a : tensor<1x64xf32>
  }, {
  ^bb0(%a: tensor<1x64xf32>, %b: tensor<1x64xf32>):
    afm.yield %a : tensor<1x64xf32>
  }
  return
}

// -----

func.func @track_terminator(%h: tensor<1x64xf32>) {
  // expected-error @+1 {{'afm.track_block' op track 0 must end with afm.yield}}
  %t = afm.track_block %h : tensor<1x64xf32> {
  ^bb0(%a: tensor<1x64xf32>):
    "test.terminator"() : () -> ()
  }
  return
}

// -----

func.func @track_yield_type(%h: tensor<1x64xf32>, %other: tensor<2x64xf32>) {
  %t = afm.track_block %h : tensor<1x64xf32> {
  ^bb0(%a: tensor<1x64xf32>):
    // expected-error @+1 {{'afm.yield' op yields 'tensor<2x64xf32>' but the track block carries 'tensor<1x64xf32>'}}
    afm.yield %other : tensor<2x64xf32>
  }
  return
}

// -----

//===----------------------------------------------------------------------===//
// Compressed weight parts, the ASTC split and the min-shift term
//===----------------------------------------------------------------------===//

func.func @bound_weight_count(%c: tensor<32x16xi8>) {
  // expected-error @+1 {{'afm.bound_weight' op a '!afm.q2<32x64, per_tensor>' weight is bound to 2 buffers, got 1}}
  %w = afm.bound_weight %c : tensor<32x16xi8> -> !afm.q2<32x64, per_tensor>
  return
}

// -----

func.func @bound_weight_part_type(%c: tensor<32x15xi8>, %s: tensor<1xf32>) {
  // expected-error @+1 {{'afm.bound_weight' op buffer #0 (codes) must be 'tensor<32x16xi8>', got 'tensor<32x15xi8>'}}
  %w = afm.bound_weight %c, %s : tensor<32x15xi8>, tensor<1xf32> -> !afm.q2<32x64, per_tensor>
  return
}

// -----

func.func @bound_weight_odd_astc(%c: tensor<1xi8>) {
  // expected-error @+1 {{'afm.bound_weight' op weights of type '!afm.astc<20x20, block = 5x5, offset = min>' have no bound form}}
  %w = afm.bound_weight %c : tensor<1xi8> -> !afm.astc<20x20, block = 5x5, offset = min>
  return
}

// -----

func.func @astc_decode_shape(%w: !afm.astc<32x64, block = 6x6, offset = min>) {
  // expected-error @+1 {{'afm.astc_decode' op result shape 'tensor<64x32xf32>' must be the weight's shape 32x64}}
  %d = afm.astc_decode %w : !afm.astc<32x64, block = 6x6, offset = min> -> tensor<64x32xf32>
  return
}

// -----

func.func @astc_offsets_shape(%w: !afm.astc<32x64, block = 6x6, offset = min>) {
  // expected-error @+1 {{'afm.astc_offsets' op result shape 'tensor<6x10xf32>' must be the weight's block grid 6x11}}
  %m = afm.astc_offsets %w : !afm.astc<32x64, block = 6x6, offset = min> -> tensor<6x10xf32>
  return
}

// -----

func.func @min_shift_block(%x: tensor<1x64xf32>, %m: tensor<6x11xf32>) {
  // expected-error @+1 {{'afm.min_shift' op block must be two positive sizes (rows, columns)}}
  %s = afm.min_shift %x, %m {block = array<i64: 6>} : tensor<1x64xf32>, tensor<6x11xf32> -> tensor<1x32xf32>
  return
}

// -----

func.func @min_shift_offsets(%x: tensor<1x64xf32>, %m: tensor<6x10xf32>) {
  // expected-error @+1 {{'afm.min_shift' op offset columns (10) must match block columns of the input (11)}}
  %s = afm.min_shift %x, %m {block = array<i64: 6, 6>} : tensor<1x64xf32>, tensor<6x10xf32> -> tensor<1x32xf32>
  return
}

// -----

func.func @linear_acc(%x: tensor<1x64xf32>, %w: tensor<32x64xf32>, %a: tensor<1x16xf32>) {
  // expected-error @+1 {{'afm.linear' op accumulator columns (16) must match result columns (32)}}
  %y = afm.linear %x, %w acc(%a : tensor<1x16xf32>) : tensor<1x64xf32>, tensor<32x64xf32> -> tensor<1x32xf32>
  return
}

// -----

func.func @int8_query_over_f32_cache(%q: tensor<1x4x16xf32>, %k: tensor<1x2x16xf32>, %v: tensor<1x2x16xf32>, %kv: memref<2x2x64x16xf32>, %p: index) {
  // expected-error @+1 {{'afm.attention' op int8_query needs an i8 cache, got 'memref<2x2x64x16xf32>'}}
  %o = afm.attention global %q, %k, %v into %kv at %p {int8_query} : tensor<1x4x16xf32>, tensor<1x2x16xf32>, tensor<1x2x16xf32>, memref<2x2x64x16xf32> -> tensor<1x4x16xf32>
  return
}
