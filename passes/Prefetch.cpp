//===- Prefetch.cpp - software prefetch of streamed weights ---------------===//

#include "passes/Prefetch.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::afm;

void afm::prefetchAhead(OpBuilder &b, Location loc, Value view) {
  auto subview = view.getDefiningOp<memref::SubViewOp>();
  if (!subview)
    return;
  MemRefType source = subview.getSourceType();
  if (!source.hasStaticShape() || source.getRank() < 1)
    return;
  int64_t rowBytes = source.getElementTypeBitWidth() / 8;
  for (int64_t size : source.getShape().drop_front())
    rowBytes *= size;
  if (rowBytes <= 0)
    return;
  int64_t rows = (kPrefetchBytes + rowBytes - 1) / rowBytes;
  SmallVector<Value> indices = getValueOrCreateConstantIndexOp(
      b, loc, subview.getMixedOffsets());
  Value ahead = arith::AddIOp::create(
      b, loc, indices.front(), arith::ConstantIndexOp::create(b, loc, rows));
  indices.front() = arith::MinUIOp::create(
      b, loc, ahead,
      arith::ConstantIndexOp::create(b, loc, source.getDimSize(0) - 1));
  memref::PrefetchOp::create(b, loc, subview.getSource(), indices,
                             /*isWrite=*/false, /*localityHint=*/3,
                             /*isDataCache=*/true);
}
