// RUN: afm-opt %s -afm-lower-to-linalg -verify-diagnostics -split-input-file

// Compressed weights are read through their bound buffers; one that was
// never bound (afm-bind-entry-abi) has nothing to read.
func.func @unbound(%x: tensor<4x64xf32>, %w: !afm.q2<32x64, per_tensor>) -> tensor<4x32xf32> {
  // expected-error @+2 {{compressed weight of type '!afm.q2<32x64, per_tensor>' must be bound to its buffers (afm-bind-entry-abi) before lowering}}
  // expected-error @+1 {{failed to legalize operation 'afm.linear' that was explicitly marked illegal}}
  %y = afm.linear %x, %w : tensor<4x64xf32>, !afm.q2<32x64, per_tensor> -> tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}
