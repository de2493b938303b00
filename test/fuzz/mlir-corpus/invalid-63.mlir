func.func @router_top_k_zero(%x: tensor<?x64xf32>, %r: tensor<4x64xf32>) {
  %e, %g = afm.topk_router %x, %r {top_k = 0} : tensor<?x64xf32>, tensor<4x64xf32> -> tensor<?x0xi32>, tensor<?x0xf32>
  return
}
