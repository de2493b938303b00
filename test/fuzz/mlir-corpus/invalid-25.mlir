func.func @rms_norm_weight(%x: tensor<?x64xf32>, %g: tensor<32xf32>) {
  %y = afm.rms_norm %x, %g : tensor<?x64xf32>, tensor<32xf32>
  return
}
