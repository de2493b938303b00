func.func @attention_gqa(%q: tensor<?x4x16xf32>, %k: tensor<?x3x16xf32>, %c: !afm.kv_cache<3x8x16, f32>, %p: index) {
  %o = afm.attention global %q, %k, %k into %c at %p : tensor<?x4x16xf32>, tensor<?x3x16xf32>, tensor<?x3x16xf32>, !afm.kv_cache<3x8x16, f32> -> tensor<?x4x16xf32>
  return
}
