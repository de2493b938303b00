func.func @weight_name() {
  %w = afm.weight "" : tensor<2xf32>
  return
}
