// On AVX2 a dot product is vpmaddubsw (u8 x s8 pairs summed to i16) and
// vpmaddwd with ones (i16 pairs to i32). Dot products that add into one
// sum share the widening: their i16 pair sums are added (vpaddw) and
// widened once, as long as those sums cannot leave i16, n * 2 * max(u) *
// 128 <= 32767 (42 products of 2-bit codes, 8 of nibbles). That covers a
// chain of dot products in a block, and the chains of a loop's iter_args
// that start at zero and are added together after it (the planes and
// lanes of one GEMV output); those iter_args then carry their zero
// through. Unmasked bytes, and VNNI's vpdpbusd, keep their form.
//
// Such a loop's planes of one byte vector also share shifts: the 2-bit
// planes (w >> 0, 2, 4, 6) & 3 read w & 3, w & 12, (w >> 4) & 3 and
// (w >> 4) & 12, one shift where there were three; the planes read at 4x
// widen into an accumulator of their own, shifted right by 2 after the
// loop (exact: every one of its products is 4x the plane's).
// RUN: afm-opt %s --afm-set-target=target=x86-64-v3 --afm-lower-dot-bytes | FileCheck %s --check-prefix=AVX2
// RUN: afm-opt %s --afm-set-target=target=x86-64-v4-vnni --afm-lower-dot-bytes | FileCheck %s --check-prefix=VNNI

