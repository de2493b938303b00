func.func @bound_weight_odd_astc(%c: tensor<1xi8>) {
  %w = afm.bound_weight %c : tensor<1xi8> -> !afm.astc<20x20, block = 5x5, offset = min>
  return
}
