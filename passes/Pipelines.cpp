//===- Pipelines.cpp - the afm code generation pipeline -------------------===//
//
// The order matters: attention must be lowered while caches are bound
// memrefs and everything else still tensors; nothing afm may reach
// bufferization; vectorization runs on memrefs with static tiles; math is
// approximated before vector lowering so it vectorizes.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "afm/Target/TargetDescription.h"

#include "mlir/Conversion/ArmSMEToLLVM/ArmSMEToLLVM.h"
#include "mlir/Conversion/MathToFuncs/MathToFuncs.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/TosaToArith/TosaToArith.h"
#include "mlir/Conversion/TosaToLinalg/TosaToLinalg.h"
#include "mlir/Conversion/TosaToTensor/TosaToTensor.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/ArmSME/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

/// afm-set-target for the target `name` (retargeted to `os`, if given).
static void addSetTarget(OpPassManager &pm, StringRef name, StringRef os) {
  afm::AFMSetTargetPassOptions stamp;
  stamp.target = name.str();
  stamp.targetOS = os.str();
  pm.addPass(afm::createAFMSetTargetPass(stamp));
}

/// The passes both pipelines run first: the target on the module, then the
/// op locations, named before anything else so that everything made from
/// an op keeps its name.
static void addTargetAndLocations(OpPassManager &pm,
                                  const afm::TargetDescription &target) {
  addSetTarget(pm, target.name, target.os);
  pm.addPass(afm::createAFMTagOpLocationsPass());
}

/// afm ops -> linalg on tensors: tracks, MoE, attention, then the rest,
/// and a check that nothing of afm is left.
static void addAFMLowering(OpPassManager &pm,
                           const afm::CodegenOptions &options) {
  pm.addPass(afm::createAFMLowerTracksPass());
  pm.addPass(afm::createAFMLowerMoEPass());
  pm.addPass(afm::createAFMLowerAttentionPass());
  afm::AFMLowerToLinalgPassOptions lowering;
  lowering.int8Activations = options.int8Activations;
  pm.addPass(afm::createAFMLowerToLinalgPass(lowering));
  pm.addPass(afm::createAFMCheckLoweredPass());
}

static void addMinShiftFusion(OpPassManager &pm,
                              const afm::CodegenOptions &options) {
  afm::AFMFuseMinShiftPassOptions fusion;
  fusion.dequantize = !options.fuseMinShift;
  pm.addPass(afm::createAFMFuseMinShiftPass(fusion));
}

