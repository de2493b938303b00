//===- LowerDotBytes.cpp - afm_cpu.dot_bytes to the target's instructions -----===//
//
// A vector of afm_cpu.dot_bytes becomes the target's int8 dot-product
// instruction (Int8DotProducts.cpp: vpdpbusd, vpmaddubsw + vpmaddwd, sdot)
// on each register-wide piece; what no instruction covers (a scalar from an
// unvectorized tile, a target without one) becomes integer arithmetic
// with the same wrapping result.
//
// Before that, on targets whose unsigned operand takes any byte (vpdpbusd),
// a loop's dot-product chain over one code plane, `(w >> c) & m`, reads
// `w & (m << c)` instead and shifts its sum right by `c` after the loop
// (scaleMaskedPlaneChains): the same integers without a byte shift per
// vector, which x86 has no instruction for (LLVM emits gf2p8affineqb). The
// 2-bit GEMV on int8 activations keeps one chain per plane, so three of
// its twelve instructions per 64 code bytes go.
//
// On targets whose dot product goes through i16 pair sums (vpmaddubsw,
// then vpmaddwd with ones), dot products that add into one sum share one
// widening instead: their pair sums are added in i16 while that cannot
// overflow (sumLoopDotChainsInI16, sumStraightDotChainsInI16). The 2-bit
// GEMV's eight dot products per 64 code bytes widen once, not eight times.
// Such a loop's planes of one byte vector also share shifts where their
// masks, moved up, stay nibbles (planSharedShifts): the 2-bit planes read
// `w & 3`, `w & 12`, `(w >> 4) & 3`, `(w >> 4) & 12`, and the planes read
// at 4x widen into an accumulator of their own, shifted back after the
// loop (sumScaledClassesInI16). On Zen 3 the byte shifts (vpsrlw), not
// the instruction count, held the GEMV back: 2 of them per 64 code bytes
// instead of 6 ran it 6-15% faster from cache.
//
//===----------------------------------------------------------------------===//

#include "passes/CodeGen/Int8DotProducts.h"
#include "passes/Passes.h"

#include "dialects/afm/IR/AFMOps.h"
#include "dialects/afm_cpu/IR/AFMCPUDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Debug.h"

#include <map>

namespace mlir::afm {
#define GEN_PASS_DEF_AFMLOWERDOTBYTESPASS
#include "passes/Passes.h.inc"
} // namespace mlir::afm

#define DEBUG_TYPE "afm-lower-dot-bytes"

using namespace mlir;
using namespace mlir::afm;

/// A constant of `type` (i32 or a vector of it) with every lane `value`.
static Value splatI32(OpBuilder &b, Location loc, Type type, int64_t value) {
  if (auto vector = dyn_cast<VectorType>(type))
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(vector, b.getI32IntegerAttr(value)));
  return arith::ConstantIntOp::create(b, loc, type, value);
}

/// The definition, in integer arithmetic (for any shape).
static Value expandDot(OpBuilder &b, Location loc, Value acc, Value u,
                       Value s) {
  Type type = acc.getType();
  Value sum = acc;
  for (int64_t m = 0; m < 4; ++m) {
    Value byte = arith::AndIOp::create(
        b, loc,
        arith::ShRUIOp::create(b, loc, u, splatI32(b, loc, type, 8 * m)),
        splatI32(b, loc, type, 0xff));
    Value signedByte = arith::ShRSIOp::create(
        b, loc,
        arith::ShLIOp::create(b, loc, s, splatI32(b, loc, type, 24 - 8 * m)),
        splatI32(b, loc, type, 24));
    sum = arith::AddIOp::create(
        b, loc, sum, arith::MulIOp::create(b, loc, byte, signedByte));
  }
  return sum;
}

/// `build` over the `piece`-lane slices of 1-D `operands` (each of
/// `type`, the result's), the results put back in place: an instruction
/// narrower than the vector, piece by piece.
static Value inPieces(OpBuilder &b, Location loc, VectorType type,
                      int64_t piece, ValueRange operands,
                      function_ref<Value(ValueRange)> build) {
  Value result = arith::ConstantOp::create(b, loc, b.getZeroAttr(type));
  for (int64_t offset = 0; offset < type.getNumElements(); offset += piece) {
    SmallVector<Value> slices;
    for (Value v : operands)
      slices.push_back(vector::ExtractStridedSliceOp::create(
          b, loc, v, {offset}, {piece}, {1}));
    result = vector::InsertStridedSliceOp::create(b, loc, build(slices),
                                                  result, {offset}, {1});
  }
  return result;
}