// Two iter_args of two 2-bit products each, summed after the loop, the
// four planes of one byte vector: one shift (by 4); planes 0 and 2 widen
// into the first iter_arg, planes 1 and 3, read at 4x (masks of 12), into
// the second, whose result is shifted right by 2 before the sum.
// AVX2-LABEL: func.func @loop_chains
// AVX2-DAG: %[[TWELVE:.*]] = arith.constant dense<12> : vector<32xi8>
// AVX2-DAG: %[[FOUR:.*]] = arith.constant dense<4> : vector<32xi8>
// AVX2-DAG: %[[THREE:.*]] = arith.constant dense<3> : vector<32xi8>
// AVX2: %[[R:.*]]:2 = scf.for %{{.*}} iter_args(%[[A:.*]] = %{{.*}}, %[[B:.*]] = %{{.*}})
// AVX2: %[[W:.*]] = vector.transfer_read %arg0
// AVX2-NOT: arith.shrui
// AVX2: %[[P1:.*]] = arith.andi %[[W]], %[[TWELVE]]
// AVX2-NOT: arith.shrui
// AVX2: %[[P0:.*]] = arith.andi %[[W]], %[[THREE]]
// AVX2-NEXT: %[[H:.*]] = arith.shrui %[[W]], %[[FOUR]]
// AVX2-NOT: arith.shrui
// AVX2-DAG: %[[P3:.*]] = arith.andi %[[H]], %[[TWELVE]]
// AVX2-DAG: %[[P2:.*]] = arith.andi %[[H]], %[[THREE]]
// AVX2: llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"(%[[P0]],
// AVX2-NEXT: llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"(%[[P2]],
// AVX2-NEXT: arith.addi %{{.*}} : vector<16xi16>
// AVX2-NEXT: %[[QA:.*]] = llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"
// AVX2-NEXT: %[[SA:.*]] = arith.addi %[[A]], %[[QA]] : vector<8xi32>
// AVX2-NEXT: llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"(%[[P1]],
// AVX2-NEXT: llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"(%[[P3]],
// AVX2-NEXT: arith.addi %{{.*}} : vector<16xi16>
// AVX2-NEXT: %[[QB:.*]] = llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"
// AVX2-NEXT: %[[SB:.*]] = arith.addi %[[B]], %[[QB]] : vector<8xi32>
// AVX2-NEXT: scf.yield %[[SA]], %[[SB]]
// AVX2: %[[E:.*]] = arith.shrsi %[[R]]#1, %{{.*}} : vector<8xi32>
// AVX2-NEXT: arith.addi %[[R]]#0, %[[E]]
// VNNI-LABEL: func.func @loop_chains
// VNNI-COUNT-4: llvm.x86.avx512.vpdpbusd.256
// VNNI-NOT: pmadd
func.func @loop_chains(%w: memref<12x32xi8>, %x: memref<12x4x32xi8>) -> vector<8xi32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c12 = arith.constant 12 : index
  %zero = arith.constant dense<0> : vector<8xi32>
  %three = arith.constant dense<3> : vector<32xi8>
  %two = arith.constant dense<2> : vector<32xi8>
  %four = arith.constant dense<4> : vector<32xi8>
  %six = arith.constant dense<6> : vector<32xi8>
  %pad = arith.constant 0 : i8
  %r:2 = scf.for %i = %c0 to %c12 step %c1 iter_args(%a = %zero, %b = %zero) -> (vector<8xi32>, vector<8xi32>) {
    %bytes = vector.transfer_read %w[%i, %c0], %pad {in_bounds = [true]} : memref<12x32xi8>, vector<32xi8>
    %x0 = vector.transfer_read %x[%i, %c0, %c0], %pad {in_bounds = [true]} : memref<12x4x32xi8>, vector<32xi8>
    %x1 = vector.transfer_read %x[%i, %c1, %c0], %pad {in_bounds = [true]} : memref<12x4x32xi8>, vector<32xi8>
    %x2 = vector.transfer_read %x[%i, %c2, %c0], %pad {in_bounds = [true]} : memref<12x4x32xi8>, vector<32xi8>
    %x3 = vector.transfer_read %x[%i, %c3, %c0], %pad {in_bounds = [true]} : memref<12x4x32xi8>, vector<32xi8>
    %p0 = arith.andi %bytes, %three : vector<32xi8>
    %h1 = arith.shrui %bytes, %two : vector<32xi8>
    %p1 = arith.andi %h1, %three : vector<32xi8>
    %h2 = arith.shrui %bytes, %four : vector<32xi8>
    %p2 = arith.andi %h2, %three : vector<32xi8>
    %h3 = arith.shrui %bytes, %six : vector<32xi8>
    %p3 = arith.andi %h3, %three : vector<32xi8>
    %u0 = vector.bitcast %p0 : vector<32xi8> to vector<8xi32>
    %u1 = vector.bitcast %p1 : vector<32xi8> to vector<8xi32>
    %u2 = vector.bitcast %p2 : vector<32xi8> to vector<8xi32>
    %u3 = vector.bitcast %p3 : vector<32xi8> to vector<8xi32>
    %s0 = vector.bitcast %x0 : vector<32xi8> to vector<8xi32>
    %s1 = vector.bitcast %x1 : vector<32xi8> to vector<8xi32>
    %s2 = vector.bitcast %x2 : vector<32xi8> to vector<8xi32>
    %s3 = vector.bitcast %x3 : vector<32xi8> to vector<8xi32>
    %a1 = afm_cpu.dot_bytes %a, %u0, %s0 : vector<8xi32>
    %b1 = afm_cpu.dot_bytes %b, %u1, %s1 : vector<8xi32>
    %a2 = afm_cpu.dot_bytes %a1, %u2, %s2 : vector<8xi32>
    %b2 = afm_cpu.dot_bytes %b1, %u3, %s3 : vector<8xi32>
    scf.yield %a2, %b2 : vector<8xi32>, vector<8xi32>
  }
  %sum = arith.addi %r#0, %r#1 : vector<8xi32>
  return %sum : vector<8xi32>
}

// Iter_args whose results are used apart (two outputs) are not merged;
// each chain of two still shares its widening.
// AVX2-LABEL: func.func @separate_outputs
// AVX2: scf.for
// AVX2-COUNT-2: llvm.x86.avx2.pmadd.wd
// AVX2-NOT: llvm.x86.avx2.pmadd.wd
// AVX2: scf.yield
func.func @separate_outputs(%u: vector<8xi32>, %s: vector<8xi32>) -> (vector<8xi32>, vector<8xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c12 = arith.constant 12 : index
  %zero = arith.constant dense<0> : vector<8xi32>
  %mask = arith.constant dense<0x03030303> : vector<8xi32>
  %m = arith.andi %u, %mask : vector<8xi32>
  %r:2 = scf.for %i = %c0 to %c12 step %c1 iter_args(%a = %zero, %b = %zero) -> (vector<8xi32>, vector<8xi32>) {
    %a1 = afm_cpu.dot_bytes %a, %m, %s : vector<8xi32>
    %a2 = afm_cpu.dot_bytes %a1, %m, %s : vector<8xi32>
    %b1 = afm_cpu.dot_bytes %b, %m, %s : vector<8xi32>
    %b2 = afm_cpu.dot_bytes %b1, %m, %s : vector<8xi32>
    scf.yield %a2, %b2 : vector<8xi32>, vector<8xi32>
  }
  return %r#0, %r#1 : vector<8xi32>, vector<8xi32>
}

