func.func @weight_astc_value_kind() {
  %w = afm.weight "w" : !afm.astc<6x6, block = 6x6, offset = min> = #afm.quantized<codes = dense<0> : tensor<16xi8>, scales = dense<1.0> : tensor<1xf32>>
  return
}
