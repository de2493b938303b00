func.func @swiglu_down_rows(%x: tensor<?x64xf32>, %g: tensor<128x64xf32>, %d: tensor<32x128xf32>) {
  %y = afm.swiglu %x, %g, %g, %d : tensor<?x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<32x128xf32>
  return
}
