func.func @linear_outputs(%x: tensor<?x64xf32>, %w: !afm.astc<128x64, block = 6x6, offset = min>) {
  %y = afm.linear %x, %w : tensor<?x64xf32>, !afm.astc<128x64, block = 6x6, offset = min> -> tensor<?x96xf32>
  return
}
