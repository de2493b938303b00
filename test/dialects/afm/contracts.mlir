// The stage contracts: the typed attributes one stage leaves for a later
// one (AFMDialect.td's discardableAttrs). Each round-trips, and each is
// checked where it appears: its type, the op it may sit on, and afm.model
// against the entry points it describes.
// RUN: afm-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// A module as the config importer and afm-bind-entry-abi leave it.
// CHECK-LABEL: module attributes
// CHECK-SAME: afm.kv_arena_bytes = 4096 : i64
// CHECK-SAME: afm.kv_layout = [#afm.kv_slot<layer = 0, offset = 0, bytes = 320, type = !afm.kv_cache<2x5x16, i8>, attention = local, scales_offset = 320, scales_bytes = 80>]
// CHECK-SAME: afm.model = #afm.model<name = "m", architecture = "afm-dense", vocab_size = 32, hidden_size = 64, num_layers = 2, context_length = 8, prefill_chunk = 4, lora_rank = 4, lora_alpha = 8.000000e+00 : f32, linear_activations = int8>
// CHECK-SAME: afm.target = #afm.target<name = "apple-m2", os = "linux">
// CHECK-SAME: afm.weights = [#afm.weight_slot<name = "w", offset = 0, bytes = 512, type = tensor<32x16xi8>, part = "codes", format = !afm.q2<32x64, per_tensor>, svd_residual = <rank = 4>>]
// CHECK: func.func @prefill({{.*}} {afm.layer = 0 : i64}) -> tensor<32xf32> attributes {afm.entry = #afm.entry<prefill>}
module attributes {
    afm.model = #afm.model<name = "m", architecture = "afm-dense", vocab_size = 32, hidden_size = 64, num_layers = 2, context_length = 8, prefill_chunk = 4, lora_rank = 4, lora_alpha = 8.0 : f32, linear_activations = int8>,
    afm.target = #afm.target<name = "apple-m2", os = "linux">,
    afm.weights = [#afm.weight_slot<name = "w", offset = 0, bytes = 512, type = tensor<32x16xi8>, part = "codes", format = !afm.q2<32x64, per_tensor>, svd_residual = <rank = 4>>],
    afm.weights_bytes = 512 : i64,
    afm.kv_layout = [#afm.kv_slot<layer = 0, offset = 0, bytes = 320, type = !afm.kv_cache<2x5x16, i8>, attention = local, scales_offset = 320, scales_bytes = 80>],
    afm.kv_arena_bytes = 4096 : i64} {
  func.func @prefill(%t: tensor<4xi32>, %n: index, %p: index, %c: !afm.kv_cache<2x8x16, f32> {afm.layer = 0 : i64}) -> tensor<32xf32>
      attributes {afm.entry = #afm.entry<prefill>} {
    %0 = tensor.empty() : tensor<32xf32>
    return %0 : tensor<32xf32>
  }
}

// -----

// The schedule afm-pack-gemm leaves for afm-tile-for-target, and the
// marks of later stages, on the ops they belong on.
// CHECK-LABEL: func.func @marks
// CHECK: afm.gemm_schedule = #afm.gemm_schedule<cache_tiles = [1, 0, 128], cache_interchange = [0, 2, 1], register_tiles = [1, 4, 8], pack_input = 1, pack_order = [0, 2]>
// CHECK-SAME: afm.whole_tile_dims = array<i64: 2>
// CHECK: afm.parallel
func.func @marks(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
  linalg.matmul {afm.gemm_schedule = #afm.gemm_schedule<cache_tiles = [1, 0, 128], cache_interchange = [0, 2, 1], register_tiles = [1, 4, 8], pack_input = 1, pack_order = [0, 2]>,
                 afm.whole_tile_dims = array<i64: 2>}
    ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %c1 step %c1 {
  } {afm.parallel}
  return
}

// -----

// A contract of the wrong type is refused by name.
// expected-error @+1 {{'builtin.module' op 'afm.model' must be #afm.model<...>, got {vocab_size = 32 : i64}}}
module attributes {afm.model = {vocab_size = 32 : i64}} {}

// -----

// Module-level facts belong on a module.
// expected-error @+1 {{'func.func' op 'afm.model' belongs on a module}}
func.func private @f() attributes {afm.model = #afm.model<vocab_size = 32, context_length = 8, prefill_chunk = 4>}

// -----

// The entry kind is prefill or decode.
// expected-error @+1 {{'func.func' op 'afm.entry' must be #afm.entry<prefill>, #afm.entry<decode> or #afm.entry<verify>, got "train"}}
func.func private @train() attributes {afm.entry = "train"}

// -----

// An unknown afm attribute is an error, not silently carried along.
// expected-error @+1 {{'func.func' op unknown afm attribute 'afm.entry_point'}}
func.func private @typo() attributes {afm.entry_point = #afm.entry<decode>}

// -----

// A cache argument's layer is a non-negative index.
// expected-error @+1 {{'func.func' op 'afm.layer' of argument 0 must be a non-negative layer index, got -1 : i64}}
func.func private @layer(!afm.kv_cache<2x8x16, f32> {afm.layer = -1 : i64})

// -----

// Sizes are never negative.
// expected-error @+1 {{'builtin.module' op 'afm.kv_arena_bytes' must not be negative}}
module attributes {afm.kv_arena_bytes = -1 : i64} {}

// -----

// afm.kv_layout holds KV slots only.
// expected-error @+1 {{'builtin.module' op 'afm.kv_layout' holds 3 : i64, which is not a kv_slot}}
module attributes {afm.kv_layout = [3]} {}

// -----

// afm.model's sizes are in range ...
// expected-error @+1 {{vocab_size must be in [1, 2^31), got 0}}
module attributes {afm.model = #afm.model<vocab_size = 0, context_length = 8, prefill_chunk = 4>} {}

// -----

// ... a prefill chunk fits the context ...
// expected-error @+1 {{prefill_chunk 16 exceeds context_length 8}}
module attributes {afm.model = #afm.model<vocab_size = 32, context_length = 8, prefill_chunk = 16>} {}

// -----

// ... and it agrees with the entry points it describes: the logits ...
// expected-error @+2 {{'func.func' op returns 64 logits, but afm.model's vocab_size is 32}}
module attributes {afm.model = #afm.model<vocab_size = 32, context_length = 8, prefill_chunk = 4>} {
  func.func private @prefill(tensor<4xi32>, index, index) -> tensor<64xf32> attributes {afm.entry = #afm.entry<prefill>}
}

// -----

// ... and the tokens a prefill call reads.
// expected-error @+2 {{'func.func' op reads 8 tokens, but afm.model says prefill_chunk is 4}}
module attributes {afm.model = #afm.model<vocab_size = 32, context_length = 8, prefill_chunk = 4>} {
  func.func private @prefill(tensor<8xi32>, index, index) -> tensor<32xf32> attributes {afm.entry = #afm.entry<prefill>}
}

// -----

// A KV slot describes a KV cache.
// expected-error @+1 {{type must be a KV cache, got 'tensor<4xf32>'}}
module attributes {afm.kv_layout = [#afm.kv_slot<layer = 0, offset = 0, bytes = 16, type = tensor<4xf32>, attention = none>]} {}

// -----

// An SVD factor is a or b ...
// expected-error @+1 {{factor must be "a" or "b", got "c"}}
func.func private @factor() attributes {afm.svd_factor = #afm.svd_factor<source = "w", factor = "c", rank = 4, alpha = 1.0 : f32, rows = 8, cols = 8>}

// -----

// ... and marks an afm.weight.
// expected-error @+1 {{'func.func' op 'afm.svd_residual' belongs on an afm.weight}}
func.func private @residual() attributes {afm.svd_residual = #afm.svd_residual<rank = 4>}

// -----

// A GEMM schedule's interchange is a permutation of its loops.
// expected-error @+1 {{cache_interchange must be a permutation of the loops}}
func.func private @schedule() attributes {afm.gemm_schedule = #afm.gemm_schedule<cache_tiles = [1, 0], cache_interchange = [0, 0], register_tiles = [1, 4]>}

// -----

// Tiling marks belong on linalg ops.
// expected-error @+1 {{'func.func' op 'afm.whole_tile_dims' belongs on a linalg op}}
func.func private @whole() attributes {afm.whole_tile_dims = array<i64: 2>}

// -----

// afm.parallel marks an scf.for.
// expected-error @+1 {{'func.func' op 'afm.parallel' belongs on an scf.for}}
func.func private @parallel() attributes {afm.parallel}

// -----

// A target is one of lib/Target's table.
// expected-error @+1 {{unknown target 'pentium'}}
module attributes {afm.target = #afm.target<name = "pentium">} {}
