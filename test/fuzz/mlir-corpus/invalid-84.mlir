func.func @astc_offsets_shape(%w: !afm.astc<32x64, block = 6x6, offset = min>) {
  %m = afm.astc_offsets %w : !afm.astc<32x64, block = 6x6, offset = min> -> tensor<6x10xf32>
  return
}
