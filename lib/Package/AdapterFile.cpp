//===- AdapterFile.cpp - adapter files and the base they belong to --------===//
//
// Reading a base .afmb is the runtime's format.c in miniature: header,
// section table, then only the manifest, each checked before it is used,
// so that a damaged base gives a message rather than a wrong identity.
//
//===----------------------------------------------------------------------===//

#include "afm/Package/AdapterFile.h"

#include "afm/adapter_format.h"
#include "afm/afmb_format.h"

#include "llvm/Support/Endian.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace llvm;

template <typename T> static T get(const uint8_t *at) {
  return support::endian::read<T, llvm::endianness::little>(at);
}

template <typename T>
static void put(std::vector<uint8_t> &buf, size_t at, T value) {
  support::endian::write<T, llvm::endianness::little>(buf.data() + at, value);
}

Expected<afm::BaseModelSlots> afm::readBaseModelSlots(StringRef path) {
  auto fail = [&](const Twine &message) {
    return createStringError(inconvertibleErrorCode(),
                             path + ": " + message);
  };
  auto buffer = MemoryBuffer::getFile(path, /*IsText=*/false,
                                      /*RequiresNullTerminator=*/false);
  if (!buffer)
    return fail("cannot read: " + buffer.getError().message());
  ArrayRef<uint8_t> file(
      reinterpret_cast<const uint8_t *>((*buffer)->getBufferStart()),
      (*buffer)->getBufferSize());
  if (file.size() < AFMB_HEADER_SIZE ||
      std::memcmp(file.data(), AFMB_MAGIC, AFMB_MAGIC_SIZE) != 0)
    return fail("not an .afmb binary (give the base model afm-compile "
                "wrote)");
  if (get<uint64_t>(file.data() + AFMB_HEADER_CHECKSUM) !=
      afmb_fnv1a64_update(AFMB_FNV1A64_INIT, file.data(),
                          AFMB_HEADER_CHECKSUM))
    return fail("header checksum mismatch");
  uint64_t tableOffset = get<uint64_t>(file.data() + AFMB_HEADER_TABLE_OFFSET);
  uint32_t count = get<uint32_t>(file.data() + AFMB_HEADER_SECTION_COUNT);
  if (count > AFMB_MAX_SECTIONS || tableOffset > file.size() ||
      uint64_t(count) * AFMB_SECTION_ENTRY_SIZE > file.size() - tableOffset)
    return fail("the section table does not fit in the file");
  const uint8_t *manifestAt = nullptr, *weightsAt = nullptr;
  for (uint32_t i = 0; i < count; ++i) {
    const uint8_t *entry =
        file.data() + tableOffset + uint64_t(i) * AFMB_SECTION_ENTRY_SIZE;
    uint32_t kind = get<uint32_t>(entry + AFMB_SECTION_KIND);
    if (kind == AFMB_SECTION_KIND_MANIFEST)
      manifestAt = entry;
    else if (kind == AFMB_SECTION_KIND_WEIGHTS)
      weightsAt = entry;
  }
  if (!manifestAt || !weightsAt)
    return fail("no manifest or weights section");
  uint64_t offset = get<uint64_t>(manifestAt + AFMB_SECTION_OFFSET);
  uint64_t size = get<uint64_t>(manifestAt + AFMB_SECTION_SIZE);
  if (offset > file.size() || size > file.size() - offset)
    return fail("the manifest section does not fit in the file");
  if (get<uint64_t>(manifestAt + AFMB_SECTION_CHECKSUM) !=
      afmb_fnv1a64_update(AFMB_FNV1A64_INIT, file.data() + offset, size))
    return fail("manifest checksum mismatch");
  manifest::Manifest manifest;
  if (!manifest.ParseFromArray(file.data() + offset, int(size)))
    return fail("the manifest is not a valid afm.manifest.Manifest");

  BaseModelSlots base;
  base.rank = manifest.adapters().rank();
  base.identity = afm_adapter_identity_start(
      get<uint64_t>(weightsAt + AFMB_SECTION_CHECKSUM));
  for (const manifest::AdapterSlot &slot : manifest.adapters().slots()) {
    base.slots.push_back({slot.name(), slot.rows(), slot.cols()});
    base.identity = afm_adapter_identity_add_slot(
        base.identity, slot.name().c_str(), slot.rows(), slot.cols());
  }
  if (base.slots.empty())
    return fail("the model has no adapter slots: compile the base with "
                "afm-compile --adapter-rank R");
  return base;
}

