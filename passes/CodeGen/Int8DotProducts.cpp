//===- Int8DotProducts.cpp - int8 dot-product kernels to instructions -----===//

#include "passes/CodeGen/Int8DotProducts.h"

#include "dialects/afm_cpu/IR/AFMCPUDialect.h"
#include "passes/CodeGen/Accumulators.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

using namespace mlir;
using namespace mlir::afm;

/// Bytes summed into one i32 lane by every dot-product instruction.
static constexpr int64_t kBytesPerLane = 4;


/// `value` as the i8 operand of an extension to i32 of kind `ExtOp`.
template <typename ExtOp>
static Value extendedByte(Value value) {
  auto ext = value.getDefiningOp<ExtOp>();
  if (!ext || !ext.getIn().getType().isInteger(8) || !ext->hasOneUse())
    return {};
  return ext.getIn();
}

std::optional<uint64_t> afm::maskedByteMax(Value value) {
  if (auto cast = value.getDefiningOp<vector::BitCastOp>())
    value = cast.getSource();
  auto mask = value.getDefiningOp<arith::AndIOp>();
  if (!mask)
    return std::nullopt;
  std::optional<uint64_t> best;
  APInt bits;
  for (Value operand : mask->getOperands()) {
    if (!matchPattern(operand, m_ConstantInt(&bits)) || bits.getBitWidth() > 64)
      continue;
    // x & m is at most m in every byte.
    uint64_t word = bits.getZExtValue(), largest = 0;
    for (unsigned byte = 0; byte < (bits.getBitWidth() + 7) / 8; ++byte)
      largest = std::max(largest, (word >> (8 * byte)) & 0xff);
    best = best ? std::min(*best, largest) : largest;
  }
  return best;
}

bool afm::bytesMaskedBelow128(Value value) {
  std::optional<uint64_t> largest = maskedByteMax(value);
  return largest && *largest < 128;
}

std::optional<Int8DotBody> afm::matchInt8DotProduct(linalg::LinalgOp op) {
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic || generic.getNumDpsInits() != 1 ||
      !generic.getRegionOutputArgs()[0].getType().isInteger(32))
    return std::nullopt;
  SmallVector<int64_t> ranges = generic.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators =
      generic.getIteratorTypesArray();
  unsigned loops = ranges.size();
  if (loops < 2 || ranges.back() != kBytesPerLane ||
      iterators.back() != utils::IteratorType::reduction)
    return std::nullopt;
  AffineMap out = generic.getMatchingIndexingMap(generic.getDpsInitOperand(0));
  bool lanesReduced = iterators[loops - 2] == utils::IteratorType::reduction;
  if (lanesReduced) {
    if (out.isFunctionOfDim(loops - 2))
      return std::nullopt;
  } else {
    auto inner = out.getNumResults() == 0
                     ? nullptr
                     : dyn_cast<AffineDimExpr>(out.getResults().back());
    if (!inner || inner.getPosition() != loops - 2)
      return std::nullopt;
  }

  // yield(out + zext(u) * sext(s)), either way round.
  Block *body = generic.getBody();
  Value accumulator = generic.getRegionOutputArgs()[0];
  auto sum = body->getTerminator()
                 ->getOperand(0)
                 .getDefiningOp<arith::AddIOp>();
  if (!sum)
    return std::nullopt;
  Value addend = sum.getLhs() == accumulator   ? sum.getRhs()
                 : sum.getRhs() == accumulator ? sum.getLhs()
                                               : Value();
  auto product = addend ? addend.getDefiningOp<arith::MulIOp>() : nullptr;
  if (!product || !product->hasOneUse())
    return std::nullopt;
  Int8DotBody dot;
  dot.lanesReduced = lanesReduced;
  for (auto [a, b] : {std::pair(product.getLhs(), product.getRhs()),
                      std::pair(product.getRhs(), product.getLhs())}) {
    dot.unsignedBytes = extendedByte<arith::ExtUIOp>(a);
    dot.signedBytes = extendedByte<arith::ExtSIOp>(b);
    if (dot.unsignedBytes && dot.signedBytes)
      break;
  }
  if (!dot.unsignedBytes || !dot.signedBytes)
    return std::nullopt;
  dot.unsignedBelow128 = bytesMaskedBelow128(dot.unsignedBytes);
  dot.product = product;
  dot.sum = sum;
  return dot;
}

