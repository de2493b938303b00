func.func @rms_norm_rank(%x: tensor<f32>, %g: tensor<1xf32>) {
  %y = afm.rms_norm %x, %g : tensor<f32>, tensor<1xf32>
  return
}
