func.func @weight_value_type() {
  %w = "afm.weight"() {name = "w", value = dense<1.0> : tensor<3xf32>} : () -> tensor<2xf32>
  return
}
