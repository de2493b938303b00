//===- ONNXAFMDomainOps.cpp - the `afm` ONNX domain -> afm ops -------------===//
//
// What standard ONNX cannot say about AFM models, as ops of the `afm`
// domain (version 1) that import straight into the afm dialect, so the afm
// passes (track parallelism, grouped-GEMM MoE, min-shift fusion, packed
// low-bit kernels) apply to ONNX models too. The README documents the
// domain; docs/onnx-import.md the details.
//
//===----------------------------------------------------------------------===//

#include "TOSABuilder.h"
#include "afm/Layout/PackedWeights.h"

#include "dialects/afm/IR/AFMOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"

#include <array>

using namespace mlir;
using namespace mlir::afm;
using namespace mlir::afm::onnx_import;

/// `x` as a 2-D [tokens, features] activation (afm's linear layers and
/// MoE take those), and the shape to restore afterwards.
static std::pair<Value, llvm::SmallVector<int64_t>>
flattenTokens(ONNXNode &node, TypedValue<RankedTensorType> x) {
  llvm::SmallVector<int64_t> shape(x.getType().getShape());
  int64_t features = shape.back(), tokens = 1;
  for (int64_t dim : llvm::ArrayRef<int64_t>(shape).drop_back())
    tokens *= dim;
  return {reshape(node, x, {tokens, features}), shape};
}

/// y = x @ W^T for a compressed weight assembled from `parts`; attribute
/// `activations` "int8" multiplies with int8 activations
/// (docs/model-config.md), "f32" (the default) does not.
static Results linearOverParts(ONNXNode &node, Type weightType,
                               llvm::ArrayRef<Value> parts, int64_t rows) {
  auto x = node.getFloatInput(0);
  if (failed(x))
    return failure();
  bool int8Activations = false;
  if (const onnx::AttributeProto *attr = node.getAttribute("activations")) {
    if (attr->s() != "f32" && attr->s() != "int8")
      return node.emitError() << "activations '" << attr->s()
                              << "' must be \"f32\" or \"int8\"";
    int8Activations = attr->s() == "int8";
  }
  if (x->getType().getRank() < 1)
    return node.emitError() << "X must have rank >= 1";
  auto [tokens, shape] = flattenTokens(node, *x);
  Value weight =
      BoundWeightOp::create(node.builder, node.loc, weightType, parts);
  auto tokensType = cast<RankedTensorType>(tokens.getType());
  auto linear = LinearOp::create(
      node.builder, node.loc,
      tokensType.clone({tokensType.getDimSize(0), rows}), tokens, weight);
  if (int8Activations)
    contracts(linear).getInt8ActivationsAttrHelper().setAttr(
        linear, node.builder.getUnitAttr());
  Value y = linear;
  shape.back() = rows;
  return llvm::SmallVector<Value>{reshape(node, y, shape)};
}

/// Linear2Bit(X[..., K], codes[N, ceil(K/4)] uint8, scales[1 | N] float)
/// = X @ W^T with W[n, k] = scale * (code - 1.5) (docs/compressed-weights.md).
static Results lowerLinear2Bit(ONNXNode &node) {
  auto x = node.getFloatInput(0);
  auto codes = node.getInput(1);
  auto scales = node.getFloatInput(2);
  if (failed(x) || failed(codes) || failed(scales))
    return failure();
  int64_t k = x->getType().getShape().back();
  RankedTensorType codesType = codes->getType();
  if (codesType.getRank() != 2 || !codesType.getElementType().isInteger(8) ||
      codesType.getDimSize(1) != int64_t(q2RowBytes(k)))
    return node.emitError() << "codes must be uint8 [N, " << q2RowBytes(k)
                            << "] (" << kQ2CodesPerByte
                            << " codes per byte) for K = " << k
                            << "; got " << codesType;
  int64_t n = codesType.getDimSize(0);
  RankedTensorType scalesType = scales->getType();
  int64_t scaleCount = scalesType.getNumElements();
  if (!scalesType.getElementType().isF32() ||
      (scaleCount != 1 && scaleCount != n))
    return node.emitError() << "scales must be float [1] or [" << n
                            << "]; got " << scalesType;
  auto type = Q2WeightType::get(node.builder.getContext(), n, k,
                                scaleCount == 1 ? ScaleGranularity::PerTensor
                                                : ScaleGranularity::PerChannel);
  Value flatScales = reshape(node, *scales, {scaleCount});
  return linearOverParts(node, type, {*codes, flatScales}, n);
}

