func.func @weight_value_kind() {
  %w = "afm.weight"() {name = "w", value = 1.0 : f32} : () -> tensor<2xf32>
  return
}
