//===- LinalgBuilders.cpp - small builders for linalg on tensors ----------===//

#include "passes/Conversion/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"

using namespace mlir;

SmallVector<OpFoldResult> afm::getSizes(OpBuilder &b, Location loc,
                                        Value tensor) {
  return tensor::getMixedSizes(b, loc, tensor);
}

Value afm::createFilled(OpBuilder &b, Location loc,
                        ArrayRef<OpFoldResult> sizes, TypedAttr value) {
  Value empty = tensor::EmptyOp::create(b, loc, sizes, value.getType());
  Value scalar = arith::ConstantOp::create(b, loc, value);
  return linalg::FillOp::create(b, loc, scalar, empty).getResult(0);
}

Value afm::createFilled(OpBuilder &b, Location loc,
                        ArrayRef<OpFoldResult> sizes, Type elementType,
                        double value) {
  return createFilled(b, loc, sizes, b.getFloatAttr(elementType, value));
}

Value afm::castFloat(OpBuilder &b, Location loc, Value value, Type type) {
  unsigned from = value.getType().getIntOrFloatBitWidth();
  unsigned to = type.getIntOrFloatBitWidth();
  if (value.getType() == type)
    return value;
  if (from < to)
    return arith::ExtFOp::create(b, loc, type, value);
  return arith::TruncFOp::create(b, loc, type, value);
}

Value afm::matmulTransposeB(OpBuilder &b, Location loc, Value x, Value w,
                            Value init) {
  MLIRContext *ctx = b.getContext();
  AffineExpr m, n, k;
  bindDims(ctx, m, n, k);
  SmallVector<AffineMap> maps = {
      AffineMap::get(3, 0, {m, k}, ctx), AffineMap::get(3, 0, {n, k}, ctx),
      AffineMap::get(3, 0, {m, n}, ctx)};
  auto matmul = linalg::MatmulOp::create(b, loc, TypeRange{init.getType()},
                                         ValueRange{x, w}, ValueRange{init});
  matmul.setIndexingMapsAttr(b.getAffineMapArrayAttr(maps));
  return matmul.getResult(0);
}

Value afm::matmulTransposeB(OpBuilder &b, Location loc, Value x, Value w,
                            Type elementType) {
  OpFoldResult rows = getSizes(b, loc, x)[0];
  OpFoldResult cols = getSizes(b, loc, w)[0];
  Value init = createFilled(b, loc, {rows, cols}, elementType, 0.0);
  return matmulTransposeB(b, loc, x, w, init);
}

Value afm::mapElementwise(
    OpBuilder &b, Location loc, ValueRange inputs, Type elementType,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  auto shaped = cast<RankedTensorType>(inputs.front().getType());
  Value init = tensor::EmptyOp::create(b, loc, getSizes(b, loc, inputs.front()),
                                       elementType);
  SmallVector<AffineMap> maps(inputs.size() + 1,
                              b.getMultiDimIdentityMap(shaped.getRank()));
  SmallVector<utils::IteratorType> iterators(shaped.getRank(),
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps,
      iterators, [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        Value result = body(nested, nestedLoc, args.drop_back());
        linalg::YieldOp::create(nested, nestedLoc, result);
      });
  return generic.getResult(0);
}

Value afm::buildGeneric(
    OpBuilder &b, Location loc, ValueRange inputs, Value init,
    ArrayRef<AffineMap> maps, ArrayRef<utils::IteratorType> iterators,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps,
      iterators, [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        linalg::YieldOp::create(nested, nestedLoc,
                                body(nested, nestedLoc, args));
      });
  return generic.getResult(0);
}

int64_t afm::lanesDividing(int64_t n, int64_t most) {
  int64_t lanes = most;
  while (lanes > 1 && n % lanes != 0)
    lanes /= 2;
  return lanes;
}

Value afm::padColumns(OpBuilder &b, Location loc, Value x, int64_t cols) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t k = type.getDimSize(1);
  if (k == cols)
    return x;
  auto padded = RankedTensorType::get({type.getDimSize(0), cols},
                                      type.getElementType());
  Value zero = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(type.getElementType(), 0.0));
  SmallVector<OpFoldResult> low = {b.getIndexAttr(0), b.getIndexAttr(0)};
  SmallVector<OpFoldResult> high = {b.getIndexAttr(0),
                                    b.getIndexAttr(cols - k)};
  return tensor::PadOp::create(b, loc, padded, x, low, high, zero).getResult();
}

