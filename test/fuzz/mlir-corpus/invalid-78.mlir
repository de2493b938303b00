func.func @track_terminator(%h: tensor<1x64xf32>) {
  %t = afm.track_block %h : tensor<1x64xf32> {
  ^bb0(%a: tensor<1x64xf32>):
    "test.terminator"() : () -> ()
  }
  return
}
