//===- ASTCDecoder.cpp - ASTC HDR luminance block decoder -----------------===//
//
// Follows the decoding steps of the Khronos Data Format Specification's ASTC
// chapter: block mode, void extent, partition count, color endpoint mode,
// integer sequence decoding of endpoints and weights, weight infill, endpoint
// interpolation and the HDR-profile conversion to f16.
//
//===----------------------------------------------------------------------===//

#include "afm/Compress/ASTCDecoder.h"
#include "ASTCIntegerSequence.h"

#include <algorithm>

using namespace mlir::afm;
using namespace mlir::afm::astc;

static unsigned bit(unsigned value, unsigned index) {
  return (value >> index) & 1;
}

uint16_t mlir::afm::astcLnsToF16(uint16_t lns) {
  unsigned exponent = lns >> 11;
  unsigned mantissa = lns & 0x7ff;
  // Three linear pieces approximate 2^x on the mantissa.
  unsigned mt;
  if (mantissa < 512)
    mt = 3 * mantissa;
  else if (mantissa >= 1536)
    mt = 5 * mantissa - 2048;
  else
    mt = 4 * mantissa - 512;
  unsigned f16 = (exponent << 10) | (mt >> 3);
  return static_cast<uint16_t>(std::min(f16, 0x7bffu));
}

uint16_t mlir::afm::astcUnorm16ToF16(uint16_t unorm) {
  if (unorm == 0xffff)
    return 0x3c00;
  if (unorm < 4) // value / 65536 is an f16 subnormal: unorm * 2^-16.
    return static_cast<uint16_t>(unorm << 8);
  // Normalize: the leading one becomes the implicit bit, the next ten bits
  // are the mantissa (truncated), the exponent counts the leading zeros.
  unsigned leadingZeros = 0;
  while (!(unorm & (0x8000u >> leadingZeros)))
    ++leadingZeros;
  unsigned shifted = (static_cast<unsigned>(unorm) << (leadingZeros + 1)) & 0xffff;
  return static_cast<uint16_t>((shifted >> 6) | ((14 - leadingZeros) << 10));
}

namespace {
struct BlockMode {
  unsigned gridX, gridY;
  unsigned weightRange; // Index into the 21 ISE ranges (< 12 for weights).
  bool dualPlane;
};
} // namespace

/// The 11-bit block mode field (spec: "Block Mode", 2D layouts).
static llvm::Expected<BlockMode> decodeBlockMode(unsigned mode) {
  unsigned a = (mode >> 5) & 3;
  bool highPrecision = bit(mode, 9);
  bool dualPlane = bit(mode, 10);
  unsigned r, x, y;
  if ((mode & 3) != 0) {
    r = bit(mode, 4) | ((mode & 3) << 1);
    unsigned b = (mode >> 7) & 3;
    switch ((mode >> 2) & 3) {
    case 0: x = b + 4; y = a + 2; break;
    case 1: x = b + 8; y = a + 2; break;
    case 2: x = a + 2; y = b + 8; break;
    default:
      if (!bit(mode, 8)) {
        x = a + 2;
        y = (b & 1) + 6;
      } else {
        x = (b & 1) + 2;
        y = a + 2;
      }
      break;
    }
  } else {
    r = bit(mode, 4) | (((mode >> 2) & 3) << 1);
    if (r < 2)
      return llvm::createStringError("ASTC: reserved block mode 0x%03x", mode);
    unsigned b = (mode >> 9) & 3;
    switch ((mode >> 7) & 3) {
    case 0: x = 12; y = a + 2; break;
    case 1: x = a + 2; y = 12; break;
    case 2:
      x = a + 6;
      y = b + 6;
      highPrecision = false; // Bits 9-10 are B here.
      dualPlane = false;
      break;
    default:
      if (a == 0) {
        x = 6;
        y = 10;
      } else if (a == 1) {
        x = 10;
        y = 6;
      } else {
        return llvm::createStringError("ASTC: reserved block mode 0x%03x",
                                       mode);
      }
      break;
    }
  }
  if (r < 2)
    return llvm::createStringError("ASTC: reserved block mode 0x%03x", mode);
  return BlockMode{x, y, (r - 2) + (highPrecision ? 6 : 0), dualPlane};
}

