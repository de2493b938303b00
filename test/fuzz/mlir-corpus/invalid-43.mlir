func.func @int8_cache_without_scales(%q: tensor<1x4x16xf32>, %kv: memref<2x2x64x16xi8>, %p: index) {
  %o = afm.shared_kv_attention global %q from %kv at %p : tensor<1x4x16xf32>, memref<2x2x64x16xi8> -> tensor<1x4x16xf32>
  return
}
