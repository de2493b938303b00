func.func @moe_down_cols(%x: tensor<?x64xf32>, %r: tensor<4x64xf32>, %g: tensor<4x128x64xf32>, %d: tensor<4x64x64xf32>) {
  %y = afm.moe %x, %r, %g, %g, %d {top_k = 2} : tensor<?x64xf32>, tensor<4x64xf32>, tensor<4x128x64xf32>, tensor<4x128x64xf32>, tensor<4x64x64xf32>
  return
}
