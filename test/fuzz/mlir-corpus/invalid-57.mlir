func.func @swiglu_up_rows(%x: tensor<?x64xf32>, %g: tensor<128x64xf32>, %u: tensor<96x64xf32>, %d: tensor<64x128xf32>) {
  %y = afm.swiglu %x, %g, %u, %d : tensor<?x64xf32>, tensor<128x64xf32>, tensor<96x64xf32>, tensor<64x128xf32>
  return
}
