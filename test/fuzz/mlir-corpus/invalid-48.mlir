func.func @attention_head_dim(%q: tensor<?x4x8xf32>, %c: !afm.kv_cache<2x8x16, f32>, %p: index) {
  %o = afm.shared_kv_attention global %q from %c at %p : tensor<?x4x8xf32>, !afm.kv_cache<2x8x16, f32> -> tensor<?x4x8xf32>
  return
}
