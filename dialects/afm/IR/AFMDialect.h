//===- AFMDialect.h - afm dialect, enums, attributes, types -----*- C++ -*-===//
//
// Everything of the afm dialect except its ops.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_DIALECT_AFM_IR_AFMDIALECT_H
#define AFM_DIALECT_AFM_IR_AFMDIALECT_H

#include "afm/Layout/PackedWeights.h"
#include "afm/Target/TargetDescription.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/Operation.h"

#include <array>
#include <optional>

// Attributes first: the dialect's generated stage-contract accessors
// (discardableAttrs in AFMDialect.td) use them.
#include "dialects/afm/IR/AFMEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/afm/IR/AFMAttrs.h.inc"

#include "dialects/afm/IR/AFMDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/afm/IR/AFMTypes.h.inc"

namespace mlir::afm {

/// The `[rows, cols]` of a weight matrix: a rank-2 tensor or any compressed
/// weight type. Returns std::nullopt for anything else.
std::optional<std::array<int64_t, 2>> getWeightMatrixShape(Type type);

/// Shape of a KV cache, whether `!afm.kv_cache` or bound to a
/// `memref<2 x kvHeads x capacity x headDim>` (keys, then values).
struct KVCacheShape {
  int64_t kvHeads;
  int64_t capacity;
  int64_t headDim;
  Type elementType;
};
std::optional<KVCacheShape> getKVCacheShape(Type type);

/// True if `type` is one of the afm compressed weight types.
bool isCompressedWeight(Type type);

/// One buffer of a compressed weight bound to runtime memory (see
/// `afm.bound_weight`): its role and its tensor type.
struct WeightPart {
  StringRef role; // "codes", "scales" or "biases"
  RankedTensorType type;
};

/// The dialect, whose generated accessors read and write the stage
/// contracts (`afm.model`, `afm.entry`, ...: AFMDialect.td), e.g.
/// `contracts(ctx).getModelAttrHelper().getAttr(module)`.
inline AFMDialect &contracts(MLIRContext *context) {
  return *context->getOrLoadDialect<AFMDialect>();
}
inline AFMDialect &contracts(Operation *op) {
  return contracts(op->getContext());
}

/// The entry-point kind of `func`, if it is one (`afm.entry`).
std::optional<EntryKind> getEntryKind(Operation *func);

/// The description of the target `op`'s module is compiled for (its
/// `afm.target`, stamped by afm-set-target). Emits an error on `op` and
/// fails when the module has none.
FailureOr<TargetDescription> getTargetDescription(Operation *op);

/// The buffers of a bound ASTC weight, in operand order
/// (getBoundWeightParts).
enum ASTCPart : unsigned {
  kASTCCodesPart = 0,
  kASTCTailCodesPart = 1,
  kASTCScalesPart = 2,
  kASTCBiasesPart = 3,
};

/// The buffers a compressed weight of `type` is bound to, in the operand
/// order of `afm.bound_weight`; empty for other types and for ASTC block
/// footprints without a CPU form (all but 6x6).
SmallVector<WeightPart> getBoundWeightParts(Type type);

/// True if dimension sizes `a` and `b` may be equal (either is dynamic).
inline bool dimsCompatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

} // namespace mlir::afm

#endif // AFM_DIALECT_AFM_IR_AFMDIALECT_H
