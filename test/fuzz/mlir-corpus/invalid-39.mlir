func.func @lora_tokens(%y: tensor<2x128xf32>, %x: tensor<3x64xf32>, %a: tensor<32x64xf32>, %b: tensor<128x32xf32>) {
  %z = afm.lora %y, %x, %a, %b {alpha = 1.0 : f32} : tensor<2x128xf32>, tensor<3x64xf32>, tensor<32x64xf32>, tensor<128x32xf32>
  return
}
