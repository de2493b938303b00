//===- WeightEncoding.cpp - a weight's bytes in the package ---------------===//
//
// Post-training quantization happens here, at packaging time, because this
// is where the float weights are: the IR only says which format each weight
// takes. Every encoded weight also keeps its dequantized values so that the
// report and the reference evaluator see exactly what the kernels compute.
//
//===----------------------------------------------------------------------===//

#include "afm/Package/WeightEncoding.h"

#include "afm/Compress/ASTC.h"
#include "afm/Compress/ASTCForCPU.h"
#include "afm/Compress/ASTCTranscode.h"
#include "afm/Compress/Q2.h"
#include "afm/Compress/Q4.h"
#include "afm/Compress/Quality.h"
#include "dialects/afm/IR/AFMDialect.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstring>

using namespace mlir;
using namespace mlir::afm;

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(message.str());
}

template <typename T>
static std::vector<uint8_t> bytesOf(const std::vector<T> &values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  if (!bytes.empty())
    std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

/// Raw little-endian bytes of an inline elements attribute, splats expanded.
static std::optional<std::vector<uint8_t>> rawBytes(Attribute value) {
  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    ArrayRef<char> raw = dense.getRawData();
    size_t elementBytes =
        llvm::divideCeil(dense.getElementType().getIntOrFloatBitWidth(), 8);
    std::vector<uint8_t> out;
    if (dense.isSplat()) {
      for (int64_t i = 0; i < dense.getNumElements(); ++i)
        out.insert(out.end(), raw.begin(), raw.begin() + elementBytes);
      return out;
    }
    return std::vector<uint8_t>(raw.begin(), raw.end());
  }
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return std::nullopt;
    ArrayRef<char> data = blob->getData();
    return std::vector<uint8_t>(data.begin(), data.end());
  }
  return std::nullopt;
}

/// Empties `v` and frees its memory. (shrink_to_fit cannot: libstdc++ makes
/// it a no-op when built without exceptions, as LLVM code is.)
template <typename T> static void freeVector(std::vector<T> &v) {
  std::vector<T>().swap(v);
}

template <typename T>
static std::vector<T> asVector(const std::vector<uint8_t> &bytes) {
  std::vector<T> values(bytes.size() / sizeof(T));
  if (!values.empty())
    std::memcpy(values.data(), bytes.data(), values.size() * sizeof(T));
  return values;
}

void WeightEncoder::FloatSource::release(int64_t begin, int64_t end) const {
  if (file && owned.empty())
    file->releasePages(*info, uint64_t(begin) * sizeof(float),
                       uint64_t(end) * sizeof(float));
}

llvm::Expected<WeightEncoder::FloatSource>
WeightEncoder::floatSource(StringRef name, int64_t count) {
  if (!weights)
    return fail("weight '" + name +
                "' is external but no weights file was given (--weights)");
  WeightTensor found = weights->lookup(name);
  if (!found)
    return fail("weight '" + name + "' is not in " + weights->path());
  const SafeTensorsFile *file = found.file;
  const TensorInfo *info = found.info;
  if (info->numElements() != count)
    return fail("weight '" + name + "' has " +
                llvm::Twine(info->numElements()) + " elements in " +
                file->path() + " but the model needs " +
                llvm::Twine(count));
  FloatSource source;
  source.file = file;
  source.info = info;
  if (auto view = file->f32View(*info)) {
    source.values = *view;
  } else {
    source.owned = file->toF32(*info);
    source.values = source.owned;
  }
  for (float v : source.values)
    if (!std::isfinite(v))
      return fail("weight '" + name + "' in " + file->path() +
                  " holds a non-finite value");
  return source;
}

llvm::Expected<const SVDSplit *> WeightEncoder::split(StringRef source,
                                                      int64_t rows,
                                                      int64_t cols,
                                                      int64_t rank) {
  // Under the lock: a weight and its adapter factors share one split.
  std::lock_guard<std::mutex> lock(mutex);
  auto it = splits.find(source.str());
  if (it != splits.end())
    return &it->second;
  auto w = floatSource(source, rows * cols);
  if (!w)
    return w.takeError();
  SVDSplit result = splitSVD(w->values.data(), rows, cols, rank);
  return &(splits[source.str()] = std::move(result));
}

