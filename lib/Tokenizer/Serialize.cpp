//===- Serialize.cpp - TokenizerDescription to the runtime's bytes --------===//

#include "afm/Tokenizer/Serialize.h"

#include "runtime/proto/tokenizer.pb.h"

#include <algorithm>

namespace mlir::afm::tokenizer {

namespace pb = ::afm::tokenizer;

std::string serializeTokenizer(const TokenizerDescription &d) {
  pb::Tokenizer message;
  message.set_format_version(kTokenizerFormatVersion);

  pb::BPEModel *model = message.mutable_model();
  std::string *bytes = model->mutable_token_bytes();
  for (const auto &[token, id] : d.model.vocab) {
    bytes->append(token);
    model->add_token_ends(static_cast<uint32_t>(bytes->size()));
    model->add_token_ids(id);
  }
  for (const auto &merge : d.model.merges)
    for (uint32_t id : merge)
      model->add_merges(id);
  model->set_has_unk(d.model.unkId.has_value());
  model->set_unk_id(d.model.unkId.value_or(0));
  model->set_fuse_unk(d.model.fuseUnk);
  model->set_byte_fallback(d.model.byteFallback);
  model->set_ignore_merges(d.model.ignoreMerges);

  for (const Normalizer &n : d.normalizers) {
    pb::Normalizer *out = message.add_normalizers();
    out->set_kind(static_cast<pb::Normalizer::Kind>(n.kind));
    out->set_pattern(n.pattern);
    out->set_content(n.content);
  }
  for (const PreTokenizer &p : d.preTokenizers) {
    pb::PreTokenizer *out = message.add_pre_tokenizers();
    out->set_kind(static_cast<pb::PreTokenizer::Kind>(p.kind));
    out->set_regex(p.regex);
    out->set_behavior(static_cast<pb::PreTokenizer::Behavior>(p.behavior));
    out->set_invert(p.invert);
    out->set_add_prefix_space(p.addPrefixSpace);
    out->set_replacement(p.replacement);
    out->set_prepend_scheme(
        static_cast<pb::PreTokenizer::PrependScheme>(p.prependScheme));
    out->set_split(p.split);
  }
  for (const Decoder &dec : d.decoders) {
    pb::Decoder *out = message.add_decoders();
    out->set_kind(static_cast<pb::Decoder::Kind>(dec.kind));
    out->set_pattern(dec.pattern);
    out->set_content(dec.content);
    out->set_start(dec.start);
    out->set_stop(dec.stop);
    out->set_prepend_scheme(
        static_cast<pb::PreTokenizer::PrependScheme>(dec.prependScheme));
  }
  for (const AddedToken &t : d.addedTokens) {
    pb::AddedToken *out = message.add_added_tokens();
    out->set_content(t.content);
    out->set_id(t.id);
    out->set_special(t.special);
    out->set_lstrip(t.lstrip);
    out->set_rstrip(t.rstrip);
    out->set_single_word(t.singleWord);
  }
  for (uint32_t id : d.prefixIds)
    message.add_prefix_ids(id);
  for (uint32_t id : d.suffixIds)
    message.add_suffix_ids(id);
  return message.SerializeAsString();
}

} // namespace mlir::afm::tokenizer

uint32_t mlir::afm::tokenizer::tokenizerIdLimit(const TokenizerDescription &d) {
  uint32_t limit = 0;
  for (const auto &[bytes, id] : d.model.vocab)
    limit = std::max(limit, id + 1);
  for (const AddedToken &added : d.addedTokens)
    limit = std::max(limit, added.id + 1);
  return limit;
}
