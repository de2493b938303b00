//===- ConfigImport.cpp - config.json (+ safetensors) -> afm IR -----------===//
//
// One builder emits the decoder body for a static token count; it is called
// once for prefill (a chunk) and once for decode (one token). The residual
// layout is pre-norm: h += attn(norm(h)); h += ffn(norm(h)).
//
//===----------------------------------------------------------------------===//

#include "afm/Import/ConfigImport.h"

#include "afm/Model/ModelWeights.h"
#include "afm/Model/SafeTensors.h"
#include "dialects/afm/IR/AFMOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::afm;

namespace {
class DecoderBuilder {
public:
  DecoderBuilder(ModuleOp module, const ModelConfig &config)
      : b(module.getContext()), config(config),
        loc(b.getUnknownLoc()), f32(b.getF32Type()) {
    b.setInsertionPointToEnd(module.getBody());
  }

  /// Emits the entry point `kind` ("prefill" or "decode") over `tokens`.
  void buildEntry(StringRef kind, int64_t tokens);

private:
  RankedTensorType tensor(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, f32);
  }
  Value weight(StringRef name, ArrayRef<int64_t> shape) {
    return WeightOp::create(b, loc, tensor(shape), b.getStringAttr(name),
                            Attribute());
  }
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  KVCacheType cacheType(int64_t layer);
  Value rmsNorm(Value x, StringRef weightName);
  Value linear(Value x, StringRef weightName, int64_t outFeatures);
  Value splitHeads(Value x, int64_t heads);
  Value attentionBlock(Value h, int64_t layer, Value cache);
  Value ffnBlock(Value h, int64_t layer);

  OpBuilder b;
  const ModelConfig &config;
  Location loc;
  Type f32;
  int64_t tokens = 0;
  Value count, position;
};
} // namespace

KVCacheType DecoderBuilder::cacheType(int64_t layer) {
  // Every cache can hold the whole context; afm-size-kv-caches shrinks the
  // caches of local layers to ring buffers of their window.
  return KVCacheType::get(b.getContext(), config.numKeyValueHeads,
                          config.maxPositionEmbeddings, config.headDim, f32);
}

Value DecoderBuilder::rmsNorm(Value x, StringRef weightName) {
  Value g = weight(weightName, {config.hiddenSize});
  return RMSNormOp::create(b, loc, x.getType(), x, g,
                           b.getF32FloatAttr(float(config.rmsNormEps)));
}

Value DecoderBuilder::linear(Value x, StringRef weightName,
                             int64_t outFeatures) {
  int64_t in = cast<RankedTensorType>(x.getType()).getDimSize(1);
  Value w = weight(weightName, {outFeatures, in});
  return LinearOp::create(b, loc, tensor({tokens, outFeatures}), x, w);
}

Value DecoderBuilder::splitHeads(Value x, int64_t heads) {
  return tensor::ExpandShapeOp::create(
      b, loc, tensor({tokens, heads, config.headDim}), x,
      SmallVector<ReassociationIndices>{{0}, {1, 2}});
}

Value DecoderBuilder::attentionBlock(Value h, int64_t layer, Value cache) {
  LayerTensorNames names = layerTensorNames(layer);
  int64_t heads = config.numAttentionHeads, kvHeads = config.numKeyValueHeads;
  int64_t hd = config.headDim;
  Value n = rmsNorm(h, names.inputNorm);
  Value q = splitHeads(linear(n, names.qProj, heads * hd), heads);
  Value k = splitHeads(linear(n, names.kProj, kvHeads * hd), kvHeads);
  Value v = splitHeads(linear(n, names.vProj, kvHeads * hd), kvHeads);
  if (usesRope(config, layer)) {
    FloatAttr theta = b.getF32FloatAttr(float(config.ropeTheta));
    q = RoPEOp::create(b, loc, q.getType(), q, position, theta);
    k = RoPEOp::create(b, loc, k.getType(), k, position, theta);
  }
  bool local = isLocalLayer(config, layer);
  Value attn = AttentionOp::create(
      b, loc, q.getType(),
      local ? AttentionKind::Local : AttentionKind::Global, q, k, v, cache,
      position, count,
      local ? b.getI64IntegerAttr(config.slidingWindow) : IntegerAttr(),
      FloatAttr());
  Value merged = tensor::CollapseShapeOp::create(
      b, loc, tensor({tokens, heads * hd}), attn,
      SmallVector<ReassociationIndices>{{0}, {1, 2}});
  Value out = linear(merged, names.oProj, config.hiddenSize);
  return arith::AddFOp::create(b, loc, h, out);
}

Value DecoderBuilder::ffnBlock(Value h, int64_t layer) {
  LayerTensorNames names = layerTensorNames(layer);
  int64_t d = config.hiddenSize, f = config.intermediateSize;
  Value m = rmsNorm(h, names.postAttentionNorm);
  Value y = SwiGLUOp::create(b, loc, m.getType(), m,
                             weight(names.gateProj, {f, d}),
                             weight(names.upProj, {f, d}),
                             weight(names.downProj, {d, f}));
  return arith::AddFOp::create(b, loc, h, y);
}