static Value callIntrinsic(OpBuilder &b, Location loc, Type result,
                           StringRef name, ValueRange args) {
  return LLVM::CallIntrinsicOp::create(b, loc, result, b.getStringAttr(name),
                                       args)
      .getResult(0);
}

namespace {
/// The two instructions of a dot product through i16 pair sums
/// (vpmaddubsw, then vpmaddwd with ones).
struct PairSumInstructions {
  std::string pairs, quads;
};
} // namespace

static std::optional<PairSumInstructions>
selectPairSumInstructions(const TargetDescription &target, int64_t lanes) {
  if (target.int8Dot != Int8DotProduct::X86MaddUBSW)
    return std::nullopt;
  if (lanes == 16 && target.vectorBits >= 512)
    return PairSumInstructions{"llvm.x86.avx512.pmaddubs.w.512",
                               "llvm.x86.avx512.pmaddw.d.512"};
  if (lanes == 8)
    return PairSumInstructions{"llvm.x86.avx2.pmadd.ub.sw",
                               "llvm.x86.avx2.pmadd.wd"};
  if (lanes == 4)
    return PairSumInstructions{"llvm.x86.ssse3.pmadd.ub.sw.128",
                               "llvm.x86.sse2.pmadd.wd"};
  return std::nullopt;
}

/// The i16 sums of adjacent u8 x s8 byte products of `u` and `s`.
static Value buildPairSums(OpBuilder &b, Location loc,
                           const PairSumInstructions &names, int64_t lanes,
                           Value u, Value s) {
  auto i16s = VectorType::get({2 * lanes}, b.getI16Type());
  return callIntrinsic(b, loc, i16s, names.pairs, {u, s});
}

/// The i32 sums of adjacent i16s of `pairs`.
static Value buildQuadSums(OpBuilder &b, Location loc,
                           const PairSumInstructions &names, int64_t lanes,
                           Value pairs) {
  auto i16s = cast<VectorType>(pairs.getType());
  Value ones = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(i16s, b.getI16IntegerAttr(1)));
  return callIntrinsic(b, loc, VectorType::get({lanes}, b.getI32Type()),
                       names.quads, {pairs, ones});
}

namespace {
/// One dot-product instruction over i32 lanes of four bytes each.
struct DotInstruction {
  /// Builds `acc + dot(u, s)` for byte vectors `u`, `s` of 4 * lanes.
  std::function<Value(OpBuilder &, Location, Value acc, Value u, Value s)>
      build;
  /// The same with `acc` in the instruction's accumulator, where it has
  /// one (a short chain, not a loop-carried sum); else null.
  std::function<Value(OpBuilder &, Location, Value acc, Value u, Value s)>
      accumulate;
};
} // namespace

