//===- Package.cpp - compiled module + weights -> .afmb -------------------===//
//
// Reads the layouts afm-bind-entry-abi recorded on the module (afm.weights,
// afm.kv_layout, afm.model) and turns them into the weights section and the
// manifest of docs/afmb-format.md.
//
//===----------------------------------------------------------------------===//

#include "afm/Package/Package.h"

#include "afm/Package/WeightEncoding.h"

#include "afm/Package/AFMBWriter.h"
#include "afm/Model/SafeTensors.h"
#include "afm/kernel_abi.h"
#include "dialects/afm/IR/AFMDialect.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Parallel.h"

#include <cstring>
#include <functional>
#include <numeric>
#include <mutex>

#ifdef __GLIBC__
#include <malloc.h>
#endif

using namespace mlir;
using mlir::afm::KVCacheType;
using mlir::afm::ObjectFormat;
using mlir::afm::TargetDescription;
using mlir::afm::TensorInfo;

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(message.str());
}

/// Gives memory the allocator holds but no longer uses back to the OS.
/// glibc keeps freed chunks in its arenas (each encoding thread has its
/// own) and the heap of the code generator that ran before; without this a
/// model of billions of parameters grows the resident set by gigabytes of
/// free memory.
static void returnFreeMemory() {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

llvm::Expected<std::optional<mlir::afm::WeightSource>>
mlir::afm::openPackageWeights(ModuleOp module, StringRef path) {
  std::string resolved = path.str();
  if (resolved.empty())
    if (auto attr =
            contracts(module).getWeightsFileAttrHelper().getAttr(module))
      resolved = attr.str();
  if (resolved.empty())
    return std::optional<mlir::afm::WeightSource>();
  auto opened = mlir::afm::WeightSource::open(resolved);
  if (!opened)
    return opened.takeError();
  return std::optional<mlir::afm::WeightSource>(std::move(*opened));
}

namespace {
/// What `WeightEncoder::encode` takes for one weight, from the first of its
/// entries in the `afm.weights` layout: the compressed type (`format`) or
/// the tensor type, the inline value and the LoRA split.
struct PackagedWeight {
  Type type;
  Attribute value;
  mlir::afm::SVDFactorAttr factor;
  mlir::afm::SVDResidualAttr residual;

  explicit PackagedWeight(mlir::afm::WeightSlotAttr firstPart)
      : type(firstPart.getFormat() ? firstPart.getFormat()
                                   : firstPart.getType()),
        value(firstPart.getValue()), factor(firstPart.getSvdFactor()),
        residual(firstPart.getSvdResidual()) {}

  llvm::Expected<const mlir::afm::EncodedWeight *> encode(mlir::afm::WeightEncoder &encoder,
                                               StringRef name) const {
    return encoder.encode(name, type, value, factor, residual);
  }
};
} // namespace

llvm::Error mlir::afm::writeEffectiveWeights(ModuleOp lowered,
                                             const mlir::afm::WeightSource *weights,
                                             StringRef path,
                                             const PackageProgress &progress) {
  auto weightLayout = contracts(lowered).getWeightsAttrHelper().getAttr(lowered);
  if (!weightLayout)
    return fail("the module lacks afm.weights: was it lowered by the "
                "afm-codegen pipeline from an imported model?");
  // One entry per weight (its first part holds the format, the inline value
  // and the annotations), in the layout's order; adapter factors are folded
  // into their residual instead.
  std::vector<std::pair<StringRef, PackagedWeight>> list;
  std::vector<SafeTensorSpec> specs;
  llvm::StringSet<> seen;
  uint64_t totalBytes = 0;
  for (auto slot : weightLayout.getAsRange<WeightSlotAttr>()) {
    StringRef name = slot.getName();
    if (!seen.insert(name).second)
      continue;
    PackagedWeight source(slot);
    if (source.factor)
      continue;
    SafeTensorSpec spec{name.str(), DType::F32, encodedShape(source.type)};
    totalBytes += 4 * static_cast<uint64_t>(
                          std::accumulate(spec.shape.begin(), spec.shape.end(),
                                          int64_t(1), std::multiplies<>()));
    specs.push_back(std::move(spec));
    list.emplace_back(name, source);
  }
  auto writer = SafeTensorsStreamWriter::create(path, specs);
  if (!writer)
    return writer.takeError();
  // One weight at a time, encoded again and written as it comes, so that
  // memory holds one weight's values, not the model's (12 GB of floats at
  // the paper's size).
  WeightEncoder encoder(weights, /*keepValues=*/true);
  uint64_t done = 0;
  for (const auto &[name, source] : list) {
    auto encoded = source.encode(encoder, name);
    if (!encoded)
      return encoded.takeError();
    std::vector<float> values = encoder.takeEffectiveValues(name);
    encoder.release(name, /*keepASTCBlocks=*/false);
    if (llvm::Error err = (*writer)->append(llvm::ArrayRef<uint8_t>(
            reinterpret_cast<const uint8_t *>(values.data()),
            values.size() * sizeof(float))))
      return err;
    if (progress)
      progress(name, done += values.size() * sizeof(float), totalBytes);
    values = {};
    returnFreeMemory();
  }
  return (*writer)->finish();
}

llvm::Error mlir::afm::writePackage(llvm::raw_ostream &os, ModuleOp lowered,
                                    StringRef library,
                                    const TargetDescription &target,
                                    const mlir::afm::WeightSource *weights) {
  WeightEncoder encoder(weights);
  return writePackage(
      os, lowered,
      [&]() -> llvm::Expected<std::string> { return library.str(); }, target,
      encoder);
}

llvm::Error mlir::afm::writePackage(llvm::raw_ostream &os, ModuleOp lowered,
                                    LibraryProducer produceLibrary,
                                    const TargetDescription &target,
                                    WeightEncoder &encoder,
                                    const PackageProgress &progress,
                                    const PackageText &text) {
  // What the lowering freed goes back first: the section and the
  // weights in flight come on top of what is resident now.
  returnFreeMemory();
  AFMDialect &afmAttrs = contracts(lowered);
  ModelAttr model = afmAttrs.getModelAttrHelper().getAttr(lowered);
  ArrayAttr weightLayout = afmAttrs.getWeightsAttrHelper().getAttr(lowered);
  ArrayAttr kvLayout = afmAttrs.getKvLayoutAttrHelper().getAttr(lowered);
  if (!model || !weightLayout || !kvLayout)
    return fail("the module lacks afm.model / afm.weights / afm.kv_layout: "
                "was it lowered by the afm-codegen pipeline from an "
                "imported model?");

  ::afm::manifest::Manifest manifest;
  manifest.set_abi_version(AFM_KERNEL_ABI_VERSION);
  manifest.set_producer("afm-compile (afm-compiler)");
  auto *t = manifest.mutable_target();
  t->set_name(target.name);
  t->set_triple(target.triple);
  t->set_cpu(target.cpu);
  t->set_features(target.features);
  t->set_object_format(target.objectFormat == ObjectFormat::MachO ? "macho"
                                                                  : "elf");
  auto *info = manifest.mutable_model();
  info->set_name(model.getName().str());
  info->set_vocab_size(model.getVocabSize());
  info->set_hidden_size(model.getHiddenSize());
  info->set_num_layers(model.getNumLayers());
  info->set_context_length(model.getContextLength());
  if (IntegerAttr tracks = afmAttrs.getTrackCountAttrHelper().getAttr(lowered))
    info->set_num_tracks(tracks.getInt());

  auto *prefill = manifest.add_entry_points();
  prefill->set_kind(::afm::manifest::EntryPoint::PREFILL);
  prefill->set_symbol(AFM_PREFILL_SYMBOL);
  prefill->set_max_tokens(model.getPrefillChunk());
  auto *decode = manifest.add_entry_points();
  decode->set_kind(::afm::manifest::EntryPoint::DECODE);
  decode->set_symbol(AFM_DECODE_SYMBOL);
  decode->set_max_tokens(1);
  // The optional verify entry, as afm-export-model-facts found it.
  if (IntegerAttr verifyTokens =
          afmAttrs.getVerifyTokensAttrHelper().getAttr(lowered)) {
    auto *verify = manifest.add_entry_points();
    verify->set_kind(::afm::manifest::EntryPoint::VERIFY);
    verify->set_symbol(AFM_VERIFY_SYMBOL);
    verify->set_max_tokens(verifyTokens.getInt());
  }

  auto weightsBytes = afmAttrs.getWeightsBytesAttrHelper().getAttr(lowered);
  std::vector<uint8_t> section(weightsBytes ? weightsBytes.getInt() : 0, 0);
  auto addTensor = [&](StringRef name, StringRef format,
                       ArrayRef<int64_t> shape, uint64_t offset,
                       uint64_t bytes) {
    auto *tensor = manifest.add_tensors();
    tensor->set_name(name.str());
    tensor->set_format(format.str());
    for (int64_t dim : shape)
      tensor->add_shape(dim);
    tensor->set_offset(offset);
    tensor->set_size(bytes);
  };
  // Each layout entry is one part of a weight ("codes", "scales", ...).
  struct Part {
    StringRef name, part;
    RankedTensorType type;
    uint64_t offset, bytes;
    WeightSlotAttr slot;
    std::string format; // set once encoded
  };
  std::vector<Part> parts;
  llvm::MapVector<StringRef, SmallVector<size_t, 4>> partsOfWeight;
  uint64_t totalBytes = 0;
  for (auto slot : weightLayout.getAsRange<WeightSlotAttr>()) {
    Part p;
    p.name = slot.getName();
    p.type = dyn_cast<RankedTensorType>(slot.getType());
    if (!p.type)
      return fail("weight '" + p.name + "' has no ranked tensor type");
    p.offset = slot.getOffset();
    p.bytes = slot.getBytes();
    p.slot = slot;
    p.part = slot.getPart();
    if (p.offset > section.size() || p.bytes > section.size() - p.offset)
      return fail("weight '" + p.name + "' lies outside the weights section");
    partsOfWeight[p.name].push_back(parts.size());
    totalBytes += p.bytes;
    parts.push_back(p);
  }

  // The weights are encoded on every core, each by one task that copies its
  // parts into the section and releases them, so memory holds the section
  // and the weights in flight, not every weight twice.
  std::vector<std::string> errors(partsOfWeight.size());
  uint64_t bytesDone = 0;
  std::mutex progressMutex;
  auto encodeWeight = [&](size_t index) {
    auto &[name, indices] = *(partsOfWeight.begin() + index);
    auto encoded = PackagedWeight(parts[indices.front()].slot).encode(encoder, name);
    if (!encoded) {
      errors[index] = llvm::toString(encoded.takeError());
      return;
    }
    for (size_t i : indices) {
      Part &p = parts[i];
      auto it = (*encoded)->parts.find(p.part);
      if (it == (*encoded)->parts.end() || it->second.size() != p.bytes) {
        errors[index] =
            ("weight '" + p.name + "'" +
             (p.part.empty() ? "" : " (" + p.part + ")") + " encodes to " +
             llvm::Twine(it == (*encoded)->parts.end() ? 0
                                                       : it->second.size()) +
             " bytes but the layout has room for " + llvm::Twine(p.bytes))
                .str();
        return;
      }
      std::memcpy(section.data() + p.offset, it->second.data(), p.bytes);
      p.format = p.part.empty() ? "f32"
                                : (*encoded)->format + " " + p.part.str();
      if (progress) {
        std::lock_guard<std::mutex> lock(progressMutex);
        progress(name, bytesDone += p.bytes, totalBytes);
      }
    }
    encoder.release(name, /*keepASTCBlocks=*/target.gpuSamplesASTC);
  };
  llvm::parallelFor(0, partsOfWeight.size(), [&](size_t index) {
    encodeWeight(index);
    returnFreeMemory();
  });
  for (std::string &error : errors)
    if (!error.empty())
      return fail(error);

  std::vector<const EncodedWeight *> astcWeights;
  for (const Part &p : parts) {
    addTensor(p.part.empty() ? p.name.str() : (p.name + "." + p.part).str(),
              p.format, p.type.getShape(), p.offset, p.bytes);
    if (p.part == "codes") {
      const EncodedWeight &e = encoder.encoded().at(p.name.str());
      if (!e.astcBlocks.empty())
        astcWeights.push_back(&e);
    }
  }
  // GPUs that sample ASTC read the blocks themselves: the package keeps
  // them (and their f16 offsets) after the CPU kernels' buffers.
  if (target.gpuSamplesASTC) {
    for (const EncodedWeight *w : astcWeights) {
      auto append = [&](StringRef suffix, StringRef format,
                        ArrayRef<int64_t> shape, const uint8_t *data,
                        size_t bytes) {
        uint64_t offset = llvm::alignTo(section.size(), 64);
        section.resize(offset + bytes, 0);
        std::memcpy(section.data() + offset, data, bytes);
        addTensor(w->name + "." + suffix.str(), format, shape, offset, bytes);
      };
      int64_t blocks = w->astcOffsets.size();
      append("astc_blocks", "astc 6x6 hdr", {blocks, 16},
             w->astcBlocks.data(), w->astcBlocks.size());
      append("astc_offsets", "f16", {blocks},
             reinterpret_cast<const uint8_t *>(w->astcOffsets.data()),
             w->astcOffsets.size() * 2);
    }
  }

  auto *kv = manifest.mutable_kv_cache();
  if (auto arena = afmAttrs.getKvArenaBytesAttrHelper().getAttr(lowered)) {
    kv->set_arena_bytes(arena.getInt());
    // A graph's arena: its state, then afm-plan-step-memory's scratch.
    auto scratch = afmAttrs.getScratchBytesAttrHelper().getAttr(lowered);
    if (kvLayout.empty() && scratch && scratch.getInt() > 0 &&
        scratch.getInt() < arena.getInt())
      kv->set_state_bytes(arena.getInt() - scratch.getInt());
  }
  for (auto slot : kvLayout.getAsRange<KVSlotAttr>()) {
    std::optional<KVCacheShape> type = getKVCacheShape(slot.getType());
    auto *buffer = kv->add_buffers();
    buffer->set_layer(slot.getLayer());
    buffer->set_attention(stringifyKVCacheAttention(slot.getAttention()).str());
    buffer->set_offset(slot.getOffset());
    buffer->set_bytes(slot.getBytes());
    buffer->set_kv_heads(type->kvHeads);
    buffer->set_capacity(type->capacity);
    buffer->set_head_dim(type->headDim);
    std::string dtype;
    llvm::raw_string_ostream(dtype) << type->elementType;
    buffer->set_dtype(dtype);
    if (slot.getScalesBytes()) {
      buffer->set_scales_offset(slot.getScalesOffset());
      buffer->set_scales_bytes(slot.getScalesBytes());
    }
  }

  // Run-time adapter slots (afm-bind-entry-abi placed them after the caches).
  if (ArrayAttr adapters =
          afmAttrs.getAdapterLayoutAttrHelper().getAttr(lowered)) {
    auto *layout = manifest.mutable_adapters();
    for (auto slot : adapters.getAsRange<AdapterSlotAttr>()) {
      auto *out = layout->add_slots();
      out->set_name(slot.getName().str());
      out->set_offset(slot.getOffset());
      out->set_bytes(slot.getBytes());
      out->set_rows(slot.getRows());
      out->set_cols(slot.getCols());
      // Factor a is [rank, in]: every slot has the same rank.
      if (slot.getName().ends_with(".lora_a"))
        layout->set_rank(slot.getRows());
    }
  }

  if (text.tokenizerIdLimit > model.getVocabSize())
    return fail("the tokenizer has ids up to " +
                Twine(text.tokenizerIdLimit - 1) +
                ", past the model's vocabulary of " +
                Twine(model.getVocabSize()));
  for (uint32_t id : text.eosIds) {
    if (id >= model.getVocabSize())
      return fail("end-of-sequence id " + Twine(id) +
                  " is not below the vocabulary size " +
                  Twine(model.getVocabSize()));
    manifest.mutable_generation()->add_eos_ids(id);
  }

  llvm::Expected<std::string> library = produceLibrary();
  if (!library)
    return library.takeError();
  ArrayRef<uint8_t> code(reinterpret_cast<const uint8_t *>(library->data()),
                         library->size());
  ArrayRef<uint8_t> tokenizer(
      reinterpret_cast<const uint8_t *>(text.tokenizer.data()),
      text.tokenizer.size());
  return ::afm::writeAFMB(os, manifest, section, code, tokenizer);
}
