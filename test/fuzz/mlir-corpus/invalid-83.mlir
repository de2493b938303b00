func.func @astc_decode_shape(%w: !afm.astc<32x64, block = 6x6, offset = min>) {
  %d = afm.astc_decode %w : !afm.astc<32x64, block = 6x6, offset = min> -> tensor<64x32xf32>
  return
}
