// Input of weight-table.test (not a test by itself).
func.func @f() {
  %a = afm.weight "emb" : tensor<16x8xf32>
  // CHECK: weight-table.test.mlir:[[@LINE+1]]:8: error: weight 'emb' has type 'tensor<16x8xf16>' here but 'tensor<16x8xf32>' elsewhere
  %b = afm.weight "emb" : tensor<16x8xf16>
  return
}
