// RUN: afm-opt %s -afm-lower-to-linalg -afm-check-lowered -verify-diagnostics -split-input-file

// An op this pipeline stage leaves to another pass (a router outside an
// afm.moe, which afm-lower-moe owns) is reported at its location.
func.func @router(%x: tensor<4x64xf32>, %wr: tensor<4x64xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{'afm.topk_router' could not be lowered: this combination of operands and attributes is not supported by the afm code generator yet}}
  %e, %gates = afm.topk_router %x, %wr {top_k = 2} : tensor<4x64xf32>, tensor<4x64xf32> -> tensor<4x2xi32>, tensor<4x2xf32>
  return %gates : tensor<4x2xf32>
}

// -----

// Lowered ops pass.
func.func @plain(%x: tensor<4x64xf32>, %w: tensor<32x64xf32>) -> tensor<4x32xf32> {
  %y = afm.linear %x, %w : tensor<4x64xf32>, tensor<32x64xf32> -> tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}