Error afm::writeAdapterFile(raw_ostream &os,
                            const manifest::AdapterManifest &given,
                            ArrayRef<AdapterFactor> factors) {
  // The tensor table needs the manifest's size, which depends on the
  // offsets: lay the tensors out after a manifest with the largest
  // offsets, since protobuf varints only grow with the value.
  manifest::AdapterManifest m = given;
  m.clear_tensors();
  for (const AdapterFactor &f : factors) {
    if (f.values.size() != uint64_t(f.rows) * f.cols)
      return createStringError(inconvertibleErrorCode(),
                               "adapter factor '" + f.slot +
                                   "' has the wrong number of values");
    auto *t = m.add_tensors();
    t->set_slot(f.slot);
    t->set_rows(f.rows);
    t->set_cols(f.cols);
    t->set_offset(UINT64_MAX);
    t->set_bytes(f.values.size() * sizeof(float));
  }
  uint64_t manifestRoom = m.ByteSizeLong();
  uint64_t at = alignTo(AFM_ADAPTER_HEADER_SIZE + manifestRoom,
                        AFM_ADAPTER_TENSOR_ALIGNMENT);
  for (int i = 0; i < m.tensors_size(); ++i) {
    m.mutable_tensors(i)->set_offset(at);
    at = alignTo(at + m.tensors(i).bytes(), AFM_ADAPTER_TENSOR_ALIGNMENT);
  }
  std::string serialized;
  if (!m.SerializeToString(&serialized))
    return createStringError(inconvertibleErrorCode(),
                             "cannot serialize the adapter manifest");
  uint64_t fileSize = factors.empty()
                          ? AFM_ADAPTER_HEADER_SIZE + serialized.size()
                          : m.tensors(m.tensors_size() - 1).offset() +
                                m.tensors(m.tensors_size() - 1).bytes();
  std::vector<uint8_t> file(fileSize, 0);
  std::memcpy(file.data(), AFM_ADAPTER_MAGIC, AFM_ADAPTER_MAGIC_SIZE);
  put<uint32_t>(file, AFM_ADAPTER_HEADER_VERSION, AFM_ADAPTER_VERSION);
  put<uint32_t>(file, AFM_ADAPTER_HEADER_HEADER_SIZE, AFM_ADAPTER_HEADER_SIZE);
  put<uint64_t>(file, AFM_ADAPTER_HEADER_FILE_SIZE, fileSize);
  put<uint64_t>(file, AFM_ADAPTER_HEADER_MANIFEST_OFFSET,
                AFM_ADAPTER_HEADER_SIZE);
  put<uint64_t>(file, AFM_ADAPTER_HEADER_MANIFEST_SIZE, serialized.size());
  std::memcpy(file.data() + AFM_ADAPTER_HEADER_SIZE, serialized.data(),
              serialized.size());
  for (size_t i = 0; i < factors.size(); ++i)
    std::memcpy(file.data() + m.tensors(int(i)).offset(),
                factors[i].values.data(), m.tensors(int(i)).bytes());
  uint64_t sum = afmb_fnv1a64_update(AFMB_FNV1A64_INIT, file.data(),
                                     AFM_ADAPTER_HEADER_CHECKSUM);
  sum = afmb_fnv1a64_update(sum, file.data() + AFM_ADAPTER_HEADER_CHECKSUM + 8,
                            file.size() - AFM_ADAPTER_HEADER_CHECKSUM - 8);
  put<uint64_t>(file, AFM_ADAPTER_HEADER_CHECKSUM, sum);
  os.write(reinterpret_cast<const char *>(file.data()), file.size());
  return Error::success();
}
