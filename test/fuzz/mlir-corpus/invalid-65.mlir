func.func @router_result_rows(%x: tensor<3x64xf32>, %r: tensor<4x64xf32>) {
  %e, %g = afm.topk_router %x, %r {top_k = 2} : tensor<3x64xf32>, tensor<4x64xf32> -> tensor<3x2xi32>, tensor<2x2xf32>
  return
}
