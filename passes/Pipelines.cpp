//===- Pipelines.cpp - the afm code generation pipeline -------------------===//
//
// The order matters: attention must be lowered while caches are bound
// memrefs and everything else still tensors; nothing afm may reach
// bufferization; vectorization runs on memrefs with static tiles; math is
// approximated before vector lowering so it vectorizes.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void afm::buildAFMCodegenPipeline(OpPassManager &pm,
                                  const CodegenPipelineOptions &options) {
  // Model-level rewrites, then afm -> linalg on tensors. Adapters are
  // split off before anything moves the linear layers.
  pm.addPass(createAFMSVDSplitPass());
  if (options.prefillBypass)
    pm.addPass(createAFMPrefillBypassPass());
  pm.addPass(createAFMSizeKVCachesPass());
  AFMFuseMinShiftPassOptions fusion;
  fusion.dequantize = !options.fuseMinShift;
  pm.addPass(createAFMFuseMinShiftPass(fusion));
  pm.addPass(createAFMBindEntryABIPass());
  pm.addPass(createAFMLowerTracksPass());
  pm.addPass(createAFMLowerMoEPass());
  pm.addPass(createAFMLowerAttentionPass());
  pm.addPass(createAFMLowerToLinalgPass());
  pm.addPass(createAFMCheckLoweredPass());
  // Residual additions are arith ops on tensors.
  pm.addPass(createConvertElementwiseToLinalgPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  // Tensors -> buffers. Temporaries are freed by the deallocation pipeline.
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferAlignment = 64;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createCanonicalizerPass());

  // Tiles and vectors for the target; what does not vectorize becomes loops.
  AFMTileForTargetPassOptions tiling;
  tiling.target = options.target;
  tiling.targetOS = options.targetOS;
  tiling.minParallelWork = options.minParallelWork;
  pm.addNestedPass<func::FuncOp>(createAFMTileForTargetPass(tiling));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Big parallel tile loops run on the runtime's threads.
  pm.addPass(createAFMOutlineParallelLoopsPass());
  pm.addPass(createConvertLinalgToLoopsPass());
  pm.addPass(createAFMApproximateMathPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createAFMLowerVectorPass());
  // Fully unrolled: n-D transfers become 1-D vector ops in registers, not
  // round trips through stack buffers (which, placed in loop bodies, would
  // grow the stack on every iteration).
  pm.addPass(createConvertVectorToSCFPass(
      VectorTransferToSCFOptions().enableFullUnroll()));
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());

  // Everything to the LLVM dialect. Entry points take bare pointers
  // (include/afm/kernel_abi.h).
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  ConvertFuncToLLVMPassOptions func;
  func.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(func));
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createAFMLowerParallelCallsPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

void afm::registerAFMPipelines() {
  PassPipelineRegistration<CodegenPipelineOptions>(
      "afm-codegen",
      "Lower afm entry points to the LLVM dialect for a target: bind the "
      "ABI, lower, bufferize, tile and vectorize, convert to LLVM",
      buildAFMCodegenPipeline);
}