/// `w` on the balanced 2-bit grid of one scale per tensor or per row
/// (weights trained with QAT arrive like this): the scale and codes that
/// reproduce it exactly, or nothing.
static std::optional<Q2Tensor> importOnGrid(llvm::ArrayRef<float> w,
                                            int64_t rows, int64_t cols,
                                            bool perChannel) {
  Q2Tensor t;
  t.rows = rows;
  t.cols = cols;
  t.mode = perChannel ? Q2ScaleMode::PerChannel : Q2ScaleMode::PerTensor;
  t.codes.resize(rows * cols);
  int64_t groups = perChannel ? rows : 1, perGroup = rows * cols / groups;
  for (int64_t g = 0; g < groups; ++g) {
    float maxAbs = 0.0f;
    for (int64_t i = 0; i < perGroup; ++i)
      maxAbs = std::max(maxAbs, std::fabs(w[g * perGroup + i]));
    if (maxAbs == 0.0f)
      return std::nullopt;
    float s = maxAbs / 1.5f;
    for (int64_t i = 0; i < perGroup; ++i) {
      float v = w[g * perGroup + i];
      uint8_t code = q2Code(v, s);
      if (q2Level(code) * s != v)
        return std::nullopt;
      t.codes[g * perGroup + i] = code;
    }
    t.scales.push_back(s);
  }
  return t;
}

static std::string describe(Type type) {
  if (auto q2 = dyn_cast<Q2WeightType>(type))
    return "q2 " + stringifyScaleGranularity(q2.getGranularity()).str();
  if (auto q4 = dyn_cast<Q4WeightType>(type))
    return llvm::formatv("q4 group={0}", q4.getGroup()).str();
  if (auto astc = dyn_cast<ASTCWeightType>(type))
    return llvm::formatv("astc {0}x{1} {2}", astc.getBlockRows(),
                         astc.getBlockCols(),
                         stringifyASTCOffset(astc.getOffset()))
        .str();
  return "f32";
}

/// The parts and sizes of an ASTC weight's CPU form (the transcode).
static void storeASTCForCPU(EncodedWeight &e, const ASTCKernelCodes &k,
                            const std::vector<uint16_t> &scales,
                            const std::vector<uint16_t> &biases) {
  e.parts["codes"] = bytesOf(k.codes);
  e.parts["tail_codes"] = bytesOf(k.tailCodes);
  e.parts["scales"] = bytesOf(scales);
  e.parts["biases"] = bytesOf(biases);
  e.bitsPerWeight = astcTranscodeBitsPerWeight(e.rows, e.cols);
  e.astcBitsPerWeight = astcBitsPerWeight(e.rows, e.cols, /*withOffsets=*/true);
}

/// The CPU form of ASTC blocks whose decoded weights are `decoded`.
static void transcode(EncodedWeight &e, const std::vector<float> &decoded) {
  ASTCTranscoded t = transcodeAffine4(decoded.data(), e.rows, e.cols);
  storeASTCForCPU(
      e, packASTCKernelCodes(t.codes.data(), t.blockRows, t.storedBlockCols),
      t.scales, t.biases);
  e.values = dequantizeTranscoded(t);
}

