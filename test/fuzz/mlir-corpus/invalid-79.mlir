func.func @track_yield_type(%h: tensor<1x64xf32>, %other: tensor<2x64xf32>) {
  %t = afm.track_block %h : tensor<1x64xf32> {
  ^bb0(%a: tensor<1x64xf32>):
    afm.yield %other : tensor<2x64xf32>
  }
  return
}
