func.func @weight_q2_codes() {
  %w = afm.weight "w" : !afm.q2<2x8, per_tensor> = #afm.quantized<codes = dense<0> : tensor<3xi8>, scales = dense<1.0> : tensor<1xf32>>
  return
}
