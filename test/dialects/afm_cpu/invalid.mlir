// Every verifier diagnostic of the afm_cpu dialect, one case each.
// RUN: afm-opt %s -split-input-file -verify-diagnostics

func.func @dot_bytes_type(%a: i64) {
  // expected-error @+1 {{'afm_cpu.dot_bytes' op operand #0 must be 32-bit signless integer or vector of 32-bit signless integer values, but got 'i64'}}
  %d = "afm_cpu.dot_bytes"(%a, %a, %a) : (i64, i64, i64) -> i64
  return
}

// -----

func.func @dot_bytes_mixed(%a: i32, %v: vector<16xi32>) {
  // expected-error @+1 {{'afm_cpu.dot_bytes' op failed to verify that all of {acc, lhs, rhs, result} have same type}}
  %d = "afm_cpu.dot_bytes"(%a, %v, %v) : (i32, vector<16xi32>, vector<16xi32>) -> i32
  return
}

// -----

func.func @sign_bytes_type(%a: vector<16xi32>) {
  // expected-error @+1 {{'afm_cpu.sign_bytes' op operand #0 must be 8-bit signless integer or vector of 8-bit signless integer values, but got 'vector<16xi32>'}}
  %d = "afm_cpu.sign_bytes"(%a, %a) : (vector<16xi32>, vector<16xi32>) -> vector<16xi32>
  return
}

// -----

func.func @sign_bytes_mixed(%a: vector<32xi8>, %v: vector<64xi8>) {
  // expected-error @+1 {{'afm_cpu.sign_bytes' op failed to verify that all of {value, signs, result} have same type}}
  %d = "afm_cpu.sign_bytes"(%a, %v) : (vector<32xi8>, vector<64xi8>) -> vector<32xi8>
  return
}

// -----

func.func @no_task(%n: index, %host: !llvm.ptr) {
  // expected-error @+1 {{'afm_cpu.parallel_call' op task 'missing' is not a function}}
  afm_cpu.parallel_call @missing(%n) host %host : !llvm.ptr
  return
}

// -----

func.func private @task(%i: index, %m: memref<32xf32>)
func.func @arity(%n: index, %host: !llvm.ptr) {
  // expected-error @+1 {{'afm_cpu.parallel_call' op task 'task' must take (index, captures...), got '(index, memref<32xf32>) -> ()'}}
  afm_cpu.parallel_call @task(%n) host %host : !llvm.ptr
  return
}

// -----

func.func private @task(%i: index, %m: memref<32xf32>)
func.func @capture_type(%n: index, %host: !llvm.ptr, %m: memref<16xf32>) {
  // expected-error @+1 {{'afm_cpu.parallel_call' op capture 0 has type 'memref<16xf32>' but the task takes 'memref<32xf32>'}}
  afm_cpu.parallel_call @task(%n) host %host captures(%m : memref<16xf32>) : !llvm.ptr
  return
}

// -----

func.func private @task(%i: index, %m: memref<32xf32>)
func.func @host_type(%n: index, %host: i64, %m: memref<32xf32>) {
  // expected-error @+1 {{'afm_cpu.parallel_call' op host must be an !llvm.ptr to the runtime's afm_host_api, got 'i64'}}
  afm_cpu.parallel_call @task(%n) host %host captures(%m : memref<32xf32>) : i64
  return
}
