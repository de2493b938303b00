//===- ConfigImport.cpp - config.json (+ safetensors) -> afm IR -----------===//
//
// One builder emits the decoder body for a static token count; it is called
// once for prefill (a chunk) and once for decode (one token). The residual
// layout is pre-norm: h += attn(norm(h)); h += ffn(norm(h)).
//
// - afm-dense: L layers, each with its own KV cache.
// - afm-on-device: Block-2 layers have no K/V projections and attend over
//   the cache of their source layer (afm.shared_kv_attention).
// - afm-pt-moe: every block of D layers is an afm.track_block whose tracks
//   run their own layers (H/n query heads, G/n KV heads, their own caches);
//   every other layer's FFN is an afm.moe.
//
//===----------------------------------------------------------------------===//

#include "afm/FrontEnd/Config/ConfigImport.h"

#include "afm/Model/ModelWeights.h"
#include "afm/Model/WeightSource.h"
#include "dialects/afm/IR/AFMOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;
using namespace mlir::afm;

namespace {
/// The layers of one track (the whole model for single-track families).
struct TrackLayout {
  int64_t track;
  int64_t heads;
  int64_t kvHeads;
};

class DecoderBuilder {
public:
  DecoderBuilder(ModuleOp module, const ModelConfig &config,
                 int64_t adapterRank)
      : b(module.getContext()), config(config), loc(b.getUnknownLoc()),
        f32(b.getF32Type()), adapterRank(adapterRank) {
    b.setInsertionPointToEnd(module.getBody());
  }

  /// Emits the entry point `kind` over `tokens` rows: "prefill" and
  /// "decode" return the last real row's logits [V], "verify" every row's
  /// [T, V] (speculative decoding checks each drafted token).
  void buildEntry(EntryKind kind, int64_t tokens);

private:
  RankedTensorType tensor(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, f32);
  }
  Value weight(StringRef name, ArrayRef<int64_t> shape) {
    return WeightOp::create(b, loc, tensor(shape), b.getStringAttr(name),
                            Attribute());
  }
  /// A projection weight `[rows, cols]` in the config's linear format.
  Value linearWeight(StringRef name, int64_t rows, int64_t cols) {
    return weightIn(config.linearWeightFormat, name, rows, cols);
  }
  /// A weight `[rows, cols]` stored in `format`, with the config's 2-bit
  /// scale granularity and ASTC offset.
  Value weightIn(LinearWeightFormat format, StringRef name, int64_t rows,
                 int64_t cols) {
    MLIRContext *ctx = b.getContext();
    Type type;
    switch (format) {
    case LinearWeightFormat::F32:
      return weight(name, {rows, cols});
    case LinearWeightFormat::Q2:
      type = Q2WeightType::get(ctx, rows, cols,
                               config.q2PerChannel ? ScaleGranularity::PerChannel
                                                   : ScaleGranularity::PerTensor);
      break;
    case LinearWeightFormat::ASTC:
      type = ASTCWeightType::get(ctx, rows, cols, 6, 6,
                                 config.astcOffsetMin ? ASTCOffset::Min
                                                      : ASTCOffset::LinearSegment);
      break;
    }
    return WeightOp::create(b, loc, type, b.getStringAttr(name), Attribute());
  }
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  LayerTensorNames names(const TrackLayout &track, int64_t layer) const {
    return config.architecture == Architecture::PTMoE
               ? trackLayerTensorNames(track.track, layer)
               : layerTensorNames(layer);
  }
  /// Whether layer `layer` of a track writes keys and values of its own.
  bool ownsCache(int64_t layer) const {
    return config.architecture != Architecture::OnDevice ||
           !isBlock2Layer(config, layer);
  }
  /// RMSNorm over the last dimension of `x` (the hidden size, or head_dim
  /// for `qk_norm`'s per-head norms).
  Value rmsNorm(Value x, StringRef weightName);
  /// x W^T; with `adapted` and adapter slots, plus the run-time adapter's
  /// low-rank term (afm.lora over two afm.adapter_weight factors).
  Value linear(Value x, StringRef weightName, int64_t outFeatures,
               bool adapted = false);
  /// `linear`, plus the bias vector `biasName` when `hasBias`.
  Value projection(Value x, StringRef weightName, int64_t outFeatures,
                   bool hasBias, StringRef biasName, bool adapted = false);

  Value splitHeads(Value x, int64_t heads);
  Value attentionBlock(Value h, const TrackLayout &track, int64_t layer);
  Value ffnBlock(Value h, const TrackLayout &track, int64_t layer);
  Value layers(Value h, const TrackLayout &track, int64_t begin, int64_t end);