/// The target's instruction for `lanes` i32 lanes, if it has one.
static std::optional<DotInstruction>
selectDotInstruction(const TargetDescription &target, int64_t lanes,
                     bool unsignedBelow128) {
  DotInstruction dot;
  auto i32s = [](OpBuilder &b, int64_t n) {
    return VectorType::get({n}, b.getI32Type());
  };
  switch (target.int8Dot) {
  case Int8DotProduct::None:
    return std::nullopt;
  case Int8DotProduct::X86VNNI: {
    std::string name;
    if (lanes == 16 && target.vectorBits >= 512)
      name = "llvm.x86.avx512.vpdpbusd.512";
    else if (lanes == 8)
      name = "llvm.x86.avx512.vpdpbusd.256";
    else if (lanes == 4)
      name = "llvm.x86.avx512.vpdpbusd.128";
    else
      return std::nullopt;
    // Into zero, then added: the dot products of one step do not wait for
    // each other through the accumulator (5 cycles each), only for the
    // 1-cycle adds.
    dot.build = [=](OpBuilder &b, Location loc, Value acc, Value u, Value s) {
      Value zero = arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(i32s(b, lanes), b.getI32IntegerAttr(0)));
      Value sum = callIntrinsic(b, loc, i32s(b, lanes), name, {zero, u, s});
      return arith::AddIOp::create(b, loc, acc, sum).getResult();
    };
    dot.accumulate = [=](OpBuilder &b, Location loc, Value acc, Value u,
                         Value s) {
      return callIntrinsic(b, loc, i32s(b, lanes), name, {acc, u, s});
    };
    return dot;
  }
  case Int8DotProduct::X86MaddUBSW: {
    // Pairs of u8 x s8 products summed to i16 (saturating: exact while
    // u < 128), then pairs of i16 to i32 by a multiply with ones.
    std::optional<PairSumInstructions> names =
        selectPairSumInstructions(target, lanes);
    if (!unsignedBelow128 || !names)
      return std::nullopt;
    dot.build = [=](OpBuilder &b, Location loc, Value acc, Value u, Value s) {
      Value pair = buildPairSums(b, loc, *names, lanes, u, s);
      return arith::AddIOp::create(
                 b, loc, acc, buildQuadSums(b, loc, *names, lanes, pair))
          .getResult();
    };
    return dot;
  }
  case Int8DotProduct::ArmSDot: {
    // Signed x signed: the unsigned bytes must fit in s8.
    if (!unsignedBelow128 || (lanes != 4 && lanes != 2))
      return std::nullopt;
    std::string name = lanes == 4 ? "llvm.aarch64.neon.sdot.v4i32.v16i8"
                                  : "llvm.aarch64.neon.sdot.v2i32.v8i8";
    dot.build = [=](OpBuilder &b, Location loc, Value acc, Value u, Value s) {
      return callIntrinsic(b, loc, i32s(b, lanes), name, {acc, u, s});
    };
    return dot;
  }
  }
  return std::nullopt;
}

bool afm::hasTargetInt8Dot(const TargetDescription &target, int64_t lanes,
                           bool unsignedBelow128) {
  return selectDotInstruction(target, lanes, unsignedBelow128).has_value();
}

Value afm::buildTargetInt8Dot(OpBuilder &b, Location loc,
                              const TargetDescription &target, Value acc,
                              Value u, Value s, bool unsignedBelow128) {
  auto type = dyn_cast<VectorType>(acc.getType());
  if (!type || type.getRank() != 1 || type.isScalable())
    return {};
  int64_t lanes = type.getNumElements();
  std::optional<DotInstruction> instruction =
      selectDotInstruction(target, lanes, unsignedBelow128);
  if (!instruction)
    return {};
  auto bytes = VectorType::get({kBytesPerLane * lanes}, b.getI8Type());
  auto build = instruction->accumulate ? instruction->accumulate
                                       : instruction->build;
  return build(b, loc, acc, vector::BitCastOp::create(b, loc, bytes, u),
               vector::BitCastOp::create(b, loc, bytes, s));
}

int64_t afm::maxInt8DotsSummedInI16(const TargetDescription &target,
                                    int64_t lanes, uint64_t unsignedMax) {
  if (!selectPairSumInstructions(target, lanes) || unsignedMax >= 128)
    return 0;
  // Each pair sum is at most 2 * unsignedMax * 128 in magnitude (s8 goes
  // down to -128); n of them stay exact in i16 while n times that does.
  return unsignedMax == 0 ? INT64_MAX
                          : INT16_MAX / (2 * int64_t(unsignedMax) * 128);
}

