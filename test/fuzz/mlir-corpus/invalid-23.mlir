func.func @embedding_width(%t: tensor<?xi32>, %table: !afm.q4<16x8, group = 4>) {
  %h = afm.embedding %table[%t] : !afm.q4<16x8, group = 4>, tensor<?xi32> -> tensor<?x9xf32>
  return
}