/// A 4-bit table quantized a block of rows at a time, measured as it is
/// made, and released from the source as it goes: the tied embedding of a
/// 150k vocabulary is 1.8 GB of floats, which never need to be in memory
/// at once.
static llvm::Error encodeQ4(EncodedWeight &e, Q4WeightType type,
                            const WeightEncoder::FloatSource &w,
                            bool keepValues) {
  size_t rows = e.rows, cols = e.cols, group = type.getGroup();
  constexpr size_t kRowsPerBlock = 1024;
  std::vector<uint8_t> codes;
  codes.reserve(rows * q4RowBytes(cols));
  std::vector<float> scales;
  scales.reserve(group ? rows * (cols / group) : 0);
  if (keepValues)
    e.values.resize(rows * cols);
  std::vector<float> row(cols);
  SNRSums snr;
  for (size_t first = 0; first < rows; first += kRowsPerBlock) {
    size_t count = std::min(kRowsPerBlock, rows - first);
    const float *block = w.values.data() + first * cols;
    auto t = quantizeQ4(block, count, cols, group);
    if (!t)
      return t.takeError();
    std::vector<uint8_t> packed =
        kernelOrderQ4Codes(packQ4(t->codes, count, cols), count, cols, group);
    codes.insert(codes.end(), packed.begin(), packed.end());
    scales.insert(scales.end(), t->scales.begin(), t->scales.end());
    for (size_t r = 0; r < count; ++r) {
      float *out = keepValues ? &e.values[(first + r) * cols] : row.data();
      dequantizeQ4Row(*t, r, out);
      snr.add(block + r * cols, out, cols);
    }
    w.release(first * cols, (first + count) * cols);
  }
  e.parts["codes"] = std::move(codes);
  e.parts["scales"] = bytesOf(scales);
  e.bitsPerWeight = q4BitsPerWeight(rows, cols, group);
  e.snrDb = snr.db();
  return llvm::Error::success();
}

/// Encodes a compressed weight from its float values `w`.
llvm::Error WeightEncoder::encodeFromFloat(EncodedWeight &e, Type type,
                                           const FloatSource &w,
                                           bool needValues) {
  size_t rows = e.rows, cols = e.cols;
  if (auto q2 = dyn_cast<Q2WeightType>(type)) {
    bool perChannel = q2.getGranularity() == ScaleGranularity::PerChannel;
    std::optional<Q2Tensor> t = importOnGrid(w.values, rows, cols, perChannel);
    if (t)
      e.note = "on the 2-bit grid already (QAT): imported exactly";
    else
      t = quantizeQ2(w.values.data(), rows, cols,
                     perChannel ? Q2ScaleMode::PerChannel
                                : Q2ScaleMode::PerTensor);
    e.parts["codes"] = packQ2(t->codes, rows, cols);
    e.parts["scales"] = bytesOf(t->scales);
    e.values = dequantizeQ2(*t);
    e.bitsPerWeight = q2BitsPerWeight(rows, cols, perChannel);
    return llvm::Error::success();
  }
  if (auto q4 = dyn_cast<Q4WeightType>(type))
    return encodeQ4(e, q4, w, needValues);
  // A band of block rows at a time (ASTCForCPU.h): the float copies of a
  // 150000 x 3072 head are a band's, not 1.8 GB each.
  auto astc = cast<ASTCWeightType>(type);
  ASTCEncodeOptions options;
  options.offsetMode = astc.getOffset() == ASTCOffset::Min
                           ? ASTCOffsetMode::Min
                           : ASTCOffsetMode::LinearSegment;
  size_t released = 0; // rows the source may drop
  auto m = encodeASTCForCPU(w.values.data(), rows, cols, options, needValues,
                            kASTCForCPUBandBlockRows, [&](size_t rowEnd) {
                              w.release(int64_t(released * cols),
                                        int64_t(rowEnd * cols));
                              released = rowEnd;
                            });
  if (!m)
    return m.takeError();
  e.astcBlocks = std::move(m->blocks);
  e.astcOffsets = std::move(m->offsets);
  e.astcSnrDb = m->astcQuality.db();
  storeASTCForCPU(e, m->kernelCodes, m->scales, m->biases);
  e.snrDb = m->transcodeQuality.db();
  e.values = std::move(m->values);
  return llvm::Error::success();
}

/// `values [rows, cols] += B A`: the part of a weight its SVD split moved
/// into the adapter.
static void addAdapter(std::vector<float> &values, const SVDSplit &svd,
                       int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      double sum = 0;
      for (size_t i = 0; i < svd.rank; ++i)
        sum += double(svd.b[r * svd.rank + i]) * svd.a[i * cols + c];
      values[r * cols + c] += float(sum);
    }
}

std::vector<int64_t> mlir::afm::encodedShape(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return std::vector<int64_t>(tensor.getShape().begin(),
                                tensor.getShape().end());
  if (auto shape = getWeightMatrixShape(type))
    return {(*shape)[0], (*shape)[1]};
  return {};
}

