func.func @two_tracks(%h: tensor<1x64xf32>, %g: tensor<64xf32>) -> tensor<1x64xf32> {
  %t = afm.track_block %h : tensor<1x64xf32> {
  ^bb0(%a: tensor<1x64xf32>):
    %n = afm.rms_norm %a, %g : tensor<1x64xf32>, tensor<64xf32>
    afm.yield %n : tensor<1x64xf32>
  }, {
  ^bb0(%b: tensor<1x64xf32>):
    afm.yield %b : tensor<1x64xf32>
  }
  return %t : tensor<1x64xf32>
}
