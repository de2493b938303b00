//===- RuntimeLoadErrorsTest.cpp - every way afm_model_load refuses -------===//
//
// Each test breaks one thing in an otherwise good fake-model file and checks
// the status and the key phrase of the message. The writer places the
// sections as manifest (0), weights (1), code (2).
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"

#include "afm/afmb_format.h"
#include "afm/kernel_abi.h"

#include "llvm/Support/FileSystem.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>

using namespace afm::test;
using afm::manifest::Manifest;

namespace {

enum : unsigned { kManifest = 0, kWeights = 1, kCode = 2 };

uint64_t offsetOf(const std::vector<uint8_t> &file, unsigned section) {
  return getSectionField(file, section, AFMB_SECTION_OFFSET, 8);
}
uint64_t sizeOf(const std::vector<uint8_t> &file, unsigned section) {
  return getSectionField(file, section, AFMB_SECTION_SIZE, 8);
}

using RuntimeLoad = RuntimeTest;

//===- Files that are not .afmb files at all -----------------------------===//

TEST_F(RuntimeLoad, MissingFile) {
  afm_model *model = nullptr;
  std::string path = dir + "/absent.afmb";
  EXPECT_AFM_ERROR(afm_model_load(path.c_str(), 0, &model), AFM_ERR_IO,
                   "absent.afmb: cannot open: No such file or directory");
  EXPECT_EQ(model, nullptr);
}

TEST_F(RuntimeLoad, Directory) {
  afm_model *model = nullptr;
  EXPECT_AFM_ERROR(afm_model_load(dir.c_str(), 0, &model), AFM_ERR_IO,
                   "not a regular file (it is a directory)");
  EXPECT_EQ(model, nullptr);
}

TEST_F(RuntimeLoad, EmptyFile) {
  EXPECT_AFM_ERROR(load({}), AFM_ERR_FORMAT,
                   "the file is 0 bytes, smaller than the 64-byte .afmb "
                   "header (empty file)");
}

TEST_F(RuntimeLoad, BadMagic) {
  std::vector<uint8_t> file = pack();
  file[0] = 0x7f;
  EXPECT_AFM_ERROR(load(file), AFM_ERR_FORMAT,
                   "not an .afmb file: bad magic 7f 46 4d 42");
}

//===- Truncation ---------------------------------------------------------===//

TEST_F(RuntimeLoad, TruncatedInsideTheHeader) {
  std::vector<uint8_t> file = pack();
  file.resize(40);
  EXPECT_AFM_ERROR(load(file), AFM_ERR_FORMAT,
                   "the file is 40 bytes, smaller than the 64-byte");
}

TEST_F(RuntimeLoad, TruncatedInsideTheSectionTable) {
  std::vector<uint8_t> file = pack();
  uint64_t full = file.size();
  file.resize(AFMB_HEADER_SIZE + 40);
  EXPECT_AFM_ERROR(load(file), AFM_ERR_FORMAT,
                   "the file is 104 bytes but its header says " +
                       std::to_string(full) +
                       ": truncated inside the section table");
}

TEST_F(RuntimeLoad, TruncatedInsideEachSection) {
  const std::vector<uint8_t> good = pack();
  for (unsigned section : {kManifest, kWeights, kCode}) {
    std::vector<uint8_t> file = good;
    file.resize(offsetOf(good, section) + sizeOf(good, section) / 2);
    const char *names[] = {"manifest", "weights", "code"};
    EXPECT_AFM_ERROR(load(file), AFM_ERR_FORMAT,
                     "truncated inside section " + std::to_string(section) +
                         " (" + names[section] + ")");
  }
}

TEST_F(RuntimeLoad, TrailingBytes) {
  std::vector<uint8_t> file = pack();
  file.push_back(0);
  EXPECT_AFM_ERROR(load(file), AFM_ERR_FORMAT,
                   "trailing bytes after the last section");
}

//===- Header -------------------------------------------------------------===//

TEST_F(RuntimeLoad, OtherMajorVersion) {
  std::vector<uint8_t> file = pack();
  setVersion(file, 2, 0);
  EXPECT_AFM_ERROR(load(file), AFM_ERR_VERSION,
                   ".afmb format version 2.0; this runtime reads version 1.x");
  setVersion(file, 0, 9);
  EXPECT_AFM_ERROR(load(file), AFM_ERR_VERSION, "format version 0.9");
}

TEST_F(RuntimeLoad, HeaderChecksum) {
  std::vector<uint8_t> file = pack();
  file[AFMB_HEADER_TABLE_OFFSET] ^= 0x08; // still a multiple of 8
  EXPECT_AFM_ERROR(load(file), AFM_ERR_FORMAT, "header checksum mismatch");
}

TEST_F(RuntimeLoad, HeaderFlagsAndReservedBytes) {
  std::vector<uint8_t> file = pack();
  setHeaderField(file, AFMB_HEADER_FLAGS, 4, 0x10);
  EXPECT_AFM_ERROR(load(file), AFM_ERR_FORMAT,
                   "header flags are 0x00000010; this runtime knows no flags");
  for (int byte : {48, 63}) {
    std::vector<uint8_t> reserved = pack();
    reserved[byte] = 0x5a; // not covered by the header checksum
    EXPECT_AFM_ERROR(load(reserved), AFM_ERR_FORMAT,
                     "reserved header byte " + std::to_string(byte) +
                         " is 0x5a, not 0");
  }
}

TEST_F(RuntimeLoad, HeaderSize) {
  std::vector<uint8_t> file = pack();
  setHeaderField(file, AFMB_HEADER_HEADER_SIZE, 4, 72);
  EXPECT_AFM_ERROR(load(file), AFM_ERR_FORMAT,
                   "header_size is 72, expected 64");
}

TEST_F(RuntimeLoad, SectionCount) {
  for (uint64_t count : {0, 65}) {
    std::vector<uint8_t> file = pack();
    setHeaderField(file, AFMB_HEADER_SECTION_COUNT, 4, count);
    EXPECT_AFM_ERROR(load(file), AFM_ERR_FORMAT,
                     "section_count is " + std::to_string(count) +
                         ", expected 1 to 64");
  }
}

TEST_F(RuntimeLoad, SectionTableOffset) {
  std::vector<uint8_t> file = pack();
  setHeaderField(file, AFMB_HEADER_TABLE_OFFSET, 8, 68);
  EXPECT_AFM_ERROR(load(file), AFM_ERR_FORMAT,
                   "section table offset 68 is not a multiple of 8");
  setHeaderField(file, AFMB_HEADER_TABLE_OFFSET, 8, file.size() - 64);
  EXPECT_AFM_ERROR(load(file), AFM_ERR_FORMAT,
                   "the section table (3 entries at offset " +
                       std::to_string(file.size() - 64) +
                       ") ends past the file size");
  setHeaderField(file, AFMB_HEADER_TABLE_OFFSET, 8, UINT64_MAX - 7);
  EXPECT_AFM_ERROR(load(file), AFM_ERR_FORMAT, "ends past the file size");
}

//===- Section table ------------------------------------------------------===//

TEST_F(RuntimeLoad, SectionOutOfBounds) {
  std::vector<uint8_t> file = pack();
  uint64_t end = offsetOf(file, kCode) + sizeOf(file, kCode) + 1;
  setSectionField(file, kCode, AFMB_SECTION_SIZE, 8, sizeOf(file, kCode) + 1);
  EXPECT_AFM_ERROR(load(file), AFM_ERR_FORMAT,
                   "model.afmb: section 2 (code) ends at " +
                       std::to_string(end) + " past the file size " +
                       std::to_string(file.size()));
}

TEST_F(RuntimeLoad, SectionEndOverflows) {
  std::vector<uint8_t> file = pack();
  setSectionField(file, kWeights, AFMB_SECTION_SIZE, 8, UINT64_MAX);
  EXPECT_AFM_ERROR(load(file), AFM_ERR_FORMAT,
                   "section 1 (weights) offset 4096 + size "
                   "18446744073709551615 overflows");
}

TEST_F(RuntimeLoad, OverlappingSections) {
  // The weights are [4096, 4224); move the code onto them.
  std::vector<uint8_t> file = pack();
  setSectionField(file, kCode, AFMB_SECTION_OFFSET, 8, 4096);
  EXPECT_AFM_ERROR(load(file), AFM_ERR_FORMAT,
                   "section 2 (code) [4096, " +
                       std::to_string(4096 + sizeOf(file, kCode)) +
                       ") overlaps section 1 (weights) [4096, 4224)");
}

TEST_F(RuntimeLoad, SectionOverlappingTheTable) {
  std::vector<uint8_t> file = pack();
  setSectionField(file, kManifest, AFMB_SECTION_OFFSET, 8, AFMB_HEADER_SIZE);
  EXPECT_AFM_ERROR(load(file), AFM_ERR_FORMAT,
                   "section 0 (manifest) [64, " +
                       std::to_string(64 + sizeOf(file, kManifest)) +
                       ") overlaps the section table [64, 160)");
}

TEST_F(RuntimeLoad, DuplicateSectionKind) {
  std::vector<uint8_t> file = pack();
  setSectionField(file, kCode, AFMB_SECTION_KIND, 4,
                  AFMB_SECTION_KIND_MANIFEST);
  EXPECT_AFM_ERROR(load(file), AFM_ERR_FORMAT,
                   "sections 0 and 2 are both of kind 1 (manifest)");
}

TEST_F(RuntimeLoad, MissingSectionKind) {
  std::vector<uint8_t> file = pack();
  setHeaderField(file, AFMB_HEADER_SECTION_COUNT, 4, 2); // drop the code
  EXPECT_AFM_ERROR(load(file), AFM_ERR_FORMAT, "no code section (kind 3)");
}

TEST_F(RuntimeLoad, UnknownSectionKind) {
  std::vector<uint8_t> file = pack();
  setSectionField(file, kWeights, AFMB_SECTION_KIND, 4, 7);
  EXPECT_AFM_ERROR(load(file), AFM_ERR_FORMAT, "section 1 has unknown kind 7");
}

TEST_F(RuntimeLoad, SectionAlignment) {
  std::vector<uint8_t> file = pack();
  setSectionField(file, kCode, AFMB_SECTION_ALIGNMENT, 4, 48);
  EXPECT_AFM_ERROR(load(file), AFM_ERR_FORMAT,
                   "section 2 (code) alignment 48 is not a power of two");
  setSectionField(file, kCode, AFMB_SECTION_ALIGNMENT, 4, 0);
  EXPECT_AFM_ERROR(load(file), AFM_ERR_FORMAT,
                   "section 2 (code) alignment 0 is not a power of two");

  file = pack();
  uint64_t manifest = offsetOf(file, kManifest);
  setSectionField(file, kManifest, AFMB_SECTION_ALIGNMENT, 4, 4096);
  EXPECT_AFM_ERROR(load(file), AFM_ERR_FORMAT,
                   "section 0 (manifest) offset " + std::to_string(manifest) +
                       " is not a multiple of its alignment 4096");
}

TEST_F(RuntimeLoad, WeightsNotPageAligned) {
  std::vector<uint8_t> file = pack();
  setSectionField(file, kWeights, AFMB_SECTION_ALIGNMENT, 4, 64);
  setSectionField(file, kWeights, AFMB_SECTION_OFFSET, 8,
                  offsetOf(file, kWeights) - 64);
  EXPECT_AFM_ERROR(load(file), AFM_ERR_FORMAT,
                   "section 1 (weights) offset 4032 is not 4096-byte aligned");
}

TEST_F(RuntimeLoad, ManifestChecksum) {
  std::vector<uint8_t> file = pack();
  file[offsetOf(file, kManifest) + 3] ^= 0x01;
  EXPECT_AFM_ERROR(load(file), AFM_ERR_FORMAT,
                   "section 0 (manifest) checksum mismatch");
}

TEST_F(RuntimeLoad, CodeChecksum) {
  std::vector<uint8_t> file = pack();
  file[offsetOf(file, kCode) + sizeOf(file, kCode) / 2] ^= 0x01;
  EXPECT_AFM_ERROR(load(file), AFM_ERR_FORMAT,
                   "section 2 (code) checksum mismatch");
}

//===- Manifest -----------------------------------------------------------===//

TEST_F(RuntimeLoad, ManifestIsNotAProtobuf) {
  std::vector<uint8_t> file = pack();
  // Field 1 with wire type 7, which does not exist.
  file[offsetOf(file, kManifest)] = 0x0f;
  resealSection(file, kManifest);
  EXPECT_AFM_ERROR(load(file), AFM_ERR_FORMAT,
                   "is not a valid afm.manifest.Manifest protobuf");
}

TEST_F(RuntimeLoad, KernelABIVersion) {
  FakeModelOptions options;
  options.abiVersion = AFM_KERNEL_ABI_VERSION + 1;
  EXPECT_AFM_ERROR(load(pack(options)), AFM_ERR_VERSION,
                   "compiled for kernel ABI version " +
                       std::to_string(AFM_KERNEL_ABI_VERSION + 1) +
                       "; this runtime implements version " +
                       std::to_string(AFM_KERNEL_ABI_VERSION));
}

TEST_F(RuntimeLoad, TargetArchitecture) {
#if defined(__aarch64__)
  const char *other = "x86_64", *host = "aarch64";
#else
  const char *other = "aarch64", *host = "x86_64";
#endif
  FakeModelOptions options;
  options.triple = std::string(other) + "-unknown-linux-gnu";
  EXPECT_AFM_ERROR(load(pack(options)), AFM_ERR_TARGET,
                   std::string("the code is for ") + other + " (triple '" +
                       options.triple + "'), but this process runs on " + host);
  options.triple = "";
  EXPECT_AFM_ERROR(load(pack(options)), AFM_ERR_TARGET,
                   "target triple is empty");
}

TEST_F(RuntimeLoad, ObjectFormat) {
  FakeModelOptions options;
  options.objectFormat = options.objectFormat == "elf" ? "macho" : "elf";
  EXPECT_AFM_ERROR(load(pack(options)), AFM_ERR_TARGET,
                   "the code is a '" + options.objectFormat +
                       "' object, but this platform loads");
}

TEST_F(RuntimeLoad, MissingSubmessages) {
  auto noTarget = [](Manifest &m) { m.clear_target(); };
  auto noModel = [](Manifest &m) { m.clear_model(); };
  EXPECT_AFM_ERROR(load(pack({}, noTarget)), AFM_ERR_FORMAT,
                   "the manifest has no target");
  EXPECT_AFM_ERROR(load(pack({}, noModel)), AFM_ERR_FORMAT,
                   "the manifest has no model info");
}

TEST_F(RuntimeLoad, ModelShape) {
  FakeModelOptions options;
  options.vocab = 0;
  EXPECT_AFM_ERROR(load(pack(options)), AFM_ERR_FORMAT,
                   "model vocab_size is 0, expected 1 to 2147483647");
  options = {};
  options.context = 0;
  EXPECT_AFM_ERROR(load(pack(options)), AFM_ERR_FORMAT,
                   "model context_length is 0, expected 1 to 2147483647");
  auto hugeVocab = [](Manifest &m) {
    m.mutable_model()->set_vocab_size(1u << 31);
  };
  EXPECT_AFM_ERROR(load(pack({}, hugeVocab)), AFM_ERR_FORMAT,
                   "model vocab_size is 2147483648");
}

TEST_F(RuntimeLoad, MissingEntryPoint) {
  auto noDecode = [](Manifest &m) { m.mutable_entry_points()->RemoveLast(); };
  auto noEntries = [](Manifest &m) { m.clear_entry_points(); };
  EXPECT_AFM_ERROR(load(pack({}, noDecode)), AFM_ERR_FORMAT,
                   "the manifest has no DECODE entry point");
  EXPECT_AFM_ERROR(load(pack({}, noEntries)), AFM_ERR_FORMAT,
                   "the manifest has no PREFILL entry point");
}

TEST_F(RuntimeLoad, DuplicateEntryPoint) {
  auto twoPrefills = [](Manifest &m) {
    *m.add_entry_points() = m.entry_points(0);
  };
  EXPECT_AFM_ERROR(load(pack({}, twoPrefills)), AFM_ERR_FORMAT,
                   "entry points 0 and 2 are both PREFILL; expected exactly "
                   "one");
}

TEST_F(RuntimeLoad, BadEntryPoints) {
  FakeModelOptions options;
  options.decodeSymbol = "";
  EXPECT_AFM_ERROR(load(pack(options)), AFM_ERR_FORMAT,
                   "entry point 1 (DECODE) has an empty symbol");
  options = {};
  options.prefillMaxTokens = 0;
  EXPECT_AFM_ERROR(load(pack(options)), AFM_ERR_FORMAT,
                   "the PREFILL entry point 'afm_prefill' has max_tokens 0");
  options = {};
  options.decodeMaxTokens = 2;
  EXPECT_AFM_ERROR(load(pack(options)), AFM_ERR_FORMAT,
                   "the DECODE entry point 'afm_decode' has max_tokens 2, "
                   "expected 1");
  auto unknownKind = [](Manifest &m) {
    m.mutable_entry_points(1)->set_kind(
        static_cast<afm::manifest::EntryPoint_Kind>(5));
  };
  EXPECT_AFM_ERROR(load(pack({}, unknownKind)), AFM_ERR_FORMAT,
                   "entry point 1 has unknown kind 5");
  // The optional VERIFY entry: at most one, 2 to 16 tokens.
  auto verifyOf = [](uint32_t maxTokens) {
    return [maxTokens](Manifest &m) {
      auto *verify = m.add_entry_points();
      verify->set_kind(afm::manifest::EntryPoint::VERIFY);
      verify->set_symbol("afm_verify");
      verify->set_max_tokens(maxTokens);
    };
  };
  EXPECT_AFM_ERROR(load(pack({}, verifyOf(1))), AFM_ERR_FORMAT,
                   "the VERIFY entry point has max_tokens 1, expected 2 to 16");
  EXPECT_AFM_ERROR(load(pack({}, verifyOf(17))), AFM_ERR_FORMAT,
                   "the VERIFY entry point has max_tokens 17, expected 2 to "
                   "16");
  auto twoVerify = [&](Manifest &m) {
    verifyOf(4)(m);
    verifyOf(4)(m);
  };
  EXPECT_AFM_ERROR(load(pack({}, twoVerify)), AFM_ERR_FORMAT,
                   "entry points 2 and 3 are both VERIFY");
  auto misnamed = [&](Manifest &m) {
    verifyOf(4)(m);
    m.mutable_entry_points(2)->set_symbol("afm_decode");
  };
  EXPECT_AFM_ERROR(load(pack({}, misnamed)), AFM_ERR_FORMAT,
                   "entry point 2 (VERIFY) is named 'afm_decode'; the kernel "
                   "ABI names it 'afm_verify'");
}

TEST_F(RuntimeLoad, TensorOutOfRange) {
  // The weights section is 128 bytes.
  auto pastTheEnd = [](Manifest &m) {
    m.mutable_tensors(0)->set_offset(64);
    m.mutable_tensors(0)->set_size(65);
  };
  auto endOverflows = [](Manifest &m) {
    m.mutable_tensors(0)->set_offset(64);
    m.mutable_tensors(0)->set_size(UINT64_MAX);
  };
  EXPECT_AFM_ERROR(load(pack({}, pastTheEnd)), AFM_ERR_FORMAT,
                   "tensor 0 ('fake.config') at offset 64 of 65 bytes ends "
                   "past the weights section size 128");
  EXPECT_AFM_ERROR(load(pack({}, endOverflows)), AFM_ERR_FORMAT,
                   "ends past the weights section size 128");
}

TEST_F(RuntimeLoad, TensorMisaligned) {
  auto misaligned = [](Manifest &m) { m.mutable_tensors(0)->set_offset(32); };
  EXPECT_AFM_ERROR(load(pack({}, misaligned)), AFM_ERR_FORMAT,
                   "tensor 0 ('fake.config') offset 32 is not 64-byte "
                   "aligned");
}

TEST_F(RuntimeLoad, NamesFromTheFileAreEscapedInMessages) {
  auto evilName = [](Manifest &m) {
    m.mutable_tensors(0)->set_name("evil\x1b[2J\\name\xff");
    m.mutable_tensors(0)->set_offset(32);
  };
  EXPECT_AFM_ERROR(load(pack({}, evilName)), AFM_ERR_FORMAT,
                   "tensor 0 ('evil\\x1b[2J\\x5cname\\xff') offset 32");
}

TEST_F(RuntimeLoad, KVBufferOutOfTheArena) {
  // The arena is 64 positions * 4 bytes.
  auto pastTheArena = [](Manifest &m) {
    afm::manifest::KVBuffer *buffer = m.mutable_kv_cache()->add_buffers();
    buffer->set_layer(3);
    buffer->set_offset(128);
    buffer->set_bytes(129);
  };
  EXPECT_AFM_ERROR(load(pack({}, pastTheArena)), AFM_ERR_FORMAT,
                   "KV buffer 1 (layer 3) at offset 128 of 129 bytes ends "
                   "past the arena of 256 bytes");
}

TEST_F(RuntimeLoad, KVScalesOutOfTheArena) {
  // An i8 buffer whose codes fit but whose scales run past the arena.
  auto scalesPastTheArena = [](Manifest &m) {
    afm::manifest::KVBuffer *buffer = m.mutable_kv_cache()->add_buffers();
    buffer->set_layer(3);
    buffer->set_dtype("i8");
    buffer->set_offset(0);
    buffer->set_bytes(128);
    buffer->set_scales_offset(192);
    buffer->set_scales_bytes(65);
  };
  EXPECT_AFM_ERROR(load(pack({}, scalesPastTheArena)), AFM_ERR_FORMAT,
                   "KV buffer 1 (layer 3) has scales at offset 192 of 65 "
                   "bytes past the arena of 256 bytes");
}

TEST_F(RuntimeLoad, KVStateOutOfTheArenaOrBesideBuffers) {
  // A graph's state: the bytes the session keeps, inside the arena and
  // only when no buffer describes the caches.
  auto pastTheArena = [](Manifest &m) {
    m.mutable_kv_cache()->clear_buffers();
    m.mutable_kv_cache()->set_state_bytes(257);
  };
  EXPECT_AFM_ERROR(load(pack({}, pastTheArena)), AFM_ERR_FORMAT,
                   "the KV layout's state of 257 bytes must go without "
                   "buffers and inside the arena of 256 bytes");
  auto besideBuffers = [](Manifest &m) {
    m.mutable_kv_cache()->set_state_bytes(128);
  };
  EXPECT_AFM_ERROR(load(pack({}, besideBuffers)), AFM_ERR_FORMAT,
                   "the KV layout's state of 128 bytes must go without "
                   "buffers and inside the arena of 256 bytes");
}

//===- Code ---------------------------------------------------------------===//

TEST_F(RuntimeLoad, CodeThatIsNotASharedLibrary) {
  Manifest m = makeFakeManifest({});
  std::string text = "this is not a shared library";
  std::vector<uint8_t> code(text.begin(), text.end());
  EXPECT_AFM_ERROR(load(packAFMB(m, makeFakeWeights({}), code)), AFM_ERR_CODE,
                   "the code section is not an ELF shared library (no ELF "
                   "magic)");
}

// A code section cut short with its checksum recomputed: dlopen would map
// the missing pages and the first access would be a SIGBUS.
TEST_F(RuntimeLoad, CodeSectionShorterThanItsELF) {
  FakeModelOptions options;
  std::vector<uint8_t> code =
      withFacts(fakeCode(), makeFakeFacts(options));
  for (size_t keep : {size_t(16), size_t(200), code.size() / 2,
                      code.size() - 1}) {
    SCOPED_TRACE("cut to " + std::to_string(keep) + " bytes");
    std::vector<uint8_t> cut(code.begin(), code.begin() + keep);
    EXPECT_AFM_ERROR(
        load(packAFMB(makeFakeManifest(options), makeFakeWeights(options),
                      cut)),
        AFM_ERR_CODE, "the code");
  }
}

//===- The manifest against what the code was compiled for ---------------===//

// Each field the runtime sizes buffers or checks arguments by, edited in
// the manifest alone (the checksums are recomputed by the packer): the
// code's afm_compiled_facts disagree, and the load fails naming both.
TEST_F(RuntimeLoad, ManifestDisagreesWithTheCode) {
  struct Case {
    const char *expected;
    std::function<void(Manifest &)> edit;
  };
  const Case cases[] = {
      {"the manifest's vocab_size is 16, but the code was compiled for 100",
       [](Manifest &m) { m.mutable_model()->set_vocab_size(16); }},
      {"the manifest's context_length is 65, but the code was compiled for "
       "64",
       [](Manifest &m) { m.mutable_model()->set_context_length(65); }},
      {"the manifest's PREFILL max_tokens is 3, but the code was compiled "
       "for 4",
       [](Manifest &m) { m.mutable_entry_points(0)->set_max_tokens(3); }},
      {"the manifest's kv_cache.arena_bytes is 4096, but the code was "
       "compiled for 256",
       [](Manifest &m) { m.mutable_kv_cache()->set_arena_bytes(4096); }},
      // A VERIFY entry the code was not built with: its logits would
      // overflow the buffer the runtime sizes from the manifest.
      {"the manifest's VERIFY max_tokens (0: no VERIFY entry) is 4, but the "
       "code was compiled for 0",
       [](Manifest &m) {
         auto *verify = m.add_entry_points();
         verify->set_kind(afm::manifest::EntryPoint::VERIFY);
         verify->set_symbol("afm_verify");
         verify->set_max_tokens(4);
       }},
  };
  for (const Case &c : cases)
    EXPECT_AFM_ERROR(load(pack({}, c.edit)), AFM_ERR_FORMAT, c.expected);
}

TEST_F(RuntimeLoad, WeightsShorterThanTheCodeReads) {
  FakeModelOptions options;
  afm_model_facts facts = makeFakeFacts(options);
  facts.weights_bytes = 1 << 20;
  EXPECT_AFM_ERROR(load(packAFMB(makeFakeManifest(options),
                                 makeFakeWeights(options),
                                 withFacts(fakeCode(), facts))),
                   AFM_ERR_FORMAT,
                   "the weights section has 128 bytes, but the code reads "
                   "1048576");
}

TEST_F(RuntimeLoad, FactsOfAnotherABI) {
  FakeModelOptions options;
  afm_model_facts facts = makeFakeFacts(options);
  facts.abi_version = AFM_KERNEL_ABI_VERSION + 7;
  EXPECT_AFM_ERROR(load(packAFMB(makeFakeManifest(options),
                                 makeFakeWeights(options),
                                 withFacts(fakeCode(), facts))),
                   AFM_ERR_CODE, "afm_compiled_facts is for kernel ABI");
}

TEST_F(RuntimeLoad, EntryNamedOtherThanTheABINamesIt) {
  // Another name would run other code: the decode entry for prefill, or a
  // C library function found through the code's dependencies.
  for (const char *symbol : {"afm_decode", "malloc", "afm_compiled_facts"}) {
    FakeModelOptions options;
    options.prefillSymbol = symbol;
    EXPECT_AFM_ERROR(load(pack(options)), AFM_ERR_FORMAT,
                     std::string("entry point 0 (PREFILL) is named '") +
                         symbol + "'; the kernel ABI names it 'afm_prefill'");
  }
}

TEST_F(RuntimeLoad, MissingSymbol) {
  // The code's dynamic symbol table names "afm_decodX" instead.
  FakeModelOptions options;
  std::vector<uint8_t> code = withFacts(fakeCode(), makeFakeFacts(options));
  std::string name("afm_decode\0", 11);
  auto at = std::search(code.begin(), code.end(), name.begin(), name.end());
  ASSERT_NE(at, code.end());
  at[9] = 'X';
  EXPECT_AFM_ERROR(load(packAFMB(makeFakeManifest(options),
                                 makeFakeWeights(options), code)),
                   AFM_ERR_CODE,
                   "the code has no symbol 'afm_decode' (the DECODE entry "
                   "point)");
}

} // namespace
