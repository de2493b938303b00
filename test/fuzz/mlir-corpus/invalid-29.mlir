func.func @rope_theta(%x: tensor<?x4x16xf32>, %p: index) {
  %y = afm.rope %x at %p {theta = -1.0 : f32} : tensor<?x4x16xf32>
  return
}
