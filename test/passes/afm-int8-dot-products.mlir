// The int8 dot-product kernel of a 2-bit linear layer with int8 activations
// (Q2Int8Matmul.cpp): out[t, o, i] += zext(code) * sext(x) over the code
// groups g, the planes j and the four bytes m of each i32 lane i. Each
// target vectorizes a tile of it into 1-D byte vectors and its own
// instruction, with the accumulator in a register across g and the four
// planes unrolled (constant shifts).
// RUN: afm-opt %s -split-input-file --afm-set-target=target=x86-64-v4-vnni --afm-select-tiles --afm-tile-for-target | FileCheck %s --check-prefix=VNNI
// RUN: afm-opt %s -split-input-file --afm-set-target=target=x86-64-v4 --afm-select-tiles --afm-tile-for-target | FileCheck %s --check-prefix=AVX512
// RUN: afm-opt %s -split-input-file --afm-set-target=target=x86-64-v3 --afm-select-tiles --afm-tile-for-target | FileCheck %s --check-prefix=AVX2
// RUN: afm-opt %s -split-input-file --afm-set-target=target=apple-m2 --afm-select-tiles --afm-tile-for-target | FileCheck %s --check-prefix=SDOT
// RUN: afm-opt %s -split-input-file --afm-set-target=target=aarch64-generic --afm-select-tiles --afm-tile-for-target | FileCheck %s --check-prefix=GENERIC
// RUN: afm-opt %s -split-input-file --afm-set-target=target=x86-64-v4-vnni --afm-select-tiles --afm-tile-for-target --afm-lower-dot-bytes | FileCheck %s --check-prefix=LOWERED
// RUN: afm-opt %s -split-input-file --afm-set-target=target=x86-64-v4-vnni --afm-select-tiles --afm-tile-for-target | grep -c memref.prefetch | FileCheck %s --check-prefix=ONE-PREFETCH
// ONE-PREFETCH: {{^}}1{{$}}
// ONE-PREFETCH checks the default hint (into L1); Zen 4 prefetches the same
// line into L2 (locality 1, prefetcht2: TargetDescription.cpp).
// RUN: afm-opt %s -split-input-file --afm-set-target=target=x86-64-v4-vnni --afm-select-tiles --afm-tile-for-target | FileCheck %s --check-prefix=L1-HINT
// L1-HINT: memref.prefetch {{.*}} read, locality<3>, data
// RUN: afm-opt %s -split-input-file --afm-set-target=target=amd-zen4 --afm-select-tiles --afm-tile-for-target | FileCheck %s --check-prefix=L2-HINT
// L2-HINT: memref.prefetch {{.*}} read, locality<1>, data
// L2-HINT-NOT: locality<3>
// RUN: afm-opt %s -split-input-file --afm-set-target=target=amd-zen4 --afm-select-tiles --afm-tile-for-target --afm-lower-dot-bytes | FileCheck %s --check-prefix=LOWERED

#X = affine_map<(t, o, g, j, i, m) -> (t, j, g, i, m)>
#W = affine_map<(t, o, g, j, i, m) -> (o, g, i, m)>
#Y = affine_map<(t, o, g, j, i, m) -> (t, o, i)>

