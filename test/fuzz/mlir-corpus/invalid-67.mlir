func.func @moe_top_k(%x: tensor<?x64xf32>, %r: tensor<4x64xf32>, %g: tensor<4x128x64xf32>, %d: tensor<4x64x128xf32>) {
  %y = afm.moe %x, %r, %g, %g, %d {top_k = 8} : tensor<?x64xf32>, tensor<4x64xf32>, tensor<4x128x64xf32>, tensor<4x128x64xf32>, tensor<4x64x128xf32>
  return
}