/// `acc + dot(u, s)` with the target's instruction where one covers 1-D
/// pieces of the vectors, else expanded.
static Value lowerDot(OpBuilder &b, Location loc,
                      const TargetDescription &target, Value acc, Value u,
                      Value s, bool below128) {
  auto type = dyn_cast<VectorType>(acc.getType());
  if (!type || type.isScalable() || type.getRank() == 0)
    return expandDot(b, loc, acc, u, s);
  if (type.getRank() > 1) {
    // Row by row along the leading dimension.
    Value result = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(type, b.getI32IntegerAttr(0)));
    for (int64_t i = 0; i < type.getDimSize(0); ++i) {
      auto row = [&](Value v) {
        return vector::ExtractOp::create(b, loc, v, i).getResult();
      };
      Value dot = lowerDot(b, loc, target, row(acc), row(u), row(s), below128);
      result = vector::InsertOp::create(b, loc, dot, result, i);
    }
    return result;
  }
  int64_t lanes = type.getNumElements();
  if (Value dot = buildTargetInt8Dot(b, loc, target, acc, u, s, below128))
    return dot;
  // Register-wide pieces, when the instruction takes fewer lanes.
  for (int64_t piece : {16, 8, 4, 2}) {
    if (piece >= lanes || lanes % piece != 0)
      continue;
    if (!hasTargetInt8Dot(target, piece, below128))
      continue;
    LLVM_DEBUG(llvm::dbgs() << "dot over " << type << " in pieces of "
                            << piece << " lanes\n");
    return inPieces(b, loc, type, piece, {acc, u, s}, [&](ValueRange slice) {
      return buildTargetInt8Dot(b, loc, target, slice[0], slice[1], slice[2],
                                below128);
    });
  }
  LLVM_DEBUG(llvm::dbgs() << "no int8 dot instruction covers " << type
                          << (below128 ? " (bytes below 128)" : "")
                          << ": expanded to integer arithmetic\n");
  return expandDot(b, loc, acc, u, s);
}


namespace {
/// `bitcast((w >> shift) & mask)` over bytes: one code plane of `w`.
struct MaskedPlane {
  Value bytes; // w
  uint64_t shift, mask;
  Value shifted; // w >> shift (w when the shift is 0)
};
} // namespace

/// The splat integer of constant `value`, if it is one.
static std::optional<uint64_t> splatConstant(Value value) {
  APInt bits;
  if (!matchPattern(value, m_ConstantInt(&bits)))
    return std::nullopt;
  return bits.getZExtValue();
}

/// The plane `u` reads, when it is `bitcast((w >> c) & m)` over bytes with
/// 0 < c < 8, or also `bitcast(w & m)` (c = 0) when `unshifted`.
static std::optional<MaskedPlane> matchMaskedPlane(Value u,
                                                   bool unshifted = false) {
  auto cast = u.getDefiningOp<vector::BitCastOp>();
  if (!cast)
    return std::nullopt;
  auto sourceType = dyn_cast<VectorType>(cast.getSource().getType());
  if (!sourceType || !sourceType.getElementType().isInteger(8))
    return std::nullopt;
  auto mask = cast.getSource().getDefiningOp<arith::AndIOp>();
  if (!mask)
    return std::nullopt;
  for (unsigned side : {0u, 1u}) {
    std::optional<uint64_t> bits = splatConstant(mask->getOperand(1 - side));
    if (!bits)
      continue;
    Value masked = mask->getOperand(side);
    auto shifted = masked.getDefiningOp<arith::ShRUIOp>();
    std::optional<uint64_t> shift =
        shifted ? splatConstant(shifted.getRhs()) : std::nullopt;
    if (shift && *shift > 0 && *shift < 8)
      return MaskedPlane{shifted.getLhs(), *shift, *bits & 0xff, shifted};
    if (unshifted)
      return MaskedPlane{masked, 0, *bits & 0xff, masked};
  }
  return std::nullopt;
}

