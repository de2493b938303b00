func.func @swiglu_up_cols(%x: tensor<?x64xf32>, %g: tensor<128x64xf32>, %u: !afm.q2<128x32, per_tensor>, %d: tensor<64x128xf32>) {
  %y = afm.swiglu %x, %g, %u, %d : tensor<?x64xf32>, tensor<128x64xf32>, !afm.q2<128x32, per_tensor>, tensor<64x128xf32>
  return
}
