func.func @attention_window(%q: tensor<?x4x16xf32>, %c: !afm.kv_cache<2x8x16, f32>, %p: index) {
  %o = afm.shared_kv_attention local %q from %c at %p {window = 0} : tensor<?x4x16xf32>, !afm.kv_cache<2x8x16, f32> -> tensor<?x4x16xf32>
  return
}
