//===- RuntimeAdapterTest.cpp - adapter slots and adapter files -----------===//
//
// The fake model "compiled" with two adapter slots after its KV buffer
// (its code's afm_adapter_slots patched like its facts): the manifest's
// slot table is checked against the arena and against the code, and
// adapter files against the model they were compiled for. What the slots
// do to the logits is checked end to end (test/e2e/lora-adapters.test).
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"

#include "afm/Package/AFMBWriter.h"
#include "afm/Package/AdapterFile.h"
#include "afm/adapter_format.h"

#include "llvm/Support/Endian.h"

#include <cmath>
#include <limits>

using namespace afm;
using namespace afm::test;

namespace {
struct Slot {
  std::string name;
  uint64_t offset;
  uint32_t rows, cols;
};

/// The fake model's arena: its 256-byte KV buffer, then room for slots.
constexpr uint64_t kArenaBytes = 512;

const std::vector<Slot> kSlots = {{"p.lora_a", 256, 2, 4},
                                  {"p.lora_b", 320, 4, 2}};

class RuntimeAdapter : public RuntimeTest {
protected:
  /// A fake model whose manifest lists `manifestSlots` and whose code
  /// reads `codeSlots`.
  std::vector<uint8_t> packSlots(const std::vector<Slot> &manifestSlots,
                                 const std::vector<Slot> &codeSlots,
                                 const std::vector<uint8_t> &weights = {}) {
    FakeModelOptions options;
    manifest::Manifest m = makeFakeManifest(options);
    m.mutable_kv_cache()->set_arena_bytes(kArenaBytes);
    for (const Slot &s : manifestSlots) {
      auto *slot = m.mutable_adapters()->add_slots();
      slot->set_name(s.name);
      slot->set_offset(s.offset);
      slot->set_bytes(uint64_t(s.rows) * s.cols * 4);
      slot->set_rows(s.rows);
      slot->set_cols(s.cols);
    }
    m.mutable_adapters()->set_rank(2);
    afm_model_facts facts = makeFakeFacts(options);
    facts.arena_bytes = kArenaBytes;
    std::vector<uint64_t> table = {codeSlots.size()};
    for (const Slot &s : codeSlots)
      table.insert(table.end(), {s.offset, s.rows, s.cols});
    std::vector<uint8_t> code =
        withAdapterSlots(withFacts(fakeCode(), facts), table);
    return packAFMB(m, weights.empty() ? makeFakeWeights(options) : weights,
                    code);
  }

  /// The identity of a model packed with `weights` and `slots`.
  static uint64_t identityOf(const std::vector<uint8_t> &weights,
                             const std::vector<Slot> &slots) {
    uint64_t id = afm_adapter_identity_start(fnv1a64(weights));
    for (const Slot &s : slots)
      id = afm_adapter_identity_add_slot(id, s.name.c_str(), s.rows, s.cols);
    return id;
  }

  /// An adapter file filling `slots` with 1, 2, 3, ... for `identity`.
  static std::vector<uint8_t> adapterFile(uint64_t identity,
                                          const std::vector<Slot> &slots) {
    manifest::AdapterManifest m;
    m.set_base_identity(identity);
    m.set_rank(2);
    std::vector<AdapterFactor> factors;
    for (const Slot &s : slots) {
      AdapterFactor f{s.name, s.rows, s.cols, {}};
      for (uint32_t i = 0; i < s.rows * s.cols; ++i)
        f.values.push_back(float(i + 1));
      factors.push_back(f);
    }
    std::string bytes;
    llvm::raw_string_ostream os(bytes);
    EXPECT_FALSE(bool(writeAdapterFile(os, m, factors)));
    return std::vector<uint8_t>(bytes.begin(), bytes.end());
  }

  static uint64_t goodIdentity() {
    return identityOf(makeFakeWeights(FakeModelOptions()), kSlots);
  }

  /// Seals the adapter file's checksum again after an edit.
  static void reseal(std::vector<uint8_t> &file) {
    uint64_t sum = afmb_fnv1a64_update(AFMB_FNV1A64_INIT, file.data(),
                                       AFM_ADAPTER_HEADER_CHECKSUM);
    sum = afmb_fnv1a64_update(sum,
                              file.data() + AFM_ADAPTER_HEADER_CHECKSUM + 8,
                              file.size() - AFM_ADAPTER_HEADER_CHECKSUM - 8);
    llvm::support::endian::write64le(
        file.data() + AFM_ADAPTER_HEADER_CHECKSUM, sum);
  }

  afm_status loadAdapter(afm_model *model, const std::vector<uint8_t> &bytes,
                         afm_adapter **out = nullptr) {
    std::string path = write("adapter.afma", bytes);
    afm_adapter *adapter = nullptr;
    afm_status status = afm_adapter_load(model, path.c_str(), &adapter);
    if (out)
      *out = adapter;
    else
      afm_adapter_free(adapter);
    return status;
  }
};
} // namespace

