func.func @weight_q4_scales() {
  %w = afm.weight "w" : !afm.q4<2x8, group = 4> = #afm.quantized<codes = dense<0> : tensor<8xi8>, scales = dense<1.0> : tensor<1xf32>>
  return
}
