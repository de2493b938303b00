//===- HostAPI.h - afm_host_api as the LLVM dialect sees it ------*- C++ -*-===//
//
// The fields of include/afm/kernel_abi.h's afm_host_api, in order, for the
// passes that read them from compiled code: afm-lower-parallel-calls
// (parallel_for, pool, track_allreduce, track_ctx) and afm-lower-tracks
// (track_begin, track_end).
//
//===----------------------------------------------------------------------===//

#ifndef AFM_PASSES_CONVERSION_HOSTAPI_H
#define AFM_PASSES_CONVERSION_HOSTAPI_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

namespace mlir::afm {

enum class HostField : int32_t {
  ParallelFor = 0,
  Pool = 1,
  NumThreads = 2,
  TrackBegin = 3,
  TrackEnd = 4,
  TrackAllReduce = 5,
  TrackContext = 6,
};

/// `struct afm_host_api` as an LLVM literal struct.
inline LLVM::LLVMStructType hostAPIType(MLIRContext *ctx) {
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto i64 = IntegerType::get(ctx, 64);
  return LLVM::LLVMStructType::getLiteral(ctx,
                                          {ptr, ptr, i64, i64, i64, ptr, ptr});
}

/// Loads field `field` (of LLVM type `type`) of the afm_host_api at `host`.
inline Value loadHostField(OpBuilder &b, Location loc, Value host,
                           HostField field, Type type) {
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  Value address = LLVM::GEPOp::create(
      b, loc, ptr, hostAPIType(b.getContext()), host,
      ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(field)});
  return LLVM::LoadOp::create(b, loc, type, address).getResult();
}

} // namespace mlir::afm

#endif // AFM_PASSES_CONVERSION_HOSTAPI_H