void afm::buildAFMCodegenPipeline(OpPassManager &pm,
                                  const TargetDescription &target,
                                  const CodegenOptions &options) {
  // Adapters are split off before anything moves the linear layers.
  addTargetAndLocations(pm, target);
  pm.addPass(createAFMSVDSplitPass());
  if (options.prefillBypass)
    pm.addPass(createAFMPrefillBypassPass());
  pm.addPass(createAFMSizeKVCachesPass());
  addMinShiftFusion(pm, options);
  pm.addPass(createAFMBindEntryABIPass());
  addAFMLowering(pm, options);
  // Residual additions are arith ops on tensors.
  pm.addPass(createConvertElementwiseToLinalgPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  buildAFMTensorToLLVMPipeline(pm, target, options,
                               /*bufferizeSignatures=*/false);
}

void afm::buildAFMGraphCodegenPipeline(OpPassManager &pm,
                                       const TargetDescription &target,
                                       const CodegenOptions &options) {
  // afm ops from the `afm` ONNX domain and the raised decoder layers:
  // the same rewrites and lowerings as afm-codegen, minus what needs an
  // entry-point ABI (weights are arguments or constants, already bound;
  // KV caches, if any, are memref arguments).
  if (options.hostArgument)
    pm.addPass(createAFMAddHostArgumentPass());
  addTargetAndLocations(pm, target);
  addMinShiftFusion(pm, options);
  addAFMLowering(pm, options);
  // The ONNX importer's TOSA. The named lowering runs first so that
  // tosa-to-linalg does not see matmuls it has no pattern for.
  pm.addNestedPass<func::FuncOp>(tosa::createTosaToLinalgNamed());
  pm.addNestedPass<func::FuncOp>(tosa::createTosaToLinalg());
  pm.addNestedPass<func::FuncOp>(createTosaToArithPass());
  pm.addNestedPass<func::FuncOp>(createTosaToTensorPass());
  pm.addPass(createConvertElementwiseToLinalgPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  buildAFMTensorToLLVMPipeline(pm, target, options,
                               /*bufferizeSignatures=*/true);
}

/// Upstream's ArmSME lowering (the -test-lower-to-arm-sme pipeline), up to
/// the conversion to SCF: scalable GEMM tiles become ZA tile loads, fmopa
/// outer products and tile stores.
static void addArmSMELowering(OpPassManager &pm) {
  pm.addPass(afm::createAFMPrepareArmSMEPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(arm_sme::createVectorLegalizationPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createArithToArmSMEConversionPass());
  pm.addPass(createConvertVectorToArmSMEPass());
  pm.addNestedPass<func::FuncOp>(arm_sme::createOuterProductFusionPass());
  pm.addPass(createConvertArmSMEToSCFPass());
}

void afm::buildAFMTensorToLLVMPipeline(OpPassManager &pm,
                                       const TargetDescription &target,
                                       const CodegenOptions &options,
                                       bool bufferizeSignatures) {
  bool sme = target.hasSME;
  // Big GEMMs in register-tile panels, while operands are still values
  // (constant weights are repacked at compile time).
  pm.addPass(createAFMPackGEMMPass());
  pm.addPass(createCanonicalizerPass());

  // Tensors -> buffers. Temporaries are freed by the deallocation pipeline.
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferAlignment = 64;
  if (bufferizeSignatures) {
    // Identity layouts keep arguments contiguous, which the bare-pointer
    // calling convention below requires; results become caller-owned
    // buffers so nothing allocated inside escapes.
    bufferize.bufferizeFunctionBoundaries = true;
    bufferize.functionBoundaryTypeConversion =
        bufferization::LayoutMapOption::IdentityLayoutMap;
  }
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  if (bufferizeSignatures) {
    bufferization::BufferResultsToOutParamsPassOptions outParams;
    outParams.hoistStaticAllocs = true;
    outParams.modifyPublicFunctions = true;
    pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  }
  // Temporaries out of loops (attention's per-block buffers), then, in
  // entry points, into the session's arena: a decode step allocates
  // nothing.
  if (options.arenaTemporaries) {
    pm.addNestedPass<func::FuncOp>(
        bufferization::createBufferLoopHoistingPass());
    pm.addPass(createAFMPlanStepMemoryPass());
  }
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createCanonicalizerPass());

  // Tiles and vectors for the target; what does not vectorize becomes loops.
  AFMTileForTargetPassOptions tiling;
  tiling.minParallelWork = options.minParallelWork;
  pm.addNestedPass<func::FuncOp>(createAFMSelectTilesPass());
  pm.addNestedPass<func::FuncOp>(createAFMTileForTargetPass(tiling));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Big parallel tile loops run on the runtime's threads.
  AFMOutlineParallelLoopsPassOptions outlining;
  // Not on SME targets: an SME loop's bounds use vector.vscale, which would
  // stay in its caller, and only functions holding ZA ops run in streaming
  // mode, where vscale is defined.
  outlining.outlineSerialLoops = !sme;
  pm.addPass(createAFMOutlineParallelLoopsPass(outlining));
  // Layers repeat: their tasks and serial loops then share one body each.
  pm.addPass(createAFMMergeEquivalentTasksPass());
  pm.addPass(createConvertLinalgToLoopsPass());
  pm.addPass(createAFMApproximateMathPass());
  pm.addPass(createLowerAffinePass());
  if (sme)
    addArmSMELowering(pm);
  pm.addPass(createAFMLowerVectorPass());
  // Fully unrolled: n-D transfers become 1-D vector ops in registers, not
  // round trips through stack buffers (which, placed in loop bodies, would
  // grow the stack on every iteration).
  pm.addPass(createConvertVectorToSCFPass(
      VectorTransferToSCFOptions().enableFullUnroll()));
  // Functions using ZA tiles run in streaming mode with their own ZA state
  // (a lazy save of a caller's ZA goes through the SME ABI routines,
  // lib/CodeGen/SMEABIRoutines.cpp). Tiles are allocated on the CFG.
  if (sme)
    pm.addNestedPass<func::FuncOp>(arm_sme::createEnableArmStreamingPass(
        arm_sme::ArmStreamingMode::StreamingLocally, arm_sme::ArmZaMode::NewZA,
        /*ifRequiredByOps=*/true));
  pm.addPass(createAFMLowerDotBytesPass());
  pm.addPass(createSCFToControlFlowPass());
  if (sme)
    pm.addNestedPass<func::FuncOp>(createConvertArmSMEToLLVMPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());

  // Integer powers become (scalarized) helper functions; bf16 rounding is
  // integer arithmetic, so no compiler-rt routine is needed at load time.
  pm.addPass(createConvertMathToFuncs());
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));

  // The entry points' sizes, exported for the runtime's checks (while
  // their types still say them).
  pm.addPass(createAFMExportModelFactsPass());
  // Everything to the LLVM dialect. Entry points take bare pointers
  // (include/afm/kernel_abi.h).
  ConvertVectorToLLVMPassOptions vectorToLLVM;
  vectorToLLVM.armSVE = sme;
  pm.addPass(createConvertVectorToLLVMPass(vectorToLLVM));
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

/// The textual pipelines resolve their target here, once. An unknown name
/// leaves the pipeline a lone afm-set-target, which reports it.
template <void (*Build)(OpPassManager &, const afm::TargetDescription &,
                        const afm::CodegenOptions &)>
static void buildFromText(OpPassManager &pm,
                          const afm::CodegenPipelineOptions &options) {
  auto target = afm::lookupTarget(options.target, options.targetOS);
  if (!target) {
    llvm::consumeError(target.takeError());
    addSetTarget(pm, options.target, options.targetOS);
    return;
  }
  Build(pm, *target, options.getCodegenOptions());
}

void afm::registerAFMPipelines() {
  PassPipelineRegistration<CodegenPipelineOptions>(
      "afm-codegen",
      "Lower afm entry points to the LLVM dialect for a target: bind the "
      "ABI, lower, bufferize, tile and vectorize, convert to LLVM",
      buildFromText<buildAFMCodegenPipeline>);
  PassPipelineRegistration<CodegenPipelineOptions>(
      "afm-graph-codegen",
      "Lower a func.func graph over TOSA (e.g. from --import-onnx) to the "
      "LLVM dialect: TOSA to linalg, then bufferize with caller-allocated "
      "results, tile and vectorize, convert to LLVM with bare pointers "
      "(host-argument: a leading afm_host_api pointer for threads)",
      buildFromText<buildAFMGraphCodegenPipeline>);
}