/// LinearASTC(X[..., K], codes[Nb, 6, 3, Kb] uint8, scales[Nb, Kb] f16,
/// biases[Nb, Kb] f16) with attributes N and offset ("linear_segment" or
/// "min"): X @ W^T over the CPU form of 6x6 ASTC blocks, W = scale * q +
/// bias per block, Kb = ceil(K / 6) padded to a multiple of 16
/// (docs/compressed-weights.md).
static Results lowerLinearASTC(ONNXNode &node) {
  auto x = node.getFloatInput(0);
  auto codes = node.getInput(1);
  auto scales = node.getFloatInput(2);
  auto biases = node.getFloatInput(3);
  if (failed(x) || failed(codes) || failed(scales) || failed(biases))
    return failure();
  int64_t k = x->getType().getShape().back();
  int64_t n = node.getIntAttribute("N", 0);
  if (n <= 0)
    return node.emitError() << "attribute 'N' (the output features) must be "
                            << "positive";
  // The interchange layout, checked before the type is built; the kernels
  // read the codes repacked by row pairs (getBoundWeightParts), which the
  // compiler does here, at import: weights are constants.
  int64_t nb = astcBlocks(n), kb = astcStoredBlockColumns(k);
  auto expected = RankedTensorType::get({nb, kASTCBlockDim, kASTCBlockDim / 2, kb},
                                        IntegerType::get(node.loc.getContext(),
                                                         8));
  if (codes->getType() != expected)
    return node.emitError() << "codes must be " << expected << " for N = " << n
                            << ", K = " << k << "; got " << codes->getType();
  DenseElementsAttr codeData = node.getConstantInput(1);
  if (!codeData)
    return node.emitError()
           << "codes must be a constant (an initializer): the compiler "
              "repacks them for its kernels at import";
  std::vector<uint8_t> planes;
  for (const APInt &byte : codeData.getValues<APInt>())
    planes.push_back(static_cast<uint8_t>(byte.getZExtValue()));
  ASTCKernelCodes packed = packASTCKernelCodes(planes.data(), nb, kb);
  auto constant = [&](Type element, auto values) -> Value {
    auto type = RankedTensorType::get({nb, 3, kb}, element);
    SmallVector<APInt> words;
    for (auto value : values)
      words.emplace_back(element.getIntOrFloatBitWidth(), value);
    return tosa::ConstOp::create(node.builder, node.loc, type,
                                 DenseElementsAttr::get(type, words));
  };
  Value rowPairCodes = constant(node.builder.getI32Type(), packed.codes);
  Value tailCodes =
      constant(node.builder.getIntegerType(16), packed.tailCodes);
  auto blockType = RankedTensorType::get({nb, kb}, node.builder.getF16Type());
  if (scales->getType() != blockType || biases->getType() != blockType)
    return node.emitError() << "scales and biases must be " << blockType;
  ASTCOffset offset = ASTCOffset::LinearSegment;
  if (const onnx::AttributeProto *attr = node.getAttribute("offset")) {
    if (attr->s() == "min")
      offset = ASTCOffset::Min;
    else if (attr->s() != "linear_segment")
      return node.emitError() << "offset '" << attr->s()
                              << "' is not 'linear_segment' or 'min'";
  }
  auto type = ASTCWeightType::get(node.builder.getContext(), n, k, 6, 6, offset);
  return linearOverParts(node, type,
                         {rowPairCodes, tailCodes, *scales, *biases}, n);
}

/// MoE(X[..., d], router[E, d], gate[E, F, d], up[E, F, d], down[E, d, F])
/// with attribute top_k: sum over the top-k experts of the softmaxed gate
/// times the expert's SwiGLU (afm.moe).
static Results lowerMoE(ONNXNode &node) {
  llvm::SmallVector<TypedValue<RankedTensorType>> operands;
  for (unsigned index = 0; index < 5; ++index) {
    auto operand = node.getFloatInput(index);
    if (failed(operand))
      return failure();
    operands.push_back(*operand);
  }
  int64_t topK = node.getIntAttribute("top_k", 0);
  int64_t experts = operands[1].getType().getRank() == 2
                        ? operands[1].getType().getDimSize(0)
                        : 0;
  if (topK < 1 || topK > experts)
    return node.emitError() << "top_k must be in [1, " << experts
                            << "], the number of experts";
  // afm.moe takes each expert's matrices apart: slice the stacked inputs.
  std::array<llvm::SmallVector<Value>, 3> perExpert;
  for (unsigned which = 0; which < 3; ++which) {
    RankedTensorType stacked = operands[2 + which].getType();
    if (stacked.getRank() != 3 || stacked.getDimSize(0) != experts ||
        !stacked.hasStaticShape())
      return node.emitError()
             << "input " << 2 + which << " must be a static [" << experts
             << ", rows, cols] stack of expert matrices, got " << stacked;
    auto matrix =
        RankedTensorType::get({stacked.getDimSize(1), stacked.getDimSize(2)},
                              stacked.getElementType());
    OpBuilder &b = node.builder;
    for (int64_t e = 0; e < experts; ++e)
      perExpert[which].push_back(tensor::ExtractSliceOp::create(
          b, node.loc, matrix, operands[2 + which],
          llvm::SmallVector<OpFoldResult>{b.getIndexAttr(e), b.getIndexAttr(0),
                                          b.getIndexAttr(0)},
          llvm::SmallVector<OpFoldResult>{b.getIndexAttr(1),
                                          b.getIndexAttr(matrix.getDimSize(0)),
                                          b.getIndexAttr(matrix.getDimSize(1))},
          llvm::SmallVector<OpFoldResult>(3, b.getIndexAttr(1))));
  }
  auto [tokens, shape] = flattenTokens(node, operands[0]);
  // afm.moe's verifier checks the expert shapes against each other.
  Value y = MoEOp::create(node.builder, node.loc, tokens.getType(), tokens,
                          operands[1], perExpert[0], perExpert[1], perExpert[2],
                          node.builder.getI64IntegerAttr(topK));
  return llvm::SmallVector<Value>{reshape(node, y, shape)};
}

