func.func @attention_key_tokens(%q: tensor<3x4x16xf32>, %k: tensor<2x2x16xf32>, %c: !afm.kv_cache<2x8x16, f32>, %p: index) {
  %o = afm.attention global %q, %k, %k into %c at %p : tensor<3x4x16xf32>, tensor<2x2x16xf32>, tensor<2x2x16xf32>, !afm.kv_cache<2x8x16, f32> -> tensor<3x4x16xf32>
  return
}
