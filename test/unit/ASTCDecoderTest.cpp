//===- ASTCDecoderTest.cpp - Our ASTC decoder against libastcenc ----------===//
//
// Every block libastcenc emits for weight matrices must decode to the same
// f16 bits as libastcenc's own decompressor; hand-assembled blocks check the
// decoder against values worked out from the specification by hand.

#include "afm/Compress/ASTC.h"
#include "afm/Compress/ASTCDecoder.h"
#include "CompressTestSupport.h"

#include <astcenc.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

using namespace mlir::afm;

namespace {
/// libastcenc's decompressor for one 6x6 HDR block, first channel as f16.
class ReferenceDecoder {
public:
  ReferenceDecoder() {
    astcenc_config config;
    EXPECT_EQ(astcenc_config_init(ASTCENC_PRF_HDR, 6, 6, 1, ASTCENC_PRE_FAST,
                                  ASTCENC_FLG_DECOMPRESS_ONLY, &config),
              ASTCENC_SUCCESS);
    astcenc_context *raw = nullptr;
    EXPECT_EQ(astcenc_context_alloc(&config, 1, &raw), ASTCENC_SUCCESS);
    context.reset(raw);
  }
  void decode(const uint8_t *block, uint16_t out[36]) {
    uint16_t rgba[36 * 4];
    astcenc_image image;
    image.dim_x = 6;
    image.dim_y = 6;
    image.dim_z = 1;
    image.data_type = ASTCENC_TYPE_F16;
    void *slices[1] = {rgba};
    image.data = slices;
    const astcenc_swizzle swizzle = {ASTCENC_SWZ_R, ASTCENC_SWZ_G,
                                     ASTCENC_SWZ_B, ASTCENC_SWZ_A};
    ASSERT_EQ(astcenc_decompress_image(context.get(), block, 16, &image,
                                       &swizzle, 0),
              ASTCENC_SUCCESS);
    astcenc_decompress_reset(context.get());
    for (int i = 0; i < 36; ++i)
      out[i] = rgba[i * 4];
  }
  astcenc_context *get() { return context.get(); }

private:
  struct Deleter {
    void operator()(astcenc_context *c) const { astcenc_context_free(c); }
  };
  std::unique_ptr<astcenc_context, Deleter> context;
};

/// Sets `count` bits of `block` from bit `start` (little-endian) to `value`.
void setBits(uint8_t *block, unsigned start, unsigned count, unsigned value) {
  for (unsigned i = 0; i < count; ++i) {
    unsigned pos = start + i;
    block[pos / 8] = static_cast<uint8_t>(
        (block[pos / 8] & ~(1u << (pos % 8))) | (((value >> i) & 1u) << (pos % 8)));
  }
}

std::string describe(astcenc_context *context, const uint8_t *block) {
  astcenc_block_info info;
  astcenc_get_block_info(context, block, &info);
  if (info.is_constant_block)
    return "void-extent";
  char text[128];
  std::snprintf(text, sizeof(text), "cem %u, %ux%u grid, %u weight levels",
                info.color_endpoint_modes[0], info.weight_x, info.weight_y,
                info.weight_level_count);
  return text;
}
} // namespace

TEST(ASTCDecoder, MatchesLibastcencOnEncodedGaussians) {
  ReferenceDecoder reference;
  std::map<std::string, int> seen;
  for (ASTCOffsetMode mode : {ASTCOffsetMode::Min, ASTCOffsetMode::LinearSegment})
    for (unsigned seed : {1u, 2u, 3u, 4u}) {
      // Odd shapes give edge blocks with 1-4 real rows or columns.
      size_t rows = seed < 4 ? 48 : 7, cols = seed < 4 ? 60 : 16;
      std::vector<float> w = test::gaussian(rows * cols, 0.02f, seed);
      llvm::Expected<ASTCMatrix> m = encodeASTC(w.data(), rows, cols, mode);
      ASSERT_TRUE(static_cast<bool>(m)) << llvm::toString(m.takeError());
      for (size_t b = 0; b < m->offsets.size(); ++b) {
        const uint8_t *block = &m->blocks[b * 16];
        uint16_t ours[36], theirs[36];
        ASSERT_FALSE(static_cast<bool>(decodeASTCBlock(block, 6, 6, ours)));
        reference.decode(block, theirs);
        for (int i = 0; i < 36; ++i)
          ASSERT_EQ(ours[i], theirs[i]) << "block " << b << " texel " << i;
        ++seen[describe(reference.get(), block)];
      }
    }
  for (auto &[kind, count] : seen)
    std::printf("[ astc ] %5d blocks: %s\n", count, kind.c_str());
}