// Nine nibble products in a chain (the 4-bit LM head's form), 16 lanes:
// eight per widening (8 * 2 * 15 * 128 = 30720), so two widenings, each
// in two register-wide pieces of 8 lanes.
// AVX2-LABEL: func.func @nibble_chain
// AVX2-COUNT-8: llvm.x86.avx2.pmadd.ub.sw
// AVX2-COUNT-7: arith.addi %{{.*}} : vector<16xi16>
// AVX2: llvm.x86.avx2.pmadd.wd
// AVX2-COUNT-8: llvm.x86.avx2.pmadd.ub.sw
// AVX2: llvm.x86.avx2.pmadd.wd
// AVX2-NOT: arith.addi %{{.*}} : vector<16xi16>
// AVX2: llvm.x86.avx2.pmadd.ub.sw
// AVX2-NEXT: llvm.x86.avx2.pmadd.wd
// AVX2: llvm.x86.avx2.pmadd.ub.sw
// AVX2-NEXT: llvm.x86.avx2.pmadd.wd
// AVX2-NOT: llvm.x86.avx2.pmadd
// AVX2: return
func.func @nibble_chain(%acc: vector<16xi32>, %u: vector<16xi32>, %s: vector<16xi32>) -> vector<16xi32> {
  %mask = arith.constant dense<0x0F0F0F0F> : vector<16xi32>
  %m = arith.andi %u, %mask : vector<16xi32>
  %d1 = afm_cpu.dot_bytes %acc, %m, %s : vector<16xi32>
  %d2 = afm_cpu.dot_bytes %d1, %m, %s : vector<16xi32>
  %d3 = afm_cpu.dot_bytes %d2, %m, %s : vector<16xi32>
  %d4 = afm_cpu.dot_bytes %d3, %m, %s : vector<16xi32>
  %d5 = afm_cpu.dot_bytes %d4, %m, %s : vector<16xi32>
  %d6 = afm_cpu.dot_bytes %d5, %m, %s : vector<16xi32>
  %d7 = afm_cpu.dot_bytes %d6, %m, %s : vector<16xi32>
  %d8 = afm_cpu.dot_bytes %d7, %m, %s : vector<16xi32>
  %d9 = afm_cpu.dot_bytes %d8, %m, %s : vector<16xi32>
  return %d9 : vector<16xi32>
}

// A register tile's chain (the int8 ASTC kernel's: six rows of 8 lanes,
// the nibbles of a block's columns 0..3, then of columns 4 and 5) counts
// as its 48 lanes: each 8-lane piece adds its two pair sums in i16 and
// widens once, and the tile keeps its shape.
// AVX2-LABEL: func.func @tile_chain
// AVX2: vector.shape_cast %{{.*}} : vector<3x2x8xi32> to vector<48xi32>
// AVX2-NOT: llvm.x86.avx2.pmadd.wd
// AVX2: arith.addi %{{.*}} : vector<16xi16>
// AVX2-NEXT: llvm.x86.avx2.pmadd.wd
// AVX2: arith.addi %{{.*}} : vector<16xi16>
// AVX2-NEXT: llvm.x86.avx2.pmadd.wd
// AVX2: arith.addi %{{.*}} : vector<16xi16>
// AVX2-NEXT: llvm.x86.avx2.pmadd.wd
// AVX2: arith.addi %{{.*}} : vector<16xi16>
// AVX2-NEXT: llvm.x86.avx2.pmadd.wd
// AVX2: arith.addi %{{.*}} : vector<16xi16>
// AVX2-NEXT: llvm.x86.avx2.pmadd.wd
// AVX2: arith.addi %{{.*}} : vector<16xi16>
// AVX2-NEXT: llvm.x86.avx2.pmadd.wd
// AVX2-NOT: llvm.x86.avx2.pmadd
// AVX2: vector.shape_cast %{{.*}} : vector<48xi32> to vector<3x2x8xi32>
// AVX2-NOT: llvm.x86.avx2.pmadd
// AVX2: return
// VNNI-LABEL: func.func @tile_chain
// VNNI-COUNT-12: llvm.x86.avx512.vpdpbusd.256
// VNNI-NOT: pmadd
func.func @tile_chain(%u: vector<3x2x8xi32>, %v: vector<3x2x8xi32>, %s: vector<3x2x8xi32>, %t: vector<3x2x8xi32>) -> vector<3x2x8xi32> {
  %zero = arith.constant dense<0> : vector<3x2x8xi32>
  %mask = arith.constant dense<0x0F0F0F0F> : vector<3x2x8xi32>
  %tailMask = arith.constant dense<0x0F0F> : vector<3x2x8xi32>
  %m = arith.andi %u, %mask : vector<3x2x8xi32>
  %n = arith.andi %v, %tailMask : vector<3x2x8xi32>
  %d1 = afm_cpu.dot_bytes %zero, %m, %s : vector<3x2x8xi32>
  %d2 = afm_cpu.dot_bytes %d1, %n, %t : vector<3x2x8xi32>
  return %d2 : vector<3x2x8xi32>
}

