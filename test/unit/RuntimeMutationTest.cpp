//===- RuntimeMutationTest.cpp - hostile variants of a valid .afmb --------===//
//
// A structured mutation campaign over a valid fake-model file, the way an
// attacker edits one: every numeric manifest field set to boundary values
// and to other fields' values, string fields emptied or replaced, every
// bit of the manifest flipped, header fields edited, the file cut at every
// section boundary; each with its checksums recomputed. Every variant must
// either run to the original's tokens or fail with an error: a crash, a
// hang or a sanitizer report fails the binary itself.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"

#include "afm/afmb_format.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

using namespace afm::test;
using afm::manifest::Manifest;

namespace {

enum : unsigned { kManifest = 0, kWeights = 1, kCode = 2 };

/// The tokens of prefill {1, 2, 3} and two greedy decode steps, or empty
/// when a call fails (with a message).
std::vector<int32_t> runOnce(const std::string &path) {
  afm_model *model = nullptr;
  afm_session *session = nullptr;
  std::vector<int32_t> tokens;
  afm_session_options options = {};
  options.num_threads = 1;
  const int32_t prompt[3] = {1, 2, 3};
  int32_t token = 0;
  bool ok = afm_model_load(path.c_str(), 0, &model) == AFM_OK &&
            afm_session_create(model, &options, &session) == AFM_OK &&
            afm_session_prefill(session, prompt, 3) == AFM_OK &&
            afm_session_argmax(session, &token) == AFM_OK;
  for (int step = 0; ok && step < 3; ++step) {
    tokens.push_back(token);
    ok = step == 2 || (afm_session_decode(session, token) == AFM_OK &&
                       afm_session_argmax(session, &token) == AFM_OK);
  }
  if (!ok) {
    EXPECT_STRNE(afm_last_error(), "") << "a failure without a message";
    tokens.clear();
  }
  afm_session_free(session);
  afm_model_free(model);
  return tokens;
}

class RuntimeMutation : public RuntimeTest {
protected:
  /// Runs `file`; it must give the original tokens or be refused.
  void expectSafe(const std::vector<uint8_t> &file, const std::string &what) {
    std::vector<int32_t> tokens = runOnce(write("variant.afmb", file));
    ++variants;
    if (tokens.empty()) {
      ++refused;
      return;
    }
    EXPECT_EQ(tokens, original()) << what << " ran to other tokens";
  }

  std::vector<int32_t> original() {
    static const std::vector<int32_t> tokens = {8, 18, 37};
    return tokens;
  }

  std::vector<uint8_t> withManifest(const std::function<void(Manifest &)> &edit) {
    return pack({}, edit);
  }