TEST_F(RuntimeAdapter, AttachesDetachesAndOutlivesItsHandle) {
  Loaded loaded;
  open(packSlots(kSlots, kSlots), loaded);
  EXPECT_EQ(afm_model_adapter_rank(loaded.model), 2);
  afm_adapter *adapter = nullptr;
  ASSERT_EQ(loadAdapter(loaded.model, adapterFile(goodIdentity(), kSlots),
                        &adapter),
            AFM_OK)
      << afm_last_error();
  EXPECT_EQ(afm_adapter_bytes(adapter), 64u);
  ASSERT_EQ(afm_session_set_adapter(loaded.session, adapter), AFM_OK);
  // The session keeps the adapter alive after the caller's reference goes,
  // through a reset, and the model still runs.
  afm_adapter_free(adapter);
  ASSERT_EQ(afm_session_reset(loaded.session), AFM_OK);
  int32_t prompt[] = {1, 2, 3};
  EXPECT_EQ(afm_session_prefill(loaded.session, prompt, 3), AFM_OK);
  EXPECT_EQ(afm_session_set_adapter(loaded.session, nullptr), AFM_OK);
  EXPECT_EQ(afm_session_decode(loaded.session, 4), AFM_OK);
  // An adapter filling only one slot: the other reads zero.
  ASSERT_EQ(loadAdapter(loaded.model,
                        adapterFile(goodIdentity(), {kSlots[1]}), &adapter),
            AFM_OK)
      << afm_last_error();
  EXPECT_EQ(afm_adapter_bytes(adapter), 32u);
  EXPECT_EQ(afm_session_set_adapter(loaded.session, adapter), AFM_OK);
  afm_adapter_free(adapter);
}

TEST_F(RuntimeAdapter, ModelWithoutSlots) {
  Loaded loaded;
  open(pack(), loaded);
  EXPECT_EQ(afm_model_adapter_rank(loaded.model), 0);
  EXPECT_AFM_ERROR(loadAdapter(loaded.model,
                               adapterFile(goodIdentity(), kSlots)),
                   AFM_ERR_STATE, "the model has no adapter slots");
  EXPECT_AFM_ERROR(afm_session_set_adapter(nullptr, nullptr),
                   AFM_ERR_ARGUMENT, "`session` is NULL");
}

TEST_F(RuntimeAdapter, HostileSlotTables) {
  struct Case {
    std::vector<Slot> slots;
    const char *expected;
  };
  const Case cases[] = {
      {{{"p.lora_a", 0, 2, 4}},
       "adapter slot 0 ('p.lora_a') at offset 0 of 32 bytes is not a "
       "64-byte aligned part of the arena between the KV caches (256 "
       "bytes) and its end (512)"},
      {{{"p.lora_a", 260, 2, 4}}, "at offset 260 of 32 bytes is not a"},
      {{{"p.lora_a", 448, 2, 16}}, "at offset 448 of 128 bytes is not a"},
      {{{"p.lora_a", 256, 0, 4}}, "must be named and hold rows x cols f32"},
      {{{"", 256, 2, 4}}, "must be named"},
      {{{"p.lora_a", 256, 2, 16}, {"p.lora_b", 320, 4, 2}},
       "adapter slots 'p.lora_a' and 'p.lora_b' overlap"},
      // The layout's rank (2) lying about the factors' shapes.
      {{{"p.lora_a", 256, 3, 4}},
       "adapter slot 0 ('p.lora_a') has rank 3 (its rows); the layout says "
       "2"},
      {{{"p.lora_b", 256, 4, 1}},
       "adapter slot 0 ('p.lora_b') has rank 1 (its columns); the layout "
       "says 2"},
      {{{"p.lora_c", 256, 2, 4}},
       "adapter slot 0 ('p.lora_c') is neither a .lora_a nor a .lora_b "
       "factor"},
      {{{"p.lora_a", 256, 2, 4}, {"p.lora_a", 320, 2, 4}},
       "two adapter slots are named 'p.lora_a'"},
  };
  for (const Case &c : cases)
    EXPECT_AFM_ERROR(load(packSlots(c.slots, c.slots)), AFM_ERR_FORMAT,
                     c.expected);
  // bytes that disagree with the shape.
  std::vector<uint8_t> file = pack({}, [](manifest::Manifest &m) {
    m.mutable_kv_cache()->set_arena_bytes(kArenaBytes);
    auto *slot = m.mutable_adapters()->add_slots();
    slot->set_name("p.lora_a");
    slot->set_offset(256);
    slot->set_rows(2);
    slot->set_cols(4);
    slot->set_bytes(33);
  });
  EXPECT_AFM_ERROR(load(file), AFM_ERR_FORMAT,
                   "(2 x 4), not 33 bytes");
}

