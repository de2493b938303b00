func.func @router_result_columns(%x: tensor<?x64xf32>, %r: tensor<4x64xf32>) {
  %e, %g = afm.topk_router %x, %r {top_k = 2} : tensor<?x64xf32>, tensor<4x64xf32> -> tensor<?x3xi32>, tensor<?x2xf32>
  return
}
