func.func @int8_query_over_f32_cache(%q: tensor<1x4x16xf32>, %k: tensor<1x2x16xf32>, %v: tensor<1x2x16xf32>, %kv: memref<2x2x64x16xf32>, %p: index) {
  %o = afm.attention global %q, %k, %v into %kv at %p {int8_query} : tensor<1x4x16xf32>, tensor<1x2x16xf32>, tensor<1x2x16xf32>, memref<2x2x64x16xf32> -> tensor<1x4x16xf32>
  return
}
