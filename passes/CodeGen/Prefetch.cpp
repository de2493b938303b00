//===- Prefetch.cpp - software prefetch of streamed weights ---------------===//

#include "passes/CodeGen/Prefetch.h"

#include "passes/CodeGen/StorageBytes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::afm;

/// The iterations at which a tile of `subview` starts a new cache line (an
/// i1), or null when every one does: one of `loops` steps the view along a
/// dimension by a constant that is less than a line and divides it.
static Value stepsStartingALine(OpBuilder &b, Location loc,
                                memref::SubViewOp subview,
                                ArrayRef<int64_t> strides,
                                int64_t elementBytes,
                                ArrayRef<scf::ForOp> loops) {
  for (auto [d, offset] : llvm::enumerate(subview.getMixedOffsets())) {
    auto iv = llvm::dyn_cast_if_present<Value>(offset);
    if (d == 0 || !iv || ShapedType::isDynamic(strides[d]))
      continue;
    const scf::ForOp *found = llvm::find_if(
        loops, [&](scf::ForOp loop) { return loop.getInductionVar() == iv; });
    if (found == loops.end())
      continue;
    scf::ForOp walk = *found;
    std::optional<int64_t> step = getConstantIntValue(walk.getStep());
    if (!step)
      continue;
    int64_t stepBytes = *step * strides[d] * elementBytes;
    if (stepBytes <= 0 || stepBytes >= kCacheLineBytes ||
        kCacheLineBytes % stepBytes != 0)
      continue;
    Value fromStart = arith::SubIOp::create(b, loc, iv, walk.getLowerBound());
    Value lineSteps = arith::ConstantIndexOp::create(
        b, loc, *step * (kCacheLineBytes / stepBytes));
    return arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq,
        arith::RemUIOp::create(b, loc, fromStart, lineSteps),
        arith::ConstantIndexOp::create(b, loc, 0));
  }
  return Value();
}

void afm::prefetchAhead(OpBuilder &b, Location loc, Value view,
                        int64_t bytesAhead, unsigned localityHint,
                        ArrayRef<scf::ForOp> loops) {
  if (bytesAhead <= 0)
    return;
  auto subview = view.getDefiningOp<memref::SubViewOp>();
  if (!subview)
    return;
  MemRefType source = subview.getSourceType();
  if (!source.hasStaticShape() || source.getRank() < 1)
    return;
  // A row is the leading stride, not the product of the other sizes: a
  // view of interleaved parts (the 4-bit head's code words) steps over
  // the bytes of the other parts too.
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(source.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(strides.front()))
    return;
  int64_t elementBytes = storageBytes(source.getElementType(), subview);
  int64_t rowBytes = strides.front() * elementBytes;
  if (rowBytes <= 0)
    return;
  int64_t rows = (bytesAhead + rowBytes - 1) / rowBytes;
  SmallVector<Value> indices = getValueOrCreateConstantIndexOp(
      b, loc, subview.getMixedOffsets());
  Value ahead = arith::AddIOp::create(
      b, loc, indices.front(), arith::ConstantIndexOp::create(b, loc, rows));
  indices.front() = arith::MinUIOp::create(
      b, loc, ahead,
      arith::ConstantIndexOp::create(b, loc, source.getDimSize(0) - 1));
  // One prefetch per cache line the tile spans: its dimensions (but the
  // leading one) whose step is a line or more, each position of them (the
  // ASTC kernels' tile covers three row pairs of a block row).
  SmallVector<int64_t> sizes(subview.getStaticSizes());
  SmallVector<std::pair<unsigned, int64_t>> spans; // (dimension, size)
  int64_t lines = 1;
  for (unsigned d = 1; d < sizes.size(); ++d)
    if (!ShapedType::isDynamic(sizes[d]) && sizes[d] > 1 &&
        strides[d] * elementBytes >= kCacheLineBytes) {
      spans.push_back({d, sizes[d]});
      lines *= sizes[d];
    }
  if (lines > kMaxPrefetchesPerTile)
    spans.clear(), lines = 1;
  OpBuilder::InsertionGuard guard(b);
  if (Value due = stepsStartingALine(b, loc, subview, strides, elementBytes,
                                     loops)) {
    auto onlyThen = scf::IfOp::create(b, loc, TypeRange(), due,
                                      /*withElseRegion=*/false);
    b.setInsertionPointToStart(onlyThen.thenBlock());
  }
  for (int64_t line = 0; line < lines; ++line) {
    SmallVector<Value> at(indices);
    int64_t rest = line;
    for (auto [d, size] : spans) {
      if (int64_t step = rest % size)
        at[d] = arith::AddIOp::create(b, loc, at[d],
                                      arith::ConstantIndexOp::create(b, loc, step));
      rest /= size;
    }
    memref::PrefetchOp::create(b, loc, subview.getSource(), at,
                               /*isWrite=*/false, localityHint,
                               /*isDataCache=*/true);
  }
}