/// The bits of the block in reverse order: weights are stored from bit 127
/// downwards, so they read forwards from this copy.
static void reverseBlock(const uint8_t *block, uint8_t *reversed) {
  for (unsigned i = 0; i < kASTCBlockBytes; ++i) {
    uint8_t v = block[kASTCBlockBytes - 1 - i], out = 0;
    for (unsigned b = 0; b < 8; ++b)
      out |= static_cast<uint8_t>(((v >> b) & 1) << (7 - b));
    reversed[i] = out;
  }
}

static unsigned readBits(const uint8_t *block, unsigned start,
                         unsigned count) {
  unsigned value = 0;
  for (unsigned i = 0; i < count; ++i)
    value |= bit(block[(start + i) / 8], (start + i) % 8) << i;
  return value;
}

/// A constant block: the HDR flag says whether the color is f16 or UNORM16.
/// The extent coordinates only tell a sampler where the color also holds;
/// they never change this block's texels, so they are not checked.
static llvm::Error decodeVoidExtent(const uint8_t *block, unsigned texels,
                                    uint16_t *out) {
  if (readBits(block, 10, 2) != 3)
    return llvm::createStringError(
        "ASTC: void-extent block with reserved bits 10-11 not set");
  uint16_t red = static_cast<uint16_t>(readBits(block, 64, 16));
  uint16_t value = bit(block[1], 1) ? red : astcUnorm16ToF16(red);
  std::fill(out, out + texels, value);
  return llvm::Error::success();
}

/// The two 16-bit endpoints of the first channel and whether they are LNS
/// (HDR) values; spec: "Color Endpoint Decoding", modes 0, 2 and 3.
static void decodeLuminanceEndpoints(unsigned cem, unsigned v0, unsigned v1,
                                     unsigned e[2], bool &hdr) {
  if (cem == 0) { // LDR luminance: 8-bit values widened by replication.
    e[0] = v0 * 257;
    e[1] = v1 * 257;
    hdr = false;
    return;
  }
  unsigned y0, y1;
  if (cem == 2) { // HDR luminance, large range.
    if (v1 >= v0) {
      y0 = v0 << 4;
      y1 = v1 << 4;
    } else {
      y0 = (v1 << 4) + 8;
      y1 = (v0 << 4) - 8;
    }
  } else { // 3: HDR luminance, small range (a base and a positive delta).
    unsigned delta;
    if (v0 & 0x80) {
      y0 = ((v1 & 0xe0) << 4) | ((v0 & 0x7f) << 2);
      delta = (v1 & 0x1f) << 2;
    } else {
      y0 = ((v1 & 0xf0) << 4) | ((v0 & 0x7f) << 1);
      delta = (v1 & 0x0f) << 1;
    }
    y1 = std::min(y0 + delta, 0xfffu);
  }
  // 12-bit LNS values occupy the top of the 16-bit interpolation range.
  e[0] = y0 << 4;
  e[1] = y1 << 4;
  hdr = true;
}

