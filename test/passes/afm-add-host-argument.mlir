// RUN: afm-opt %s -split-input-file -afm-add-host-argument -verify-diagnostics | FileCheck %s

// Public functions with a body take the host API first, whatever their
// other arguments and results; private and external ones are left alone.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %{{.*}}: !llvm.ptr, %[[X:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK-SAME: afm.host_argument = 0 : i64
// CHECK-NEXT: return %[[X]]
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// CHECK-LABEL: func.func private @helper(
// CHECK-SAME: %{{.*}}: tensor<4xf32>) -> tensor<4xf32> {
func.func private @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// CHECK-LABEL: func.func private @external(tensor<4xf32>)
func.func private @external(tensor<4xf32>)

// -----

// A public function another one calls cannot take it: the call would not
// pass it.
// expected-error @+1 {{is called inside the module, so it cannot take a host argument its callers do not pass}}
func.func @callee(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

func.func @caller(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = func.call @callee(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
