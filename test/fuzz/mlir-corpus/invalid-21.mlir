func.func @dequantize_shape(%w: !afm.q2<64x32, per_tensor>) {
  %d = afm.dequantize %w : !afm.q2<64x32, per_tensor> -> tensor<32x64xf32>
  return
}