/// The red endpoints of mode 7, HDR RGB base + scale (spec: "HDR Endpoint
/// Mode 7"): a 12-bit base color whose bits are spread over the spare bits
/// of four values under one of six sub-modes, and a scale subtracted from it
/// for endpoint 0. Returns LNS values (12-bit << 4).
static void decodeRgbScaleRed(const unsigned v[4], unsigned e[2]) {
  unsigned modeVal =
      ((v[0] & 0xc0) >> 6) | ((v[1] & 0x80) >> 5) | ((v[2] & 0x80) >> 4);
  unsigned majorComponent, mode;
  if ((modeVal & 0xc) != 0xc) {
    majorComponent = modeVal >> 2;
    mode = modeVal & 3;
  } else if (modeVal != 0xf) {
    majorComponent = modeVal & 3;
    mode = 4;
  } else {
    majorComponent = 0;
    mode = 5;
  }
  int red = v[0] & 0x3f, green = v[1] & 0x1f, blue = v[2] & 0x1f,
      scale = v[3] & 0x1f;
  unsigned x0 = bit(v[1], 6), x1 = bit(v[1], 5), x2 = bit(v[2], 6),
           x3 = bit(v[2], 5), x4 = bit(v[3], 7), x5 = bit(v[3], 6),
           x6 = bit(v[3], 5);
  unsigned oneHot = 1u << mode;
  if (oneHot & 0x30) green |= x0 << 6;
  if (oneHot & 0x3a) green |= x1 << 5;
  if (oneHot & 0x30) blue |= x2 << 6;
  if (oneHot & 0x3a) blue |= x3 << 5;
  if (oneHot & 0x3d) scale |= x6 << 5;
  if (oneHot & 0x2d) scale |= x5 << 6;
  if (oneHot & 0x04) scale |= x4 << 7;
  if (oneHot & 0x3b) red |= x4 << 6;
  if (oneHot & 0x04) red |= x3 << 6;
  if (oneHot & 0x10) red |= x5 << 7;
  if (oneHot & 0x0f) red |= x2 << 7;
  if (oneHot & 0x05) red |= x1 << 8;
  if (oneHot & 0x0a) red |= x0 << 8;
  if (oneHot & 0x05) red |= x0 << 9;
  if (oneHot & 0x02) red |= x6 << 9;
  if (oneHot & 0x01) red |= x3 << 10;
  if (oneHot & 0x02) red |= x5 << 10;
  static constexpr int shifts[6] = {1, 1, 2, 3, 4, 5};
  int shift = shifts[mode];
  red <<= shift;
  green <<= shift;
  blue <<= shift;
  scale <<= shift;
  if (mode != 5) {
    green = red - green;
    blue = red - blue;
  }
  // The major component was stored in the red slot.
  int first = majorComponent == 1 ? green : majorComponent == 2 ? blue : red;
  e[1] = static_cast<unsigned>(std::clamp(first, 0, 0xfff)) << 4;
  e[0] = static_cast<unsigned>(std::clamp(first - scale, 0, 0xfff)) << 4;
}

/// Bilinear infill of a gridX x gridY weight grid to the block's texels
/// (spec: "Weight Infill"), all in the spec's fixed point.
static void infillWeights(const unsigned *grid, const BlockMode &mode,
                          unsigned blockX, unsigned blockY,
                          unsigned *texelWeights) {
  unsigned ds = (1024 + blockX / 2) / (blockX - 1);
  unsigned dt = (1024 + blockY / 2) / (blockY - 1);
  unsigned n = mode.gridX, m = mode.gridY;
  auto at = [&](unsigned gx, unsigned gy) {
    return grid[std::min(gy, m - 1) * n + std::min(gx, n - 1)];
  };
  for (unsigned t = 0; t < blockY; ++t)
    for (unsigned s = 0; s < blockX; ++s) {
      unsigned gs = (ds * s * (n - 1) + 32) >> 6;
      unsigned gt = (dt * t * (m - 1) + 32) >> 6;
      unsigned js = gs >> 4, fs = gs & 0xf;
      unsigned jt = gt >> 4, ft = gt & 0xf;
      unsigned w11 = (fs * ft + 8) >> 4;
      unsigned w10 = ft - w11;
      unsigned w01 = fs - w11;
      unsigned w00 = 16 - fs - ft + w11;
      texelWeights[t * blockX + s] =
          (at(js, jt) * w00 + at(js + 1, jt) * w01 + at(js, jt + 1) * w10 +
           at(js + 1, jt + 1) * w11 + 8) >>
          4;
    }
}

