func.func @attention_value_heads(%q: tensor<?x4x16xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x4x16xf32>, %c: !afm.kv_cache<2x8x16, f32>, %p: index) {
  %o = afm.attention global %q, %k, %v into %c at %p : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x4x16xf32>, !afm.kv_cache<2x8x16, f32> -> tensor<?x4x16xf32>
  return
}