  int variants = 0, refused = 0;
};

/// Values a hostile file puts in numeric fields: boundaries, and the other
/// fields' values of the original (vocab 100, context 64, 4 prefill tokens,
/// a 256-byte arena, 128 weight bytes, 64 config bytes).
const auto &kValues = kBoundaryValues;

TEST_F(RuntimeMutation, TheOriginalRuns) {
  EXPECT_EQ(runOnce(write("m.afmb", pack())), original());
}

TEST_F(RuntimeMutation, NumericManifestFields) {
  using Setter = std::function<void(Manifest &, uint64_t)>;
  const std::pair<const char *, Setter> fields[] = {
      {"abi_version", [](Manifest &m, uint64_t v) { m.set_abi_version(v); }},
      {"model.vocab_size",
       [](Manifest &m, uint64_t v) { m.mutable_model()->set_vocab_size(v); }},
      {"model.hidden_size",
       [](Manifest &m, uint64_t v) { m.mutable_model()->set_hidden_size(v); }},
      {"model.num_layers",
       [](Manifest &m, uint64_t v) { m.mutable_model()->set_num_layers(v); }},
      {"model.context_length",
       [](Manifest &m, uint64_t v) {
         m.mutable_model()->set_context_length(v);
       }},
      {"prefill.max_tokens",
       [](Manifest &m, uint64_t v) {
         m.mutable_entry_points(0)->set_max_tokens(v);
       }},
      {"decode.max_tokens",
       [](Manifest &m, uint64_t v) {
         m.mutable_entry_points(1)->set_max_tokens(v);
       }},
      {"prefill.kind",
       [](Manifest &m, uint64_t v) {
         m.mutable_entry_points(0)->set_kind(
             static_cast<afm::manifest::EntryPoint::Kind>(int(v)));
       }},
      {"tensor.offset",
       [](Manifest &m, uint64_t v) { m.mutable_tensors(0)->set_offset(v); }},
      {"tensor.size",
       [](Manifest &m, uint64_t v) { m.mutable_tensors(0)->set_size(v); }},
      {"tensor.shape",
       [](Manifest &m, uint64_t v) { m.mutable_tensors(0)->set_shape(0, v); }},
      {"kv.arena_bytes",
       [](Manifest &m, uint64_t v) {
         m.mutable_kv_cache()->set_arena_bytes(v);
       }},
      {"kv.layer",
       [](Manifest &m, uint64_t v) {
         m.mutable_kv_cache()->mutable_buffers(0)->set_layer(v);
       }},
      {"kv.offset",
       [](Manifest &m, uint64_t v) {
         m.mutable_kv_cache()->mutable_buffers(0)->set_offset(v);
       }},
      {"kv.bytes",
       [](Manifest &m, uint64_t v) {
         m.mutable_kv_cache()->mutable_buffers(0)->set_bytes(v);
       }},
      {"kv.kv_heads",
       [](Manifest &m, uint64_t v) {
         m.mutable_kv_cache()->mutable_buffers(0)->set_kv_heads(v);
       }},
      {"kv.capacity",
       [](Manifest &m, uint64_t v) {
         m.mutable_kv_cache()->mutable_buffers(0)->set_capacity(v);
       }},
      {"kv.head_dim",
       [](Manifest &m, uint64_t v) {
         m.mutable_kv_cache()->mutable_buffers(0)->set_head_dim(v);
       }},
      {"kv.scales_offset",
       [](Manifest &m, uint64_t v) {
         m.mutable_kv_cache()->mutable_buffers(0)->set_scales_offset(v);
       }},
      {"kv.scales_bytes",
       [](Manifest &m, uint64_t v) {
         m.mutable_kv_cache()->mutable_buffers(0)->set_scales_bytes(v);
       }},
      {"kv.shared_by",
       [](Manifest &m, uint64_t v) {
         m.mutable_kv_cache()->mutable_buffers(0)->add_shared_by(v);
       }},
  };
  for (const auto &[name, set] : fields)
    for (uint64_t value : kValues) {
      SCOPED_TRACE(std::string(name) + " = " + std::to_string(value));
      expectSafe(withManifest([&](Manifest &m) { set(m, value); }), name);
    }
  EXPECT_EQ(variants, int(std::size(fields) * std::size(kValues)));
  EXPECT_GT(refused, 0);
}

TEST_F(RuntimeMutation, StringManifestFields) {
  using Setter = std::function<void(Manifest &, const std::string &)>;
  const std::pair<const char *, Setter> fields[] = {
      {"target.triple",
       [](Manifest &m, const std::string &v) {
         m.mutable_target()->set_triple(v);
       }},
      {"target.object_format",
       [](Manifest &m, const std::string &v) {
         m.mutable_target()->set_object_format(v);
       }},
      {"target.name",
       [](Manifest &m, const std::string &v) {
         m.mutable_target()->set_name(v);
       }},
      {"prefill.symbol",
       [](Manifest &m, const std::string &v) {
         m.mutable_entry_points(0)->set_symbol(v);
       }},
      {"decode.symbol",
       [](Manifest &m, const std::string &v) {
         m.mutable_entry_points(1)->set_symbol(v);
       }},
      {"tensor.name",
       [](Manifest &m, const std::string &v) {
         m.mutable_tensors(0)->set_name(v);
       }},
      {"kv.dtype",
       [](Manifest &m, const std::string &v) {
         m.mutable_kv_cache()->mutable_buffers(0)->set_dtype(v);
       }},
      {"kv.attention",
       [](Manifest &m, const std::string &v) {
         m.mutable_kv_cache()->mutable_buffers(0)->set_attention(v);
       }},
  };
  const std::string values[] = {"",
                                "afm_decode",
                                "afm_prefill",
                                "afm_compiled_facts",
                                "malloc",
                                std::string(4096, 'x'),
                                std::string("a\0b", 3),
                                "\xff\xfe%s%n"};
  for (const auto &[name, set] : fields)
    for (const std::string &value : values) {
      SCOPED_TRACE(std::string(name) + " = '" + value.substr(0, 16) + "'");
      expectSafe(withManifest([&](Manifest &m) { set(m, value); }), name);
    }
}

TEST_F(RuntimeMutation, ManifestBitFlips) {
  std::vector<uint8_t> good = pack();
  uint64_t offset = getSectionField(good, kManifest, AFMB_SECTION_OFFSET, 8);
  uint64_t size = getSectionField(good, kManifest, AFMB_SECTION_SIZE, 8);
  for (uint64_t byte = 0; byte < size; ++byte)
    for (int bit = 0; bit < 8; ++bit) {
      SCOPED_TRACE("manifest byte " + std::to_string(byte) + " bit " +
                   std::to_string(bit));
      std::vector<uint8_t> file = good;
      file[offset + byte] ^= uint8_t(1u << bit);
      resealSection(file, kManifest);
      expectSafe(file, "a bit flip");
    }
  EXPECT_GE(variants, 1000);
}

TEST_F(RuntimeMutation, HeaderAndSectionTable) {
  std::vector<uint8_t> good = pack();
  for (unsigned section = 0; section < 3; ++section)
    for (size_t field : {size_t(AFMB_SECTION_OFFSET), size_t(AFMB_SECTION_SIZE)})
      for (uint64_t value : kValues) {
        SCOPED_TRACE("section " + std::to_string(section) + " field " +
                     std::to_string(field) + " = " + std::to_string(value));
        std::vector<uint8_t> file = good;
        setSectionField(file, section, field, 8, value);
        expectSafe(file, "a section table edit");
      }
  for (size_t field = 0; field + 1 < AFMB_HEADER_CHECKSUM; field += 2)
    for (uint64_t value : {0ull, 1ull, 0xffffull}) {
      SCOPED_TRACE("header bytes " + std::to_string(field));
      std::vector<uint8_t> file = good;
      setHeaderField(file, field, 2, value);
      expectSafe(file, "a header edit");
    }
}

TEST_F(RuntimeMutation, TruncatedAtEverySectionBoundary) {
  std::vector<uint8_t> good = pack();
  std::vector<uint64_t> cuts = {0, 1, AFMB_HEADER_SIZE - 1, AFMB_HEADER_SIZE,
                                good.size() - 1};
  for (unsigned section = 0; section < 3; ++section) {
    uint64_t offset = getSectionField(good, section, AFMB_SECTION_OFFSET, 8);
    uint64_t size = getSectionField(good, section, AFMB_SECTION_SIZE, 8);
    for (uint64_t cut : {offset - 1, offset, offset + 1, offset + size / 2,
                         offset + size - 1, offset + size})
      if (cut < good.size())
        cuts.push_back(cut);
  }
  for (uint64_t cut : cuts) {
    SCOPED_TRACE("cut at " + std::to_string(cut));
    std::vector<uint8_t> file(good.begin(), good.begin() + cut);
    expectSafe(file, "a truncated file");
    EXPECT_EQ(refused, variants) << "a truncated file loaded";
  }
}

} // namespace
