func.func @min_shift_block(%x: tensor<1x64xf32>, %m: tensor<6x11xf32>) {
  %s = afm.min_shift %x, %m {block = array<i64: 6>} : tensor<1x64xf32>, tensor<6x11xf32> -> tensor<1x32xf32>
  return
}
