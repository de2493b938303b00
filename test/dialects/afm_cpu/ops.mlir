// The afm_cpu ops round-trip.
// RUN: afm-opt %s | afm-opt | FileCheck %s

// An int8 dot product on scalars and on vectors of packed byte lanes.
// CHECK-LABEL: func.func @dot_bytes
// CHECK: afm_cpu.dot_bytes %{{.*}}, %{{.*}}, %{{.*}} : i32
// CHECK: afm_cpu.dot_bytes %{{.*}}, %{{.*}}, %{{.*}} : vector<2x16xi32>
func.func @dot_bytes(%a: i32, %v: vector<2x16xi32>) -> (i32, vector<2x16xi32>) {
  %s = afm_cpu.dot_bytes %a, %a, %a : i32
  %d = afm_cpu.dot_bytes %v, %v, %v : vector<2x16xi32>
  return %s, %d : i32, vector<2x16xi32>
}

// Bytes times the signs of others, on a scalar and on a vector.
// CHECK-LABEL: func.func @sign_bytes
// CHECK: afm_cpu.sign_bytes %{{.*}}, %{{.*}} : i8
// CHECK: afm_cpu.sign_bytes %{{.*}}, %{{.*}} : vector<64xi8>
func.func @sign_bytes(%a: i8, %v: vector<64xi8>) -> (i8, vector<64xi8>) {
  %s = afm_cpu.sign_bytes %a, %a : i8
  %d = afm_cpu.sign_bytes %v, %v : vector<64xi8>
  return %s, %d : i8, vector<64xi8>
}

// A task run for every iteration on the runtime's threads.
// CHECK-LABEL: func.func @parallel
// CHECK: afm_cpu.parallel_call @task(%{{.*}}) host %{{.*}} captures(%{{.*}} : memref<32xf32>) : !llvm.ptr
func.func private @task(%i: index, %m: memref<32xf32>)
func.func @parallel(%n: index, %host: !llvm.ptr, %m: memref<32xf32>) {
  afm_cpu.parallel_call @task(%n) host %host captures(%m : memref<32xf32>) : !llvm.ptr
  return
}
