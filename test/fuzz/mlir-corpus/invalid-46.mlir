func.func @scales_shape(%q: tensor<1x4x16xf32>, %kv: memref<2x2x64x16xi8>, %s: memref<2x2x32xf32>, %p: index) {
  %o = afm.shared_kv_attention global %q from %kv scales %s at %p : tensor<1x4x16xf32>, memref<2x2x64x16xi8>, memref<2x2x32xf32> -> tensor<1x4x16xf32>
  return
}
