func.func @embedding_tokens(%t: tensor<5xi32>, %table: tensor<16x8xf32>) {
  %h = afm.embedding %table[%t] : tensor<16x8xf32>, tensor<5xi32> -> tensor<4x8xf32>
  return
}
