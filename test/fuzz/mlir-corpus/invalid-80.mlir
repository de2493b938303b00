func.func @bound_weight_count(%c: tensor<32x16xi8>) {
  %w = afm.bound_weight %c : tensor<32x16xi8> -> !afm.q2<32x64, per_tensor>
  return
}