Value afm::splitColumns(OpBuilder &b, Location loc, Value x,
                          ArrayRef<int64_t> inner) {
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> shape = {type.getDimSize(0)};
  llvm::append_range(shape, inner);
  ReassociationIndices cols;
  for (size_t i = 0; i < inner.size(); ++i)
    cols.push_back(1 + i);
  SmallVector<ReassociationIndices> groups = {{0}, cols};
  SmallVector<OpFoldResult> outputShape = {getSizes(b, loc, x)[0]};
  for (int64_t d : inner)
    outputShape.push_back(b.getIndexAttr(d));
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), x, groups,
      outputShape);
}

Value afm::sliceAt(OpBuilder &b, Location loc, Value value,
                   ArrayRef<std::pair<int64_t, int64_t>> at) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)),
      sizes = getSizes(b, loc, value), strides(rank, b.getIndexAttr(1));
  SmallVector<bool> dropped(rank, false);
  for (auto [dim, index] : at) {
    offsets[dim] = b.getIndexAttr(index);
    sizes[dim] = b.getIndexAttr(1);
    dropped[dim] = true;
  }
  SmallVector<int64_t> shape;
  for (int64_t dim = 0; dim < rank; ++dim)
    if (!dropped[dim])
      shape.push_back(type.getDimSize(dim));
  return tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), value,
      offsets, sizes, strides);
}

SmallVector<AffineMap> afm::mapsOf(unsigned dims,
                                     ArrayRef<SmallVector<AffineExpr>> results,
                                     MLIRContext *ctx) {
  SmallVector<AffineMap> maps;
  for (const SmallVector<AffineExpr> &r : results)
    maps.push_back(AffineMap::get(dims, 0, r, ctx));
  return maps;
}

Value afm::codeShifts(OpBuilder &b, Location loc, unsigned bits) {
  SmallVector<int8_t> shifts;
  for (unsigned s = 0; s < 8; s += bits)
    shifts.push_back(int8_t(s));
  auto type = RankedTensorType::get({int64_t(shifts.size())}, b.getI8Type());
  return arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(type, ArrayRef<int8_t>(shifts)));
}

Value afm::zerosLike(OpBuilder &b, Location loc, Value x,
                       ArrayRef<int64_t> cols) {
  SmallVector<OpFoldResult> sizes = {getSizes(b, loc, x)[0]};
  for (int64_t c : cols)
    sizes.push_back(b.getIndexAttr(c));
  return createFilled(b, loc, sizes, b.getF32Type(), 0.0);
}

Value afm::sumInnermost(OpBuilder &b, Location loc, Value x) {
  MLIRContext *ctx = b.getContext();
  auto type = cast<RankedTensorType>(x.getType());
  auto integer = dyn_cast<IntegerType>(type.getElementType());
  AffineExpr t, a, i;
  bindDims(ctx, t, a, i);
  Value init =
      integer ? createFilled(b, loc,
                             {getSizes(b, loc, x)[0],
                              b.getIndexAttr(type.getDimSize(1))},
                             b.getIntegerAttr(integer, 0))
              : zerosLike(b, loc, x, {type.getDimSize(1)});
  return buildGeneric(
      b, loc, ValueRange{x}, init, mapsOf(3, {{t, a, i}, {t, a}}, ctx),
      {utils::IteratorType::parallel, utils::IteratorType::parallel,
       utils::IteratorType::reduction},
      [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
        if (integer)
          return arith::AddIOp::create(nb, l, args[1], args[0]);
        return arith::AddFOp::create(
            nb, l, args[1], castFloat(nb, l, args[0], nb.getF32Type()));
      });
}

Value afm::buildBytesAsWords(OpBuilder &b, Location loc, Value bytes,
                             ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(bytes.getType());
  Value buffer = bufferization::ToBufferOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()), bytes,
      /*readOnly=*/true);
  SmallVector<ReassociationIndices> all(1);
  for (int64_t d = 0; d < type.getRank(); ++d)
    all[0].push_back(d);
  Value flat = memref::CollapseShapeOp::create(b, loc, buffer, all);
  Value words = memref::ViewOp::create(
      b, loc, MemRefType::get(shape, b.getI32Type()), flat,
      arith::ConstantIndexOp::create(b, loc, 0), ValueRange{});
  return bufferization::ToTensorOp::create(
      b, loc, RankedTensorType::get(shape, b.getI32Type()), words,
      /*restrict=*/true, /*writable=*/false);
}
