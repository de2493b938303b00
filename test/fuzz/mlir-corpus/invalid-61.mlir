func.func @router_dynamic_experts(%x: tensor<?x64xf32>, %r: tensor<?x64xf32>) {
  %e, %g = afm.topk_router %x, %r {top_k = 2} : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x2xi32>, tensor<?x2xf32>
  return
}
