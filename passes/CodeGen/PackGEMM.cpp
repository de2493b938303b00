//===- PackGEMM.cpp - data-tile big matmuls into register-tile panels ------===//
//
// A GEMM reaches the FMA peak only when its micro-kernel keeps an mr x nr
// block of C in registers and, per reduction step, broadcasts mr values of
// A and loads nr contiguous values of B. This pass rewrites each big f32
// contraction C[b,m,n] += A[b,m,k] * B[b,k,n] (any operand layout) as a
// linalg.generic over the loops (b, n1, m1, m0, n0, k), with m = m1*mr+m0
// and n = n1*nr+n0, on views of its operands (tensor.expand_shape, no
// copies):
//   A and C are read in place, whatever their layout;
//   B is read in place when n is its innermost dimension; otherwise (x*W^T,
//   as afm.linear lowers) it is packed into [b, N/nr, K, nr] panels;
//   a constant B is always packed, at compile time, into those panels.
// The generic carries the cache and register tiles afm-tile-for-target
// applies. Sizes come from the target description (GEMMTiles.h).
//
//===----------------------------------------------------------------------===//

#include "passes/CodeGen/GEMMTiles.h"
#include "passes/Passes.h"

#include "afm/Target/TargetDescription.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Debug.h"

namespace mlir::afm {
#define GEN_PASS_DEF_AFMPACKGEMMPASS
#include "passes/Passes.h.inc"
} // namespace mlir::afm

#define DEBUG_TYPE "afm-pack-gemm"

using namespace mlir;
using namespace mlir::afm;

namespace {
/// A dimension of a relaid-out tensor: an op loop dimension, whole
/// (`part` -1) or the outer (0) or inner (1) factor of its split.
struct Piece {
  unsigned dim;
  int part;
};

/// How a tensor indexed by `map` is split and reordered.
struct Relayout {
  AffineMap map;
  llvm::SmallDenseMap<unsigned, int64_t> splits; // dim -> inner factor
  SmallVector<Piece> order;                      // the packed dimensions
};
} // namespace

/// The pieces of `layout.map`'s tensor after splitting, in storage order,
/// with their sizes, and the reassociation that groups them back.
static void expandedPieces(const Relayout &layout, ArrayRef<int64_t> shape,
                           SmallVectorImpl<Piece> &pieces,
                           SmallVectorImpl<int64_t> &sizes,
                           SmallVectorImpl<ReassociationIndices> &groups) {
  for (auto [j, size] : llvm::enumerate(shape)) {
    unsigned dim = layout.map.getDimPosition(j);
    ReassociationIndices group;
    auto split = layout.splits.find(dim);
    if (split == layout.splits.end()) {
      group.push_back(pieces.size());
      pieces.push_back({dim, -1});
      sizes.push_back(size);
    } else {
      group.push_back(pieces.size());
      pieces.push_back({dim, 0});
      sizes.push_back(size / split->second);
      group.push_back(pieces.size());
      pieces.push_back({dim, 1});
      sizes.push_back(split->second);
    }
    groups.push_back(group);
  }
}

static SmallVector<int64_t> permutationTo(ArrayRef<Piece> from,
                                          ArrayRef<Piece> to) {
  SmallVector<int64_t> permutation;
  for (Piece want : to)
    for (auto [i, have] : llvm::enumerate(from))
      if (have.dim == want.dim && have.part == want.part)
        permutation.push_back(i);
  return permutation;
}

/// The f32 `data` of shape `sizes`, transposed by `permutation`.
static SmallVector<float> transposeData(ArrayRef<float> data,
                                        ArrayRef<int64_t> sizes,
                                        ArrayRef<int64_t> permutation) {
  size_t rank = sizes.size();
  SmallVector<int64_t> strides(rank, 1);
  for (size_t i = rank - 1; i > 0; --i)
    strides[i - 1] = strides[i] * sizes[i];
  SmallVector<float> result(data.size());
  SmallVector<int64_t> index(rank, 0); // over the result's dimensions
  for (float &out : result) {
    int64_t source = 0;
    for (size_t i = 0; i < rank; ++i)
      source += index[i] * strides[permutation[i]];
    out = data[source];
    for (size_t i = rank; i-- > 0;) {
      if (++index[i] < sizes[permutation[i]])
        break;
      index[i] = 0;
    }
  }
  return result;
}

