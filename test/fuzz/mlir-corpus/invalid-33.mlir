func.func @linear_weight_kind(%x: tensor<?x64xf32>, %w: !afm.q4<128x64, group = 32>) {
  %y = afm.linear %x, %w : tensor<?x64xf32>, !afm.q4<128x64, group = 32> -> tensor<?x128xf32>
  return
}
