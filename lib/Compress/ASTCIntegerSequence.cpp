//===- ASTCIntegerSequence.cpp - ASTC integer sequence encoding -----------===//

#include "ASTCIntegerSequence.h"

using namespace mlir::afm;
using namespace mlir::afm::astc;

QuantRange astc::quantRange(unsigned index) {
  // {bits, trit, quint} for 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48,
  // 64, 80, 96, 128, 160, 192, 256 levels.
  static constexpr QuantRange ranges[kQuantRangeCount] = {
      {1, false, false}, {0, true, false}, {2, false, false}, {0, false, true},
      {1, true, false},  {3, false, false}, {1, false, true}, {2, true, false},
      {4, false, false}, {2, false, true}, {3, true, false},  {5, false, false},
      {3, false, true},  {4, true, false}, {6, false, false}, {4, false, true},
      {5, true, false},  {7, false, false}, {5, false, true}, {6, true, false},
      {8, false, false}};
  return ranges[index];
}

unsigned astc::iseBitCount(unsigned count, unsigned index) {
  QuantRange range = quantRange(index);
  unsigned bits = count * range.bits;
  if (range.trit)
    bits += (8 * count + 4) / 5;
  if (range.quint)
    bits += (7 * count + 2) / 3;
  return bits;
}

namespace {
/// Reads a little-endian bit stream; bits at or past `end` read as zero,
/// which is how the spec pads the last, partial trit or quint group.
class BitReader {
public:
  BitReader(const uint8_t *data, unsigned pos, unsigned end)
      : data(data), pos(pos), end(end) {}
  unsigned read(unsigned count) {
    unsigned value = 0;
    for (unsigned i = 0; i < count; ++i, ++pos)
      if (pos < end && pos < 128)
        value |= ((data[pos / 8] >> (pos % 8)) & 1u) << i;
    return value;
  }

private:
  const uint8_t *data;
  unsigned pos, end;
};
} // namespace

static unsigned bit(unsigned value, unsigned index) {
  return (value >> index) & 1;
}

/// The five trits packed in the 8-bit T (spec: "Trit decoding").
static void decodeTrits(unsigned t, unsigned trits[5]) {
  unsigned c;
  if (((t >> 2) & 7) == 7) {
    c = (((t >> 5) & 7) << 2) | (t & 3);
    trits[4] = 2;
    trits[3] = 2;
  } else {
    c = t & 0x1f;
    if (((t >> 5) & 3) == 3) {
      trits[4] = 2;
      trits[3] = bit(t, 7);
    } else {
      trits[4] = bit(t, 7);
      trits[3] = (t >> 5) & 3;
    }
  }
  if ((c & 3) == 3) {
    trits[2] = 2;
    trits[1] = bit(c, 4);
    trits[0] = (bit(c, 3) << 1) | (bit(c, 2) & ~bit(c, 3) & 1);
  } else if (((c >> 2) & 3) == 3) {
    trits[2] = 2;
    trits[1] = 2;
    trits[0] = c & 3;
  } else {
    trits[2] = bit(c, 4);
    trits[1] = (c >> 2) & 3;
    trits[0] = (bit(c, 1) << 1) | (bit(c, 0) & ~bit(c, 1) & 1);
  }
}

/// The three quints packed in the 7-bit Q (spec: "Quint decoding").
static void decodeQuints(unsigned q, unsigned quints[3]) {
  if (((q >> 1) & 3) == 3 && ((q >> 5) & 3) == 0) {
    quints[2] = (bit(q, 0) << 2) | ((bit(q, 4) & ~bit(q, 0) & 1) << 1) |
                (bit(q, 3) & ~bit(q, 0) & 1);
    quints[1] = 4;
    quints[0] = 4;
    return;
  }
  unsigned c;
  if (((q >> 1) & 3) == 3) {
    quints[2] = 4;
    c = (((q >> 3) & 3) << 3) | ((~(q >> 5) & 3) << 1) | (q & 1);
  } else {
    quints[2] = (q >> 5) & 3;
    c = q & 0x1f;
  }
  if ((c & 7) == 5) {
    quints[1] = 4;
    quints[0] = (c >> 3) & 3;
  } else {
    quints[1] = (c >> 3) & 3;
    quints[0] = c & 7;
  }
}

