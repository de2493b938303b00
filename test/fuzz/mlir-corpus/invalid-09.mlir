func.func @blocks_type() {
  %w = afm.weight "w" : !afm.astc<6x6, block = 6x6, offset = min> = #afm.astc_blocks<blocks = dense<0> : tensor<2x16xi8>, offsets = dense<0.0> : tensor<1xf16>>
  return
}