/// The dot products of iter_arg `carried` in one iteration, first to last:
/// `yielded = dot(... dot(carried, u1, s1) ..., un, sn)`, each used once.
static SmallVector<afm_cpu::DotBytesOp> dotChain(BlockArgument carried,
                                                 Value yielded) {
  SmallVector<afm_cpu::DotBytesOp> chain;
  Value at = yielded;
  while (at != carried) {
    auto dot = at.getDefiningOp<afm_cpu::DotBytesOp>();
    if (!dot || !at.hasOneUse())
      return {};
    chain.push_back(dot);
    at = dot.getAcc();
  }
  if (!carried.hasOneUse())
    return {};
  std::reverse(chain.begin(), chain.end());
  return chain;
}

/// A constant of the byte vector type `type` with every byte `value`.
static Value splatBytes(OpBuilder &b, Location loc, VectorType type,
                        uint64_t value) {
  Attribute byte =
      b.getIntegerAttr(b.getI8Type(), static_cast<int8_t>(value));
  return arith::ConstantOp::create(b, loc,
                                   DenseElementsAttr::get(type, byte));
}

/// Whether `trips` iterations of `products` dot products whose unsigned
/// bytes are at most `maxByte` keep every i32 lane's sum an i32: each adds
/// four byte products of at most maxByte * 128 to a lane.
static bool loopSumFitsI32(uint64_t trips, uint64_t products,
                           uint64_t maxByte) {
  return trips * products * 4 * maxByte * 128 < (uint64_t(1) << 31);
}

/// Replaces the uses of `loop`'s result `i` with it shifted right by
/// `shift`: a sum of products read at 2^shift times their planes, back to
/// the planes' sum (exact while loopSumFitsI32).
static void shiftResultBack(scf::ForOp loop, unsigned i, uint64_t shift) {
  OpBuilder b(loop->getContext());
  b.setInsertionPointAfter(loop);
  Value result = loop.getResult(i);
  Value shifted = arith::ShRSIOp::create(
      b, loop.getLoc(), result,
      splatI32(b, loop.getLoc(), result.getType(), shift));
  result.replaceAllUsesExcept(shifted, shifted.getDefiningOp());
}

/// For each iter_arg of `loop` that starts at zero and only accumulates
/// dot products of one shifted, masked code plane `(w >> c) & m` (the same
/// c and m throughout): masks in place, `w & (m << c)`, and shifts the
/// loop's result right by c. Every product is then exactly 2^c times the
/// old one, so the shifted sum is the old sum, as long as it cannot wrap:
/// the loop's trip count bounds it.
static void scaleMaskedPlaneChains(scf::ForOp loop,
                                   const TargetDescription &target) {
  std::optional<APInt> trips = loop.getStaticTripCount();
  if (!trips || trips->getActiveBits() > 32)
    return;
  for (unsigned i = 0; i < loop.getNumRegionIterArgs(); ++i) {
    BlockArgument carried = loop.getRegionIterArgs()[i];
    auto type = dyn_cast<VectorType>(carried.getType());
    if (!type || type.getRank() != 1 || type.isScalable() ||
        !type.getElementType().isInteger(32) ||
        !hasTargetInt8Dot(target, type.getNumElements(),
                          /*unsignedBelow128=*/false))
      continue;
    std::optional<uint64_t> init = splatConstant(loop.getInitArgs()[i]);
    if (!init || *init != 0)
      continue;
    SmallVector<afm_cpu::DotBytesOp> chain =
        dotChain(carried, loop.getYieldedValues()[i]);
    if (chain.empty())
      continue;
    SmallVector<MaskedPlane> planes;
    for (afm_cpu::DotBytesOp dot : chain)
      if (std::optional<MaskedPlane> plane = matchMaskedPlane(dot.getLhs()))
        planes.push_back(*plane);
    if (planes.size() != chain.size() ||
        llvm::any_of(planes, [&](const MaskedPlane &p) {
          return p.shift != planes.front().shift ||
                 p.mask != planes.front().mask;
        }))
      continue;
    uint64_t shift = planes.front().shift,
             scaledMask = planes.front().mask << shift;
    // The scaled bytes must stay bytes, and the sum of every lane's
    // products an i32.
    if (scaledMask > 0xff ||
        !loopSumFitsI32(trips->getZExtValue(), chain.size(), scaledMask))
      continue;
    LLVM_DEBUG(llvm::dbgs() << "plane chain of " << chain.size()
                            << " dot products masked in place, sum >> "
                            << shift << "\n");
    for (auto [dot, plane] : llvm::zip(chain, planes)) {
      OpBuilder b(dot);
      Location loc = dot.getLoc();
      Value masked = arith::AndIOp::create(
          b, loc, plane.bytes,
          splatBytes(b, loc, cast<VectorType>(plane.bytes.getType()),
                     scaledMask));
      dot.getLhsMutable().assign(
          vector::BitCastOp::create(b, loc, dot.getLhs().getType(), masked));
    }
    shiftResultBack(loop, i, shift);
  }
}

