func.func @rope_odd(%x: tensor<?x4x15xf32>, %p: index) {
  %y = afm.rope %x at %p : tensor<?x4x15xf32>
  return
}
