func.func @moe_gate_experts(%x: tensor<?x64xf32>, %r: tensor<4x64xf32>, %g: tensor<3x128x64xf32>, %d: tensor<4x64x128xf32>) {
  %y = afm.moe %x, %r, %g, %g, %d {top_k = 2} : tensor<?x64xf32>, tensor<4x64xf32>, tensor<3x128x64xf32>, tensor<3x128x64xf32>, tensor<4x64x128xf32>
  return
}