void DecoderBuilder::buildEntry(StringRef kind, int64_t numTokens) {
  tokens = numTokens;
  int64_t layers = config.numHiddenLayers, d = config.hiddenSize;
  int64_t vocab = config.vocabSize;
  SmallVector<Type> inputs = {
      RankedTensorType::get({tokens}, b.getI32Type()), b.getIndexType(),
      b.getIndexType()};
  for (int64_t i = 0; i < layers; ++i)
    inputs.push_back(cacheType(i));
  auto func = func::FuncOp::create(
      b, loc, kind, b.getFunctionType(inputs, {tensor({vocab})}));
  func->setAttr("afm.entry", b.getStringAttr(kind));
  for (int64_t i = 0; i < layers; ++i)
    func.setArgAttr(3 + i, "afm.layer", b.getI64IntegerAttr(i));

  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(func.addEntryBlock());
  count = func.getArgument(1);
  position = func.getArgument(2);
  Value table = weight(kEmbedTokensName, {vocab, d});
  Value h = EmbeddingOp::create(b, loc, tensor({tokens, d}), table,
                                func.getArgument(0));
  for (int64_t i = 0; i < layers; ++i) {
    h = attentionBlock(h, i, func.getArgument(3 + i));
    h = ffnBlock(h, i);
  }
  // Logits of the last real token.
  Value last = arith::SubIOp::create(b, loc, count, index(1));
  Value row = tensor::ExtractSliceOp::create(
      b, loc, tensor({1, d}), h, ValueRange{last}, ValueRange{}, ValueRange{},
      b.getDenseI64ArrayAttr({ShapedType::kDynamic, 0}),
      b.getDenseI64ArrayAttr({1, d}), b.getDenseI64ArrayAttr({1, 1}));
  Value normed = rmsNorm(row, kFinalNormName);
  Value head = config.tieWordEmbeddings ? table
                                        : weight(kLmHeadName, {vocab, d});
  Value logits =
      LMHeadOp::create(b, loc, tensor({1, vocab}), normed, head);
  Value flat = tensor::CollapseShapeOp::create(
      b, loc, tensor({vocab}), logits,
      SmallVector<ReassociationIndices>{{0, 1}});
  func::ReturnOp::create(b, loc, flat);
}

llvm::Error afm::checkImportSupported(const ModelConfig &config,
                                      llvm::StringRef origin) {
  if (config.architecture == Architecture::Dense)
    return llvm::Error::success();
  return llvm::createStringError(
      origin + ": key 'architecture': '" +
      architectureName(config.architecture) +
      "' models cannot be compiled yet (supported: afm-dense)");
}

OwningOpRef<ModuleOp>
afm::importModelConfig(MLIRContext *context, const ModelConfig &config,
                       const ConfigImportOptions &options) {
  context->loadDialect<AFMDialect, arith::ArithDialect, func::FuncDialect,
                       tensor::TensorDialect>();
  OpBuilder b(context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(b.getUnknownLoc());
  SmallVector<NamedAttribute> model = {
      b.getNamedAttr("name", b.getStringAttr(options.modelName)),
      b.getNamedAttr("architecture",
                     b.getStringAttr(architectureName(config.architecture))),
      b.getNamedAttr("vocab_size", b.getI64IntegerAttr(config.vocabSize)),
      b.getNamedAttr("hidden_size", b.getI64IntegerAttr(config.hiddenSize)),
      b.getNamedAttr("num_layers", b.getI64IntegerAttr(config.numHiddenLayers)),
      b.getNamedAttr("context_length",
                     b.getI64IntegerAttr(config.maxPositionEmbeddings)),
      b.getNamedAttr("prefill_chunk", b.getI64IntegerAttr(options.prefillChunk))};
  (*module)->setAttr("afm.model", b.getDictionaryAttr(model));
  if (!options.weightsPath.empty())
    (*module)->setAttr("afm.weights_file",
                       b.getStringAttr(options.weightsPath));
  DecoderBuilder builder(*module, config);
  builder.buildEntry("prefill", options.prefillChunk);
  builder.buildEntry("decode", 1);
  return module;
}

llvm::Expected<OwningOpRef<ModuleOp>>
afm::importModelFiles(MLIRContext *context, llvm::StringRef configPath,
                      const ConfigImportOptions &options) {
  if (options.prefillChunk < 1)
    return llvm::createStringError("prefill chunk must be at least 1, got " +
                                   std::to_string(options.prefillChunk));
  auto config = loadModelConfig(configPath);
  if (!config)
    return config.takeError();
  if (llvm::Error error = checkImportSupported(*config, configPath))
    return std::move(error);
  if (!options.weightsPath.empty()) {
    auto weights = SafeTensorsFile::open(options.weightsPath);
    if (!weights)
      return weights.takeError();
    if (llvm::Error error = checkWeights(*config, *weights))
      return std::move(error);
  }
  return importModelConfig(context, *config, options);
}
