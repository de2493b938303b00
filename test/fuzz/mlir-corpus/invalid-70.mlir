func.func @moe_up_experts(%x: tensor<?x64xf32>, %r: tensor<4x64xf32>, %g: tensor<4x128x64xf32>, %u: tensor<2x128x64xf32>, %d: tensor<4x64x128xf32>) {
  %y = afm.moe %x, %r, %g, %u, %d {top_k = 2} : tensor<?x64xf32>, tensor<4x64xf32>, tensor<4x128x64xf32>, tensor<2x128x64xf32>, tensor<4x64x128xf32>
  return
}