void astc::decodeISE(const uint8_t data[16], unsigned start, unsigned count,
                     unsigned index, uint8_t *values) {
  QuantRange range = quantRange(index);
  BitReader reader(data, start, start + iseBitCount(count, index));
  unsigned m = range.bits;
  if (range.trit) {
    // Per group of 5: m0 T[1:0] m1 T[3:2] m2 T[4] m3 T[6:5] m4 T[7].
    static constexpr unsigned tritBits[5] = {2, 2, 1, 2, 1};
    for (unsigned base = 0; base < count; base += 5) {
      unsigned low[5], t = 0, shift = 0;
      for (unsigned i = 0; i < 5; ++i) {
        low[i] = reader.read(m);
        t |= reader.read(tritBits[i]) << shift;
        shift += tritBits[i];
      }
      unsigned trits[5];
      decodeTrits(t, trits);
      for (unsigned i = 0; i < 5 && base + i < count; ++i)
        values[base + i] = static_cast<uint8_t>((trits[i] << m) | low[i]);
    }
    return;
  }
  if (range.quint) {
    // Per group of 3: m0 Q[2:0] m1 Q[4:3] m2 Q[6:5].
    static constexpr unsigned quintBits[3] = {3, 2, 2};
    for (unsigned base = 0; base < count; base += 3) {
      unsigned low[3], q = 0, shift = 0;
      for (unsigned i = 0; i < 3; ++i) {
        low[i] = reader.read(m);
        q |= reader.read(quintBits[i]) << shift;
        shift += quintBits[i];
      }
      unsigned quints[3];
      decodeQuints(q, quints);
      for (unsigned i = 0; i < 3 && base + i < count; ++i)
        values[base + i] = static_cast<uint8_t>((quints[i] << m) | low[i]);
    }
    return;
  }
  for (unsigned i = 0; i < count; ++i)
    values[i] = static_cast<uint8_t>(reader.read(m));
}

/// `value` of `bits` bits repeated from the top down to fill `width` bits.
static unsigned replicate(unsigned value, unsigned bits, unsigned width) {
  unsigned out = 0;
  int shift = static_cast<int>(width);
  while (shift > 0) {
    shift -= static_cast<int>(bits);
    out |= shift >= 0 ? value << shift : value >> -shift;
  }
  return out & ((1u << width) - 1);
}

/// B of the spec's unquantization tables: `layout` lists the bits of B from
/// the most significant down; '0' is a zero, 'a'..'f' bit 0..5 of `low`.
static unsigned layoutBits(const char *layout, unsigned low) {
  unsigned out = 0;
  for (const char *c = layout; *c; ++c)
    out = (out << 1) | (*c == '0' ? 0 : bit(low, static_cast<unsigned>(*c - 'a')));
  return out;
}

namespace {
struct Unquant {
  const char *layout; // B
  unsigned c;         // C
};
} // namespace

/// The trit/quint part of unquantization shared by weights and colors:
/// T = D * C + B; T ^= A; T = (A & topBit) | (T >> 2).
static unsigned unquantizeDigit(uint8_t value, QuantRange range, Unquant u,
                                unsigned width) {
  unsigned low = value & ((1u << range.bits) - 1);
  unsigned digit = value >> range.bits;
  unsigned a = bit(low, 0) ? (1u << width) - 1 : 0;
  unsigned t = digit * u.c + layoutBits(u.layout, low);
  t ^= a;
  return (a & (1u << (width - 2))) | (t >> 2);
}

unsigned astc::unquantizeWeight(uint8_t value, unsigned index) {
  QuantRange range = quantRange(index);
  unsigned result;
  if (!range.trit && !range.quint) {
    result = replicate(value, range.bits, 6);
  } else if (range.bits == 0) {
    static constexpr unsigned tritValues[3] = {0, 32, 63};
    static constexpr unsigned quintValues[5] = {0, 16, 32, 47, 63};
    result = range.trit ? tritValues[value] : quintValues[value];
  } else {
    Unquant u;
    switch (index) {
    case 4: u = {"0000000", 50}; break;
    case 6: u = {"0000000", 28}; break;
    case 7: u = {"b000b0b", 23}; break;
    case 9: u = {"b0000b0", 13}; break;
    default: u = {"cb000cb", 11}; break; // 10: trit + 3 bits.
    }
    result = unquantizeDigit(value, range, u, 7);
  }
  // Stretch 0..63 to 0..64 so that 64 means "all of endpoint 1".
  return result > 32 ? result + 1 : result;
}

unsigned astc::unquantizeColor(uint8_t value, unsigned index) {
  QuantRange range = quantRange(index);
  if (!range.trit && !range.quint)
    return replicate(value, range.bits, 8);
  Unquant u;
  switch (index) {
  case 4: u = {"000000000", 204}; break;
  case 6: u = {"000000000", 113}; break;
  case 7: u = {"b000b0bb0", 93}; break;
  case 9: u = {"b0000bb00", 54}; break;
  case 10: u = {"cb000cbcb", 44}; break;
  case 12: u = {"cb0000cbc", 26}; break;
  case 13: u = {"dcb000dcb", 22}; break;
  case 15: u = {"dcb0000dc", 13}; break;
  case 16: u = {"edcb000ed", 11}; break;
  case 18: u = {"edcb0000e", 6}; break;
  case 19: u = {"fedcb000f", 5}; break;
  default: return 0; // 3 or 5 levels: never a color range.
  }
  return unquantizeDigit(value, range, u, 9);
}