// Bytes up to 127: one pair sum can reach 2 * 127 * 128 = 32512, so no two
// share an i16; each dot product widens on its own.
// AVX2-LABEL: func.func @wide_bytes
// AVX2-NOT: arith.addi %{{.*}} : vector<16xi16>
// AVX2: llvm.x86.avx2.pmadd.ub.sw
// AVX2-NEXT: llvm.x86.avx2.pmadd.wd
// AVX2: llvm.x86.avx2.pmadd.ub.sw
// AVX2-NEXT: llvm.x86.avx2.pmadd.wd
// AVX2-NOT: arith.addi %{{.*}} : vector<16xi16>
// AVX2: return
func.func @wide_bytes(%acc: vector<8xi32>, %u: vector<8xi32>, %s: vector<8xi32>) -> vector<8xi32> {
  %mask = arith.constant dense<0x7F7F7F7F> : vector<8xi32>
  %m = arith.andi %u, %mask : vector<8xi32>
  %d1 = afm_cpu.dot_bytes %acc, %m, %s : vector<8xi32>
  %d2 = afm_cpu.dot_bytes %d1, %m, %s : vector<8xi32>
  return %d2 : vector<8xi32>
}

// One iter_arg over the four planes: a second scale would need a second
// accumulator, so the planes keep their shifts and widen together.
// AVX2-LABEL: func.func @one_chain_keeps_shifts
// AVX2: scf.for
// AVX2-COUNT-3: arith.shrui
// AVX2-COUNT-4: llvm.x86.avx2.pmadd.ub.sw
// AVX2-COUNT-1: llvm.x86.avx2.pmadd.wd
// AVX2-NOT: llvm.x86.avx2.pmadd.wd
// AVX2: scf.yield
// AVX2-NOT: arith.shrsi
// AVX2: return
func.func @one_chain_keeps_shifts(%w: memref<12x32xi8>, %x: memref<12x4x32xi8>) -> vector<8xi32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c12 = arith.constant 12 : index
  %zero = arith.constant dense<0> : vector<8xi32>
  %three = arith.constant dense<3> : vector<32xi8>
  %two = arith.constant dense<2> : vector<32xi8>
  %four = arith.constant dense<4> : vector<32xi8>
  %six = arith.constant dense<6> : vector<32xi8>
  %pad = arith.constant 0 : i8
  %r = scf.for %i = %c0 to %c12 step %c1 iter_args(%a = %zero) -> (vector<8xi32>) {
    %bytes = vector.transfer_read %w[%i, %c0], %pad {in_bounds = [true]} : memref<12x32xi8>, vector<32xi8>
    %x0 = vector.transfer_read %x[%i, %c0, %c0], %pad {in_bounds = [true]} : memref<12x4x32xi8>, vector<32xi8>
    %x1 = vector.transfer_read %x[%i, %c1, %c0], %pad {in_bounds = [true]} : memref<12x4x32xi8>, vector<32xi8>
    %x2 = vector.transfer_read %x[%i, %c2, %c0], %pad {in_bounds = [true]} : memref<12x4x32xi8>, vector<32xi8>
    %x3 = vector.transfer_read %x[%i, %c3, %c0], %pad {in_bounds = [true]} : memref<12x4x32xi8>, vector<32xi8>
    %p0 = arith.andi %bytes, %three : vector<32xi8>
    %h1 = arith.shrui %bytes, %two : vector<32xi8>
    %p1 = arith.andi %h1, %three : vector<32xi8>
    %h2 = arith.shrui %bytes, %four : vector<32xi8>
    %p2 = arith.andi %h2, %three : vector<32xi8>
    %h3 = arith.shrui %bytes, %six : vector<32xi8>
    %p3 = arith.andi %h3, %three : vector<32xi8>
    %u0 = vector.bitcast %p0 : vector<32xi8> to vector<8xi32>
    %u1 = vector.bitcast %p1 : vector<32xi8> to vector<8xi32>
    %u2 = vector.bitcast %p2 : vector<32xi8> to vector<8xi32>
    %u3 = vector.bitcast %p3 : vector<32xi8> to vector<8xi32>
    %s0 = vector.bitcast %x0 : vector<32xi8> to vector<8xi32>
    %s1 = vector.bitcast %x1 : vector<32xi8> to vector<8xi32>
    %s2 = vector.bitcast %x2 : vector<32xi8> to vector<8xi32>
    %s3 = vector.bitcast %x3 : vector<32xi8> to vector<8xi32>
    %a1 = afm_cpu.dot_bytes %a, %u0, %s0 : vector<8xi32>
    %a2 = afm_cpu.dot_bytes %a1, %u1, %s1 : vector<8xi32>
    %a3 = afm_cpu.dot_bytes %a2, %u2, %s2 : vector<8xi32>
    %a4 = afm_cpu.dot_bytes %a3, %u3, %s3 : vector<8xi32>
    scf.yield %a4 : vector<8xi32>
  }
  return %r : vector<8xi32>
}

