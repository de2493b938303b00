//===- AFMBWriter.cpp - writing .afmb binaries ----------------------------===//
//
// Layout: header (64 bytes), section table (3 or 4 entries) right after it,
// the manifest after the table, the weights at the next 4096-byte boundary,
// the code at the next 64-byte boundary after the weights, then the
// tokenizer, if any, at the next 8-byte boundary. Gaps are zeros.
//
//===----------------------------------------------------------------------===//

#include "afm/Package/AFMBWriter.h"

#include "afm/afmb_format.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/MathExtras.h"

#include <string>
#include <vector>

using namespace llvm;

namespace {
/// Where one section lands in the file.
struct Placement {
  uint32_t kind;
  uint32_t alignment;
  ArrayRef<uint8_t> bytes;
  uint64_t offset = 0;
};
} // namespace

uint64_t afm::fnv1a64(ArrayRef<uint8_t> bytes) {
  return afmb_fnv1a64_update(AFMB_FNV1A64_INIT, bytes.data(), bytes.size());
}

template <typename T>
static void put(std::vector<uint8_t> &buf, size_t at, T value) {
  support::endian::write<T, llvm::endianness::little>(buf.data() + at, value);
}

Error afm::writeAFMB(raw_ostream &os, const manifest::Manifest &manifest,
                     ArrayRef<uint8_t> weights, ArrayRef<uint8_t> code,
                     ArrayRef<uint8_t> tokenizer) {
  std::string serialized;
  if (!manifest.SerializeToString(&serialized))
    return createStringError(inconvertibleErrorCode(),
                             "cannot serialize the .afmb manifest");
  writeAFMBSections(os,
                    ArrayRef(reinterpret_cast<const uint8_t *>(serialized.data()),
                             serialized.size()),
                    weights, code, tokenizer);
  return Error::success();
}

void afm::writeAFMBSections(raw_ostream &os, ArrayRef<uint8_t> manifestBytes,
                            ArrayRef<uint8_t> weights, ArrayRef<uint8_t> code,
                            ArrayRef<uint8_t> tokenizer) {
  SmallVector<Placement, 4> sections = {
      {AFMB_SECTION_KIND_MANIFEST, AFMB_TABLE_ALIGNMENT, manifestBytes},
      {AFMB_SECTION_KIND_WEIGHTS, AFMB_WEIGHTS_ALIGNMENT, weights},
      {AFMB_SECTION_KIND_CODE, AFMB_TENSOR_ALIGNMENT, code}};
  if (!tokenizer.empty())
    sections.push_back(
        {AFMB_SECTION_KIND_TOKENIZER, AFMB_TABLE_ALIGNMENT, tokenizer});
  const uint64_t tableOffset = AFMB_HEADER_SIZE;
  uint64_t end = tableOffset + std::size(sections) * AFMB_SECTION_ENTRY_SIZE;
  for (Placement &s : sections) {
    s.offset = alignTo(end, s.alignment);
    end = s.offset + s.bytes.size();
  }

  std::vector<uint8_t> head(sections[0].offset, 0);
  memcpy(head.data(), AFMB_MAGIC, AFMB_MAGIC_SIZE);
  put<uint16_t>(head, AFMB_HEADER_VERSION_MAJOR, AFMB_VERSION_MAJOR);
  put<uint16_t>(head, AFMB_HEADER_VERSION_MINOR, AFMB_VERSION_MINOR);
  put<uint32_t>(head, AFMB_HEADER_HEADER_SIZE, AFMB_HEADER_SIZE);
  put<uint64_t>(head, AFMB_HEADER_FILE_SIZE, end);
  put<uint64_t>(head, AFMB_HEADER_TABLE_OFFSET, tableOffset);
  put<uint32_t>(head, AFMB_HEADER_SECTION_COUNT, std::size(sections));
  put<uint64_t>(head, AFMB_HEADER_CHECKSUM,
                fnv1a64(ArrayRef(head).take_front(AFMB_HEADER_CHECKSUM)));
  for (auto [index, s] : llvm::enumerate(sections)) {
    size_t entry = tableOffset + index * AFMB_SECTION_ENTRY_SIZE;
    put<uint32_t>(head, entry + AFMB_SECTION_KIND, s.kind);
    put<uint32_t>(head, entry + AFMB_SECTION_ALIGNMENT, s.alignment);
    put<uint64_t>(head, entry + AFMB_SECTION_OFFSET, s.offset);
    put<uint64_t>(head, entry + AFMB_SECTION_SIZE, s.bytes.size());
    put<uint64_t>(head, entry + AFMB_SECTION_CHECKSUM, fnv1a64(s.bytes));
  }

  os.write(reinterpret_cast<const char *>(head.data()), head.size());
  uint64_t written = head.size();
  for (const Placement &s : sections) {
    os.write_zeros(s.offset - written);
    os.write(reinterpret_cast<const char *>(s.bytes.data()), s.bytes.size());
    written = s.offset + s.bytes.size();
  }
}
