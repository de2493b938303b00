// afm_cpu.dot_bytes becomes the target's int8 dot-product instruction where it
// is exact (vpdpbusd always; vpmaddubsw + vpmaddwd and sdot only for bytes
// masked below 128), else integer arithmetic. Vectors wider than the
// instruction go in register-wide pieces, n-D ones row by row.
// RUN: afm-opt %s --afm-set-target=target=x86-64-v4-vnni --afm-lower-dot-bytes | FileCheck %s --check-prefix=VNNI
// RUN: afm-opt %s --afm-set-target=target=x86-64-v3 --afm-lower-dot-bytes | FileCheck %s --check-prefix=AVX2
// RUN: afm-opt %s --afm-set-target=target=apple-m1 --afm-lower-dot-bytes | FileCheck %s --check-prefix=ARM
// RUN: afm-opt %s --afm-set-target=target=aarch64-generic --afm-lower-dot-bytes | FileCheck %s --check-prefix=NONE
// RUN: not afm-opt %s --afm-lower-dot-bytes 2>&1 | FileCheck %s --check-prefix=BAD

// VNNI-LABEL: func.func @masked
// VNNI: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%arg0, 
// VNNI-NOT: afm_cpu.dot_bytes
// AVX2-LABEL: func.func @masked
// AVX2-COUNT-2: llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"
// AVX2-NOT: afm_cpu.dot_bytes
// ARM-LABEL: func.func @masked
// ARM-COUNT-4: llvm.call_intrinsic "llvm.aarch64.neon.sdot.v4i32.v16i8"
// ARM-NOT: afm_cpu.dot_bytes
// NONE-LABEL: func.func @masked
// NONE-NOT: llvm.call_intrinsic
// NONE-COUNT-4: arith.muli %{{.*}} : vector<16xi32>
func.func @masked(%acc: vector<16xi32>, %u: vector<16xi32>, %s: vector<16xi32>) -> vector<16xi32> {
  %mask = arith.constant dense<0x0F0F0F0F> : vector<16xi32>
  %nibbles = arith.andi %u, %mask : vector<16xi32>
  %d = afm_cpu.dot_bytes %acc, %nibbles, %s : vector<16xi32>
  return %d : vector<16xi32>
}

// Bytes that may reach 255: only vpdpbusd multiplies them exactly.
// VNNI-LABEL: func.func @unmasked
// VNNI: llvm.x86.avx512.vpdpbusd.512
// AVX2-LABEL: func.func @unmasked
// AVX2-NOT: llvm.call_intrinsic
// AVX2-COUNT-4: arith.muli
// ARM-LABEL: func.func @unmasked
// ARM-NOT: llvm.call_intrinsic
func.func @unmasked(%acc: vector<16xi32>, %u: vector<16xi32>, %s: vector<16xi32>) -> vector<16xi32> {
  %d = afm_cpu.dot_bytes %acc, %u, %s : vector<16xi32>
  return %d : vector<16xi32>
}

// The definition, byte by byte: zext(u >> 8m & 255) * sext(s << (24 - 8m) >> 24).
// VNNI-LABEL: func.func @scalar
// VNNI-NOT: llvm.call_intrinsic
// VNNI-DAG: %[[C255:.*]] = arith.constant 255 : i32
// VNNI-DAG: %[[C24:.*]] = arith.constant 24 : i32
// VNNI-DAG: %[[C16:.*]] = arith.constant 16 : i32
// VNNI-DAG: %[[C8:.*]] = arith.constant 8 : i32
// VNNI: %[[B1:.*]] = arith.shrui %arg1, %[[C8]] : i32
// VNNI: %[[U1:.*]] = arith.andi %[[B1]], %[[C255]] : i32
// VNNI: %[[S1:.*]] = arith.shli %arg2, %[[C16]] : i32
// VNNI: %[[S1S:.*]] = arith.shrsi %[[S1]], %[[C24]] : i32
// VNNI: arith.muli %[[U1]], %[[S1S]] : i32
func.func @scalar(%acc: i32, %u: i32, %s: i32) -> i32 {
  %d = afm_cpu.dot_bytes %acc, %u, %s : i32
  return %d : i32
}

// VNNI-LABEL: func.func @rows
// VNNI-COUNT-2: llvm.x86.avx512.vpdpbusd.256
func.func @rows(%acc: vector<2x8xi32>, %u: vector<2x8xi32>, %s: vector<2x8xi32>) -> vector<2x8xi32> {
  %d = afm_cpu.dot_bytes %acc, %u, %s : vector<2x8xi32>
  return %d : vector<2x8xi32>
}

// BAD: the module has no afm.target: run afm-set-target first
