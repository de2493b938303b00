func.func @f32_cache_with_scales(%q: tensor<1x4x16xf32>, %k: tensor<1x2x16xf32>, %kv: memref<2x2x64x16xf32>, %s: memref<2x2x64xf32>, %p: index) {
  %o = afm.attention global %q, %k, %k into %kv scales %s at %p : tensor<1x4x16xf32>, tensor<1x2x16xf32>, tensor<1x2x16xf32>, memref<2x2x64x16xf32>, memref<2x2x64xf32> -> tensor<1x4x16xf32>
  return
}
