func.func @weight_astc_blocks() {
  %w = afm.weight "w" : !afm.astc<6x7, block = 6x6, offset = min> = #afm.astc_blocks<blocks = dense<0> : tensor<16xi8>, offsets = dense<0.0> : tensor<2xf16>>
  return
}
