// RUN: afm-opt %s -split-input-file -afm-export-model-facts -verify-diagnostics | FileCheck %s

// Entry points' arguments (include/afm/kernel_abi.h): weights, tokens, count,
// position, KV arena, logits, host API. Unless a case says otherwise, every
// model below is: vocab 32, context 8, prefill 4 tokens, decode 1 token,
// 1024 weights bytes, 2048 arena bytes.

// A model whose attributes agree with its entry types exports, as an 8 x u64
// constant, the ABI version (3), vocab, context, prefill and decode tokens,
// weights bytes, arena bytes and 0; nothing else changes. A global cache
// holding exactly context_length positions is enough.
// CHECK-LABEL: module attributes
// CHECK-SAME: afm.kv_arena_bytes = 2048 : i64
// CHECK-SAME: afm.model = #afm.model<vocab_size = 32, context_length = 8, prefill_chunk = 4>
// CHECK-SAME: afm.weights_bytes = 1024 : i64
// CHECK-NEXT: func.func @afm_prefill(%{{.*}}: memref<1024xi8>, %{{.*}}: memref<4xi32>
// CHECK: func.func @afm_decode(%{{.*}}: memref<1024xi8>, %{{.*}}: memref<1xi32>
// CHECK-NEXT: return
// CHECK-NEXT: }
// CHECK-NEXT: llvm.mlir.global external constant @afm_compiled_facts(dense<[3, 32, 8, 4, 1, 1024, 2048, 0]> : tensor<8xi64>) {addr_space = 0 : i32} : !llvm.array<8 x i64>
// CHECK-NEXT: }
module attributes {afm.model = #afm.model<vocab_size = 32, prefill_chunk = 4, context_length = 8>,
                   afm.kv_arena_bytes = 2048 : i64, afm.weights_bytes = 1024 : i64,
                   afm.kv_layout = [#afm.kv_slot<layer = 0, offset = 0, bytes = 2048, type = !afm.kv_cache<2x8x16, f32>, attention = global>]} {
  func.func @afm_prefill(%w: memref<1024xi8>, %t: memref<4xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<32xf32>, %h: !llvm.ptr) {
    return
  }
  func.func @afm_decode(%w: memref<1024xi8>, %t: memref<1xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<32xf32>, %h: !llvm.ptr) {
    return
  }
}

// -----

// Byte sizes are element bytes times the static shape, whatever the rank
// (weights 16x16 f16 = 512, arena 2x32 f32 = 256). afm.kv_arena_bytes and
// afm.weights_bytes are optional; a local cache may hold fewer positions
// (4) than the context (8).
// CHECK-LABEL: module attributes
// CHECK: llvm.mlir.global external constant @afm_compiled_facts(dense<[3, 32, 8, 4, 1, 512, 256, 0]> : tensor<8xi64>)
module attributes {afm.model = #afm.model<vocab_size = 32, prefill_chunk = 4, context_length = 8>,
                   afm.kv_layout = [#afm.kv_slot<layer = 0, offset = 0, bytes = 256, type = !afm.kv_cache<1x4x8, f32>, attention = local>]} {
  func.func @afm_prefill(%w: memref<16x16xf16>, %t: memref<4xi32>, %n: index, %p: index, %kv: memref<2x32xf32>, %l: memref<32xf32>, %h: !llvm.ptr) {
    return
  }
  func.func @afm_decode(%w: memref<16x16xf16>, %t: memref<1xi32>, %n: index, %p: index, %kv: memref<2x32xf32>, %l: memref<32xf32>, %h: !llvm.ptr) {
    return
  }
}

// -----

// A module without entry points (a graph run in the host process) is left
// alone: no facts, and no afm.model needed.
// CHECK-LABEL: func.func @graph
// CHECK-NOT: afm_compiled_facts
module {
  func.func @graph(%x: memref<4xf32>) {
    return
  }
}

// -----

// A model needs both entry points.
// expected-error @+1 {{a model needs both entry points, afm_prefill and afm_decode}}
module attributes {afm.model = #afm.model<vocab_size = 32, prefill_chunk = 4, context_length = 8>} {
  func.func @afm_prefill(%w: memref<1024xi8>, %t: memref<4xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<32xf32>, %h: !llvm.ptr) {
    return
  }
}

// -----

// An entry point has exactly the 7 arguments of the C ABI (here the host
// API is missing), reported at the entry point.
module attributes {afm.model = #afm.model<vocab_size = 32, prefill_chunk = 4, context_length = 8>} {
  func.func @afm_prefill(%w: memref<1024xi8>, %t: memref<4xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<32xf32>, %h: !llvm.ptr) {
    return
  }
  // expected-error @+1 {{an entry point must have the 7 arguments of include/afm/kernel_abi.h and no results}}
  func.func @afm_decode(%w: memref<1024xi8>, %t: memref<1xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<32xf32>) {
    return
  }
}

// -----

// An entry point returns nothing: it writes the logits into the runtime's
// buffer.
module attributes {afm.model = #afm.model<vocab_size = 32, prefill_chunk = 4, context_length = 8>} {
  // expected-error @+1 {{an entry point must have the 7 arguments of include/afm/kernel_abi.h and no results}}
  func.func @afm_prefill(%w: memref<1024xi8>, %t: memref<4xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<32xf32>, %h: !llvm.ptr) -> index {
    return %n : index
  }
  func.func @afm_decode(%w: memref<1024xi8>, %t: memref<1xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<32xf32>, %h: !llvm.ptr) {
    return
  }
}

// -----

// Tokens are i32 (here i64), reported at the entry point.
module attributes {afm.model = #afm.model<vocab_size = 32, prefill_chunk = 4, context_length = 8>} {
  // expected-error @+1 {{an entry point's tokens, logits, weights and arena must be static 1-D buffers (i32 tokens, f32 logits)}}
  func.func @afm_prefill(%w: memref<1024xi8>, %t: memref<4xi64>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<32xf32>, %h: !llvm.ptr) {
    return
  }
  func.func @afm_decode(%w: memref<1024xi8>, %t: memref<1xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<32xf32>, %h: !llvm.ptr) {
    return
  }
}

// -----

// The arena must have a static size: the code addresses a fixed number of
// bytes of it.
module attributes {afm.model = #afm.model<vocab_size = 32, prefill_chunk = 4, context_length = 8>} {
  func.func @afm_prefill(%w: memref<1024xi8>, %t: memref<4xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<32xf32>, %h: !llvm.ptr) {
    return
  }
  // expected-error @+1 {{an entry point's tokens, logits, weights and arena must be static 1-D buffers (i32 tokens, f32 logits)}}
  func.func @afm_decode(%w: memref<1024xi8>, %t: memref<1xi32>, %n: index, %p: index, %kv: memref<?xi8>, %l: memref<32xf32>, %h: !llvm.ptr) {
    return
  }
}

// -----

// Both entry points write the same logits (here decode writes 64) and
// address the same weights and arena.
// expected-error @+1 {{afm_prefill and afm_decode disagree on the logits, weights or arena they address}}
module attributes {afm.model = #afm.model<vocab_size = 32, prefill_chunk = 4, context_length = 8>} {
  func.func @afm_prefill(%w: memref<1024xi8>, %t: memref<4xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<32xf32>, %h: !llvm.ptr) {
    return
  }
  func.func @afm_decode(%w: memref<1024xi8>, %t: memref<1xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<64xf32>, %h: !llvm.ptr) {
    return
  }
}

// -----

// Decode reads exactly one token (here 2).
// expected-error @+1 {{afm_prefill must read at least one token and afm_decode exactly one, not 4 and 2}}
module attributes {afm.model = #afm.model<vocab_size = 32, prefill_chunk = 4, context_length = 8>} {
  func.func @afm_prefill(%w: memref<1024xi8>, %t: memref<4xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<32xf32>, %h: !llvm.ptr) {
    return
  }
  func.func @afm_decode(%w: memref<1024xi8>, %t: memref<2xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<32xf32>, %h: !llvm.ptr) {
    return
  }
}

// -----

// Prefill reads at least one token (here none).
// expected-error @+1 {{afm_prefill must read at least one token and afm_decode exactly one, not 0 and 1}}
module attributes {afm.model = #afm.model<vocab_size = 32, prefill_chunk = 4, context_length = 8>} {
  func.func @afm_prefill(%w: memref<1024xi8>, %t: memref<0xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<32xf32>, %h: !llvm.ptr) {
    return
  }
  func.func @afm_decode(%w: memref<1024xi8>, %t: memref<1xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<32xf32>, %h: !llvm.ptr) {
    return
  }
}

// -----

// A model describes itself in afm.model.
// expected-error @+1 {{a model needs the afm.model attribute}}
module {
  func.func @afm_prefill(%w: memref<1024xi8>, %t: memref<4xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<32xf32>, %h: !llvm.ptr) {
    return
  }
  func.func @afm_decode(%w: memref<1024xi8>, %t: memref<1xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<32xf32>, %h: !llvm.ptr) {
    return
  }
}

// -----

// afm.model vocab_size is the logits' size; the error names both values.
// expected-error @+1 {{afm.model vocab_size is 16, but the entry points were built for 32}}
module attributes {afm.model = #afm.model<vocab_size = 16, prefill_chunk = 4, context_length = 8>} {
  func.func @afm_prefill(%w: memref<1024xi8>, %t: memref<4xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<32xf32>, %h: !llvm.ptr) {
    return
  }
  func.func @afm_decode(%w: memref<1024xi8>, %t: memref<1xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<32xf32>, %h: !llvm.ptr) {
    return
  }
}

// -----

// afm.model prefill_chunk is prefill's tokens buffer.
// expected-error @+1 {{afm.model prefill_chunk is 2, but the entry points were built for 4}}
module attributes {afm.model = #afm.model<vocab_size = 32, context_length = 8, prefill_chunk = 2>} {
  func.func @afm_prefill(%w: memref<1024xi8>, %t: memref<4xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<32xf32>, %h: !llvm.ptr) {
    return
  }
  func.func @afm_decode(%w: memref<1024xi8>, %t: memref<1xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<32xf32>, %h: !llvm.ptr) {
    return
  }
}

// -----

// afm.model context_length is at least 1 (the dialect checks it) ...
// expected-error @+1 {{context_length must be in [1, 2^31), got 0}}
module attributes {afm.model = #afm.model<vocab_size = 32, prefill_chunk = 4, context_length = 0>} {
  func.func @afm_prefill(%w: memref<1024xi8>, %t: memref<4xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<32xf32>, %h: !llvm.ptr) {
    return
  }
  func.func @afm_decode(%w: memref<1024xi8>, %t: memref<1xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<32xf32>, %h: !llvm.ptr) {
    return
  }
}

// -----

// ... and fits an int32 position (here 2^31).
// expected-error @+1 {{context_length must be in [1, 2^31), got 2147483648}}
module attributes {afm.model = #afm.model<vocab_size = 32, prefill_chunk = 4, context_length = 2147483648>} {
  func.func @afm_prefill(%w: memref<1024xi8>, %t: memref<4xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<32xf32>, %h: !llvm.ptr) {
    return
  }
  func.func @afm_decode(%w: memref<1024xi8>, %t: memref<1xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<32xf32>, %h: !llvm.ptr) {
    return
  }
}

// -----

// Every afm.kv_layout buffer lies inside the arena (here bytes 1024 to 3072
// of a 2048-byte arena).
// expected-error @+1 {{afm.kv_layout entry #afm.kv_slot<layer = 0, offset = 1024, bytes = 2048, type = !afm.kv_cache<2x8x16, f32>, attention = global> does not lie in the 2048-byte arena}}
module attributes {afm.model = #afm.model<vocab_size = 32, prefill_chunk = 4, context_length = 8>,
                   afm.kv_layout = [#afm.kv_slot<layer = 0, offset = 1024, bytes = 2048, type = !afm.kv_cache<2x8x16, f32>, attention = global>]} {
  func.func @afm_prefill(%w: memref<1024xi8>, %t: memref<4xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<32xf32>, %h: !llvm.ptr) {
    return
  }
  func.func @afm_decode(%w: memref<1024xi8>, %t: memref<1xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<32xf32>, %h: !llvm.ptr) {
    return
  }
}

// -----

// A global cache holds the whole context (here 8 positions for a context
// of 16).
// expected-error @+1 {{afm.model context_length 16 is more than the 8 positions of the global KV cache #afm.kv_slot<layer = 0, offset = 0, bytes = 2048, type = !afm.kv_cache<2x8x16, f32>, attention = global>}}
module attributes {afm.model = #afm.model<vocab_size = 32, prefill_chunk = 4, context_length = 16>,
                   afm.kv_layout = [#afm.kv_slot<layer = 0, offset = 0, bytes = 2048, type = !afm.kv_cache<2x8x16, f32>, attention = global>]} {
  func.func @afm_prefill(%w: memref<1024xi8>, %t: memref<4xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<32xf32>, %h: !llvm.ptr) {
    return
  }
  func.func @afm_decode(%w: memref<1024xi8>, %t: memref<1xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<32xf32>, %h: !llvm.ptr) {
    return
  }
}

// -----

// afm.kv_arena_bytes, when present, is the arena's size.
// expected-error @+1 {{afm.kv_arena_bytes is 4096, but the entry points address 2048 bytes}}
module attributes {afm.model = #afm.model<vocab_size = 32, prefill_chunk = 4, context_length = 8>,
                   afm.kv_arena_bytes = 4096 : i64} {
  func.func @afm_prefill(%w: memref<1024xi8>, %t: memref<4xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<32xf32>, %h: !llvm.ptr) {
    return
  }
  func.func @afm_decode(%w: memref<1024xi8>, %t: memref<1xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<32xf32>, %h: !llvm.ptr) {
    return
  }
}

// -----

// afm.weights_bytes, when present, is the weights section's size.
// expected-error @+1 {{afm.weights_bytes is 512, but the entry points address 1024 bytes}}
module attributes {afm.model = #afm.model<vocab_size = 32, prefill_chunk = 4, context_length = 8>,
                   afm.weights_bytes = 512 : i64} {
  func.func @afm_prefill(%w: memref<1024xi8>, %t: memref<4xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<32xf32>, %h: !llvm.ptr) {
    return
  }
  func.func @afm_decode(%w: memref<1024xi8>, %t: memref<1xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<32xf32>, %h: !llvm.ptr) {
    return
  }
}

// -----

// A verify entry (speculative decoding) of 3 tokens writes 3 x 32 logits:
// its token count is the facts' last word and afm.verify_tokens, which the
// packager reads to write the manifest's VERIFY entry.
// CHECK-LABEL: module attributes
// CHECK-SAME: afm.verify_tokens = 3 : i64
// CHECK: llvm.mlir.global external constant @afm_compiled_facts(dense<[3, 32, 8, 4, 1, 1024, 2048, 3]> : tensor<8xi64>)
module attributes {afm.model = #afm.model<vocab_size = 32, prefill_chunk = 4, context_length = 8>} {
  func.func @afm_prefill(%w: memref<1024xi8>, %t: memref<4xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<32xf32>, %h: !llvm.ptr) {
    return
  }
  func.func @afm_decode(%w: memref<1024xi8>, %t: memref<1xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<32xf32>, %h: !llvm.ptr) {
    return
  }
  func.func @afm_verify(%w: memref<1024xi8>, %t: memref<3xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<96xf32>, %h: !llvm.ptr) {
    return
  }
}

// -----

// A verify entry whose logits are not one row per token would overflow the
// runtime's buffer.
module attributes {afm.model = #afm.model<vocab_size = 32, prefill_chunk = 4, context_length = 8>} {
  func.func @afm_prefill(%w: memref<1024xi8>, %t: memref<4xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<32xf32>, %h: !llvm.ptr) {
    return
  }
  func.func @afm_decode(%w: memref<1024xi8>, %t: memref<1xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<32xf32>, %h: !llvm.ptr) {
    return
  }
  // expected-error @+1 {{afm_verify must read at least 2 tokens and write tokens x 32 logits over afm_prefill's weights and arena; it reads 3 tokens and writes 64 logits}}
  func.func @afm_verify(%w: memref<1024xi8>, %t: memref<3xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<64xf32>, %h: !llvm.ptr) {
    return
  }
}

// -----

// Run-time adapter slots: the code also exports `afm_adapter_slots`, their
// count and each one's arena offset, rows and cols, which the runtime
// checks the manifest's slot table against.
// CHECK-LABEL: module attributes
// CHECK: llvm.mlir.global external constant @afm_compiled_facts(dense<[3, 32, 8, 4, 1, 1024, 2048, 0]>
// CHECK-NEXT: llvm.mlir.global external constant @afm_adapter_slots(dense<[2, 1024, 2, 64, 1536, 64, 2]> : tensor<7xi64>)
module attributes {afm.model = #afm.model<vocab_size = 32, prefill_chunk = 4, context_length = 8>,
                   afm.adapter_layout = [#afm.adapter_slot<name = "q.lora_a", offset = 1024, bytes = 512, rows = 2, cols = 64>, #afm.adapter_slot<name = "q.lora_b", offset = 1536, bytes = 512, rows = 64, cols = 2>]} {
  func.func @afm_prefill(%w: memref<1024xi8>, %t: memref<4xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<32xf32>, %h: !llvm.ptr) {
    return
  }
  func.func @afm_decode(%w: memref<1024xi8>, %t: memref<1xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<32xf32>, %h: !llvm.ptr) {
    return
  }
}

// -----

// A slot past the arena the entries address is refused: attaching an
// adapter would write outside the session's memory.
// expected-error @+1 {{afm.adapter_layout entry #afm.adapter_slot<name = "q.lora_b", offset = 1792, bytes = 512, rows = 64, cols = 2> does not lie in the 2048-byte arena}}
module attributes {afm.model = #afm.model<vocab_size = 32, prefill_chunk = 4, context_length = 8>,
                   afm.adapter_layout = [#afm.adapter_slot<name = "q.lora_b", offset = 1792, bytes = 512, rows = 64, cols = 2>]} {
  func.func @afm_prefill(%w: memref<1024xi8>, %t: memref<4xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<32xf32>, %h: !llvm.ptr) {
    return
  }
  func.func @afm_decode(%w: memref<1024xi8>, %t: memref<1xi32>, %n: index, %p: index, %kv: memref<2048xi8>, %l: memref<32xf32>, %h: !llvm.ptr) {
    return
  }
}

// -----

// expected-error @+1 {{bytes must be rows x cols x 4 (64x2 f32), got 500}}
module attributes {afm.adapter_layout = [#afm.adapter_slot<name = "q.lora_b", offset = 0, bytes = 500, rows = 64, cols = 2>]} {
}
