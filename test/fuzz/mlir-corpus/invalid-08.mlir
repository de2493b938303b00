func.func @scales_type() {
  %w = afm.weight "w" : !afm.q2<2x8, per_tensor> = #afm.quantized<codes = dense<0> : tensor<4xi8>, scales = dense<1.0> : tensor<1xf16>>
  return
}