/// The lanes of one pair-sum instruction (vpmaddubsw) covering `lanes`
/// i32 lanes whole or in register-wide pieces, with unsigned bytes up to
/// `unsignedMax`; 0 when there is none.
static int64_t pairSumPiece(const TargetDescription &target, int64_t lanes,
                            uint64_t unsignedMax) {
  for (int64_t piece : {lanes, int64_t(16), int64_t(8), int64_t(4)})
    if (piece <= lanes && lanes % piece == 0 &&
        maxInt8DotsSummedInI16(target, piece, unsignedMax) > 0)
      return piece;
  return 0;
}

/// How many dot products of `type` one widening can take, as
/// buildDotSum builds it (0 or 1: none is worth it).
static int64_t dotsPerWidening(const TargetDescription &target, Type type,
                               uint64_t unsignedMax) {
  // An n-D vector (a register tile's rows, as the ASTC kernel's six)
  // counts as its lanes: buildDotSum flattens it.
  auto vector = dyn_cast<VectorType>(type);
  if (!vector || vector.getRank() == 0 || vector.isScalable() ||
      !vector.getElementType().isInteger(32))
    return 0;
  int64_t piece =
      pairSumPiece(target, vector.getNumElements(), unsignedMax);
  return piece ? maxInt8DotsSummedInI16(target, piece, unsignedMax) : 0;
}

/// `acc + dot(u1, s1) + ... + dot(un, sn)` through one widening
/// (buildTargetInt8DotSum), in register-wide pieces where the vectors are
/// wider; n must be at most dotsPerWidening. An n-D vector is summed as
/// its lanes in a row (shape casts, free once unrolled).
static Value buildDotSum(OpBuilder &b, Location loc,
                         const TargetDescription &target, Value acc,
                         ArrayRef<afm_cpu::DotBytesOp> dots,
                         uint64_t unsignedMax) {
  auto accType = cast<VectorType>(acc.getType());
  int64_t lanes = accType.getNumElements();
  int64_t piece = pairSumPiece(target, lanes, unsignedMax);
  auto flat = [&](Value v) -> Value {
    auto type = cast<VectorType>(v.getType());
    if (type.getRank() == 1)
      return v;
    return vector::ShapeCastOp::create(
        b, loc, VectorType::get({lanes}, type.getElementType()), v);
  };
  // Each operand flattened once; a piece is a slice of it.
  SmallVector<std::pair<Value, Value>> operands;
  for (afm_cpu::DotBytesOp dot : dots)
    operands.push_back({flat(dot.getLhs()), flat(dot.getRhs())});
  Value flatAcc = flat(acc);
  auto slice = [&](Value v, int64_t offset) -> Value {
    if (piece == lanes)
      return v;
    return vector::ExtractStridedSliceOp::create(b, loc, v, {offset},
                                                 {piece}, {1});
  };
  Value result = flatAcc;
  for (int64_t offset = 0; offset < lanes; offset += piece) {
    SmallVector<std::pair<Value, Value>> products;
    for (auto [lhs, rhs] : operands)
      products.push_back({slice(lhs, offset), slice(rhs, offset)});
    Value sum = buildTargetInt8DotSum(b, loc, target, slice(flatAcc, offset),
                                      products, unsignedMax);
    assert(sum && "more dot products than one widening takes");
    result = piece == lanes ? sum
                            : vector::InsertStridedSliceOp::create(
                                  b, loc, sum, result, {offset}, {1})
                                  .getResult();
  }
  if (accType.getRank() != 1)
    result = vector::ShapeCastOp::create(b, loc, accType, result);
  return result;
}