Value afm::buildTargetInt8DotSum(
    OpBuilder &b, Location loc, const TargetDescription &target, Value acc,
    ArrayRef<std::pair<Value, Value>> products, uint64_t unsignedMax) {
  auto type = dyn_cast<VectorType>(acc.getType());
  if (!type || type.getRank() != 1 || type.isScalable() || products.empty())
    return {};
  int64_t lanes = type.getNumElements();
  std::optional<PairSumInstructions> names =
      selectPairSumInstructions(target, lanes);
  if (!names ||
      int64_t(products.size()) > maxInt8DotsSummedInI16(target, lanes, unsignedMax))
    return {};
  auto bytes = VectorType::get({kBytesPerLane * lanes}, b.getI8Type());
  SmallVector<Value> sums;
  for (auto [u, s] : products)
    sums.push_back(buildPairSums(
        b, loc, *names, lanes, vector::BitCastOp::create(b, loc, bytes, u),
        vector::BitCastOp::create(b, loc, bytes, s)));
  // A balanced tree: the adds of one level do not wait for each other.
  while (sums.size() > 1) {
    SmallVector<Value> next;
    for (size_t i = 0; i + 1 < sums.size(); i += 2)
      next.push_back(arith::AddIOp::create(b, loc, sums[i], sums[i + 1]));
    if (sums.size() % 2)
      next.push_back(sums.back());
    sums = std::move(next);
  }
  return arith::AddIOp::create(
             b, loc, acc, buildQuadSums(b, loc, *names, lanes, sums.front()))
      .getResult();
}

namespace {
/// How one operand of the tile is read: its elements in loop order
/// (lanes, then bytes) form one contiguous run, or it is one element.
enum class OperandShape { Contiguous, Scalar, Unsupported };
} // namespace

/// One group of all `rank` dimensions: a collapse to 1-D.
static SmallVector<ReassociationIndices> allDimensions(int64_t rank) {
  SmallVector<ReassociationIndices> all(1);
  for (int64_t i = 0; i < rank; ++i)
    all.front().push_back(i);
  return all;
}

/// The shape of `operand`'s tile (a static memref) under `map`: contiguous
/// when its dimensions wider than 1 are the loops `vectorDims`, in order,
/// and collapse to one.
static OperandShape classify(Value operand, AffineMap map,
                             ArrayRef<unsigned> vectorDims) {
  auto type = dyn_cast<MemRefType>(operand.getType());
  if (!type || !type.hasStaticShape())
    return OperandShape::Unsupported;
  SmallVector<unsigned> wide;
  for (auto [size, expr] : llvm::zip(type.getShape(), map.getResults())) {
    if (size == 1)
      continue;
    auto dim = dyn_cast<AffineDimExpr>(expr);
    if (!dim)
      return OperandShape::Unsupported;
    wide.push_back(dim.getPosition());
  }
  if (wide.empty())
    return OperandShape::Scalar;
  if (!llvm::equal(wide, vectorDims))
    return OperandShape::Unsupported;
  if (type.getRank() > 1 && !memref::CollapseShapeOp::isGuaranteedCollapsible(
                                type, allDimensions(type.getRank())))
    return OperandShape::Unsupported;
  return OperandShape::Contiguous;
}

/// `memref` (contiguous) as a 1-D memref.
static Value flatten(OpBuilder &b, Location loc, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  if (type.getRank() == 1)
    return memref;
  return memref::CollapseShapeOp::create(b, loc, memref,
                                         allDimensions(type.getRank()));
}

/// The 1-D vector of the `elements` values of contiguous `operand`.
static Value readContiguous(OpBuilder &b, Location loc, Value operand,
                            int64_t elements) {
  auto type = cast<MemRefType>(operand.getType());
  auto vectorType = VectorType::get({elements}, type.getElementType());
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  return vector::TransferReadOp::create(b, loc, vectorType,
                                        flatten(b, loc, operand),
                                        ValueRange{zero},
                                        /*padding=*/std::nullopt,
                                        ArrayRef<bool>{true});
}

/// The one element of `operand`.
static Value readScalar(OpBuilder &b, Location loc, Value operand) {
  auto type = cast<MemRefType>(operand.getType());
  SmallVector<Value> indices(type.getRank(),
                             arith::ConstantIndexOp::create(b, loc, 0));
  return memref::LoadOp::create(b, loc, operand, indices);
}

