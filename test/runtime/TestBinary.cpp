//===- TestBinary.cpp - .afmb files for the runtime tests -----------------===//

#include "TestBinary.h"

#include "afm/Package/AFMBWriter.h"
#include "afm/afmb_format.h"
#include "afm/kernel_abi.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Object/ELF.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <cassert>
#include <cstring>

using namespace llvm;

namespace afm::test {

FakeModelOptions::FakeModelOptions()
    : abiVersion(AFM_KERNEL_ABI_VERSION), triple(sys::getProcessTriple()),
      objectFormat(Triple(triple).isOSBinFormatMachO() ? "macho" : "elf") {}

afm_model_facts makeFakeFacts(const FakeModelOptions &o) {
  afm_model_facts facts = {};
  facts.abi_version = AFM_KERNEL_ABI_VERSION;
  facts.vocab_size = o.vocab;
  facts.context_length = o.context;
  facts.prefill_max_tokens = o.prefillMaxTokens;
  facts.decode_max_tokens = o.decodeMaxTokens;
  facts.weights_bytes = kFakeConfigBytes;
  facts.arena_bytes = uint64_t(o.context) * sizeof(int32_t);
  return facts;
}

/// `code` with the bytes of the exported data symbol `name` overwritten by
/// `bytes` (unchanged when the library is not ELF64 or lacks the symbol).
static std::vector<uint8_t> patchSymbol(ArrayRef<uint8_t> code, StringRef name,
                                        ArrayRef<uint8_t> bytes) {
  std::vector<uint8_t> out(code.begin(), code.end());
  Expected<object::ELF64LEFile> elf = object::ELF64LEFile::create(
      StringRef(reinterpret_cast<const char *>(code.data()), code.size()));
  if (!elf) {
    consumeError(elf.takeError());
    return out; // not ELF64 little-endian: nothing to patch
  }
  auto sections = elf->sections();
  if (!sections) {
    consumeError(sections.takeError());
    return out;
  }
  for (const object::ELF64LE::Shdr &table : *sections) {
    if (table.sh_type != ELF::SHT_DYNSYM)
      continue;
    auto symbols = elf->symbols(&table);
    auto strings = elf->getStringTableForSymtab(table);
    if (!symbols || !strings) {
      consumeError(symbols.takeError());
      consumeError(strings.takeError());
      return out;
    }
    for (const object::ELF64LE::Sym &symbol : *symbols) {
      Expected<StringRef> symbolName = symbol.getName(*strings);
      if (!symbolName || *symbolName != name) {
        consumeError(symbolName.takeError());
        continue;
      }
      // The file offset of the symbol's address: through its section.
      for (const object::ELF64LE::Shdr &holder : *sections) {
        uint64_t address = symbol.st_value;
        if (holder.sh_type == ELF::SHT_NOBITS || address < holder.sh_addr ||
            address + bytes.size() > holder.sh_addr + holder.sh_size)
          continue;
        uint64_t offset = holder.sh_offset + (address - holder.sh_addr);
        if (offset + bytes.size() <= out.size())
          std::memcpy(&out[offset], bytes.data(), bytes.size());
        return out;
      }
    }
  }
  return out;
}

std::vector<uint8_t> withFacts(ArrayRef<uint8_t> code,
                               const afm_model_facts &facts) {
  return patchSymbol(code, AFM_MODEL_FACTS_SYMBOL,
                     ArrayRef(reinterpret_cast<const uint8_t *>(&facts),
                              sizeof(facts)));
}

std::vector<uint8_t> withTrackCount(ArrayRef<uint8_t> code, uint64_t tracks) {
  return patchSymbol(code, AFM_TRACK_COUNT_SYMBOL,
                     ArrayRef(reinterpret_cast<const uint8_t *>(&tracks),
                              sizeof(tracks)));
}

std::vector<uint8_t> withAdapterSlots(ArrayRef<uint8_t> code,
                                      ArrayRef<uint64_t> table) {
  assert(table.size() <= kFakeAdapterSlotWords && "table too large");
  return patchSymbol(code, AFM_ADAPTER_SLOTS_SYMBOL,
                     ArrayRef(reinterpret_cast<const uint8_t *>(table.data()),
                              table.size() * sizeof(uint64_t)));
}

manifest::Manifest makeFakeManifest(const FakeModelOptions &o) {
  manifest::Manifest m;
  m.set_abi_version(o.abiVersion);
  m.set_producer("afm-pack-test-binary");
  manifest::Target *target = m.mutable_target();
  target->set_name(o.targetName);
  target->set_triple(o.triple);
  target->set_object_format(o.objectFormat);
  manifest::ModelInfo *model = m.mutable_model();
  model->set_name("fake");
  model->set_vocab_size(o.vocab);
  model->set_context_length(o.context);
  model->set_num_layers(1);

  manifest::EntryPoint *prefill = m.add_entry_points();
  prefill->set_kind(manifest::EntryPoint::PREFILL);
  prefill->set_symbol(o.prefillSymbol);
  prefill->set_max_tokens(o.prefillMaxTokens);
  manifest::EntryPoint *decode = m.add_entry_points();
  decode->set_kind(manifest::EntryPoint::DECODE);
  decode->set_symbol(o.decodeSymbol);
  decode->set_max_tokens(o.decodeMaxTokens);

  manifest::Tensor *config = m.add_tensors();
  config->set_name("fake.config");
  config->set_format("f32");
  config->add_shape(kFakeConfigBytes / 4);
  config->set_offset(0);
  config->set_size(kFakeConfigBytes);

  uint64_t slots = uint64_t(o.context) * sizeof(int32_t);
  manifest::KVCacheLayout *kv = m.mutable_kv_cache();
  kv->set_arena_bytes(slots);
  manifest::KVBuffer *buffer = kv->add_buffers();
  buffer->set_layer(0);
  buffer->set_attention("global");
  buffer->set_offset(0);
  buffer->set_bytes(slots);
  buffer->set_kv_heads(1);
  buffer->set_capacity(o.context);
  buffer->set_head_dim(1);
  buffer->set_dtype("f32");
  return m;
}

std::vector<uint8_t> makeFakeWeights(const FakeModelOptions &o) {
  std::vector<uint8_t> weights(std::max(o.weightsBytes, kFakeConfigBytes));
  for (size_t i = kFakeConfigBytes; i < weights.size(); ++i)
    weights[i] = uint8_t(i * 7 + 1);
  uint32_t config[] = {kFakeModelMagic, o.vocab, o.context, o.prefillMaxTokens};
  for (auto [i, value] : llvm::enumerate(config))
    support::endian::write32le(weights.data() + 4 * i, value);
  return weights;
}

std::vector<uint8_t> packAFMB(const manifest::Manifest &manifest,
                              ArrayRef<uint8_t> weights,
                              ArrayRef<uint8_t> code,
                              ArrayRef<uint8_t> tokenizer) {
  std::string bytes;
  raw_string_ostream os(bytes);
  cantFail(writeAFMB(os, manifest, weights, code, tokenizer));
  return std::vector<uint8_t>(bytes.begin(), bytes.end());
}

Expected<std::vector<uint8_t>> readFile(const std::string &path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer =
      MemoryBuffer::getFile(path, /*IsText=*/false,
                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return createStringError(buffer.getError(), "cannot read '%s': %s",
                             path.c_str(), buffer.getError().message().c_str());
  StringRef data = (*buffer)->getBuffer();
  return std::vector<uint8_t>(data.bytes_begin(), data.bytes_end());
}

Error writeFile(const std::string &path, ArrayRef<uint8_t> bytes) {
  std::error_code ec;
  raw_fd_ostream os(path, ec, sys::fs::OF_None);
  if (ec)
    return createStringError(ec, "cannot write '%s': %s", path.c_str(),
                             ec.message().c_str());
  os.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
  os.close();
  if (os.has_error()) {
    std::error_code error = os.error();
    os.clear_error();
    return createStringError(error, "cannot write '%s': %s", path.c_str(),
                             error.message().c_str());
  }
  return Error::success();
}

static void putLE(uint8_t *at, unsigned bytes, uint64_t value) {
  for (unsigned i = 0; i < bytes; ++i)
    at[i] = uint8_t(value >> (8 * i));
}

static uint64_t getLE(const uint8_t *at, unsigned bytes) {
  uint64_t value = 0;
  for (unsigned i = bytes; i-- > 0;)
    value = (value << 8) | at[i];
  return value;
}

void setHeaderField(std::vector<uint8_t> &file, size_t field, unsigned bytes,
                    uint64_t value) {
  assert(file.size() >= AFMB_HEADER_SIZE &&
         field + bytes <= AFMB_HEADER_CHECKSUM);
  putLE(file.data() + field, bytes, value);
  putLE(file.data() + AFMB_HEADER_CHECKSUM, 8,
        fnv1a64(ArrayRef(file).take_front(AFMB_HEADER_CHECKSUM)));
}

void setVersion(std::vector<uint8_t> &file, uint16_t major, uint16_t minor) {
  setHeaderField(file, AFMB_HEADER_VERSION_MAJOR, 2, major);
  setHeaderField(file, AFMB_HEADER_VERSION_MINOR, 2, minor);
}

static size_t sectionEntry(ArrayRef<uint8_t> file, unsigned index) {
  return getLE(file.data() + AFMB_HEADER_TABLE_OFFSET, 8) +
         size_t(index) * AFMB_SECTION_ENTRY_SIZE;
}

uint64_t getSectionField(ArrayRef<uint8_t> file, unsigned index, size_t field,
                         unsigned bytes) {
  return getLE(file.data() + sectionEntry(file, index) + field, bytes);
}

void setSectionField(std::vector<uint8_t> &file, unsigned index, size_t field,
                     unsigned bytes, uint64_t value) {
  putLE(file.data() + sectionEntry(file, index) + field, bytes, value);
}

void resealSection(std::vector<uint8_t> &file, unsigned index) {
  uint64_t offset = getSectionField(file, index, AFMB_SECTION_OFFSET, 8);
  uint64_t size = getSectionField(file, index, AFMB_SECTION_SIZE, 8);
  setSectionField(file, index, AFMB_SECTION_CHECKSUM, 8,
                  fnv1a64(ArrayRef(file).slice(offset, size)));
}

} // namespace afm::test