// Planes read at 4x must keep their i32 sum exact before the shift back:
// 2^22 trips of two products of bytes up to 12 could reach 2^31 in a lane
// (2^22 * 2 * 4 * 12 * 128), so this loop keeps its shifts.
// AVX2-LABEL: func.func @long_loop_keeps_shifts
// AVX2: scf.for
// AVX2: arith.shrui
// AVX2-COUNT-1: llvm.x86.avx2.pmadd.wd
// AVX2-NOT: llvm.x86.avx2.pmadd.wd
// AVX2: scf.yield
// AVX2-NOT: arith.shrsi
// AVX2: return
func.func @long_loop_keeps_shifts(%w: memref<4194304x32xi8>, %x: memref<32xi8>) -> vector<8xi32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 4194304 : index
  %zero = arith.constant dense<0> : vector<8xi32>
  %three = arith.constant dense<3> : vector<32xi8>
  %two = arith.constant dense<2> : vector<32xi8>
  %pad = arith.constant 0 : i8
  %xs = vector.transfer_read %x[%c0], %pad {in_bounds = [true]} : memref<32xi8>, vector<32xi8>
  %s = vector.bitcast %xs : vector<32xi8> to vector<8xi32>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %zero, %b = %zero) -> (vector<8xi32>, vector<8xi32>) {
    %bytes = vector.transfer_read %w[%i, %c0], %pad {in_bounds = [true]} : memref<4194304x32xi8>, vector<32xi8>
    %p0 = arith.andi %bytes, %three : vector<32xi8>
    %h1 = arith.shrui %bytes, %two : vector<32xi8>
    %p1 = arith.andi %h1, %three : vector<32xi8>
    %u0 = vector.bitcast %p0 : vector<32xi8> to vector<8xi32>
    %u1 = vector.bitcast %p1 : vector<32xi8> to vector<8xi32>
    %a1 = afm_cpu.dot_bytes %a, %u0, %s : vector<8xi32>
    %a2 = afm_cpu.dot_bytes %a1, %u0, %s : vector<8xi32>
    %b1 = afm_cpu.dot_bytes %b, %u1, %s : vector<8xi32>
    %b2 = afm_cpu.dot_bytes %b1, %u1, %s : vector<8xi32>
    scf.yield %a2, %b2 : vector<8xi32>, vector<8xi32>
  }
  %sum = arith.addi %r#0, %r#1 : vector<8xi32>
  return %sum : vector<8xi32>
}
