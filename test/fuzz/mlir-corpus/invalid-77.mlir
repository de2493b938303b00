func.func @track_argument(%h: tensor<1x64xf32>) {
  %t = afm.track_block %h : tensor<1x64xf32> {
  ^bb0(%a: tensor<1x64xf32>):
    afm.yield %a : tensor<1x64xf32>
  }, {
  ^bb0(%a: tensor<1x64xf32>, %b: tensor<1x64xf32>):
    afm.yield %a : tensor<1x64xf32>
  }
  return
}