/// The f32 `constant`, indexed by `layout.map`, repacked into
/// `layout.order`: weights are constants, so this happens here, once,
/// instead of per call.
static Value packConstant(OpBuilder &b, Location loc,
                          DenseElementsAttr constant,
                          const Relayout &layout) {
  auto type = cast<RankedTensorType>(constant.getType());
  SmallVector<Piece> pieces;
  SmallVector<int64_t> sizes;
  SmallVector<ReassociationIndices> groups;
  expandedPieces(layout, type.getShape(), pieces, sizes, groups);
  SmallVector<int64_t> permutation = permutationTo(pieces, layout.order);
  auto data =
      llvm::ArrayRef(reinterpret_cast<const float *>(constant.getRawData().data()),
                     constant.getNumElements());
  SmallVector<int64_t> shape;
  for (int64_t p : permutation)
    shape.push_back(sizes[p]);
  auto packedType = RankedTensorType::get(shape, type.getElementType());
  return arith::ConstantOp::create(
      b, loc, packedType,
      DenseElementsAttr::get(
          packedType,
          llvm::ArrayRef(transposeData(data, sizes, permutation))));
}

namespace {
/// The roles of a contraction's loop dimensions.
struct GEMMDims {
  std::optional<unsigned> batch;
  unsigned m, n, k;
  int64_t sizeM, sizeN, sizeK;
};
} // namespace

static std::optional<GEMMDims> matchGEMM(linalg::LinalgOp op) {
  if (!linalg::isaContractionOpInterface(op) || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !op.hasPureTensorSemantics())
    return std::nullopt;
  for (OpOperand &operand : op->getOpOperands())
    if (getElementTypeOrSelf(operand.get().getType()) !=
        Float32Type::get(op.getContext()))
      return std::nullopt;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->batch.size() > 1 || dims->m.size() != 1 ||
      dims->n.size() != 1 || dims->k.size() != 1)
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  for (AffineMap map : op.getIndexingMapsArray())
    if (!map.isProjectedPermutation(/*allowZeroInResults=*/false))
      return std::nullopt;
  GEMMDims gemm;
  if (!dims->batch.empty())
    gemm.batch = dims->batch.front();
  gemm.m = dims->m.front();
  gemm.n = dims->n.front();
  gemm.k = dims->k.front();
  gemm.sizeM = ranges[gemm.m];
  gemm.sizeN = ranges[gemm.n];
  gemm.sizeK = ranges[gemm.k];
  return gemm;
}

/// `x`, indexed by `map`, with the dimensions in `splits` split in two:
/// the view and its dimensions in storage order.
static Value expand(OpBuilder &b, Location loc, Value x, const Relayout &layout,
                    SmallVectorImpl<Piece> &pieces) {
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> sizes;
  SmallVector<ReassociationIndices> groups;
  expandedPieces(layout, type.getShape(), pieces, sizes, groups);
  if (sizes.size() == size_t(type.getRank()))
    return x;
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(sizes, type.getElementType()), x, groups);
}