  OpBuilder b;
  const ModelConfig &config;
  Location loc;
  Type f32;
  int64_t adapterRank;
  int64_t tokens = 0;
  Value count, position;
  /// Cache argument of each cache index (t * L + i).
  llvm::DenseMap<int64_t, Value> caches;
};
} // namespace

Value DecoderBuilder::rmsNorm(Value x, StringRef weightName) {
  Value g = weight(weightName, {cast<ShapedType>(x.getType()).getShape().back()});
  return RMSNormOp::create(
      b, loc, x.getType(), x, g, b.getF32FloatAttr(float(config.rmsNormEps)),
      config.rmsNormWeightOffset != 0.0
          ? b.getF32FloatAttr(float(config.rmsNormWeightOffset))
          : FloatAttr());
}

Value DecoderBuilder::linear(Value x, StringRef weightName,
                             int64_t outFeatures, bool adapted) {
  int64_t in = cast<RankedTensorType>(x.getType()).getDimSize(1);
  Value w = linearWeight(weightName, outFeatures, in);
  Value y = LinearOp::create(b, loc, tensor({tokens, outFeatures}), x, w);
  int64_t r = adapterRank;
  if (!adapted || r == 0)
    return y;
  // The adapter reads the projection's unrounded input (int8 activations
  // round only the base product's) and carries its scale in `b`: alpha = r.
  std::string slot = adapterSlotName(weightName);
  auto factor = [&](StringRef which, ArrayRef<int64_t> shape) {
    return AdapterWeightOp::create(b, loc, tensor(shape),
                                   b.getStringAttr(slot + which));
  };
  Value a = factor(".lora_a", {r, in});
  Value bFactor = factor(".lora_b", {outFeatures, r});
  return LoRAOp::create(b, loc, y.getType(), y, x, a, bFactor,
                        b.getF32FloatAttr(float(r)));
}

Value DecoderBuilder::projection(Value x, StringRef weightName,
                                 int64_t outFeatures, bool hasBias,
                                 StringRef biasName, bool adapted) {
  Value y = linear(x, weightName, outFeatures, adapted);
  if (!hasBias)
    return y;
  // The bias is added after the product rather than carried as the
  // linear's `acc`, which afm-fuse-min-shift owns for the ASTC offsets.
  Value bias = weight(biasName, {outFeatures});
  Value init = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{tokens,
                                                                outFeatures},
                                       f32);
  Value rows = linalg::BroadcastOp::create(b, loc, bias, init,
                                           ArrayRef<int64_t>{0})
                   .getResult()[0];
  return arith::AddFOp::create(b, loc, y, rows);
}

Value DecoderBuilder::splitHeads(Value x, int64_t heads) {
  return tensor::ExpandShapeOp::create(
      b, loc, tensor({tokens, heads, config.headDim}), x,
      SmallVector<ReassociationIndices>{{0}, {1, 2}});
}

