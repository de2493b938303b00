func.func @linear_acc(%x: tensor<1x64xf32>, %w: tensor<32x64xf32>, %a: tensor<1x16xf32>) {
  %y = afm.linear %x, %w acc(%a : tensor<1x16xf32>) : tensor<1x64xf32>, tensor<32x64xf32> -> tensor<1x32xf32>
  return
}
