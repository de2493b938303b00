func.func @router_top_k_too_large(%x: tensor<?x64xf32>, %r: tensor<4x64xf32>) {
  %e, %g = afm.topk_router %x, %r {top_k = 5} : tensor<?x64xf32>, tensor<4x64xf32> -> tensor<?x5xi32>, tensor<?x5xf32>
  return
}
