func.func @rope_dynamic(%x: tensor<?x4x?xf32>, %p: index) {
  %y = afm.rope %x at %p : tensor<?x4x?xf32>
  return
}
