// A loop's dot-product chain over one code plane, (w >> c) & m, reads
// w & (m << c) on targets whose unsigned operand takes any byte (vpdpbusd)
// and shifts the loop's sum right by c: the same integers, without a byte
// shift per vector. Chains that start from a nonzero sum, mix planes, could
// wrap, or run on targets whose unsigned bytes must stay below 128 keep
// their shifts.
// RUN: afm-opt %s --afm-set-target=target=x86-64-v4-vnni --afm-lower-dot-bytes | FileCheck %s --check-prefix=VNNI
// RUN: afm-opt %s --afm-set-target=target=x86-64-v3 --afm-lower-dot-bytes | FileCheck %s --check-prefix=AVX2

// The top plane (shift 6, mask 3) masked in place with 192 (-64 as i8), the
// sum shifted right by 6 after the loop; plane 0 has no shift to remove.
// VNNI-LABEL: func.func @planes
// VNNI-DAG: %[[TOP:.*]] = arith.constant dense<-64> : vector<64xi8>
// VNNI-DAG: %[[SIX:.*]] = arith.constant dense<6> : vector<16xi32>
// VNNI: %[[LOOP:.*]]:2 = scf.for
// VNNI-NOT: arith.shrui
// VNNI: arith.andi %{{.*}}, %[[TOP]] : vector<64xi8>
// VNNI: llvm.x86.avx512.vpdpbusd.512
// VNNI: arith.andi %{{.*}}, %[[TOP]] : vector<64xi8>
// VNNI: llvm.x86.avx512.vpdpbusd.512
// VNNI: scf.yield
// VNNI: %[[SUM:.*]] = arith.shrsi %[[LOOP]]#1, %[[SIX]] : vector<16xi32>
// VNNI: return %[[LOOP]]#0, %[[SUM]]
// AVX2-LABEL: func.func @planes
// AVX2-COUNT-2: arith.shrui %{{.*}} : vector<64xi8>
// AVX2-NOT: arith.shrsi
func.func @planes(%w: memref<12x64xi8>, %x: memref<12x64xi8>) -> (vector<16xi32>, vector<16xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c12 = arith.constant 12 : index
  %zero = arith.constant dense<0> : vector<16xi32>
  %three = arith.constant dense<3> : vector<64xi8>
  %six = arith.constant dense<6> : vector<64xi8>
  %pad = arith.constant 0 : i8
  %r:2 = scf.for %i = %c0 to %c12 step %c1 iter_args(%low = %zero, %top = %zero) -> (vector<16xi32>, vector<16xi32>) {
    %bytes = vector.transfer_read %w[%i, %c0], %pad {in_bounds = [true]} : memref<12x64xi8>, vector<64xi8>
    %xs = vector.transfer_read %x[%i, %c0], %pad {in_bounds = [true]} : memref<12x64xi8>, vector<64xi8>
    %s = vector.bitcast %xs : vector<64xi8> to vector<16xi32>
    %p0 = arith.andi %bytes, %three : vector<64xi8>
    %u0 = vector.bitcast %p0 : vector<64xi8> to vector<16xi32>
    %l = afm_cpu.dot_bytes %low, %u0, %s : vector<16xi32>
    %shifted = arith.shrui %bytes, %six : vector<64xi8>
    %p3 = arith.andi %shifted, %three : vector<64xi8>
    %u3 = vector.bitcast %p3 : vector<64xi8> to vector<16xi32>
    %t1 = afm_cpu.dot_bytes %top, %u3, %s : vector<16xi32>
    %again = arith.shrui %xs, %six : vector<64xi8>
    %q3 = arith.andi %again, %three : vector<64xi8>
    %v3 = vector.bitcast %q3 : vector<64xi8> to vector<16xi32>
    %t2 = afm_cpu.dot_bytes %t1, %v3, %s : vector<16xi32>
    scf.yield %l, %t2 : vector<16xi32>, vector<16xi32>
  }
  return %r#0, %r#1 : vector<16xi32>, vector<16xi32>
}

// VNNI-LABEL: func.func @kept
// VNNI-COUNT-4: arith.shrui %{{.*}} : vector<64xi8>
// VNNI-NOT: arith.shrsi
func.func @kept(%w: memref<30000x64xi8>, %s: vector<16xi32>, %acc: vector<16xi32>) -> (vector<16xi32>, vector<16xi32>, vector<16xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c12 = arith.constant 12 : index
  %c30000 = arith.constant 30000 : index
  %zero = arith.constant dense<0> : vector<16xi32>
  %three = arith.constant dense<3> : vector<64xi8>
  %two = arith.constant dense<2> : vector<64xi8>
  %six = arith.constant dense<6> : vector<64xi8>
  %pad = arith.constant 0 : i8
  // From a nonzero sum: shifting it right would change it.
  %a = scf.for %i = %c0 to %c12 step %c1 iter_args(%sum = %acc) -> (vector<16xi32>) {
    %bytes = vector.transfer_read %w[%i, %c0], %pad {in_bounds = [true]} : memref<30000x64xi8>, vector<64xi8>
    %shifted = arith.shrui %bytes, %six : vector<64xi8>
    %p = arith.andi %shifted, %three : vector<64xi8>
    %u = vector.bitcast %p : vector<64xi8> to vector<16xi32>
    %d = afm_cpu.dot_bytes %sum, %u, %s : vector<16xi32>
    scf.yield %d : vector<16xi32>
  }
  // Two planes in one sum.
  %b = scf.for %i = %c0 to %c12 step %c1 iter_args(%sum = %zero) -> (vector<16xi32>) {
    %bytes = vector.transfer_read %w[%i, %c0], %pad {in_bounds = [true]} : memref<30000x64xi8>, vector<64xi8>
    %s2 = arith.shrui %bytes, %two : vector<64xi8>
    %p2 = arith.andi %s2, %three : vector<64xi8>
    %u2 = vector.bitcast %p2 : vector<64xi8> to vector<16xi32>
    %d2 = afm_cpu.dot_bytes %sum, %u2, %s : vector<16xi32>
    %s6 = arith.shrui %bytes, %six : vector<64xi8>
    %p6 = arith.andi %s6, %three : vector<64xi8>
    %u6 = vector.bitcast %p6 : vector<64xi8> to vector<16xi32>
    %d6 = afm_cpu.dot_bytes %d2, %u6, %s : vector<16xi32>
    scf.yield %d6 : vector<16xi32>
  }
  // 30000 steps of products up to 192 * 128, four to a lane: the scaled
  // sum could leave i32.
  %c = scf.for %i = %c0 to %c30000 step %c1 iter_args(%sum = %zero) -> (vector<16xi32>) {
    %bytes = vector.transfer_read %w[%i, %c0], %pad {in_bounds = [true]} : memref<30000x64xi8>, vector<64xi8>
    %shifted = arith.shrui %bytes, %six : vector<64xi8>
    %p = arith.andi %shifted, %three : vector<64xi8>
    %u = vector.bitcast %p : vector<64xi8> to vector<16xi32>
    %d = afm_cpu.dot_bytes %sum, %u, %s : vector<16xi32>
    scf.yield %d : vector<16xi32>
  }
  return %a, %b, %c : vector<16xi32>, vector<16xi32>, vector<16xi32>
}
