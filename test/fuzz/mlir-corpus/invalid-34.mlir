func.func @lm_head_vocab(%h: tensor<1x64xf32>, %w: !afm.q4<256x64, group = 32>) {
  %y = afm.lm_head %h, %w : tensor<1x64xf32>, !afm.q4<256x64, group = 32> -> tensor<1x255xf32>
  return
}