TEST_F(RuntimeAdapter, SlotTableMustBeTheCodes) {
  EXPECT_AFM_ERROR(load(packSlots(kSlots, {})), AFM_ERR_FORMAT,
                   "the manifest's adapter slot count is 2, but the code was "
                   "compiled for 0");
  EXPECT_AFM_ERROR(load(packSlots({}, kSlots)), AFM_ERR_FORMAT,
                   "the manifest's adapter slot count is 0, but the code was "
                   "compiled for 2");
  std::vector<Slot> moved = kSlots;
  moved[1].offset = 384;
  EXPECT_AFM_ERROR(load(packSlots(kSlots, moved)), AFM_ERR_FORMAT,
                   "the manifest puts adapter slot 1 ('p.lora_b') at arena "
                   "offset 320 as 4 x 2, but the code reads it at 384 as 4 x "
                   "2");
}

TEST_F(RuntimeAdapter, HostileAdapterFiles) {
  Loaded loaded;
  open(packSlots(kSlots, kSlots), loaded);
  afm_model *model = loaded.model;
  std::vector<uint8_t> good = adapterFile(goodIdentity(), kSlots);

  // Another base: other weights, or other slots.
  std::vector<uint8_t> weights = makeFakeWeights(FakeModelOptions());
  weights.back() ^= 1;
  EXPECT_AFM_ERROR(loadAdapter(model, adapterFile(identityOf(weights, kSlots),
                                                  kSlots)),
                   AFM_ERR_MISMATCH,
                   "the adapter was compiled for another base model");
  std::vector<Slot> wider = kSlots;
  wider[0].cols = 8;
  EXPECT_AFM_ERROR(loadAdapter(model, adapterFile(identityOf(
                                                      makeFakeWeights(
                                                          FakeModelOptions()),
                                                      wider),
                                                  kSlots)),
                   AFM_ERR_MISMATCH, "compiled for another base model");
  // The right identity, lying tensors.
  EXPECT_AFM_ERROR(loadAdapter(model, adapterFile(goodIdentity(),
                                                  {{"q.lora_a", 0, 2, 4}})),
                   AFM_ERR_MISMATCH,
                   "tensor 0 fills slot 'q.lora_a', which the model does not "
                   "have");
  EXPECT_AFM_ERROR(loadAdapter(model, adapterFile(goodIdentity(),
                                                  {{"p.lora_a", 0, 4, 2}})),
                   AFM_ERR_MISMATCH,
                   "tensor 'p.lora_a' is 4 x 2 (32 bytes); the model's slot "
                   "is 2 x 4");
  EXPECT_AFM_ERROR(loadAdapter(model, adapterFile(goodIdentity(),
                                                  {kSlots[0], kSlots[0]})),
                   AFM_ERR_FORMAT, "slot 'p.lora_a' is filled twice");

  // Damage: the checksum catches it; resealed, the checks behind it do.
  std::vector<uint8_t> file = good;
  file.back() ^= 0x40;
  EXPECT_AFM_ERROR(loadAdapter(model, file), AFM_ERR_FORMAT,
                   "checksum mismatch");
  file = good;
  float nan = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(file.data() + file.size() - 4, &nan, 4);
  reseal(file);
  EXPECT_AFM_ERROR(loadAdapter(model, file), AFM_ERR_FORMAT,
                   "tensor 'p.lora_b' holds a non-finite value at 7");
  file = good;
  file.resize(file.size() - 4);
  EXPECT_AFM_ERROR(loadAdapter(model, file), AFM_ERR_FORMAT,
                   "(truncated or extended?)");
  llvm::support::endian::write64le(file.data() + AFM_ADAPTER_HEADER_FILE_SIZE,
                                   file.size());
  reseal(file);
  EXPECT_AFM_ERROR(loadAdapter(model, file), AFM_ERR_FORMAT,
                   "is not a 64-byte aligned part of the file");
  file = good;
  llvm::support::endian::write64le(
      file.data() + AFM_ADAPTER_HEADER_MANIFEST_SIZE, file.size());
  reseal(file);
  EXPECT_AFM_ERROR(loadAdapter(model, file), AFM_ERR_FORMAT,
                   "is not inside the file");
  file = good;
  llvm::support::endian::write32le(file.data() + AFM_ADAPTER_HEADER_VERSION,
                                   2);
  reseal(file);
  EXPECT_AFM_ERROR(loadAdapter(model, file), AFM_ERR_VERSION,
                   "adapter format version 2");
  file = good;
  file[0] = 'X';
  EXPECT_AFM_ERROR(loadAdapter(model, file), AFM_ERR_FORMAT,
                   "not an afm adapter file");
  EXPECT_AFM_ERROR(loadAdapter(model, {}), AFM_ERR_FORMAT,
                   "not an afm adapter file");
}

TEST_F(RuntimeAdapter, SessionOfAnotherModel) {
  Loaded first, second;
  open(packSlots(kSlots, kSlots), first, 1, "first.afmb");
  open(packSlots(kSlots, kSlots), second, 1, "second.afmb");
  afm_adapter *adapter = nullptr;
  ASSERT_EQ(loadAdapter(first.model, adapterFile(goodIdentity(), kSlots),
                        &adapter),
            AFM_OK);
  EXPECT_AFM_ERROR(afm_session_set_adapter(second.session, adapter),
                   AFM_ERR_ARGUMENT,
                   "the adapter was loaded for another model than the "
                   "session's");
  afm_adapter_free(adapter);
}