llvm::Expected<const EncodedWeight *>
WeightEncoder::encode(StringRef name, Type type, Attribute value,
                      SVDFactorAttr factor, SVDResidualAttr residual) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto cached = cache.find(name.str());
    if (cached != cache.end())
      return &cached->second;
  }
  // Each weight is encoded by one thread (the packager's tasks are per
  // weight); std::map nodes stay put as others are inserted.
  auto store = [&](EncodedWeight &&e) -> const EncodedWeight * {
    std::lock_guard<std::mutex> lock(mutex);
    return &(cache[e.name] = std::move(e));
  };
  EncodedWeight e;
  e.name = name.str();
  e.format = describe(type);
  e.shape = encodedShape(type);
  if (auto tensor = dyn_cast<RankedTensorType>(type)) {
    e.rows = tensor.getRank() >= 2 ? tensor.getDimSize(0) : 1;
    e.cols = tensor.getNumElements() / std::max<int64_t>(e.rows, 1);
  } else if (e.shape.size() == 2) {
    e.rows = e.shape[0];
    e.cols = e.shape[1];
  }
  int64_t count = e.rows * e.cols;

  if (auto tensor = dyn_cast<RankedTensorType>(type)) {
    if (!tensor.getElementType().isF32())
      return fail("weight '" + name + "' has element type " +
                  llvm::formatv("{0}", tensor.getElementType()).str() +
                  " that cannot be packaged (plain weights are f32)");
    if (factor) {
      // An adapter factor of afm-svd-split: a slice of its source's SVD.
      StringRef source = factor.getSource(), which = factor.getFactor();
      int64_t rank = factor.getRank();
      double alpha = factor.getAlpha().getValueAsDouble();
      auto s = split(source, factor.getRows(), factor.getCols(), rank);
      if (!s)
        return s.takeError();
      std::vector<float> values = which == "a" ? (*s)->a : (*s)->b;
      if (which == "b")
        // The adapter computes (alpha / r) x A^T B^T; B = U Sigma.
        for (float &v : values)
          v *= float(double(rank) / alpha);
      if (int64_t(values.size()) != count)
        return fail("weight '" + name + "': the SVD factor has " +
                    llvm::Twine(values.size()) + " values, the type " +
                    llvm::Twine(count));
      e.values = std::move(values);
      e.isSVDFactor = true;
      e.svdSource = source.str();
      e.note = ("top singular vectors of " + source + " (" + which + ")").str();
    } else if (value) {
      std::optional<std::vector<uint8_t>> bytes = rawBytes(value);
      if (!bytes || int64_t(bytes->size()) != count * 4)
        return fail("inline value of weight '" + name +
                    "' is not a dense f32 payload of " +
                    llvm::Twine(count * 4) + " bytes");
      e.values = asVector<float>(*bytes);
    } else {
      auto w = floatSource(name, count);
      if (!w)
        return w.takeError();
      e.values.assign(w->values.begin(), w->values.end());
      w->release(0, count);
    }
    e.parts[""] = bytesOf(e.values);
    e.snrDb = INFINITY;
    return store(std::move(e));
  }

  std::vector<float> decoded; // ASTC D + offset, before the CPU transcode
  if (value) {
    // Inline payloads hold the format itself: nothing to quantize.
    if (auto q = dyn_cast<QuantizedDataAttr>(value)) {
      auto codes = rawBytes(q.getCodes());
      auto scales = rawBytes(q.getScales());
      if (!codes || !scales)
        return fail("inline value of weight '" + name + "' has no data");
      e.parts["codes"] = *codes;
      e.parts["scales"] = *scales;
      // The kernels' byte order (afm/Layout/PackedWeights.h); the payload is the plain one.
      if (auto q4 = dyn_cast<Q4WeightType>(type))
        e.parts["codes"] = kernelOrderQ4Codes(*codes, e.rows, e.cols,
                                              q4.getGroup());
      std::vector<float> s = asVector<float>(*scales);
      if (auto q2 = dyn_cast<Q2WeightType>(type)) {
        auto unpacked = unpackQ2(*codes, e.rows, e.cols);
        if (!unpacked)
          return unpacked.takeError();
        auto t = importQ2(*unpacked, s, e.rows, e.cols);
        if (!t)
          return t.takeError();
        e.values = dequantizeQ2(*t);
        e.bitsPerWeight = q2BitsPerWeight(
            e.rows, e.cols,
            q2.getGranularity() == ScaleGranularity::PerChannel);
      } else {
        auto q4 = cast<Q4WeightType>(type);
        auto unpacked = unpackQ4(*codes, e.rows, e.cols);
        if (!unpacked)
          return unpacked.takeError();
        Q4Table t{size_t(e.rows), size_t(e.cols), size_t(q4.getGroup()),
                  std::move(*unpacked), std::move(s)};
        e.values.resize(count);
        for (int64_t r = 0; r < e.rows; ++r)
          dequantizeQ4Row(t, r, &e.values[r * e.cols]);
        e.bitsPerWeight = q4BitsPerWeight(e.rows, e.cols, q4.getGroup());
      }
      return store(std::move(e));
    }
    auto blocks = cast<ASTCDataAttr>(value);
    ASTCMatrix m;
    m.rows = e.rows;
    m.cols = e.cols;
    m.blockRows = astcBlocks(e.rows);
    m.blockCols = astcBlocks(e.cols);
    auto blockBytes = rawBytes(blocks.getBlocks());
    auto offsetBytes = rawBytes(blocks.getOffsets());
    if (!blockBytes || !offsetBytes)
      return fail("inline value of weight '" + name + "' has no data");
    m.blocks = *blockBytes;
    m.offsets = asVector<uint16_t>(*offsetBytes);
    if (llvm::Error err = decodeASTCWeights(m))
      return fail("weight '" + name + "': " + llvm::toString(std::move(err)));
    e.astcBlocks = m.blocks;
    e.astcOffsets = m.offsets;
    decoded = std::move(m.weights);
    transcode(e, decoded);
    return store(std::move(e));
  }

  if (auto astc = dyn_cast<ASTCWeightType>(type);
      astc && (astc.getBlockRows() != kASTCBlockDim ||
               astc.getBlockCols() != kASTCBlockDim))
    return fail("weight '" + name + "': only 6x6 ASTC blocks can be encoded, "
                "got " + e.format);
  auto source = floatSource(name, count);
  if (!source)
    return source.takeError();
  const SVDSplit *svd = nullptr;
  FloatSource residualSource;
  if (residual) {
    auto s = split(name, e.rows, e.cols, residual.getRank());
    if (!s)
      return s.takeError();
    svd = *s;
    residualSource.values = svd->residual;
    e.note = llvm::formatv("residual after moving the top {0} singular "
                           "vectors into its adapter",
                           svd->rank)
                 .str();
  }
  // With an adapter split off, the report needs the values (below).
  if (llvm::Error err = encodeFromFloat(e, type,
                                        svd ? residualSource : *source,
                                        keepValues || svd))
    return fail("weight '" + name + "': " + llvm::toString(std::move(err)));
  // The quality of what the model computes with, against the float weight:
  // with an adapter split off, the adapter's part counts too.
  if (!e.snrDb || svd) {
    std::vector<float> effective = e.values;
    if (svd)
      addAdapter(effective, *svd, e.rows, e.cols);
    e.snrDb = snrDb(source->values.data(), effective.data(), effective.size());
  }
  source->release(0, count);
  if (!keepValues)
    freeVector(e.values);
  return store(std::move(e));
}

void WeightEncoder::release(StringRef name, bool keepASTCBlocks) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(name.str());
  if (it == cache.end())
    return;
  it->second.parts.clear();
  if (!keepASTCBlocks) {
    freeVector(it->second.astcBlocks);
    freeVector(it->second.astcOffsets);
  }
  if (!keepValues)
    freeVector(it->second.values);
}

std::vector<float> WeightEncoder::takeEffectiveValues(StringRef name) {
  std::lock_guard<std::mutex> lock(mutex);
  EncodedWeight &e = cache.at(name.str());
  std::vector<float> values = std::move(e.values);
  e.values = {};
  auto s = splits.find(name.str());
  if (s != splits.end())
    addAdapter(values, s->second, e.rows, e.cols);
  return values;
}