Value DecoderBuilder::attentionBlock(Value h, const TrackLayout &track,
                                     int64_t layer) {
  LayerTensorNames n = names(track, layer);
  int64_t hd = config.headDim;
  Value normed = rmsNorm(h, n.inputNorm);
  bool bias = config.attentionBias;
  Value q = splitHeads(
      projection(normed, n.qProj, track.heads * hd, bias, n.qBias,
                 /*adapted=*/true),
      track.heads);
  Value k, v;
  if (ownsCache(layer)) {
    k = splitHeads(
        projection(normed, n.kProj, track.kvHeads * hd, bias, n.kBias,
                   /*adapted=*/true),
        track.kvHeads);
    v = splitHeads(
        projection(normed, n.vProj, track.kvHeads * hd, bias, n.vBias,
                   /*adapted=*/true),
        track.kvHeads);
  }
  if (config.qkNorm) {
    q = rmsNorm(q, n.qNorm);
    if (k)
      k = rmsNorm(k, n.kNorm);
  }
  if (usesRope(config, layer)) {
    ModelConfig rope = ropeConfigOfLayer(config, layer);
    FloatAttr theta = b.getF32FloatAttr(float(rope.ropeTheta));
    // Scaled RoPE carries its frequencies; plain RoPE only theta.
    DenseF64ArrayAttr invFreq;
    if (rope.ropeScaling.type != RopeScalingType::None)
      invFreq = b.getDenseF64ArrayAttr(ropeInverseFrequencies(rope));
    q = RoPEOp::create(b, loc, q.getType(), q, position, theta, invFreq);
    if (k)
      k = RoPEOp::create(b, loc, k.getType(), k, position, theta, invFreq);
  }
  bool local = isLocalLayer(config, layer);
  AttentionKind kind = local ? AttentionKind::Local : AttentionKind::Global;
  IntegerAttr window =
      local ? b.getI64IntegerAttr(config.slidingWindow) : IntegerAttr();
  FloatAttr scale = config.attentionScale != 0.0
                        ? b.getF32FloatAttr(float(config.attentionScale))
                        : FloatAttr();
  Value attn;
  if (k) {
    Value cache = caches.lookup(kvCacheIndex(config, track.track, layer));
    attn = AttentionOp::create(b, loc, q.getType(), kind, q, k, v, cache,
                               /*scales=*/Value(), position, count, window,
                               scale, roundsQueryToInt8(config));
  } else {
    // Block 2: read the cache of the source layer, which Block 1 filled.
    Value cache = caches.lookup(kvSourceLayer(config, layer));
    attn = SharedKVAttentionOp::create(b, loc, q.getType(), kind, q, cache,
                                       /*scales=*/Value(), position, count,
                                       window, scale,
                                       roundsQueryToInt8(config));
  }
  Value merged = tensor::CollapseShapeOp::create(
      b, loc, tensor({tokens, track.heads * hd}), attn,
      SmallVector<ReassociationIndices>{{0}, {1, 2}});
  Value out = projection(merged, n.oProj, config.hiddenSize,
                         config.attentionOutputBias, n.oBias,
                         /*adapted=*/true);
  if (config.sandwichNorms)
    out = rmsNorm(out, n.postAttentionNorm);
  return arith::AddFOp::create(b, loc, h, out);
}

Value DecoderBuilder::ffnBlock(Value h, const TrackLayout &track,
                               int64_t layer) {
  LayerTensorNames n = names(track, layer);
  int64_t d = config.hiddenSize;
  Value m = rmsNorm(h, config.sandwichNorms ? n.preFeedforwardNorm
                                            : n.postAttentionNorm);
  Value y;
  if (isMoELayer(config, layer)) {
    int64_t e = config.numExperts, f = config.moeIntermediateSize;
    // Experts take the linear format of the config, like any projection;
    // the router stays f32.
    Value router = weight(n.router, {e, d});
    SmallVector<Value> gate, up, down;
    for (int64_t x = 0; x < e; ++x) {
      gate.push_back(linearWeight(n.expertGateProj(x), f, d));
      up.push_back(linearWeight(n.expertUpProj(x), f, d));
      down.push_back(linearWeight(n.expertDownProj(x), d, f));
    }
    y = MoEOp::create(b, loc, m.getType(), m, router, gate, up, down,
                      b.getI64IntegerAttr(config.numExpertsPerTok));
  } else {
    int64_t f = config.intermediateSize;
    // SiLU, the default, is left implicit.
    GateActivationAttr activation;
    if (config.mlpActivation == MLPActivation::GELUTanh)
      activation = GateActivationAttr::get(b.getContext(),
                                           GateActivation::GELUTanh);
    y = SwiGLUOp::create(b, loc, m.getType(), m,
                         linearWeight(n.gateProj, f, d),
                         linearWeight(n.upProj, f, d),
                         linearWeight(n.downProj, d, f), activation);
  }
  if (config.sandwichNorms)
    y = rmsNorm(y, n.postFeedforwardNorm);
  return arith::AddFOp::create(b, loc, h, y);
}

Value DecoderBuilder::layers(Value h, const TrackLayout &track, int64_t begin,
                             int64_t end) {
  for (int64_t i = begin; i < end; ++i)
    h = ffnBlock(attentionBlock(h, track, i), track, i);
  return h;
}

