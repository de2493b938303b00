func.func @linear_features(%x: tensor<?x64xf32>, %w: tensor<128x32xf32>) {
  %y = afm.linear %x, %w : tensor<?x64xf32>, tensor<128x32xf32> -> tensor<?x128xf32>
  return
}