namespace {
/// The body of a tile in 1-D vector form. Values that are the same for
/// every element of the tile (loop indices of extent-1 loops, one-element
/// operands, values from outside) stay scalars and are broadcast where a
/// vector op uses them.
class TileBody {
public:
  TileBody(OpBuilder &b, Location loc, int64_t elements)
      : b(b), loc(loc), elements(elements) {}

  void mapScalar(Value from, Value to) { scalars.map(from, to); }
  void mapVector(Value from, Value to) { vectors.map(from, to); }

  /// Whether `op` has a form here: uniform ops are any side-effect-free
  /// op; vector ops element-wise arith ops.
  bool canConvert(Operation &op, ArrayRef<int64_t> ranges) const {
    if (auto index = dyn_cast<linalg::IndexOp>(op))
      return ranges[index.getDim()] == 1;
    if (isMemoryEffectFree(&op) && op.getNumRegions() == 0 &&
        llvm::none_of(op.getOperands(), [&](Value v) {
          return isVaryingInBody(v, op.getBlock());
        }))
      return true;
    return op.getDialect()->getNamespace() == "arith" &&
           OpTrait::hasElementwiseMappableTraits(&op) &&
           op.getNumResults() == 1;
  }

  /// Converts `op` (which canConvert).
  void convert(Operation &op) {
    if (auto index = dyn_cast<linalg::IndexOp>(op)) {
      scalars.map(index.getResult(),
                  arith::ConstantIndexOp::create(b, loc, 0));
      return;
    }
    if (llvm::all_of(op.getOperands(),
                     [&](Value v) { return !vectors.contains(v); })) {
      for (Value operand : op.getOperands())
        if (!scalars.contains(operand))
          scalars.map(operand, operand); // defined outside the body
      b.clone(op, scalars);
      return;
    }
    IRMapping operands;
    for (Value operand : op.getOperands())
      operands.map(operand, vector(operand));
    Operation *clone = b.clone(op, operands);
    Value result = clone->getResult(0);
    result.setType(VectorType::get({elements}, result.getType()));
    vectors.map(op.getResult(0), result);
  }

  /// `value` as a vector: its vector form, or its scalar broadcast.
  Value vector(Value value) {
    if (Value v = vectors.lookupOrNull(value))
      return v;
    Value scalar = scalars.lookupOrDefault(value);
    return vector::BroadcastOp::create(
        b, loc, VectorType::get({elements}, scalar.getType()), scalar);
  }

  void markVarying(Value arg) { varying.insert(arg); }

private:
  /// Whether `v` differs between the elements of the tile.
  bool isVaryingInBody(Value v, Block *body) const {
    if (varying.contains(v))
      return true;
    Operation *def = v.getDefiningOp();
    return def && def->getBlock() == body &&
           llvm::any_of(def->getOperands(), [&](Value operand) {
             return isVaryingInBody(operand, body);
           });
  }

  OpBuilder &b;
  Location loc;
  int64_t elements;
  IRMapping scalars, vectors;
  llvm::SmallDenseSet<Value> varying;
};
} // namespace

