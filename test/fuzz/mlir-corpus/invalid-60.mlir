func.func @swiglu_down_cols(%x: tensor<?x64xf32>, %g: tensor<128x64xf32>, %d: tensor<64x64xf32>) {
  %y = afm.swiglu %x, %g, %g, %d : tensor<?x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x64xf32>
  return
}