/// `acc` plus the dot products `dots`, widened in as few groups as the
/// i16 bound allows. Null when fewer than two go into a widening.
static Value sumDotsInI16(OpBuilder &b, const TargetDescription &target,
                          Value acc, ArrayRef<afm_cpu::DotBytesOp> dots) {
  uint64_t largest = 0;
  for (afm_cpu::DotBytesOp dot : dots) {
    std::optional<uint64_t> bound = maskedByteMax(dot.getLhs());
    if (!bound)
      return {};
    largest = std::max(largest, *bound);
  }
  int64_t perWidening = dotsPerWidening(target, acc.getType(), largest);
  if (dots.size() < 2 || perWidening < 2)
    return {};
  LLVM_DEBUG(llvm::dbgs() << dots.size() << " dot products summed in i16, "
                          << perWidening << " per widening\n");
  for (size_t begin = 0; begin < dots.size(); begin += perWidening)
    acc = buildDotSum(b, dots.front()->getLoc(), target, acc,
                      dots.slice(begin, std::min<size_t>(perWidening,
                                                         dots.size() - begin)),
                      largest);
  return acc;
}

namespace {
/// How a dot product's unsigned operand, the plane `(w >> c) & m`, is read
/// to share a byte shift with another plane of `w`: as
/// `(w >> (c - scale)) & (m << scale)`, 2^scale times the plane.
struct SharedShiftRead {
  MaskedPlane plane;
  uint64_t scale = 0;
};
} // namespace

/// Products of bytes up to this (nibbles) still widen eight at a time.
static constexpr uint64_t kSharedShiftMaxByte = 15;

/// For dot products that all read masked planes of byte vectors: the
/// reads that share shifts, each plane at the largest shift kept for its
/// bytes (0 needs none) from which its mask, moved up, stays a nibble.
/// Shifts are kept smallest first, so the 2-bit planes at shifts 0, 2, 4,
/// 6 read `w & 3`, `w & 12`, `(w >> 4) & 3`, `(w >> 4) & 12`: one shift
/// per vector where there were three, and two scales. Empty when some
/// operand is not a masked plane or no read changes.
static SmallVector<SharedShiftRead>
planSharedShifts(ArrayRef<afm_cpu::DotBytesOp> dots) {
  SmallVector<SharedShiftRead> reads;
  llvm::MapVector<Value, SmallVector<size_t>> byBytes;
  for (afm_cpu::DotBytesOp dot : dots) {
    std::optional<MaskedPlane> plane =
        matchMaskedPlane(dot.getLhs(), /*unshifted=*/true);
    if (!plane)
      return {};
    byBytes[plane->bytes].push_back(reads.size());
    reads.push_back(SharedShiftRead{*plane, 0});
  }
  bool changed = false;
  for (auto &[bytes, indices] : byBytes) {
    llvm::sort(indices, [&](size_t a, size_t b) {
      return reads[a].plane.shift < reads[b].plane.shift;
    });
    SmallVector<uint64_t> kept = {0};
    for (size_t i : indices) {
      const MaskedPlane &plane = reads[i].plane;
      auto from = llvm::find_if(llvm::reverse(kept), [&](uint64_t base) {
        return base <= plane.shift &&
               (plane.mask << (plane.shift - base)) <= kSharedShiftMaxByte;
      });
      if (from == llvm::reverse(kept).end()) {
        if (plane.shift != kept.back())
          kept.push_back(plane.shift);
        continue;
      }
      reads[i].scale = plane.shift - *from;
      changed |= reads[i].scale > 0;
    }
  }
  return changed ? reads : SmallVector<SharedShiftRead>{};
}

