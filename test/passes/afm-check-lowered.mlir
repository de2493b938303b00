// RUN: afm-opt %s -afm-lower-to-linalg -afm-check-lowered -verify-diagnostics -split-input-file

// A layer the code generator cannot lower yet is reported at its location.
func.func @compressed(%x: tensor<4x64xf32>, %w: !afm.q2<32x64, per_tensor>) -> tensor<4x32xf32> {
  // expected-error @+1 {{'afm.linear' could not be lowered: this combination of operands and attributes is not supported by the afm code generator yet}}
  %y = afm.linear %x, %w : tensor<4x64xf32>, !afm.q2<32x64, per_tensor> -> tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}

// -----

// Lowered ops pass.
func.func @plain(%x: tensor<4x64xf32>, %w: tensor<32x64xf32>) -> tensor<4x32xf32> {
  %y = afm.linear %x, %w : tensor<4x64xf32>, tensor<32x64xf32> -> tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}