TEST(ASTCDecoder, MatchesLibastcencOnRandomBlocksItAccepts) {
  // Random blocks forced to one partition and a supported endpoint mode
  // exercise every block mode, weight range (bits, trits,
  // quints) and infill grid, not just the ones the encoder happens to pick.
  ReferenceDecoder reference;
  std::mt19937 rng(11);
  int accepted = 0;
  std::map<unsigned, int> ranges;
  for (int n = 0; n < 40000; ++n) {
    uint8_t block[16];
    for (uint8_t &byte : block)
      byte = static_cast<uint8_t>(rng());
    setBits(block, 11, 2, 0);
    static const unsigned cems[4] = {0, 2, 3, 7};
    setBits(block, 13, 4, cems[rng() % 4]);
    uint16_t ours[36], theirs[36];
    if (llvm::Error err = decodeASTCBlock(block, 6, 6, ours)) {
      llvm::consumeError(std::move(err));
      continue;
    }
    ++accepted;
    reference.decode(block, theirs);
    for (int i = 0; i < 36; ++i)
      ASSERT_EQ(ours[i], theirs[i]) << "random block " << n << " texel " << i;
    astcenc_block_info info;
    astcenc_get_block_info(reference.get(), block, &info);
    ++ranges[info.weight_level_count];
  }
  EXPECT_GT(accepted, 1000);
  std::printf("[ astc ] %d random blocks decoded identically\n", accepted);
  EXPECT_GE(ranges.size(), 10u); // Most of the 12 weight ranges were hit.
}

TEST(ASTCDecoder, VoidExtentBlocks) {
  uint8_t block[16] = {};
  setBits(block, 0, 9, 0x1fc);
  setBits(block, 9, 1, 1); // HDR: the color is f16.
  setBits(block, 10, 2, 3);
  for (unsigned i = 12; i < 64; i += 13)
    setBits(block, i, 13, 0x1fff);
  setBits(block, 64, 16, 0x3555);
  uint16_t out[36];
  ASSERT_FALSE(static_cast<bool>(decodeASTCBlock(block, 6, 6, out)));
  for (uint16_t v : out)
    EXPECT_EQ(v, 0x3555);
  setBits(block, 9, 1, 0); // LDR: UNORM16 0x8000 is 0.5.
  setBits(block, 64, 16, 0x8000);
  ASSERT_FALSE(static_cast<bool>(decodeASTCBlock(block, 6, 6, out)));
  for (uint16_t v : out)
    EXPECT_EQ(v, 0x3800);
  uint16_t theirs[36];
  ReferenceDecoder().decode(block, theirs);
  EXPECT_EQ(theirs[0], 0x3800);
}

/// Block mode 0x104: 6x6 grid of 1-bit weights (spec layout "B B 1 0 A A R0
/// R2 R1 0 0" with A = B = 0, R = 2). 36 weight bits leave 75 for two 8-bit
/// endpoint values at bits 17..32.
static void buildCheckerboard(uint8_t *block, unsigned cem, unsigned v0,
                              unsigned v1) {
  std::fill(block, block + 16, 0);
  setBits(block, 0, 11, 0x104);
  setBits(block, 13, 4, cem);
  setBits(block, 17, 8, v0);
  setBits(block, 25, 8, v1);
  for (unsigned y = 0; y < 6; ++y)
    for (unsigned x = 0; x < 6; ++x)
      setBits(block, 127 - (y * 6 + x), 1, (x + y) & 1); // Weights from the top.
}