LogicalResult afm::vectorizeInt8DotTile(RewriterBase &rewriter,
                                        linalg::GenericOp tile,
                                        const TargetDescription &target) {
  std::optional<Int8DotBody> dot = matchInt8DotProduct(tile);
  if (!dot || !tile.hasPureBufferSemantics())
    return failure();
  SmallVector<int64_t> ranges = tile.getStaticLoopRanges();
  unsigned loops = ranges.size();
  unsigned lanesDim = loops - 2, bytesDim = loops - 1;
  for (unsigned d = 0; d < lanesDim; ++d)
    if (ranges[d] != 1)
      return failure();
  int64_t lanes = ranges[lanesDim], bytes = lanes * kBytesPerLane;
  std::optional<DotInstruction> instruction =
      selectDotInstruction(target, lanes, dot->unsignedBelow128);
  if (!instruction)
    return failure();

  SmallVector<OperandShape> shapes;
  for (OpOperand *input : tile.getDpsInputOperands()) {
    shapes.push_back(classify(input->get(), tile.getMatchingIndexingMap(input),
                              {lanesDim, bytesDim}));
    if (shapes.back() == OperandShape::Unsupported)
      return failure();
  }
  OpOperand *init = tile.getDpsInitOperand(0);
  OperandShape outputShape =
      classify(init->get(), tile.getMatchingIndexingMap(init),
               dot->lanesReduced ? ArrayRef<unsigned>{}
                                 : ArrayRef<unsigned>{lanesDim});
  if (outputShape != (dot->lanesReduced ? OperandShape::Scalar
                                        : OperandShape::Contiguous))
    return failure();
  Block *body = tile.getBody();
  Location loc = tile.getLoc();
  rewriter.setInsertionPoint(tile);
  TileBody vectors(rewriter, loc, bytes);
  for (auto [arg, shape] : llvm::zip(tile.getRegionInputArgs(), shapes))
    if (shape == OperandShape::Contiguous)
      vectors.markVarying(arg);
  // The sum, the product and the two extensions become the instruction.
  auto inChain = [&](Operation &op) {
    return &op == dot->sum || &op == dot->product ||
           (op.getNumResults() == 1 && op.getResult(0).hasOneUse() &&
            *op.getResult(0).getUsers().begin() == dot->product);
  };
  for (Operation &op : body->without_terminator())
    if (!inChain(op) && !vectors.canConvert(op, ranges))
      return failure();

  for (auto [arg, input, shape] :
       llvm::zip(tile.getRegionInputArgs(), tile.getDpsInputOperands(),
                 shapes)) {
    if (shape == OperandShape::Contiguous)
      vectors.mapVector(arg,
                        readContiguous(rewriter, loc, input->get(), bytes));
    else
      vectors.mapScalar(arg, readScalar(rewriter, loc, input->get()));
  }
  for (Operation &op : body->without_terminator())
    if (!inChain(op))
      vectors.convert(op);

  // The output tile: the lanes, or one element that sums them (a vector
  // of one, so that finishInt8DotLoops can keep it in a register and move
  // the horizontal sum out of the loops).
  Value output = flatten(rewriter, loc, init->get());
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  auto accType =
      VectorType::get({dot->lanesReduced ? 1 : lanes}, rewriter.getI32Type());
  Value acc = vector::TransferReadOp::create(
      rewriter, loc, accType, output, ValueRange{zero},
      /*padding=*/std::nullopt, ArrayRef<bool>{true});
  Value result;
  if (dot->lanesReduced) {
    auto lanesType = VectorType::get({lanes}, rewriter.getI32Type());
    Value none = arith::ConstantOp::create(
        rewriter, loc,
        DenseElementsAttr::get(lanesType, rewriter.getI32IntegerAttr(0)));
    // An afm_cpu.dot_bytes into zero, lowered to the instruction later:
    // liftReductionsOutOfLoop turns it into an accumulation in place.
    auto words = [&](Value bytes) {
      return vector::BitCastOp::create(rewriter, loc, lanesType, bytes)
          .getResult();
    };
    Value sums =
        afm_cpu::DotBytesOp::create(rewriter, loc, lanesType, none,
                                    words(vectors.vector(dot->unsignedBytes)),
                                    words(vectors.vector(dot->signedBytes)));
    Value total = vector::ReductionOp::create(
        rewriter, loc, vector::CombiningKind::ADD, sums);
    result = arith::AddIOp::create(
        rewriter, loc, acc,
        vector::BroadcastOp::create(rewriter, loc, accType, total));
  } else {
    result = instruction->build(rewriter, loc, acc,
                                vectors.vector(dot->unsignedBytes),
                                vectors.vector(dot->signedBytes));
  }
  vector::TransferWriteOp::create(rewriter, loc, result, output,
                                  ValueRange{zero}, ArrayRef<bool>{true});
  rewriter.eraseOp(tile);
  return success();
}