void DecoderBuilder::buildEntry(EntryKind kind, int64_t numTokens) {
  tokens = numTokens;
  bool everyRow = kind == EntryKind::Verify;
  int64_t d = config.hiddenSize, vocab = config.vocabSize;
  int64_t layersPerTrack = config.numHiddenLayers;
  int64_t tracks = trackCount(config);

  // Arguments: tokens, count, position, then one cache per owning layer.
  SmallVector<Type> inputs = {RankedTensorType::get({tokens}, b.getI32Type()),
                              b.getIndexType(), b.getIndexType()};
  SmallVector<int64_t> cacheIndices;
  Type cacheElement = config.kvCacheDType == KVCacheDType::Int8
                          ? Type(b.getIntegerType(8))
                      : config.kvCacheDType == KVCacheDType::F16
                          ? Type(b.getF16Type())
                          : f32;
  auto cacheType = KVCacheType::get(b.getContext(),
                                    config.numKeyValueHeads / tracks,
                                    config.maxPositionEmbeddings,
                                    config.headDim, cacheElement);
  for (int64_t t = 0; t < tracks; ++t)
    for (int64_t i = 0; i < layersPerTrack; ++i)
      if (ownsCache(i)) {
        cacheIndices.push_back(kvCacheIndex(config, t, i));
        inputs.push_back(cacheType);
      }
  RankedTensorType logitsType =
      everyRow ? tensor({tokens, vocab}) : tensor({vocab});
  auto func = func::FuncOp::create(b, loc, stringifyEntryKind(kind),
                                   b.getFunctionType(inputs, {logitsType}));
  AFMDialect &afmAttrs = contracts(func);
  afmAttrs.getEntryAttrHelper().setAttr(
      func, EntryKindAttr::get(b.getContext(), kind));
  for (auto [i, cache] : llvm::enumerate(cacheIndices))
    func.setArgAttr(3 + i, afmAttrs.getLayerAttrHelper().getName(),
                    b.getI64IntegerAttr(cache));

  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(func.addEntryBlock());
  count = func.getArgument(1);
  position = func.getArgument(2);
  caches.clear();
  for (auto [i, cache] : llvm::enumerate(cacheIndices))
    caches[cache] = func.getArgument(3 + i);
  Value last = arith::SubIOp::create(b, loc, count, index(1));
  Value table =
      config.embeddingFormat == EmbeddingFormat::Q4
          ? WeightOp::create(b, loc,
                             Q4WeightType::get(b.getContext(), vocab, d,
                                               config.embeddingGroupSize),
                             b.getStringAttr(kEmbedTokensName), Attribute())
                .getResult()
          : weight(kEmbedTokensName, {vocab, d});
  Value h = EmbeddingOp::create(b, loc, tensor({tokens, d}), table,
                                func.getArgument(0));
  if (config.embeddingMultiplier != 1.0) {
    // Gemma scales the embeddings by sqrt(d); the tied LM head reads the
    // table unscaled.
    auto splat = DenseElementsAttr::get(
        tensor({tokens, d}), b.getF32FloatAttr(float(config.embeddingMultiplier)));
    Value factor = arith::ConstantOp::create(b, loc, splat);
    h = arith::MulFOp::create(b, loc, h, factor);
  }

  TrackLayout single{0, config.numAttentionHeads, config.numKeyValueHeads};
  if (config.architecture != Architecture::PTMoE) {
    h = layers(h, single, 0, layersPerTrack);
  } else {
    // One track block per D layers; tracks synchronize only at its end.
    int64_t depth = config.trackBlockDepth;
    for (int64_t begin = 0; begin < layersPerTrack; begin += depth) {
      auto block = TrackBlockOp::create(b, loc, h.getType(), h, tracks);
      for (int64_t t = 0; t < tracks; ++t) {
        OpBuilder::InsertionGuard trackGuard(b);
        Block *body = b.createBlock(&block.getTracks()[t], {}, {h.getType()},
                                    {loc});
        TrackLayout track{t, config.numAttentionHeads / tracks,
                          config.numKeyValueHeads / tracks};
        Value out = layers(body->getArgument(0), track, begin, begin + depth);
        YieldOp::create(b, loc, out);
      }
      h = block.getResult();
    }
  }

  Value head = config.tieWordEmbeddings
                   ? table
                   : weightIn(config.lmHeadFormat, kLmHeadName, vocab, d);
  if (everyRow) {
    // Every row's logits; padding rows' are unspecified.
    Value normed = rmsNorm(h, kFinalNormName);
    Value logits = LMHeadOp::create(b, loc, logitsType, normed, head);
    func::ReturnOp::create(b, loc, logits);
    return;
  }
  // Logits of the last real token.
  Value row = tensor::ExtractSliceOp::create(
      b, loc, tensor({1, d}), h, ValueRange{last}, ValueRange{}, ValueRange{},
      b.getDenseI64ArrayAttr({ShapedType::kDynamic, 0}),
      b.getDenseI64ArrayAttr({1, d}), b.getDenseI64ArrayAttr({1, 1}));
  Value normed = rmsNorm(row, kFinalNormName);
  Value logits = LMHeadOp::create(b, loc, tensor({1, vocab}), normed, head);
  Value flat = tensor::CollapseShapeOp::create(
      b, loc, tensor({vocab}), logits,
      SmallVector<ReassociationIndices>{{0, 1}});
  func::ReturnOp::create(b, loc, flat);
}

