//===- afm-afmb-fuzzer.cpp - libFuzzer target of the .afmb loader ---------===//
//
// Loads each input as an .afmb through the runtime's public API (an
// instrumented copy of it), and when the load succeeds runs it: a session,
// a 3-token prefill and two greedy decode steps. Any outcome but a crash,
// a hang or a sanitizer report is fine, provided every failure carries a
// message.
//
// Coverage-guided byte mutation alone never gets past the checksums, and
// the loader's interesting decisions sit behind them. So the mutator is
// structured, the way an attacker edits a file: it splits the input into
// header, section table and sections, decodes the protobuf manifest's wire
// format into a tree of fields, and then sets a numeric field to a boundary
// value or to another field's value, replaces or drops a string, repeats
// or removes a field, edits a header or table field, truncates at a section
// boundary, flips bits of the manifest or mutates its bytes or the file's
// head; it then recomputes the checksums (nine times in ten), so that the
// variant reaches the checks that matter. It leaves the bytes of the
// weights and code sections alone (see mutateFile).
//
//===----------------------------------------------------------------------===//

#include "afm/Package/AFMBWriter.h"
#include "afm/afmb_format.h"
#include "afm/runtime.h"
#include "test/runtime/TestBinary.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size,
                                   size_t maxSize);

namespace {

using Bytes = std::vector<uint8_t>;

//===- The file under test ----------------------------------------------===//

/// The runtime loads from a path: each input goes to one file in a private
/// directory (tmpfs when there is one).
struct Scratch {
  Scratch() {
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    std::string pattern = std::string(base) + "/afm-afmb-fuzzer-XXXXXX";
    std::vector<char> dir(pattern.begin(), pattern.end());
    dir.push_back('\0');
    if (!mkdtemp(dir.data())) {
      perror("afm-afmb-fuzzer: mkdtemp");
      std::abort();
    }
    directory = dir.data();
    path = directory + "/input.afmb";
  }
  ~Scratch() {
    unlink(path.c_str());
    rmdir(directory.c_str());
  }
  std::string directory, path;
};

Scratch &scratch() {
  static Scratch instance;
  return instance;
}

/// A failed call must say why.
void expectMessage(const char *call) {
  const char *message = afm_last_error();
  if (!message || !*message) {
    fprintf(stderr, "afm-afmb-fuzzer: %s failed without a message\n", call);
    std::abort();
  }
}

//===- The .afmb layout -------------------------------------------------===//

uint64_t readLE(llvm::ArrayRef<uint8_t> file, size_t at, unsigned bytes) {
  uint64_t value = 0;
  for (unsigned i = 0; i < bytes && at + i < file.size(); ++i)
    value |= uint64_t(file[at + i]) << (8 * i);
  return value;
}

void writeLE(Bytes &file, size_t at, unsigned bytes, uint64_t value) {
  for (unsigned i = 0; i < bytes && at + i < file.size(); ++i)
    file[at + i] = uint8_t(value >> (8 * i));
}

struct Section {
  uint32_t kind = 0;
  uint64_t offset = 0, size = 0;
  size_t entry = 0; // offset of its table entry
};

/// The sections whose table entries lie inside `file`.
std::vector<Section> sections(llvm::ArrayRef<uint8_t> file) {
  std::vector<Section> result;
  if (file.size() < AFMB_HEADER_SIZE)
    return result;
  uint64_t table = readLE(file, AFMB_HEADER_TABLE_OFFSET, 8);
  uint64_t count = readLE(file, AFMB_HEADER_SECTION_COUNT, 4);
  for (uint64_t i = 0; i < count && i < AFMB_MAX_SECTIONS; ++i) {
    uint64_t entry = table + i * AFMB_SECTION_ENTRY_SIZE;
    if (table > file.size() || entry + AFMB_SECTION_ENTRY_SIZE > file.size())
      break;
    Section s;
    s.entry = entry;
    s.kind = uint32_t(readLE(file, entry + AFMB_SECTION_KIND, 4));
    s.offset = readLE(file, entry + AFMB_SECTION_OFFSET, 8);
    s.size = readLE(file, entry + AFMB_SECTION_SIZE, 8);
    result.push_back(s);
  }
  return result;
}

bool inside(const Section &s, size_t fileSize) {
  return s.offset <= fileSize && s.size <= fileSize - s.offset;
}

/// Recomputes every checksum whose bytes lie inside the file.
void reseal(Bytes &file) {
  for (const Section &s : sections(file))
    if (inside(s, file.size()))
      writeLE(file, s.entry + AFMB_SECTION_CHECKSUM, 8,
              afm::fnv1a64(llvm::ArrayRef(file).slice(s.offset, s.size)));
  if (file.size() >= AFMB_HEADER_SIZE)
    writeLE(file, AFMB_HEADER_CHECKSUM, 8,
            afm::fnv1a64(llvm::ArrayRef(file).take_front(AFMB_HEADER_CHECKSUM)));
}

/// The bytes of the first section of `kind`, if it lies inside the file.
std::optional<Bytes> sectionBytes(llvm::ArrayRef<uint8_t> file,
                                  uint32_t kind) {
  for (const Section &s : sections(file))
    if (s.kind == kind && inside(s, file.size()))
      return Bytes(file.begin() + s.offset, file.begin() + s.offset + s.size);
  return std::nullopt;
}

//===- The manifest's protobuf wire format ------------------------------===//

/// One field of a message; a length-delimited field that parses as a
/// message also holds its fields.
struct Field {
  uint32_t number = 0;
  uint8_t wireType = 0; // 0 varint, 1 fixed64, 2 bytes, 5 fixed32
  uint64_t value = 0;
  std::string bytes;
  std::vector<Field> children;
  bool isMessage = false;
};

bool readVarint(const std::string &in, size_t &at, uint64_t &value) {
  value = 0;
  for (unsigned shift = 0; shift < 64; shift += 7) {
    if (at >= in.size())
      return false;
    uint8_t byte = uint8_t(in[at++]);
    value |= uint64_t(byte & 0x7f) << shift;
    if (!(byte & 0x80))
      return true;
  }
  return false;
}

void writeVarint(std::string &out, uint64_t value) {
  do {
    uint8_t byte = value & 0x7f;
    value >>= 7;
    out.push_back(char(value ? byte | 0x80 : byte));
  } while (value);
}

std::optional<std::vector<Field>> parseMessage(const std::string &in,
                                               unsigned depth) {
  std::vector<Field> fields;
  size_t at = 0;
  while (at < in.size()) {
    uint64_t key;
    if (!readVarint(in, at, key) || (key >> 3) == 0 || (key >> 3) > 0xffff)
      return std::nullopt;
    Field f;
    f.number = uint32_t(key >> 3);
    f.wireType = uint8_t(key & 7);
    switch (f.wireType) {
    case 0:
      if (!readVarint(in, at, f.value))
        return std::nullopt;
      break;
    case 1:
    case 5: {
      size_t width = f.wireType == 1 ? 8 : 4;
      if (in.size() - at < width)
        return std::nullopt;
      for (size_t i = 0; i < width; ++i)
        f.value |= uint64_t(uint8_t(in[at + i])) << (8 * i);
      at += width;
      break;
    }
    case 2: {
      uint64_t length;
      if (!readVarint(in, at, length) || length > in.size() - at)
        return std::nullopt;
      f.bytes = in.substr(at, length);
      at += length;
      if (depth < 4 && !f.bytes.empty())
        if (auto children = parseMessage(f.bytes, depth + 1)) {
          f.children = std::move(*children);
          f.isMessage = true;
        }
      break;
    }
    default:
      return std::nullopt;
    }
    fields.push_back(std::move(f));
  }
  return fields;
}

std::string serialize(const std::vector<Field> &fields) {
  std::string out;
  for (const Field &f : fields) {
    writeVarint(out, (uint64_t(f.number) << 3) | f.wireType);
    switch (f.wireType) {
    case 0:
      writeVarint(out, f.value);
      break;
    case 1:
    case 5:
      for (unsigned i = 0; i < (f.wireType == 1 ? 8u : 4u); ++i)
        out.push_back(char(f.value >> (8 * i)));
      break;
    case 2: {
      std::string payload = f.isMessage ? serialize(f.children) : f.bytes;
      writeVarint(out, payload.size());
      out += payload;
      break;
    }
    }
  }
  return out;
}

/// Every field of the tree, depth first, with the list that holds it.
void collect(std::vector<Field> &fields,
             std::vector<std::pair<std::vector<Field> *, size_t>> &out) {
  for (size_t i = 0; i < fields.size(); ++i) {
    out.push_back({&fields, i});
    if (fields[i].isMessage)
      collect(fields[i].children, out);
  }
}

//===- Mutations ----------------------------------------------------------===//

const auto &kInteresting = afm::test::kBoundaryValues;

const char *const kStrings[] = {"",
                                "afm_prefill",
                                "afm_decode",
                                "afm_compiled_facts",
                                "malloc",
                                "f32",
                                "f16",
                                "i8",
                                "local",
                                "global",
                                "elf",
                                "macho",
                                "x86_64-unknown-linux-gnu",
                                "aarch64-unknown-linux-gnu",
                                "%s%n"};

/// Edits the manifest's field tree; false when it does not parse.
bool mutateManifest(std::string &manifest, std::mt19937_64 &rng) {
  auto parsed = parseMessage(manifest, 0);
  if (!parsed || parsed->empty())
    return false;
  std::vector<Field> fields = std::move(*parsed);
  std::vector<std::pair<std::vector<Field> *, size_t>> all;
  collect(fields, all);
  auto [list, index] = all[rng() % all.size()];
  Field &f = (*list)[index];
  switch (rng() % 6) {
  case 0: // a boundary value
    if (f.wireType == 2)
      return false;
    f.value = kInteresting[rng() % std::size(kInteresting)];
    break;
  case 1: { // another field's value
    auto [otherList, otherIndex] = all[rng() % all.size()];
    const Field &other = (*otherList)[otherIndex];
    if (f.wireType == 2 || other.wireType == 2)
      return false;
    f.value = other.value + (int64_t(rng() % 3) - 1);
    break;
  }
  case 2: // a string
    if (f.wireType != 2 || f.isMessage)
      return false;
    if (rng() % 4 == 0)
      f.bytes = std::string(rng() % 5000, 'x');
    else
      f.bytes = kStrings[rng() % std::size(kStrings)];
    break;
  case 3: // repeat it
    list->insert(list->begin() + index, Field(f));
    break;
  case 4: // drop it
    list->erase(list->begin() + index);
    break;
  case 5: // a message emptied
    if (!f.isMessage)
      return false;
    f.children.clear();
    break;
  }
  manifest = serialize(fields);
  return true;
}

/// `file` laid out again (writeAFMBSections) around its manifest as `edit`
/// changes it; false when the file lacks a section or `edit` fails.
template <typename Edit>
bool rebuildWithManifest(Bytes &file, size_t maxSize, Edit edit) {
  auto manifest = sectionBytes(file, AFMB_SECTION_KIND_MANIFEST);
  auto weights = sectionBytes(file, AFMB_SECTION_KIND_WEIGHTS);
  auto code = sectionBytes(file, AFMB_SECTION_KIND_CODE);
  if (!manifest || !weights || !code)
    return false;
  std::string text(manifest->begin(), manifest->end());
  if (!edit(text))
    return false;
  std::string out;
  llvm::raw_string_ostream os(out);
  afm::writeAFMBSections(
      os,
      llvm::ArrayRef(reinterpret_cast<const uint8_t *>(text.data()),
                     text.size()),
      *weights, *code);
  if (out.size() > maxSize)
    return false;
  file.assign(out.begin(), out.end());
  return true;
}

/// One structured mutation of `file`; false when none applied. The bytes
/// of the weights and code sections are left alone: the code is machine
/// code the process runs (whoever can rewrite it and reseal its checksum
/// can run anything; the loader checks its ELF structure, not what it
/// does), and the weights are numbers the code reads (the fake model even
/// reads its sizes there). Their placement, sizes and checksums are fair
/// game.
bool mutateFile(Bytes &file, size_t maxSize, std::mt19937_64 &rng) {
  std::vector<Section> table = sections(file);
  switch (rng() % 8) {
  case 0:
  case 1:
  case 2: // a manifest edit, the file laid out again around it
    return rebuildWithManifest(file, maxSize, [&](std::string &manifest) {
      return mutateManifest(manifest, rng);
    });
  case 3: { // a header field
    if (file.size() < AFMB_HEADER_SIZE)
      return false;
    static const std::pair<size_t, unsigned> kFields[] = {
        {AFMB_HEADER_VERSION_MAJOR, 2}, {AFMB_HEADER_VERSION_MINOR, 2},
        {AFMB_HEADER_HEADER_SIZE, 4},   {AFMB_HEADER_FILE_SIZE, 8},
        {AFMB_HEADER_TABLE_OFFSET, 8},  {AFMB_HEADER_SECTION_COUNT, 4},
        {AFMB_HEADER_FLAGS, 4},
        {AFMB_HEADER_CHECKSUM + 8, 8}}; // the first reserved bytes
    auto [at, bytes] = kFields[rng() % std::size(kFields)];
    writeLE(file, at, bytes, kInteresting[rng() % std::size(kInteresting)]);
    return true;
  }
  case 4: { // a section table field
    if (table.empty())
      return false;
    const Section &s = table[rng() % table.size()];
    static const std::pair<size_t, unsigned> kFields[] = {
        {AFMB_SECTION_KIND, 4},
        {AFMB_SECTION_ALIGNMENT, 4},
        {AFMB_SECTION_OFFSET, 8},
        {AFMB_SECTION_SIZE, 8}};
    auto [at, bytes] = kFields[rng() % std::size(kFields)];
    uint64_t value = rng() % 2
                         ? kInteresting[rng() % std::size(kInteresting)]
                         : table[rng() % table.size()].offset +
                               (int64_t(rng() % 3) - 1);
    writeLE(file, s.entry + at, bytes, value);
    return true;
  }
  case 5: { // truncated at a section boundary
    if (table.empty())
      return false;
    const Section &s = table[rng() % table.size()];
    uint64_t cut = (rng() % 2 ? s.offset : s.offset + s.size) +
                   (int64_t(rng() % 3) - 1);
    if (cut >= file.size())
      return false;
    file.resize(cut);
    return true;
  }
  case 6: { // bit flips in the manifest
    for (const Section &s : table)
      if (s.kind == AFMB_SECTION_KIND_MANIFEST && inside(s, file.size()) &&
          s.size) {
        for (unsigned flips = 1 + rng() % 3; flips; --flips)
          file[s.offset + rng() % s.size] ^= uint8_t(1u << (rng() % 8));
        return true;
      }
    return false;
  }
  default: { // libFuzzer's own byte mutations, of the manifest or the head
    if (rng() % 2) {
      size_t head = std::min<size_t>(file.size(), 4096);
      for (const Section &s : table)
        head = std::min<size_t>(head, s.offset);
      if (head == 0)
        return false;
      LLVMFuzzerMutate(file.data(), head, head);
      return true;
    }
    return rebuildWithManifest(file, maxSize, [](std::string &manifest) {
      size_t size = manifest.size();
      manifest.resize(size + 256);
      manifest.resize(LLVMFuzzerMutate(
          reinterpret_cast<uint8_t *>(manifest.data()), size, manifest.size()));
      return true;
    });
  }
  }
}

} // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned seed) {
  std::mt19937_64 rng(seed);
  Bytes file(data, data + size);
  bool mutated = false;
  for (unsigned attempt = 0; attempt < 16 && !mutated; ++attempt)
    mutated = mutateFile(file, maxSize, rng);
  if (!mutated)
    return LLVMFuzzerMutate(data, size, maxSize);
  if (rng() % 10)
    reseal(file);
  if (file.size() > maxSize)
    file.resize(maxSize);
  memcpy(data, file.data(), file.size());
  return file.size();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string &path = scratch().path;
  FILE *out = fopen(path.c_str(), "wb");
  if (!out || fwrite(data, 1, size, out) != size || fclose(out) != 0) {
    perror("afm-afmb-fuzzer: writing the input");
    std::abort();
  }

  afm_model *model = nullptr;
  if (afm_model_load(path.c_str(), 0, &model) != AFM_OK) {
    expectMessage("afm_model_load");
    return 0;
  }
  afm_session_options options = {};
  options.num_threads = 1;
  afm_session *session = nullptr;
  if (afm_session_create(model, &options, &session) != AFM_OK) {
    expectMessage("afm_session_create");
    afm_model_free(model);
    return 0;
  }
  const int32_t prompt[3] = {1, 2, 3};
  int32_t token = 0;
  bool ok = afm_session_prefill(session, prompt, 3) == AFM_OK &&
            afm_session_argmax(session, &token) == AFM_OK;
  for (int step = 0; ok && step < 2; ++step)
    ok = afm_session_decode(session, token) == AFM_OK &&
         afm_session_argmax(session, &token) == AFM_OK;
  if (!ok)
    expectMessage("a session call");
  afm_session_free(session);
  afm_model_free(model);
  return 0;
}
