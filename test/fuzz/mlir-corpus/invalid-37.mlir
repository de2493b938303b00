func.func @lora_b_rank(%y: tensor<?x128xf32>, %x: tensor<?x64xf32>, %a: tensor<32x64xf32>, %b: tensor<128x16xf32>) {
  %z = afm.lora %y, %x, %a, %b {alpha = 1.0 : f32} : tensor<?x128xf32>, tensor<?x64xf32>, tensor<32x64xf32>, tensor<128x16xf32>
  return
}