/// The value of an index computed from constants by arith.addi, subi and
/// muli (an unrolled copy's induction variable), if it is one.
static std::optional<int64_t> constantIndex(Value value, int depth = 4) {
  if (std::optional<int64_t> constant = getConstantIntValue(value))
    return constant;
  Operation *def = value.getDefiningOp();
  if (!def || depth == 0 ||
      !isa<arith::AddIOp, arith::SubIOp, arith::MulIOp>(def))
    return std::nullopt;
  std::optional<int64_t> lhs = constantIndex(def->getOperand(0), depth - 1),
                         rhs = constantIndex(def->getOperand(1), depth - 1);
  if (!lhs || !rhs)
    return std::nullopt;
  if (isa<arith::AddIOp>(def))
    return *lhs + *rhs;
  if (isa<arith::SubIOp>(def))
    return *lhs - *rhs;
  return *lhs * *rhs;
}

/// Whether prefetch `later` fetches nothing `first` does not: the same
/// array and hint, at a constant distance after it of less than a cache
/// line. Prefetches a loop step a line or less apart then still touch
/// every line the loop reads, whatever the alignment.
static bool prefetchesOneLine(memref::PrefetchOp first,
                              memref::PrefetchOp later) {
  if (first.getMemref() != later.getMemref() ||
      first->getAttrDictionary() != later->getAttrDictionary())
    return false;
  auto type = cast<MemRefType>(first.getMemref().getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) ||
      !type.getElementType().isIntOrFloat() ||
      type.getElementTypeBitWidth() % 8 != 0)
    return false;
  int64_t elementBytes = type.getElementTypeBitWidth() / 8, distance = 0;
  for (auto [a, b, stride] :
       llvm::zip_equal(first.getIndices(), later.getIndices(), strides)) {
    if (a == b)
      continue;
    std::optional<int64_t> ca = constantIndex(a), cb = constantIndex(b);
    if (!ca || !cb || ShapedType::isDynamic(stride))
      return false;
    distance += (*cb - *ca) * stride * elementBytes;
  }
  return distance >= 0 && distance < 64;
}

void afm::finishInt8DotLoops(RewriterBase &rewriter,
                             ArrayRef<LoopLikeOpInterface> loops) {
  SmallVector<scf::ForOp> kept; // innermost first
  for (LoopLikeOpInterface loop : llvm::reverse(loops)) {
    auto forOp = cast<scf::ForOp>(loop.getOperation());
    if (failed(forOp.promoteIfSingleIteration(rewriter)))
      kept.push_back(forOp);
  }
  if (kept.empty())
    return;
  Operation *outermost = kept.back()->getParentOp();
  for (scf::ForOp loop : kept)
    moveLoopInvariantCode(cast<LoopLikeOpInterface>(loop.getOperation()));
  DominanceInfo dominance;
  eliminateCommonSubExpressions(rewriter, dominance, outermost);
  for (scf::ForOp &loop : kept)
    loop = hoistAccumulators(rewriter, loop);

  // Short innermost loops (the four code planes; the lane vectors of a
  // narrow target) are unrolled, up to 16 copies of the body.
  int64_t copies = 1;
  Block *body = nullptr;
  while (!kept.empty()) {
    std::optional<APInt> trips = kept.front().getStaticTripCount();
    if (!trips || trips->ugt(4) || copies * trips->getZExtValue() > 16)
      break;
    Block *parent = kept.front()->getBlock();
    if (failed(loopUnrollFull(kept.front())))
      break;
    copies *= trips->getZExtValue();
    body = parent;
    kept.erase(kept.begin());
  }
  if (body) {
    // Each unrolled copy prefetched the same bytes, or (the lane vectors of
    // a narrow target, 32 bytes each) the same cache line: keep one
    // prefetch per line.
    eliminateCommonSubExpressions(rewriter, dominance, outermost);
    SmallVector<memref::PrefetchOp> seen;
    for (auto prefetch :
         llvm::make_early_inc_range(body->getOps<memref::PrefetchOp>())) {
      if (llvm::any_of(seen, [&](memref::PrefetchOp other) {
            return prefetchesOneLine(other, prefetch);
          }))
        rewriter.eraseOp(prefetch);
      else
        seen.push_back(prefetch);
    }
  }
  for (scf::ForOp &loop : kept)
    loop = liftReductionsOutOfLoop(rewriter, loop);
}
