//===- AttentionSpec.cpp - facts both attention lowerings share -----------===//

#include "passes/Conversion/AttentionSpec.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::afm;

Value AttentionSpec::filledPositions(OpBuilder &b, Location loc) const {
  return key ? position
             : arith::AddIOp::create(b, loc, position, count).getResult();
}

AttentionShape AttentionSpec::shape() const {
  auto queryType = cast<RankedTensorType>(query.getType());
  KVCacheShape cacheShape = *getKVCacheShape(cache.getType());
  return AttentionShape{queryType.getDimSize(0),   queryType.getDimSize(1),
                        queryType.getDimSize(2),   cacheShape.kvHeads,
                        cacheShape.capacity,
                        queryType.getDimSize(1) / cacheShape.kvHeads};
}

bool afm::hasTiledKeys(const AttentionSpec &spec) {
  std::optional<KVCacheShape> cache = getKVCacheShape(spec.cache.getType());
  return cache && spec.scales && cache->elementType.isSignlessInteger(8) &&
         cache->capacity % kKeyTileSlots == 0 &&
         cache->headDim % (kKeyTileSlots * kKeyTileBytes) == 0;
}

Value afm::widenHalf(OpBuilder &b, Location loc, Value value) {
  Type type = value.getType();
  if (!getElementTypeOrSelf(type).isF16())
    return value;
  Type wide = b.getF32Type();
  if (auto vector = dyn_cast<VectorType>(type))
    wide = vector.clone(wide);
  return arith::ExtFOp::create(b, loc, wide, value);
}

/// `value` as a constant of `type`: an index or integer, or a vector of
/// them (every lane).
static Value integerConstant(OpBuilder &b, Location loc, Type type,
                             int64_t value) {
  if (auto vector = dyn_cast<VectorType>(type))
    return arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(
            vector, b.getIntegerAttr(vector.getElementType(), value)));
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, value));
}

Value afm::withinWindow(OpBuilder &b, Location loc, const AttentionSpec &spec,
                        Value valid, Value keyPosition, Value query) {
  if (spec.kind != AttentionKind::Local)
    return valid;
  // keyPosition >= query - window + 1, written as keyPosition + window >
  // query.
  Value reach = arith::AddIOp::create(
      b, loc, keyPosition,
      integerConstant(b, loc, keyPosition.getType(), spec.window.value_or(0)));
  return arith::AndIOp::create(
      b, loc, valid,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, reach, query));
}

Value afm::cachedSlotVisible(OpBuilder &b, Location loc,
                             const AttentionSpec &spec, int64_t capacity,
                             Value slot, Value filled, Value last,
                             Value lastSlot, Value query) {
  auto cmp = [&](arith::CmpIPredicate p, Value x, Value y) -> Value {
    return arith::CmpIOp::create(b, loc, p, x, y);
  };
  // back = (lastSlot - slot) mod C: how many positions before the newest
  // the slot's position is (filled slots have slot <= last).
  Value before = arith::SubIOp::create(b, loc, lastSlot, slot);
  Value back = arith::SelectOp::create(
      b, loc, cmp(arith::CmpIPredicate::ule, slot, lastSlot), before,
      arith::AddIOp::create(
          b, loc, before,
          integerConstant(b, loc, slot.getType(), capacity)));
  Value keyPosition = arith::SubIOp::create(b, loc, last, back);
  Value valid = arith::AndIOp::create(
      b, loc, cmp(arith::CmpIPredicate::ult, slot, filled),
      cmp(arith::CmpIPredicate::ule, keyPosition, query));
  return withinWindow(b, loc, spec, valid, keyPosition, query);
}
