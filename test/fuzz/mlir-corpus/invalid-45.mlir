func.func @unbound_cache_with_scales(%q: tensor<1x4x16xf32>, %kv: !afm.kv_cache<2x64x16, i8>, %s: memref<2x2x64xf32>, %p: index) {
  %o = afm.shared_kv_attention global %q from %kv scales %s at %p : tensor<1x4x16xf32>, !afm.kv_cache<2x64x16, i8>, memref<2x2x64xf32> -> tensor<1x4x16xf32>
  return
}