/// Points each dot product of `dots` at its read in `reads` (one shift per
/// bytes and kept shift, one mask per scaled mask), and erases the old
/// operands nothing else uses.
static void applySharedShifts(ArrayRef<afm_cpu::DotBytesOp> dots,
                              ArrayRef<SharedShiftRead> reads) {
  llvm::DenseMap<std::pair<Value, uint64_t>, Value> shifted;
  llvm::DenseMap<std::tuple<Value, uint64_t, uint64_t>, Value> masked;
  // The shifts kept are reused where they come before every dot product.
  for (const SharedShiftRead &read : reads) {
    Operation *shift = read.plane.shifted.getDefiningOp();
    if (read.scale == 0 && shift &&
        llvm::all_of(dots, [&](afm_cpu::DotBytesOp dot) {
          return shift->getBlock() == dot->getBlock() &&
                 shift->isBeforeInBlock(dot);
        }))
      shifted[{read.plane.bytes, read.plane.shift}] = read.plane.shifted;
  }
  SmallVector<Operation *> old;
  for (auto [constDot, read] : llvm::zip_equal(dots, reads)) {
    if (read.scale == 0)
      continue;
    afm_cpu::DotBytesOp dot = constDot;
    const MaskedPlane &plane = read.plane;
    uint64_t shift = plane.shift - read.scale, mask = plane.mask << read.scale;
    OpBuilder b(dot->getContext());
    b.setInsertionPointAfterValue(plane.bytes);
    Location loc = dot.getLoc();
    auto bytesType = cast<VectorType>(plane.bytes.getType());
    auto splat = [&](uint64_t value) {
      return splatBytes(b, loc, bytesType, value);
    };
    Value &source = shifted[{plane.bytes, shift}];
    if (!source)
      source = shift == 0 ? plane.bytes
                          : arith::ShRUIOp::create(b, loc, plane.bytes,
                                                   splat(shift))
                                .getResult();
    Value &bits = masked[{plane.bytes, shift, mask}];
    if (!bits) {
      b.setInsertionPointAfterValue(source);
      bits = arith::AndIOp::create(b, loc, source, splat(mask));
    }
    old.push_back(dot.getLhs().getDefiningOp());
    b.setInsertionPoint(dot);
    dot.getLhsMutable().assign(
        vector::BitCastOp::create(b, loc, dot.getLhs().getType(), bits));
  }
  // The bitcast, mask and shift of each old read, if now unused.
  llvm::SmallPtrSet<Operation *, 16> erased;
  while (!old.empty()) {
    Operation *op = old.pop_back_val();
    if (!op || erased.contains(op) || !isOpTriviallyDead(op))
      continue;
    for (Value operand : op->getOperands())
      old.push_back(operand.getDefiningOp());
    erased.insert(op);
    op->erase();
  }
}

/// The last of the single-use arith.addi ops that `value` flows into (the
/// root of the sum it is a term of), or null when its one use is not one.
static Operation *sumRoot(Value value) {
  Operation *root = nullptr;
  while (value.hasOneUse()) {
    auto add = dyn_cast<arith::AddIOp>(*value.getUsers().begin());
    if (!add)
      break;
    root = add;
    value = add.getResult();
  }
  return root;
}

/// Erases `dots`, each of which is used by nothing or by a later one.
static void eraseDots(ArrayRef<afm_cpu::DotBytesOp> dots) {
  for (afm_cpu::DotBytesOp dot : llvm::reverse(dots)) {
    assert(dot->use_empty() && "a summed dot product is still used");
    dot->erase();
  }
}

namespace {
/// An iter_arg that only accumulates dot products from zero.
struct DotChain {
  unsigned index;
  SmallVector<afm_cpu::DotBytesOp> dots;
};
} // namespace

/// sumLoopDotChainsInI16 with shared shifts (planSharedShifts): the dot
/// products of `chains` (all ending in one sum after `loop`) read their
/// planes at fewer shifts, and each scale's products go through their own
/// widenings into an accumulator of their own, whose result is shifted
/// right by the scale after the loop. Exact: every product of a scale is
/// 2^scale times the plane's, so its i16 sums (bounded by its own mask)
/// and its i32 sum (bounded by the trip count) are too. The 2-bit GEMV's
/// 64 code bytes take two byte shifts where they took six (each a vpsrlw,
/// whose pipes the vpmaddubsw share on Zen 3). False, changing nothing,
/// when no plane's shift goes or the scales outnumber the accumulators.
static bool sumScaledClassesInI16(scf::ForOp loop,
                                  const TargetDescription &target,
                                  ArrayRef<DotChain> chains,
                                  ArrayRef<afm_cpu::DotBytesOp> dots) {
  std::optional<APInt> trips = loop.getStaticTripCount();
  if (!trips || trips->getActiveBits() > 32)
    return false;
  SmallVector<SharedShiftRead> reads = planSharedShifts(dots);
  if (reads.empty())
    return false;
  // The products of each scale, smallest scale first, and their largest
  // byte once read scaled.
  std::map<uint64_t, std::pair<SmallVector<afm_cpu::DotBytesOp>, uint64_t>>
      byScale;
  for (auto [dot, read] : llvm::zip_equal(dots, reads)) {
    auto &[members, largest] = byScale[read.scale];
    members.push_back(dot);
    largest = std::max(largest, read.plane.mask << read.scale);
  }
  if (byScale.size() > chains.size())
    return false;
  Type type = loop.getRegionIterArgs()[chains.front().index].getType();
  for (auto &[scale, members] : byScale)
    if (members.first.size() < 2 ||
        dotsPerWidening(target, type, members.second) < 2 ||
        (scale > 0 && !loopSumFitsI32(trips->getZExtValue(),
                                      members.first.size(), members.second)))
      return false;
  LLVM_DEBUG(llvm::dbgs() << dots.size() << " dot products read with shared "
                          << "shifts in " << byScale.size() << " scales\n");
  applySharedShifts(dots, reads);
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  OpBuilder b(yield);
  for (const DotChain &chain : chains)
    yield->setOperand(chain.index, loop.getRegionIterArgs()[chain.index]);
  for (auto [chain, scaled] : llvm::zip(chains, byScale)) {
    auto &[scale, members] = scaled;
    Value total = sumDotsInI16(b, target,
                               loop.getRegionIterArgs()[chain.index],
                               members.first);
    assert(total && "a scale's products fit its widenings");
    yield->setOperand(chain.index, total);
    if (scale > 0)
      shiftResultBack(loop, chain.index, scale);
  }
  eraseDots(dots);
  return true;
}

