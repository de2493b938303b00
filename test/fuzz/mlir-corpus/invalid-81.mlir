func.func @bound_weight_part_type(%c: tensor<32x15xi8>, %s: tensor<1xf32>) {
  %w = afm.bound_weight %c, %s : tensor<32x15xi8>, tensor<1xf32> -> !afm.q2<32x64, per_tensor>
  return
}