TEST(ASTCDecoder, HandBuiltLdrLuminanceBlock) {
  uint8_t block[16];
  buildCheckerboard(block, 0, 0x40, 0xff);
  uint16_t out[36], theirs[36];
  ASSERT_FALSE(static_cast<bool>(decodeASTCBlock(block, 6, 6, out)));
  // Endpoint 0x40 widens to 0x4040 = 0.2509765625 = f16 0x3404 exactly;
  // 0xff widens to 0xffff, which is 1.0.
  for (unsigned i = 0; i < 36; ++i)
    EXPECT_EQ(out[i], ((i / 6 + i % 6) & 1) ? 0x3c00 : 0x3404) << i;
  ReferenceDecoder().decode(block, theirs);
  EXPECT_TRUE(std::equal(out, out + 36, theirs));
}

TEST(ASTCDecoder, HandBuiltHdrLuminanceBlock) {
  uint8_t block[16];
  buildCheckerboard(block, 2, 0x40, 0x80);
  uint16_t out[36], theirs[36];
  ASSERT_FALSE(static_cast<bool>(decodeASTCBlock(block, 6, 6, out)));
  // Large range, v1 >= v0: 12-bit y = v << 4, LNS = y << 4: 0x4000 and
  // 0x8000. LNS exponent 8 and 16 with zero mantissa are f16 2^-7 (0x2000)
  // and 2^1 (0x4000).
  for (unsigned i = 0; i < 36; ++i)
    EXPECT_EQ(out[i], ((i / 6 + i % 6) & 1) ? 0x4000 : 0x2000) << i;
  ReferenceDecoder().decode(block, theirs);
  EXPECT_TRUE(std::equal(out, out + 36, theirs));
}

TEST(ASTCDecoder, HandBuiltInfilledBlock) {
  // Block mode 0x042: 4x4 grid of 2-bit weights (layout "D H B B A A R0 X X
  // R2 R1", A = 2, B = 0, R = 4). Only grid weight (1, 0) is 3 (-> 64).
  uint8_t block[16] = {};
  setBits(block, 0, 11, 0x042);
  setBits(block, 13, 4, 0);
  setBits(block, 17, 8, 0x00);
  setBits(block, 25, 8, 0xff);
  setBits(block, 124, 2, 3); // Weight 1 is reversed-stream bits 2..3.
  uint16_t out[36], theirs[36];
  ASSERT_FALSE(static_cast<bool>(decodeASTCBlock(block, 6, 6, out)));
  // Ds = (1024 + 3) / 5 = 205. Texel s = 1: gs = (205*3 + 32) >> 6 = 10,
  // so 6/16 of grid 0 and 10/16 of grid 1: (64*10 + 8) >> 4 = 40. Texel
  // s = 2: gs = 19, 13/16 of grid 1: (64*13 + 8) >> 4 = 52. Then
  // (0xffff*w + 32) >> 6 is 0x9fff and 0xcfff, truncated to f16 0x38ff and
  // 0x3a7f.
  EXPECT_EQ(out[0], 0x0000);
  EXPECT_EQ(out[1], 0x38ff);
  EXPECT_EQ(out[2], 0x3a7f);
  ReferenceDecoder().decode(block, theirs);
  EXPECT_TRUE(std::equal(out, out + 36, theirs));
}

TEST(ASTCDecoder, UnsupportedFeaturesAreNamedErrors) {
  auto errorOf = [](const uint8_t *block) {
    uint16_t out[36];
    llvm::Error err = decodeASTCBlock(block, 6, 6, out);
    return err ? llvm::toString(std::move(err)) : std::string("success");
  };
  uint8_t block[16];
  buildCheckerboard(block, 0, 0, 255);
  setBits(block, 11, 2, 1);
  EXPECT_NE(errorOf(block).find("2 partitions"), std::string::npos);
  buildCheckerboard(block, 8, 0, 255);
  EXPECT_NE(errorOf(block).find("color endpoint mode 8"), std::string::npos);
  buildCheckerboard(block, 0, 0, 255);
  setBits(block, 0, 11, 0x042 | 0x400);
  EXPECT_NE(errorOf(block).find("dual-plane"), std::string::npos);
  setBits(block, 0, 11, 0x1c0); // bits[1:0] = 0, R = 0: reserved.
  EXPECT_NE(errorOf(block).find("reserved block mode"), std::string::npos);
}