/// On targets whose dot product sums byte pairs in i16 (vpmaddubsw, then
/// vpmaddwd with ones to widen them to i32): the iter_args of `loop` that
/// start at zero, only accumulate dot products of masked (small) unsigned
/// bytes, and end as terms of one sum after the loop (the chains that
/// unrolled code planes and split lanes leave for one output) take all
/// their dot products of an iteration through one widening
/// (sumDotsInI16) into the first iter_arg, while the others stay zero.
/// The sum after the loop is the same integer: i32 addition is
/// associative, and the i16 sums cannot overflow. The 2-bit GEMV's eight
/// dot products per 64 code bytes then widen once, where they widened
/// eight times: a fifth of its instructions.
static void sumLoopDotChainsInI16(scf::ForOp loop,
                                  const TargetDescription &target) {
  // Chains by the sum they end in, and their type.
  llvm::MapVector<std::pair<Operation *, Type>, SmallVector<DotChain>> bySum;
  for (unsigned i = 0; i < loop.getNumRegionIterArgs(); ++i) {
    BlockArgument carried = loop.getRegionIterArgs()[i];
    std::optional<uint64_t> init = splatConstant(loop.getInitArgs()[i]);
    if (!init || *init != 0 ||
        dotsPerWidening(target, carried.getType(), 127) == 0)
      continue;
    SmallVector<afm_cpu::DotBytesOp> chain =
        dotChain(carried, loop.getYieldedValues()[i]);
    if (chain.empty())
      continue;
    if (Operation *root = sumRoot(loop.getResult(i)))
      bySum[{root, carried.getType()}].push_back(
          DotChain{i, std::move(chain)});
  }
  for (auto &[sum, chains] : bySum) {
    SmallVector<afm_cpu::DotBytesOp> dots;
    for (const DotChain &chain : chains)
      llvm::append_range(dots, chain.dots);
    if (sumScaledClassesInI16(loop, target, chains, dots))
      continue;
    auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
    OpBuilder b(yield);
    unsigned first = chains.front().index;
    Value total =
        sumDotsInI16(b, target, loop.getRegionIterArgs()[first], dots);
    if (!total)
      continue;
    // The other chains carry their zero through.
    for (const DotChain &chain : chains)
      yield->setOperand(chain.index,
                        chain.index == first
                            ? total
                            : Value(loop.getRegionIterArgs()[chain.index]));
    eraseDots(dots);
  }
}

/// The same for a chain of dot products within a block, each the next
/// one's accumulator (the 4-bit LM head's group of code bytes before its
/// scale): one widening for all of them.
static void sumStraightDotChainsInI16(Operation *root,
                                      const TargetDescription &target) {
  SmallVector<afm_cpu::DotBytesOp> lasts;
  root->walk([&](afm_cpu::DotBytesOp dot) {
    bool continued = dot->hasOneUse() && [&] {
      auto next = dyn_cast<afm_cpu::DotBytesOp>(*dot->getUsers().begin());
      return next && next.getAcc() == dot.getResult();
    }();
    if (!continued)
      lasts.push_back(dot);
  });
  for (afm_cpu::DotBytesOp last : lasts) {
    SmallVector<afm_cpu::DotBytesOp> chain{last};
    while (auto previous =
               chain.back().getAcc().getDefiningOp<afm_cpu::DotBytesOp>()) {
      if (!previous->hasOneUse() || previous->getBlock() != last->getBlock())
        break;
      chain.push_back(previous);
    }
    std::reverse(chain.begin(), chain.end());
    OpBuilder b(last);
    Value total = sumDotsInI16(b, target, chain.front().getAcc(), chain);
    if (!total)
      continue;
    last.getResult().replaceAllUsesWith(total);
    eraseDots(chain);
  }
}

