// afm_cpu.sign_bytes (each byte of value times the sign of the byte of
// signs) becomes vpsignb on 32-byte pieces on x86 targets with AVX2 (AVX-512
// has no wider one), else compares and selects: -value where signs < 0, 0
// where signs = 0, value elsewhere. LLVM does not form vpsignb from the
// compare-and-select (it emits vpcmpgtb, vpxor, vpsubb).
// RUN: afm-opt %s --afm-set-target=target=x86-64-v3 --afm-lower-dot-bytes | FileCheck %s --check-prefix=AVX2
// RUN: afm-opt %s --afm-set-target=target=x86-64-v4-vnni --afm-lower-dot-bytes | FileCheck %s --check-prefix=AVX2
// RUN: afm-opt %s --afm-set-target=target=apple-m1 --afm-lower-dot-bytes | FileCheck %s --check-prefix=SELECT

// AVX2-LABEL: func.func @signs
// AVX2-SAME: %[[V:[^:]*]]: vector<64xi8>, %[[S:[^:]*]]: vector<64xi8>
// AVX2: %[[V0:.*]] = vector.extract_strided_slice %[[V]] {offsets = [0], sizes = [32], strides = [1]}
// AVX2: %[[S0:.*]] = vector.extract_strided_slice %[[S]] {offsets = [0], sizes = [32], strides = [1]}
// AVX2: llvm.call_intrinsic "llvm.x86.avx2.psign.b"(%[[V0]], %[[S0]]) : (vector<32xi8>, vector<32xi8>) -> vector<32xi8>
// AVX2: %[[V1:.*]] = vector.extract_strided_slice %[[V]] {offsets = [32], sizes = [32], strides = [1]}
// AVX2: %[[S1:.*]] = vector.extract_strided_slice %[[S]] {offsets = [32], sizes = [32], strides = [1]}
// AVX2: llvm.call_intrinsic "llvm.x86.avx2.psign.b"(%[[V1]], %[[S1]])
// AVX2-NOT: afm_cpu.sign_bytes
// SELECT-LABEL: func.func @signs
// SELECT-SAME: %[[V:[^:]*]]: vector<64xi8>, %[[S:[^:]*]]: vector<64xi8>
// SELECT-NOT: llvm.call_intrinsic
// SELECT: %[[ZERO:.*]] = arith.constant dense<0> : vector<64xi8>
// SELECT: %[[NEG:.*]] = arith.cmpi slt, %[[S]], %[[ZERO]]
// SELECT: %[[NONE:.*]] = arith.cmpi eq, %[[S]], %[[ZERO]]
// SELECT: %[[MINUS:.*]] = arith.subi %[[ZERO]], %[[V]]
// SELECT: %[[KEEP:.*]] = arith.select %[[NONE]], %[[ZERO]], %[[V]]
// SELECT: arith.select %[[NEG]], %[[MINUS]], %[[KEEP]]
// SELECT-NOT: afm_cpu.sign_bytes
func.func @signs(%v: vector<64xi8>, %s: vector<64xi8>) -> vector<64xi8> {
  %r = afm_cpu.sign_bytes %v, %s : vector<64xi8>
  return %r : vector<64xi8>
}

// Vectors of other sizes and scalars compare and select on every target.
// AVX2-LABEL: func.func @short
// AVX2-NOT: llvm.call_intrinsic
// AVX2: arith.select
// AVX2: arith.select
// AVX2-NOT: afm_cpu.sign_bytes
// SELECT-LABEL: func.func @short
// SELECT-NOT: afm_cpu.sign_bytes
func.func @short(%v: vector<16xi8>, %s: vector<16xi8>, %a: i8) -> (vector<16xi8>, i8) {
  %r = afm_cpu.sign_bytes %v, %s : vector<16xi8>
  %x = afm_cpu.sign_bytes %a, %a : i8
  return %r, %x : vector<16xi8>, i8
}
