func.func @linear_rows(%x: tensor<3x64xf32>, %w: !afm.q2<128x64, per_tensor>) {
  %y = afm.linear %x, %w : tensor<3x64xf32>, !afm.q2<128x64, per_tensor> -> tensor<4x128xf32>
  return
}
