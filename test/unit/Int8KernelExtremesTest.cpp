//===- Int8KernelExtremesTest.cpp - int8 kernels at their largest sums ----===//
//
// With int8 activations the 2-bit linear layers and the 4-bit LM head sum
// byte products in integers. On AVX2 (vpmaddubsw) the products of a
// GEMV step are added as i16 pair sums before one widening to i32
// (afm-lower-dot-bytes), which is exact only while those sums stay within
// i16: the 4-bit head's eight nibble products per widening reach 30480 of
// 32767 when every code and activation is at its largest. The 2-bit
// GEMV's planes read at 4x (masks of 12, sharing a shift) sum into an
// accumulator of their own that is shifted back after the loop, exact only
// if that sum is a multiple of 4 within i32. These tests
// compile both kernels for x86-64-v3 and for the host, feed them exactly
// those inputs, and compare with the sums computed by hand: any overflow
// is off by a multiple of 65536.
//
//===----------------------------------------------------------------------===//

#include "HostGraphTestSupport.h"

#include <cstring>
#include <string>

using namespace mlir;

namespace {

/// The targets these kernels are checked on: the host's own, and AVX2
/// (vpmaddubsw) on any x86-64 host, which all have it here.
std::vector<afm::TargetDescription> targetsToCheck() {
  std::vector<afm::TargetDescription> targets{afm::getHostTarget()};
  if (!targets.front().isAArch64()) {
    llvm::Expected<afm::TargetDescription> avx2 =
        afm::lookupTarget("x86-64-v3");
    EXPECT_TRUE(bool(avx2)) << llvm::toString(avx2.takeError());
    if (avx2 && avx2->name != targets.front().name)
      targets.push_back(*avx2);
  }
  return targets;
}

using Int8KernelExtremesTest = afm::test::HostGraphTest;

/// `count` floats of `value`.
std::vector<float> filled(size_t count, float value) {
  return std::vector<float>(count, value);
}

} // namespace

// A 2-bit GEMV, 64 x 4096, with activations of one sign (every one rounds
// to 127 or -127, so their scale is exactly 1/127 of 1). Row r's codes are
// all r % 4, the level r % 4 - 1.5, so y[r] = (r % 4 - 1.5) * 4096 * x.
TEST_F(Int8KernelExtremesTest, Q2LinearSumsExactlyAtTheLargestCodes) {
  constexpr int64_t rows = 64, k = 4096;
  const std::string source = R"mlir(
    module attributes {afm.model = #afm.model<linear_activations = "int8",
        vocab_size = 32, context_length = 16, prefill_chunk = 4>} {
      func.func @main(%x: tensor<1x4096xf32>, %codes: tensor<64x1024xi8>,
                      %scale: tensor<1xf32>) -> tensor<1x64xf32> {
        %w = afm.bound_weight %codes, %scale
            : tensor<64x1024xi8>, tensor<1xf32> -> !afm.q2<64x4096, per_tensor>
        %y = afm.linear %x, %w
            : tensor<1x4096xf32>, !afm.q2<64x4096, per_tensor> -> tensor<1x64xf32>
        return %y : tensor<1x64xf32>
      }
    })mlir";
  std::vector<uint8_t> codes(rows * k / 4);
  for (int64_t r = 0; r < rows; ++r)
    std::memset(codes.data() + r * k / 4, 0x55 * (r % 4), k / 4);
  std::vector<float> scale{1.0f};
  for (const afm::TargetDescription &target : targetsToCheck()) {
    SCOPED_TRACE(target.name);
    void *main = compile(source, target);
    ASSERT_NE(main, nullptr);
    for (float sign : {1.0f, -1.0f}) {
      std::vector<float> x = filled(k, sign), y = filled(rows, 0.0f);
      ASSERT_FALSE(afm::callGraph(
          main, {x.data(), codes.data(), scale.data(), y.data()}));
      for (int64_t r = 0; r < rows; ++r)
        EXPECT_EQ(y[r], (r % 4 - 1.5f) * k * sign)
            << "row " << r << ", activations " << sign;
    }
  }
}

// The 4-bit LM head, 64 x 3072, group 32, scales 1: row r's nibbles are
// all 7 (the largest, biased to 15 in the kernel's unsigned bytes) for even
// r and -8 for odd r, so logits[r] = q * 3072 * x.
TEST_F(Int8KernelExtremesTest, Q4HeadSumsExactlyAtTheLargestNibbles) {
  constexpr int64_t vocab = 64, dim = 3072, group = 32;
  const std::string source = R"mlir(
    module attributes {afm.model = #afm.model<linear_activations = "int8",
        vocab_size = 64, context_length = 16, prefill_chunk = 4>} {
      func.func @main(%h: tensor<1x3072xf32>, %codes: tensor<64x1536xi8>,
                      %scales: tensor<64x96xf32>) -> tensor<1x64xf32> {
        %w = afm.bound_weight %codes, %scales
            : tensor<64x1536xi8>, tensor<64x96xf32>
            -> !afm.q4<64x3072, group = 32>
        %l = afm.lm_head %h, %w
            : tensor<1x3072xf32>, !afm.q4<64x3072, group = 32>
            -> tensor<1x64xf32>
        return %l : tensor<1x64xf32>
      }
    })mlir";
  std::vector<uint8_t> codes(vocab * dim / 2);
  for (int64_t r = 0; r < vocab; ++r)
    std::memset(codes.data() + r * dim / 2, r % 2 ? 0x88 : 0x77, dim / 2);
  std::vector<float> scales = filled(vocab * dim / group, 1.0f);
  for (const afm::TargetDescription &target : targetsToCheck()) {
    SCOPED_TRACE(target.name);
    void *main = compile(source, target);
    ASSERT_NE(main, nullptr);
    for (float sign : {1.0f, -1.0f}) {
      std::vector<float> h = filled(dim, sign), logits = filled(vocab, 0.0f);
      ASSERT_FALSE(afm::callGraph(
          main, {h.data(), codes.data(), scales.data(), logits.data()}));
      for (int64_t r = 0; r < vocab; ++r)
        EXPECT_EQ(logits[r], (r % 2 ? -8.0f : 7.0f) * dim * sign)
            << "row " << r << ", activations " << sign;
    }
  }
}