// VNNI-LABEL: func.func @masked_codes
// VNNI: scf.for {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (vector<16xi32>)
// VNNI-COUNT-4: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// VNNI-NOT: vector.multi_reduction
// VNNI: scf.yield
// AVX512-LABEL: func.func @masked_codes
// AVX512-COUNT-4: llvm.call_intrinsic "llvm.x86.avx512.pmaddubs.w.512"
// AVX512-NOT: vector.multi_reduction
// AVX2-LABEL: func.func @masked_codes
// AVX2: llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"({{.*}}) : (vector<32xi8>, vector<32xi8>) -> vector<16xi16>
// AVX2: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"({{.*}}) : (vector<16xi16>, vector<16xi16>) -> vector<8xi32>
// AVX2-NOT: vector.multi_reduction
// SDOT-LABEL: func.func @masked_codes
// SDOT: llvm.call_intrinsic "llvm.aarch64.neon.sdot.v4i32.v16i8"({{.*}}) : (vector<4xi32>, vector<16xi8>, vector<16xi8>) -> vector<4xi32>
// SDOT-NOT: vector.multi_reduction
// Without a dot-product instruction the upstream vectorizer's form stays.
// GENERIC-LABEL: func.func @masked_codes
// GENERIC-NOT: llvm.call_intrinsic
// GENERIC: vector.multi_reduction <add>
func.func @masked_codes(%x: memref<1x4x8x16x4xi8>, %w: memref<8x8x16x4xi8>,
                        %y: memref<1x8x16xi32>) {
  linalg.generic {indexing_maps = [#X, #W, #Y],
                  iterator_types = ["parallel", "parallel", "reduction",
                                    "reduction", "parallel", "reduction"]}
      ins(%x, %w : memref<1x4x8x16x4xi8>, memref<8x8x16x4xi8>)
      outs(%y : memref<1x8x16xi32>) {
  ^bb0(%xq: i8, %byte: i8, %acc: i32):
    %j = linalg.index 3 : index
    %plane = arith.index_cast %j : index to i8
    %c1 = arith.constant 1 : i8
    %shift = arith.shli %plane, %c1 : i8
    %shifted = arith.shrui %byte, %shift : i8
    %c3 = arith.constant 3 : i8
    %code = arith.andi %shifted, %c3 : i8
    %u = arith.extui %code : i8 to i32
    %s = arith.extsi %xq : i8 to i32
    %p = arith.muli %u, %s : i32
    %sum = arith.addi %acc, %p : i32
    linalg.yield %sum : i32
  }
  return
}

// -----

#X = affine_map<(t, o, g, i, m) -> (t, g, i, m)>
#W = affine_map<(t, o, g, i, m) -> (o, g, i, m)>
#Y = affine_map<(t, o, g, i, m) -> (t, o, i)>

// Unsigned bytes that may reach 255: vpdpbusd multiplies them exactly, but
// vpmaddubsw's i16 pair sums could saturate and sdot reads them as signed,
// so those targets keep the generic form.
// VNNI-LABEL: func.func @full_bytes
// VNNI: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// AVX512-LABEL: func.func @full_bytes
// AVX512-NOT: llvm.call_intrinsic
// AVX512: vector.multi_reduction <add>
// AVX2-LABEL: func.func @full_bytes
// AVX2-NOT: llvm.call_intrinsic
// AVX2: vector.multi_reduction <add>
// SDOT-LABEL: func.func @full_bytes
// SDOT-NOT: llvm.call_intrinsic
// SDOT: vector.multi_reduction <add>
func.func @full_bytes(%x: memref<1x8x16x4xi8>, %w: memref<8x8x16x4xi8>,
                      %y: memref<1x8x16xi32>) {
  linalg.generic {indexing_maps = [#X, #W, #Y],
                  iterator_types = ["parallel", "parallel", "reduction",
                                    "parallel", "reduction"]}
      ins(%x, %w : memref<1x8x16x4xi8>, memref<8x8x16x4xi8>)
      outs(%y : memref<1x8x16xi32>) {
  ^bb0(%xq: i8, %byte: i8, %acc: i32):
    %u = arith.extui %byte : i8 to i32
    %s = arith.extsi %xq : i8 to i32
    %p = arith.muli %s, %u : i32
    %sum = arith.addi %p, %acc : i32
    linalg.yield %sum : i32
  }
  return
}

// -----

#X = affine_map<(t, o, g, j, i, m) -> (t, j, g, i, m)>
#W = affine_map<(t, o, g, j, i, m) -> (o, g, i, m)>
#Y = affine_map<(t, o, g, j, i, m) -> (t, o)>

// The kernel's real form: the lanes are summed too (one i32 per output).
// The lanes stay a vector accumulator across the group loop, and the
// horizontal sum happens once per output, after it. The weights (2 MiB)
// are prefetched ahead, once per group of code bytes (the four unrolled
// planes read the same bytes): one prefetch in the whole file.
// Each plane's dot product accumulates into its own vector (four
// independent chains), inside the instruction: afm-lower-dot-bytes then
// gives one vpdpbusd per plane into its accumulator, with no zeroed
// register and no add.
// VNNI-LABEL: func.func @lanes_summed
// VNNI: scf.for {{.*}} iter_args({{.*}}, %[[A0:[^ ]*]] = %{{.*}}, %[[A1:[^ ]*]] = %{{.*}}, %[[A2:[^ ]*]] = %{{.*}}, %[[A3:[^ ]*]] = %{{.*}}) -> (vector<1xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>)
// VNNI: memref.prefetch %{{.*}} : memref<4096x8x16x4xi8>
// VNNI: afm_cpu.dot_bytes %[[A0]],
// VNNI: afm_cpu.dot_bytes %[[A1]],
// VNNI: afm_cpu.dot_bytes %[[A2]],
// VNNI: afm_cpu.dot_bytes %[[A3]],
// VNNI-NOT: vector.reduction
// VNNI: scf.yield
// VNNI: arith.addi
// VNNI: arith.addi
// VNNI: arith.addi
// VNNI: vector.reduction <add>
// LOWERED-LABEL: func.func @lanes_summed
// LOWERED: scf.for {{.*}} iter_args({{.*}}, %[[A0:[^ ]*]] = %{{.*}}, %[[A1:[^ ]*]] = %{{.*}}, %[[A2:[^ ]*]] = %{{.*}}, %[[A3:[^ ]*]] = %{{.*}})
// LOWERED-NOT: arith.addi {{.*}} : vector<16xi32>
// LOWERED: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%[[A0]],
// LOWERED-NOT: arith.addi {{.*}} : vector<16xi32>
// LOWERED: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%[[A1]],
// LOWERED-NOT: arith.addi {{.*}} : vector<16xi32>
// LOWERED: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%[[A2]],
// LOWERED-NOT: arith.addi {{.*}} : vector<16xi32>
// LOWERED: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%[[A3]],
// LOWERED: scf.yield
// AVX2-LABEL: func.func @lanes_summed
// AVX2: scf.for {{.*}} iter_args({{.*}}) -> ({{.*}}vector<8xi32>)
// AVX2-COUNT-8: afm_cpu.dot_bytes
// AVX2: scf.yield
// AVX2: vector.reduction <add>
func.func @lanes_summed(%x: memref<1x4x8x16x4xi8>, %w: memref<4096x8x16x4xi8>,
                        %y: memref<1x4096xi32>) {
  linalg.generic {indexing_maps = [#X, #W, #Y],
                  iterator_types = ["parallel", "parallel", "reduction",
                                    "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x4x8x16x4xi8>, memref<4096x8x16x4xi8>)
      outs(%y : memref<1x4096xi32>) {
  ^bb0(%xq: i8, %byte: i8, %acc: i32):
    %j = linalg.index 3 : index
    %plane = arith.index_cast %j : index to i8
    %c1 = arith.constant 1 : i8
    %shift = arith.shli %plane, %c1 : i8
    %shifted = arith.shrui %byte, %shift : i8
    %c3 = arith.constant 3 : i8
    %code = arith.andi %shifted, %c3 : i8
    %u = arith.extui %code : i8 to i32
    %s = arith.extsi %xq : i8 to i32
    %p = arith.muli %u, %s : i32
    %sum = arith.addi %acc, %p : i32
    linalg.yield %sum : i32
  }
  return
}
