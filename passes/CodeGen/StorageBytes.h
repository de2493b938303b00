//===- StorageBytes.h - bytes a buffer element takes in memory -*- C++ -*-===//
//
// Buffer sizes from the data layout, not from bit widths: an index has no
// bit width of its own (asking for one aborts), and an i1 takes a byte in
// memory, not a bit.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_PASSES_STORAGEBYTES_H
#define AFM_PASSES_STORAGEBYTES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"

namespace mlir::afm {

/// Bytes one element of `type` takes, by the data layout in scope at `op`.
inline int64_t storageBytes(Type type, Operation *op) {
  return DataLayout::closest(op).getTypeSize(type).getFixedValue();
}

/// Bytes the elements of a static `type` take, by the data layout in scope
/// at `op`.
inline int64_t storageBytes(MemRefType type, Operation *op) {
  return type.getNumElements() * storageBytes(type.getElementType(), op);
}

} // namespace mlir::afm

#endif // AFM_PASSES_STORAGEBYTES_H
