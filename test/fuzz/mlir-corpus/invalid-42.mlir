func.func @attention_cache_memref(%q: tensor<?x4x16xf32>, %c: memref<3x2x8x16xf32>, %p: index) {
  %o = afm.shared_kv_attention global %q from %c at %p : tensor<?x4x16xf32>, memref<3x2x8x16xf32> -> tensor<?x4x16xf32>
  return
}
