//===- TestBinary.h - .afmb files for the runtime tests ---------*- C++ -*-===//
//
// Builds .afmb files around the fake model (fake_model.c) and breaks them
// in controlled ways. Shared by afm-pack-test-binary (lit tests) and
// AFMRuntimeTests (GoogleTest).
//
//===----------------------------------------------------------------------===//

#ifndef AFM_TEST_RUNTIME_TESTBINARY_H
#define AFM_TEST_RUNTIME_TESTBINARY_H

#include "runtime/proto/manifest.pb.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include "afm/kernel_abi.h"

#include <cstdint>
#include <string>
#include <vector>

namespace afm::test {

/// Values an attacker writes into numeric fields: small counts, sizes
/// around the fake model's, page and alignment sizes, and the edges of
/// the signed and unsigned 32- and 64-bit ranges. Shared by the mutation
/// test and the loader fuzzer's mutator.
inline constexpr uint64_t kBoundaryValues[] = {
    0, 1, 2, 3, 4, 7, 8, 63, 64, 100, 128, 255, 256, 4095, 4096, 65536,
    0x7fffffffull, 0x80000000ull, 0xffffffffull, 0x100000000ull,
    0x7fffffffffffffffull, 0x8000000000000000ull, 0xffffffffffffffffull};

/// The magic fake_model.c expects at the start of its weights.
constexpr uint32_t kFakeModelMagic = 0x4b414641u;
/// Bytes of the fake model's "fake.config" tensor (u32 magic, vocab,
/// context, prefill max_tokens, then zeros).
constexpr uint64_t kFakeConfigBytes = 64;

/// What a fake-model .afmb says about itself. The defaults describe a file
/// the host runtime loads and runs.
struct FakeModelOptions {
  uint32_t vocab = 100;
  uint32_t context = 64;
  uint32_t prefillMaxTokens = 4;
  uint32_t decodeMaxTokens = 1;
  uint32_t abiVersion;      // AFM_KERNEL_ABI_VERSION
  std::string triple;       // the host's
  std::string objectFormat; // the host's: "elf" or "macho"
  std::string targetName = "fake-host";
  std::string prefillSymbol = "afm_prefill";
  std::string decodeSymbol = "afm_decode";
  /// Size of the weights section, at least kFakeConfigBytes.
  uint64_t weightsBytes = 128;

  FakeModelOptions();
};

/// The manifest of the fake model: its entry points, one tensor (the
/// config), one KV buffer of `context` int32 slots filling the arena.
manifest::Manifest makeFakeManifest(const FakeModelOptions &options);

/// The weights section: the config the fake model reads, then a byte
/// pattern up to `weightsBytes`.
std::vector<uint8_t> makeFakeWeights(const FakeModelOptions &options);

/// What the fake model's code says it was compiled for (kernel_abi.h's
/// afm_model_facts): the sizes `options` describe, as its manifest does.
afm_model_facts makeFakeFacts(const FakeModelOptions &options);

/// `code` (an ELF shared library) with the afm_compiled_facts it exports
/// overwritten by `facts`: the fake model "compiled" for those sizes. The
/// bytes are returned unchanged when the library exports no such symbol.
std::vector<uint8_t> withFacts(llvm::ArrayRef<uint8_t> code,
                               const afm_model_facts &facts);

/// u64 words of the fake model's `afm_adapter_slots` (kernel_abi.h): a
/// count, then offset, rows and cols of up to 4 slots; all zero (no slots)
/// unless patched.
constexpr size_t kFakeAdapterSlotWords = 13;

/// `code` with its afm_adapter_slots overwritten by `table`: the fake
/// model "compiled" with those adapter slots.
std::vector<uint8_t> withAdapterSlots(llvm::ArrayRef<uint8_t> code,
                                      llvm::ArrayRef<uint64_t> table);

/// `code` with its afm_track_count overwritten by `tracks`.
std::vector<uint8_t> withTrackCount(llvm::ArrayRef<uint8_t> code,
                                    uint64_t tracks);

/// A whole .afmb of `manifest`, `weights` and `code`, and a tokenizer
/// section when `tokenizer` is not empty.
std::vector<uint8_t> packAFMB(const manifest::Manifest &manifest,
                              llvm::ArrayRef<uint8_t> weights,
                              llvm::ArrayRef<uint8_t> code,
                              llvm::ArrayRef<uint8_t> tokenizer = {});

/// Reads a whole file.
llvm::Expected<std::vector<uint8_t>> readFile(const std::string &path);
llvm::Error writeFile(const std::string &path, llvm::ArrayRef<uint8_t> bytes);

//===- Edits of a packed file -------------------------------------------===//

/// Rewrites the format version and re-seals the header checksum.
void setVersion(std::vector<uint8_t> &file, uint16_t major, uint16_t minor);
/// Writes a little-endian header field (an AFMB_HEADER_* offset) of
/// `bytes` bytes and re-seals the header checksum.
void setHeaderField(std::vector<uint8_t> &file, size_t field, unsigned bytes,
                    uint64_t value);
/// Reads / writes a little-endian field (AFMB_SECTION_*) of `bytes` bytes
/// of section table entry `index`. The table carries no checksum.
uint64_t getSectionField(llvm::ArrayRef<uint8_t> file, unsigned index,
                         size_t field, unsigned bytes);
void setSectionField(std::vector<uint8_t> &file, unsigned index, size_t field,
                     unsigned bytes, uint64_t value);
/// Sets a section's checksum to what its bytes hash to.
void resealSection(std::vector<uint8_t> &file, unsigned index);

} // namespace afm::test

#endif // AFM_TEST_RUNTIME_TESTBINARY_H