/// `value` times the sign of `signs`, byte by byte, compared and selected
/// (any shape).
static Value expandSignBytes(OpBuilder &b, Location loc, Value value,
                             Value signs) {
  Type type = value.getType();
  Value zero =
      isa<VectorType>(type)
          ? arith::ConstantOp::create(
                b, loc,
                DenseElementsAttr::get(cast<VectorType>(type),
                                       b.getI8IntegerAttr(0)))
                .getResult()
          : arith::ConstantIntOp::create(b, loc, type, 0).getResult();
  Value negative = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                         signs, zero);
  Value none =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, signs, zero);
  return arith::SelectOp::create(
      b, loc, negative, arith::SubIOp::create(b, loc, zero, value),
      arith::SelectOp::create(b, loc, none, zero, value));
}

/// x86 targets with AVX2 have vpsignb on 32 bytes (AVX-512 has no wider
/// one).
static bool hasVPSignB(const TargetDescription &target) {
  return llvm::is_contained(llvm::split(target.features, ','), "+avx2");
}

/// `value` times the sign of `signs`: vpsignb on 32-byte pieces of a 1-D
/// vector of a multiple of 32 bytes on x86 with AVX2, else expanded. LLVM
/// does not form vpsignb from the expansion (vpcmpgtb, vpxor, vpsubb).
static Value lowerSignBytes(OpBuilder &b, Location loc,
                            const TargetDescription &target, Value value,
                            Value signs) {
  constexpr int64_t kPiece = 32;
  auto type = dyn_cast<VectorType>(value.getType());
  if (!type || type.isScalable() || type.getRank() != 1 ||
      type.getNumElements() % kPiece != 0 || !hasVPSignB(target))
    return expandSignBytes(b, loc, value, signs);
  auto pieceType = VectorType::get({kPiece}, b.getI8Type());
  return inPieces(b, loc, type, kPiece, {value, signs}, [&](ValueRange slice) {
    return LLVM::CallIntrinsicOp::create(
               b, loc, pieceType, b.getStringAttr("llvm.x86.avx2.psign.b"),
               slice)
        .getResult(0);
  });
}

static Value lowerOp(OpBuilder &b, const TargetDescription &target,
                     afm_cpu::DotBytesOp op) {
  return lowerDot(b, op.getLoc(), target, op.getAcc(), op.getLhs(),
                  op.getRhs(), bytesMaskedBelow128(op.getLhs()));
}

static Value lowerOp(OpBuilder &b, const TargetDescription &target,
                     afm_cpu::SignBytesOp op) {
  return lowerSignBytes(b, op.getLoc(), target, op.getValue(), op.getSigns());
}

namespace {
/// Replaces each `Op` with what lowerOp builds for the target.
template <typename Op>
struct LowerForTarget : OpRewritePattern<Op> {
  LowerForTarget(MLIRContext *ctx, const TargetDescription &target)
      : OpRewritePattern<Op>(ctx), target(target) {}

  LogicalResult matchAndRewrite(Op op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, lowerOp(rewriter, target, op));
    return success();
  }

  const TargetDescription &target;
};

struct AFMLowerDotBytesPass
    : afm::impl::AFMLowerDotBytesPassBase<AFMLowerDotBytesPass> {
  using Base::Base;

  void runOnOperation() override {
    FailureOr<TargetDescription> target = getTargetDescription(getOperation());
    if (failed(target))
      return signalPassFailure();
    getOperation()->walk([&](scf::ForOp loop) {
      scaleMaskedPlaneChains(loop, *target);
      sumLoopDotChainsInI16(loop, *target);
    });
    sumStraightDotChainsInI16(getOperation(), *target);
    RewritePatternSet patterns(&getContext());
    patterns.add<LowerForTarget<afm_cpu::DotBytesOp>,
                 LowerForTarget<afm_cpu::SignBytesOp>>(&getContext(), *target);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
