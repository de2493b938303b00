func.func @swiglu_gate(%x: tensor<?x64xf32>, %g: tensor<128x32xf32>, %d: tensor<64x128xf32>) {
  %y = afm.swiglu %x, %g, %g, %d : tensor<?x64xf32>, tensor<128x32xf32>, tensor<128x32xf32>, tensor<64x128xf32>
  return
}