llvm::Error mlir::afm::decodeASTCBlock(const uint8_t block[kASTCBlockBytes],
                                       unsigned blockX, unsigned blockY,
                                       uint16_t *outF16) {
  if (blockX < 4 || blockX > 12 || blockY < 4 || blockY > 12)
    return llvm::createStringError("ASTC: unsupported block size %ux%u",
                                   blockX, blockY);
  unsigned texels = blockX * blockY;
  unsigned modeBits = readBits(block, 0, 11);
  if ((modeBits & 0x1ff) == 0x1fc)
    return decodeVoidExtent(block, texels, outF16);

  llvm::Expected<BlockMode> mode = decodeBlockMode(modeBits);
  if (!mode)
    return mode.takeError();
  if (mode->dualPlane)
    return llvm::createStringError("ASTC: dual-plane blocks are unsupported");
  if (mode->gridX > blockX || mode->gridY > blockY)
    return llvm::createStringError(
        "ASTC: %ux%u weight grid exceeds the %ux%u block", mode->gridX,
        mode->gridY, blockX, blockY);
  unsigned weightCount = mode->gridX * mode->gridY;
  unsigned weightBits = iseBitCount(weightCount, mode->weightRange);
  if (weightCount > 64 || weightBits < 24 || weightBits > 96)
    return llvm::createStringError(
        "ASTC: invalid weight grid (%u weights in %u bits)", weightCount,
        weightBits);

  unsigned partitions = readBits(block, 11, 2) + 1;
  if (partitions != 1)
    return llvm::createStringError("ASTC: %u partitions are unsupported",
                                   partitions);
  unsigned cem = readBits(block, 13, 4);
  if (cem != 0 && cem != 2 && cem != 3 && cem != 7)
    return llvm::createStringError(
        "ASTC: color endpoint mode %u is unsupported", cem);

  // The endpoints take the finest range whose values (2 per endpoint pair
  // of the mode's class) fit between the 17 header bits and the weights.
  unsigned valueCount = ((cem >> 2) + 1) * 2;
  unsigned colorBits = 128 - 17 - weightBits;
  unsigned colorRange = kQuantRangeCount;
  for (unsigned i = kQuantRangeCount; i-- > 0;)
    if (iseBitCount(valueCount, i) <= colorBits) {
      colorRange = i;
      break;
    }
  if (colorRange == kQuantRangeCount || colorRange < 4)
    return llvm::createStringError("ASTC: no color range fits %u bits",
                                   colorBits);
  uint8_t colorValues[4];
  decodeISE(block, 17, valueCount, colorRange, colorValues);
  unsigned values[4];
  for (unsigned i = 0; i < valueCount; ++i)
    values[i] = unquantizeColor(colorValues[i], colorRange);
  unsigned endpoints[2];
  bool hdr = true;
  if (cem == 7)
    decodeRgbScaleRed(values, endpoints);
  else
    decodeLuminanceEndpoints(cem, values[0], values[1], endpoints, hdr);

  uint8_t reversed[kASTCBlockBytes];
  reverseBlock(block, reversed);
  uint8_t weightValues[64];
  decodeISE(reversed, 0, weightCount, mode->weightRange, weightValues);
  unsigned grid[64];
  for (unsigned i = 0; i < weightCount; ++i)
    grid[i] = unquantizeWeight(weightValues[i], mode->weightRange);
  unsigned texelWeights[144];
  infillWeights(grid, *mode, blockX, blockY, texelWeights);

  for (unsigned i = 0; i < texels; ++i) {
    unsigned w = texelWeights[i];
    unsigned c = (endpoints[0] * (64 - w) + endpoints[1] * w + 32) >> 6;
    outF16[i] = hdr ? astcLnsToF16(static_cast<uint16_t>(c))
                    : astcUnorm16ToF16(static_cast<uint16_t>(c));
  }
  return llvm::Error::success();
}