int64_t afm::defaultPrefillChunk(const ModelConfig &config) {
  int64_t chunk = config.hiddenSize >= 1024 ? 128 : 16;
  return std::min(chunk, config.maxPositionEmbeddings);
}

OwningOpRef<ModuleOp>
afm::importModelConfig(MLIRContext *context, const ModelConfig &config,
                       const ConfigImportOptions &options) {
  int64_t chunk = options.prefillChunk.value_or(defaultPrefillChunk(config));
  context->loadDialect<AFMDialect, arith::ArithDialect, func::FuncDialect,
                       linalg::LinalgDialect, tensor::TensorDialect>();
  OpBuilder b(context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(b.getUnknownLoc());
  // afm-svd-split reads the LoRA fields (adapters of this rank on every
  // compressed linear layer, split off the weights before they are
  // compressed); afm-lower-to-linalg reads the activation format.
  bool lora = config.loraRank > 0;
  auto model = ModelAttr::get(
      context, options.modelName, architectureName(config.architecture),
      config.vocabSize, config.hiddenSize,
      config.numHiddenLayers * trackCount(config),
      config.maxPositionEmbeddings, chunk, lora ? config.loraRank : 0,
      lora ? b.getF32FloatAttr(float(config.loraAlpha)) : FloatAttr(),
      config.int8Activations ? ActivationFormat::Int8 : ActivationFormat::F32);
  AFMDialect &afmAttrs = contracts(context);
  afmAttrs.getModelAttrHelper().setAttr(*module, model);
  if (!options.weightsPath.empty())
    afmAttrs.getWeightsFileAttrHelper().setAttr(
        *module, b.getStringAttr(options.weightsPath));
  DecoderBuilder builder(*module, config, options.adapterRank);
  builder.buildEntry(EntryKind::Prefill, chunk);
  builder.buildEntry(EntryKind::Decode, 1);
  if (options.verifyTokens > 0)
    builder.buildEntry(EntryKind::Verify, options.verifyTokens);
  return module;
}

llvm::Error afm::checkConfigImportOptions(const ConfigImportOptions &options) {
  if (options.prefillChunk && *options.prefillChunk < 1)
    return llvm::createStringError("prefill chunk must be at least 1, got " +
                                   std::to_string(*options.prefillChunk));
  if (options.verifyTokens < 0 || options.verifyTokens == 1 ||
      options.verifyTokens > kMaxVerifyTokens)
    return llvm::createStringError(
        "verify tokens must be 0 (no verify entry) or 2 to " +
        std::to_string(kMaxVerifyTokens) + ", got " +
        std::to_string(options.verifyTokens));
  if (options.adapterRank < 0 || options.adapterRank > kMaxAdapterRank)
    return llvm::createStringError(
        "adapter rank must be 0 (no adapter slots) to " +
        std::to_string(kMaxAdapterRank) + ", got " +
        std::to_string(options.adapterRank));
  return llvm::Error::success();
}

llvm::Expected<OwningOpRef<ModuleOp>>
afm::importModelJSON(MLIRContext *context, llvm::StringRef json,
                     llvm::StringRef origin,
                     const ConfigImportOptions &options) {
  if (llvm::Error error = checkConfigImportOptions(options))
    return std::move(error);
  auto config = parseModelConfig(json, origin);
  if (!config)
    return config.takeError();
  if (options.draftLayers > 0) {
    auto draft = earlyExitConfig(*config, options.draftLayers);
    if (!draft)
      return draft.takeError();
    config = std::move(*draft);
  }
  if (!options.weightsPath.empty()) {
    auto weights = WeightSource::open(options.weightsPath);
    if (!weights)
      return weights.takeError();
    if (llvm::Error error = checkWeights(*config, *weights,
                                         /*allowUnused=*/options.draftLayers >
                                             0))
      return std::move(error);
  }
  return importModelConfig(context, *config, options);
}

llvm::Expected<OwningOpRef<ModuleOp>>
afm::importModelFiles(MLIRContext *context, llvm::StringRef configPath,
                      const ConfigImportOptions &options) {
  auto buffer = llvm::MemoryBuffer::getFile(configPath);
  if (!buffer)
    return llvm::createStringError(buffer.getError(),
                                   configPath + ": cannot read: " +
                                       buffer.getError().message());
  return importModelJSON(context, (*buffer)->getBuffer(), configPath,
                         options);
}