static LogicalResult packGEMM(RewriterBase &rewriter, linalg::LinalgOp op,
                              const TargetDescription &target,
                              int64_t minMultiplyAdds) {
  std::optional<GEMMDims> gemm = matchGEMM(op);
  if (!gemm)
    return failure();
  std::optional<GEMMTiles> tiles =
      chooseGEMMTiles(target, gemm->sizeM, gemm->sizeN, gemm->sizeK,
                      minMultiplyAdds);
  if (!tiles) {
    LLVM_DEBUG(llvm::dbgs() << "not packed: " << gemm->sizeM << "x"
                            << gemm->sizeN << "x" << gemm->sizeK
                            << " GEMM is too small or has no full register "
                               "tiles\n");
    return failure();
  }
  LLVM_DEBUG(llvm::dbgs() << "packing " << gemm->sizeM << "x" << gemm->sizeN
                          << "x" << gemm->sizeK << " GEMM: mr " << tiles->mr
                          << ", nr " << tiles->nr << ", kr " << tiles->kr
                          << ", kc " << tiles->kc << ", nc " << tiles->nc
                          << ", mc " << tiles->mc << "\n");

  MLIRContext *ctx = op.getContext();
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  auto layoutOf = [&](AffineMap map) {
    Relayout layout;
    layout.map = map;
    layout.splits[gemm->m] = tiles->mr;
    layout.splits[gemm->n] = tiles->nr;
    return layout;
  };

  // Loops of the GEMM: [b,] n1, m1, m0, n0, k. The register tile's
  // (m0, n0, k) come last in that order, the (m, n, k) of a canonical
  // vector.contract, which lowers to outer products.
  unsigned nb = gemm->batch ? 1 : 0;
  unsigned n1 = nb, m1 = nb + 1, m0 = nb + 2, n0 = nb + 3, kk = nb + 4;
  auto loopOf = [&](Piece piece) -> unsigned {
    if (piece.dim == gemm->m)
      return piece.part == 0 ? m1 : m0;
    if (piece.dim == gemm->n)
      return piece.part == 0 ? n1 : n0;
    return piece.dim == gemm->k ? kk : 0;
  };
  auto mapOf = [&](ArrayRef<Piece> pieces) {
    SmallVector<AffineExpr> results;
    for (Piece piece : pieces)
      results.push_back(getAffineDimExpr(loopOf(piece), ctx));
    return AffineMap::get(nb + 5, 0, results, ctx);
  };

  // B in panels of nr columns, each contiguous over K: a constant now,
  // anything else block by block as the GEMM runs (afm.pack_input).
  SmallVector<Piece> panels;
  if (gemm->batch)
    panels.push_back({*gemm->batch, -1});
  panels.append({{gemm->n, 0}, {gemm->k, -1}, {gemm->n, 1}});
  std::optional<int64_t> packAtRunTime;
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    Relayout layout = layoutOf(map);
    bool isB = map.getResultPosition(getAffineDimExpr(gemm->n, ctx))
                   .has_value();
    // (f32: matchGEMM checked every operand.)
    DenseElementsAttr constant;
    if (isB && matchPattern(input->get(), m_Constant(&constant)) &&
        !constant.isSplat()) {
      layout.order = panels;
      inputs.push_back(packConstant(rewriter, loc, constant, layout));
      maps.push_back(mapOf(layout.order));
      continue;
    }
    if (isB)
      packAtRunTime = inputs.size();
    SmallVector<Piece> pieces;
    inputs.push_back(expand(rewriter, loc, input->get(), layout, pieces));
    maps.push_back(mapOf(pieces));
  }
  OpOperand *init = op.getDpsInitOperand(0);
  Relayout outLayout = layoutOf(op.getMatchingIndexingMap(init));
  SmallVector<Piece> outPieces;
  Value output = expand(rewriter, loc, init->get(), outLayout, outPieces);
  maps.push_back(mapOf(outPieces));

  SmallVector<utils::IteratorType> iterators(nb + 5,
                                             utils::IteratorType::parallel);
  iterators[kk] = utils::IteratorType::reduction;
  auto generic = linalg::GenericOp::create(
      rewriter, loc, TypeRange{output.getType()}, inputs, output, maps,
      iterators);
  // The scalar body (multiply-add) is the contraction's own.
  rewriter.cloneRegionBefore(op->getRegion(0), generic.getRegion(),
                             generic.getRegion().end());

  // The tiles afm-tile-for-target applies: a cache level over column
  // blocks, reduction blocks and, when A's rows do not fit beside B's
  // block, row blocks (in that loop order, so the column blocks are the
  // parallel outer loop and B's block is packed once for all row blocks),
  // then the register tile: one loop over the column and row tiles each
  // and one over the block's reduction.
  // m0 and n0 are the register tile whole (tile size 0: no loop), so the
  // accumulators' views do not depend on the reduction loop.
  SmallVector<int64_t> cache(nb + 5, 0), reg(nb + 5, 0);
  SmallVector<int64_t> interchange;
  if (gemm->batch) {
    cache[0] = reg[0] = 1;
    interchange.push_back(0);
  }
  cache[n1] = tiles->nc / tiles->nr;
  cache[kk] = tiles->kc;
  if (tiles->mc < gemm->sizeM)
    cache[m1] = tiles->mc / tiles->mr;
  interchange.append({n1, kk, m1, m0, n0});
  reg[n1] = reg[m1] = 1;
  reg[kk] = tiles->kr;
  SmallVector<int64_t> order;
  if (packAtRunTime)
    for (Piece piece : panels)
      order.push_back(loopOf(piece));
  contracts(generic).getGemmScheduleAttrHelper().setAttr(
      generic, GEMMScheduleAttr::get(rewriter.getContext(), cache, interchange,
                                     reg, packAtRunTime.value_or(-1), order));

  // C back in its own shape: the inverse of its view.
  Value result = generic.getResult(0);
  if (auto view = output.getDefiningOp<tensor::ExpandShapeOp>();
      view && output != init->get())
    result = tensor::CollapseShapeOp::create(
        rewriter, loc, op->getResult(0).getType(), result,
        view.getReassociationIndices());
  rewriter.replaceOp(op, result);
  return success();
}

namespace {
struct AFMPackGEMMPass : afm::impl::AFMPackGEMMPassBase<AFMPackGEMMPass> {
  using Base::Base;

  void runOnOperation() override {
    FailureOr<TargetDescription> target = getTargetDescription(getOperation());
    if (failed(target))
      return signalPassFailure();
    // SME targets run f32 GEMMs on ZA tiles (afm-tile-for-target).
    if (target->hasSME)
      return;
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops)
      (void)packGEMM(rewriter, op, *target, minMultiplyAdds);
  }
};
} // namespace