/// ParallelTracks(X) with attribute tracks (GRAPHS): every track graph maps
/// X to a value of X's type independently; the result is their mean, the
/// tracks' only synchronization (afm.track_block).
static Results lowerParallelTracks(ONNXNode &node) {
  auto x = node.getFloatInput(0);
  if (failed(x))
    return failure();
  const onnx::AttributeProto *tracks = node.getAttribute("tracks");
  if (!tracks || tracks->graphs_size() < 2)
    return node.emitError() << "attribute 'tracks' must list at least two "
                            << "graphs";
  RankedTensorType type = x->getType();
  auto block = TrackBlockOp::create(node.builder, node.loc, type, *x,
                                    tracks->graphs_size());
  for (auto [region, graph] :
       llvm::zip(block->getRegions(), tracks->graphs())) {
    Block &body = region.emplaceBlock();
    body.addArgument(type, node.loc);
    auto results = node.subgraphs.importSubgraph(graph, body, node.table);
    if (failed(results))
      return failure();
    if (results->size() != 1 || (*results)[0].getType() != type)
      return node.emitError() << "track '" << graph.name()
                              << "' must return one " << type;
    OpBuilder::InsertionGuard guard(node.builder);
    node.builder.setInsertionPointToEnd(&body);
    YieldOp::create(node.builder, node.loc, (*results)[0]);
  }
  if (failed(block.verify()))
    return failure();
  return llvm::SmallVector<Value>{block.getResult()};
}

/// SharedKVAttention(Q[B, S, N * H], keys[B, N_kv, S, H], values[B, N_kv,
/// S, H]) with attributes num_heads, kv_num_heads, scale and
/// local_window_size: causal grouped-query attention of this layer's
/// queries over the keys and values another layer computed (its
/// GroupQueryAttention's present_key/present_value), without computing or
/// storing any of its own. A window makes it a local layer of an
/// interleaved local/global stack.
static Results lowerSharedKVAttention(ONNXNode &node) {
  auto query = node.getFloatInput(0);
  auto keys = node.getFloatInput(1);
  auto values = node.getFloatInput(2);
  if (failed(query) || failed(keys) || failed(values))
    return failure();
  auto heads = getAttentionHeads(node);
  if (failed(heads))
    return failure();
  auto [numHeads, kvHeads] = *heads;
  RankedTensorType queryType = query->getType();
  if (queryType.getRank() != 3 || queryType.getDimSize(2) % numHeads != 0)
    return node.emitError() << "Q " << queryType << " is not [B, S, "
                            << numHeads << " * H]";
  int64_t batch = queryType.getDimSize(0), seq = queryType.getDimSize(1),
          headDim = queryType.getDimSize(2) / numHeads;
  auto kvType = queryType.clone({batch, kvHeads, seq, headDim});
  if (keys->getType() != kvType || values->getType() != kvType)
    return node.emitError() << "keys and values must be " << kvType
                            << " (the owner layer's present key/value)";
  CausalAttention options{numHeads, kvHeads};
  if (const onnx::AttributeProto *scale = node.getAttribute("scale"))
    options.scale = scale->f();
  options.window = node.getIntAttribute("local_window_size", -1);
  TOSABuilder t(node);
  return llvm::SmallVector<Value>{buildCausalAttention(
      t, splitHeads(t, *query, numHeads, headDim), *keys, *values, options)};
}

const llvm::StringMap<NodeLowering> &
mlir::afm::onnx_import::getAFMDomainLowerings() {
  static const llvm::StringMap<NodeLowering> lowerings = {
      {"Linear2Bit", lowerLinear2Bit},
      {"LinearASTC", lowerLinearASTC},
      {"MoE", lowerMoE},
      {"ParallelTracks", lowerParallelTracks},
      {"SharedKVAttention", lowerSharedKVAttention},
  };
  return lowerings;
}
