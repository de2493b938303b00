func.func @weight_q2_value_kind() {
  %w = afm.weight "w" : !afm.q2<2x8, per_tensor> = dense<0> : tensor<4xi8>
  return
}
