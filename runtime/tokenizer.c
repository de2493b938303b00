/*===- tokenizer.c - loading and checking a serialized tokenizer ----------===*
 *
 * The binary form comes from a file the user hands over, so every field is
 * checked before anything is built from it: a hostile one is
 * AFM_ERR_FORMAT naming the field, never a crash or an out-of-range read
 * later in encode or decode.
 *
 *===----------------------------------------------------------------------===*/

#include "error.h"
#include "tokenizer.pb-c.h"
#include "tokenizer_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef Afm__Tokenizer__Tokenizer PbTokenizer;
typedef Afm__Tokenizer__BPEModel PbModel;

static afm_status outOfMemory(void) {
  return afm_error(AFM_ERR_MEMORY, "tokenizer: out of memory while loading");
}

static size_t tableSize(size_t entries) {
  size_t size = 16;
  while (size < entries * 2)
    size *= 2;
  return size;
}

/* A string field: valid UTF-8, copied with its length. */
static afm_status copyString(const char *value, const char *where, char **out,
                             size_t *length) {
  size_t n = strlen(value);
  if (tk_utf8_check(value, n) != n)
    return afm_error(AFM_ERR_FORMAT, "tokenizer: %s is not valid UTF-8", where);
  *out = malloc(n + 1);
  if (!*out)
    return outOfMemory();
  memcpy(*out, value, n + 1);
  *length = n;
  return AFM_OK;
}

static afm_status loadVocab(afm_tokenizer *tok, const PbModel *model) {
  size_t n = model->n_token_ids;
  if (model->n_token_ends != n)
    return afm_error(AFM_ERR_FORMAT,
                     "tokenizer: model has %zu token ends but %zu token ids",
                     model->n_token_ends, n);
  if (n == 0)
    return afm_error(AFM_ERR_FORMAT, "tokenizer: model vocab is empty");
  size_t blobSize = model->token_bytes.len;
  tok->vocab_blob = malloc(blobSize ? blobSize : 1);
  tok->vocab_starts = malloc(n * sizeof(uint32_t));
  tok->vocab_lengths = malloc(n * sizeof(uint32_t));
  tok->vocab_ids = malloc(n * sizeof(uint32_t));
  size_t slots = tableSize(n);
  tok->vocab.slots = calloc(slots, sizeof(uint32_t));
  if (!tok->vocab_blob || !tok->vocab_starts || !tok->vocab_lengths ||
      !tok->vocab_ids || !tok->vocab.slots)
    return outOfMemory();
  if (blobSize)
    memcpy(tok->vocab_blob, model->token_bytes.data, blobSize);
  tok->vocab.mask = slots - 1;
  tok->vocab.blob = tok->vocab_blob;
  tok->vocab.starts = tok->vocab_starts;
  tok->vocab.lengths = tok->vocab_lengths;
  tok->vocab.ids = tok->vocab_ids;

  uint32_t previous = 0;
  for (size_t i = 0; i < n; ++i) {
    uint32_t end = model->token_ends[i], id = model->token_ids[i];
    if (end < previous || end > blobSize)
      return afm_error(AFM_ERR_FORMAT,
                       "tokenizer: model token %zu ends at %u, outside "
                       "[%u, %zu]",
                       i, end, previous, blobSize);
    if (id >= AFM_TOKENIZER_MAX_ID)
      return afm_error(AFM_ERR_FORMAT,
                       "tokenizer: model token %zu has id %u, not below %u", i,
                       id, AFM_TOKENIZER_MAX_ID);
    const char *text = tok->vocab_blob + previous;
    size_t length = end - previous;
    if (tk_utf8_check(text, length) != length)
      return afm_error(AFM_ERR_FORMAT,
                       "tokenizer: model token %zu (id %u) is not valid UTF-8",
                       i, id);
    tok->vocab_starts[i] = previous;
    tok->vocab_lengths[i] = (uint32_t)length;
    tok->vocab_ids[i] = id;
    for (size_t slot = tk_hash_bytes(text, length) & tok->vocab.mask;;
         slot = (slot + 1) & tok->vocab.mask) {
      uint32_t entry = tok->vocab.slots[slot];
      if (!entry) {
        tok->vocab.slots[slot] = (uint32_t)i + 1;
        break;
      }
      --entry;
      if (tok->vocab_lengths[entry] == length &&
          memcmp(tok->vocab_blob + tok->vocab_starts[entry], text, length) ==
              0) {
        char shown[64];
        char copy[48];
        size_t cut = length < sizeof(copy) - 1 ? length : sizeof(copy) - 1;
        memcpy(copy, text, cut);
        copy[cut] = '\0';
        return afm_error(AFM_ERR_FORMAT,
                         "tokenizer: model token '%s' appears twice (ids %u "
                         "and %u)",
                         afm_printable(copy, shown, sizeof(shown)),
                         tok->vocab_ids[entry], id);
      }
    }
    if (id + 1 > tok->id_limit)
      tok->id_limit = id + 1;
    previous = end;
  }
  return AFM_OK;
}

/* The id -> text table over the model vocab; the added tokens are laid
 * over it by overlayAddedTokens once the merges are checked. */
static afm_status buildIdTable(afm_tokenizer *tok, const PbTokenizer *pb) {
  for (size_t i = 0; i < pb->n_added_tokens; ++i) {
    const Afm__Tokenizer__AddedToken *added = pb->added_tokens[i];
    if (added->id >= AFM_TOKENIZER_MAX_ID)
      return afm_error(AFM_ERR_FORMAT,
                       "tokenizer: added token %zu has id %u, not below %u", i,
                       added->id, AFM_TOKENIZER_MAX_ID);
    if (added->id + 1 > tok->id_limit)
      tok->id_limit = added->id + 1;
  }
  size_t limit = tok->id_limit, addedBytes = 0;
  for (size_t i = 0; i < pb->n_added_tokens; ++i)
    addedBytes += strlen(pb->added_tokens[i]->content);
  size_t blobSize = pb->model->token_bytes.len;
  if (blobSize + addedBytes > UINT32_MAX)
    return afm_error(AFM_ERR_FORMAT, "tokenizer: token texts exceed 4 GiB");
  tok->texts = malloc(blobSize + addedBytes + 1);
  tok->text_start = calloc(limit, sizeof(uint32_t));
  tok->text_length = calloc(limit, sizeof(uint32_t));
  tok->flags = calloc(limit, 1);
  if (!tok->texts || !tok->text_start || !tok->text_length || !tok->flags)
    return outOfMemory();
  memcpy(tok->texts, tok->vocab_blob, blobSize);
  const PbModel *model = pb->model;
  for (size_t i = 0; i < model->n_token_ids; ++i) {
    uint32_t id = tok->vocab_ids[i];
    if (tok->flags[id])
      return afm_error(AFM_ERR_FORMAT,
                       "tokenizer: model id %u is given to two tokens", id);
    tok->flags[id] = TK_ID_PRESENT;
    tok->text_start[id] = tok->vocab_starts[i];
    tok->text_length[id] = tok->vocab_lengths[i];
  }
  return AFM_OK;
}

/* Added tokens win over model tokens of the same id, as in tokenizers'
 * id_to_token. */
static afm_status overlayAddedTokens(afm_tokenizer *tok,
                                     const PbTokenizer *pb) {
  size_t used = pb->model->token_bytes.len;
  for (size_t i = 0; i < pb->n_added_tokens; ++i) {
    const Afm__Tokenizer__AddedToken *added = pb->added_tokens[i];
    size_t length = strlen(added->content);
    if (length == 0)
      return afm_error(AFM_ERR_FORMAT, "tokenizer: added token %zu is empty",
                       i);
    if (tk_utf8_check(added->content, length) != length)
      return afm_error(AFM_ERR_FORMAT,
                       "tokenizer: added token %zu (id %u) is not valid UTF-8",
                       i, added->id);
    if (tok->flags[added->id] & TK_ID_ADDED)
      return afm_error(AFM_ERR_FORMAT,
                       "tokenizer: id %u is given to two added tokens",
                       added->id);
    memcpy(tok->texts + used, added->content, length);
    tok->flags[added->id] = TK_ID_PRESENT | TK_ID_ADDED |
                            (added->special ? TK_ID_SPECIAL : 0) |
                            (added->lstrip ? TK_ID_LSTRIP : 0) |
                            (added->rstrip ? TK_ID_RSTRIP : 0) |
                            (added->single_word ? TK_ID_SINGLE_WORD : 0);
    tok->text_start[added->id] = (uint32_t)used;
    tok->text_length[added->id] = (uint32_t)length;
    used += length;
  }
  return AFM_OK;
}

static afm_status loadMerges(afm_tokenizer *tok, const PbModel *model) {
  if (model->n_merges % 3 != 0)
    return afm_error(AFM_ERR_FORMAT,
                     "tokenizer: model has %zu merge ids, not a multiple of 3",
                     model->n_merges);
  size_t n = model->n_merges / 3;
  if (n == 0)
    return AFM_OK;
  size_t slots = tableSize(n);
  tok->merges.keys = calloc(slots, sizeof(uint64_t));
  tok->merges.ranks = malloc(slots * sizeof(uint32_t));
  tok->merges.merged = malloc(slots * sizeof(uint32_t));
  if (!tok->merges.keys || !tok->merges.ranks || !tok->merges.merged)
    return outOfMemory();
  tok->merges.mask = slots - 1;
  for (size_t rank = 0; rank < n; ++rank) {
    const uint32_t *m = model->merges + 3 * rank;
    for (int k = 0; k < 3; ++k)
      if (m[k] >= tok->id_limit || !(tok->flags[m[k]] & TK_ID_PRESENT))
        return afm_error(AFM_ERR_FORMAT,
                         "tokenizer: merge %zu names id %u, which is not a "
                         "model token",
                         rank, m[k]);
    /* The merged token is the concatenation of the pair: checked here so
     * that a file cannot make decode and encode disagree. */
    uint32_t a = tok->text_length[m[0]], b = tok->text_length[m[1]];
    if (tok->text_length[m[2]] != a + b ||
        memcmp(tok->texts + tok->text_start[m[2]],
               tok->texts + tok->text_start[m[0]], a) != 0 ||
        memcmp(tok->texts + tok->text_start[m[2]] + a,
               tok->texts + tok->text_start[m[1]], b) != 0)
      return afm_error(AFM_ERR_FORMAT,
                       "tokenizer: merge %zu: token %u is not tokens %u and "
                       "%u joined",
                       rank, m[2], m[0], m[1]);
    if (!tk_pairmap_insert(&tok->merges, m[0], m[1], (uint32_t)rank, m[2]))
      return afm_error(AFM_ERR_FORMAT,
                       "tokenizer: merge %zu repeats the pair (%u, %u)", rank,
                       m[0], m[1]);
  }
  return AFM_OK;
}

static afm_status loadModel(afm_tokenizer *tok, const PbTokenizer *pb) {
  const PbModel *model = pb->model;
  if (!model)
    return afm_error(AFM_ERR_FORMAT, "tokenizer: no model");
  afm_status status = loadVocab(tok, model);
  if (status == AFM_OK)
    status = buildIdTable(tok, pb);
  if (status == AFM_OK)
    status = loadMerges(tok, model);
  if (status == AFM_OK)
    status = overlayAddedTokens(tok, pb);
  if (status != AFM_OK)
    return status;
  tok->has_unk = model->has_unk;
  tok->unk_id = model->unk_id;
  if (tok->has_unk && (model->unk_id >= tok->id_limit ||
                       !(tok->flags[model->unk_id] & TK_ID_PRESENT)))
    return afm_error(AFM_ERR_FORMAT, "tokenizer: unk_id %u is not a token",
                     model->unk_id);
  tok->fuse_unk = model->fuse_unk;
  tok->byte_fallback = model->byte_fallback;
  tok->ignore_merges = model->ignore_merges;
  for (int b = 0; b < 256; ++b) {
    char name[8];
    snprintf(name, sizeof(name), "<0x%02X>", b);
    tok->byte_ids[b] = (int32_t)tk_strmap_get(&tok->vocab, name, 6);
  }
  return AFM_OK;
}

static afm_status loadNormalizers(afm_tokenizer *tok, const PbTokenizer *pb) {
  size_t n = pb->n_normalizers;
  tok->normalizers = calloc(n ? n : 1, sizeof(tk_normalizer));
  if (!tok->normalizers)
    return outOfMemory();
  for (size_t i = 0; i < n; ++i) {
    const Afm__Tokenizer__Normalizer *in = pb->normalizers[i];
    tk_normalizer *out = &tok->normalizers[i];
    ++tok->normalizer_count;
    if ((unsigned)in->kind > AFM__TOKENIZER__NORMALIZER__KIND__REPLACE)
      return afm_error(AFM_ERR_FORMAT,
                       "tokenizer: normalizers[%zu] has unknown kind %d", i,
                       (int)in->kind);
    out->kind = (tk_normalizer_kind)in->kind;
    char where[64];
    snprintf(where, sizeof(where), "normalizers[%zu].pattern", i);
    afm_status status =
        copyString(in->pattern, where, &out->pattern, &out->pattern_length);
    snprintf(where, sizeof(where), "normalizers[%zu].content", i);
    if (status == AFM_OK)
      status =
          copyString(in->content, where, &out->content, &out->content_length);
    if (status != AFM_OK)
      return status;
    if (out->kind == TK_REPLACE && out->pattern_length == 0)
      return afm_error(AFM_ERR_FORMAT,
                       "tokenizer: normalizers[%zu] replaces an empty "
                       "pattern",
                       i);
  }
  return AFM_OK;
}

static afm_status loadPreTokenizers(afm_tokenizer *tok, const PbTokenizer *pb) {
  size_t n = pb->n_pre_tokenizers;
  tok->pretokenizers = calloc(n ? n : 1, sizeof(tk_pretokenizer));
  if (!tok->pretokenizers)
    return outOfMemory();
  for (size_t i = 0; i < n; ++i) {
    const Afm__Tokenizer__PreTokenizer *in = pb->pre_tokenizers[i];
    tk_pretokenizer *out = &tok->pretokenizers[i];
    ++tok->pretokenizer_count;
    if ((unsigned)in->kind > AFM__TOKENIZER__PRE_TOKENIZER__KIND__METASPACE)
      return afm_error(AFM_ERR_FORMAT,
                       "tokenizer: pre_tokenizers[%zu] has unknown kind %d", i,
                       (int)in->kind);
    if ((unsigned)in->behavior >
        AFM__TOKENIZER__PRE_TOKENIZER__BEHAVIOR__CONTIGUOUS)
      return afm_error(AFM_ERR_FORMAT,
                       "tokenizer: pre_tokenizers[%zu] has unknown behavior "
                       "%d",
                       i, (int)in->behavior);
    if ((unsigned)in->prepend_scheme >
        AFM__TOKENIZER__PRE_TOKENIZER__PREPEND_SCHEME__FIRST)
      return afm_error(AFM_ERR_FORMAT,
                       "tokenizer: pre_tokenizers[%zu] has unknown prepend "
                       "scheme %d",
                       i, (int)in->prepend_scheme);
    out->kind = (tk_pretokenizer_kind)in->kind;
    out->behavior = (tk_behavior)in->behavior;
    out->invert = in->invert;
    out->add_prefix_space = in->add_prefix_space;
    out->prepend_scheme = (tk_prepend_scheme)in->prepend_scheme;
    out->split = in->split;
    char where[64];
    snprintf(where, sizeof(where), "pre_tokenizers[%zu].replacement", i);
    afm_status status = copyString(in->replacement, where, &out->replacement,
                                   &out->replacement_length);
    if (status != AFM_OK)
      return status;
    if (out->kind == TK_PRE_METASPACE &&
        (out->replacement_length == 0 ||
         tk_utf8_char_length((unsigned char)out->replacement[0]) !=
             out->replacement_length))
      return afm_error(AFM_ERR_FORMAT,
                       "tokenizer: pre_tokenizers[%zu] replaces spaces with "
                       "'%s', not one character",
                       i, out->replacement);
    size_t length = strlen(in->regex);
    if (out->kind == TK_PRE_SPLIT && length == 0)
      return afm_error(AFM_ERR_FORMAT,
                       "tokenizer: pre_tokenizers[%zu] splits on an empty "
                       "regex",
                       i);
    if (out->kind == TK_PRE_METASPACE && length)
      return afm_error(AFM_ERR_FORMAT,
                       "tokenizer: pre_tokenizers[%zu] is a Metaspace with a "
                       "regex",
                       i);
    if (length) {
      snprintf(where, sizeof(where), "pre_tokenizers[%zu]", i);
      out->regex = tk_regex_compile(in->regex, length, where);
      if (!out->regex)
        return AFM_ERR_FORMAT;
    }
  }
  return AFM_OK;
}

static afm_status loadDecoders(afm_tokenizer *tok, const PbTokenizer *pb) {
  size_t n = pb->n_decoders;
  tok->decoders = calloc(n ? n : 1, sizeof(tk_decoder));
  if (!tok->decoders)
    return outOfMemory();
  for (size_t i = 0; i < n; ++i) {
    const Afm__Tokenizer__Decoder *in = pb->decoders[i];
    tk_decoder *out = &tok->decoders[i];
    ++tok->decoder_count;
    if ((unsigned)in->kind > AFM__TOKENIZER__DECODER__KIND__METASPACE)
      return afm_error(AFM_ERR_FORMAT,
                       "tokenizer: decoders[%zu] has unknown kind %d", i,
                       (int)in->kind);
    if ((unsigned)in->prepend_scheme >
        AFM__TOKENIZER__PRE_TOKENIZER__PREPEND_SCHEME__FIRST)
      return afm_error(AFM_ERR_FORMAT,
                       "tokenizer: decoders[%zu] has unknown prepend scheme %d",
                       i, (int)in->prepend_scheme);
    out->kind = (tk_decoder_kind)in->kind;
    out->prepend_scheme = (tk_prepend_scheme)in->prepend_scheme;
    out->start = in->start;
    out->stop = in->stop;
    char where[64];
    snprintf(where, sizeof(where), "decoders[%zu].pattern", i);
    afm_status status =
        copyString(in->pattern, where, &out->pattern, &out->pattern_length);
    snprintf(where, sizeof(where), "decoders[%zu].content", i);
    if (status == AFM_OK)
      status =
          copyString(in->content, where, &out->content, &out->content_length);
    if (status != AFM_OK)
      return status;
    if (out->kind == TK_DEC_REPLACE && out->pattern_length == 0)
      return afm_error(AFM_ERR_FORMAT,
                       "tokenizer: decoders[%zu] replaces an empty pattern", i);
    if ((out->kind == TK_DEC_STRIP || out->kind == TK_DEC_METASPACE) &&
        (out->content_length == 0 ||
         tk_utf8_char_length((unsigned char)out->content[0]) !=
             out->content_length))
      return afm_error(AFM_ERR_FORMAT,
                       "tokenizer: decoders[%zu]: '%s' is not one "
                       "character",
                       i, out->content);
  }
  return AFM_OK;
}

static afm_status loadSpecialIds(afm_tokenizer *tok, const uint32_t *ids,
                                 size_t n, const char *field, uint32_t **out,
                                 size_t *count) {
  *out = malloc((n ? n : 1) * sizeof(uint32_t));
  if (!*out)
    return outOfMemory();
  for (size_t i = 0; i < n; ++i) {
    if (ids[i] >= tok->id_limit || !(tok->flags[ids[i]] & TK_ID_PRESENT))
      return afm_error(AFM_ERR_FORMAT, "tokenizer: %s[%zu] = %u is not a token",
                       field, i, ids[i]);
    (*out)[i] = ids[i];
  }
  *count = n;
  return AFM_OK;
}

afm_status afm_tokenizer_load(const void *data, size_t size,
                              afm_tokenizer **out) {
  if (!out || (!data && size))
    return afm_error(AFM_ERR_ARGUMENT, "afm_tokenizer_load: NULL argument");
  *out = NULL;
  PbTokenizer *pb = afm__tokenizer__tokenizer__unpack(NULL, size, data);
  if (!pb)
    return afm_error(AFM_ERR_FORMAT,
                     "tokenizer: %zu bytes that are not a tokenizer message "
                     "(truncated or corrupted)",
                     size);
  if (pb->format_version != AFM_TOKENIZER_FORMAT_VERSION) {
    afm_status status = afm_error(
        AFM_ERR_VERSION, "tokenizer: format version %u, this runtime reads %u",
        pb->format_version, AFM_TOKENIZER_FORMAT_VERSION);
    afm__tokenizer__tokenizer__free_unpacked(pb, NULL);
    return status;
  }
  afm_tokenizer *tok = calloc(1, sizeof(afm_tokenizer));
  if (!tok) {
    afm__tokenizer__tokenizer__free_unpacked(pb, NULL);
    return outOfMemory();
  }
  afm_status status = loadModel(tok, pb);
  if (status == AFM_OK)
    status = loadNormalizers(tok, pb);
  if (status == AFM_OK)
    status = loadPreTokenizers(tok, pb);
  if (status == AFM_OK)
    status = loadDecoders(tok, pb);
  if (status == AFM_OK)
    status = tk_trie_build(tok);
  if (status == AFM_OK) {
    static const char word[] =
        "[\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}]";
    static const char space[] = "\\p{White_Space}";
    tok->word_char = tk_regex_compile(word, sizeof(word) - 1, "word class");
    tok->space_char = tk_regex_compile(space, sizeof(space) - 1, "space class");
    if (!tok->word_char || !tok->space_char)
      status = AFM_ERR_FORMAT;
  }
  if (status == AFM_OK)
    status = loadSpecialIds(tok, pb->prefix_ids, pb->n_prefix_ids, "prefix_ids",
                            &tok->prefix_ids, &tok->prefix_count);
  if (status == AFM_OK)
    status = loadSpecialIds(tok, pb->suffix_ids, pb->n_suffix_ids, "suffix_ids",
                            &tok->suffix_ids, &tok->suffix_count);
  afm__tokenizer__tokenizer__free_unpacked(pb, NULL);
  if (status != AFM_OK) {
    afm_tokenizer_free(tok);
    return status;
  }
  *out = tok;
  return AFM_OK;
}

void afm_tokenizer_free(afm_tokenizer *tok) {
  if (!tok)
    return;
  free(tok->texts);
  free(tok->text_start);
  free(tok->text_length);
  free(tok->flags);
  free(tok->vocab_blob);
  free(tok->vocab_starts);
  free(tok->vocab_lengths);
  free(tok->vocab_ids);
  free(tok->vocab.slots);
  free(tok->merges.keys);
  free(tok->merges.ranks);
  free(tok->merges.merged);
  for (size_t i = 0; i < tok->normalizer_count; ++i) {
    free(tok->normalizers[i].pattern);
    free(tok->normalizers[i].content);
  }
  free(tok->normalizers);
  for (size_t i = 0; i < tok->pretokenizer_count; ++i) {
    tk_regex_free(tok->pretokenizers[i].regex);
    free(tok->pretokenizers[i].replacement);
  }
  free(tok->pretokenizers);
  for (size_t i = 0; i < tok->decoder_count; ++i) {
    free(tok->decoders[i].pattern);
    free(tok->decoders[i].content);
  }
  free(tok->decoders);
  tk_trie_free(&tok->added);
  tk_regex_free(tok->word_char);
  tk_regex_free(tok->space_char);
  free(tok->prefix_ids);
  free(tok->suffix_ids);
  free(tok);
}

uint32_t afm_tokenizer_id_limit(const afm_tokenizer *tok) {
  return tok ? tok->id_limit : 0;
}

const uint32_t *afm_tokenizer_prefix_ids(const afm_tokenizer *tok,
                                         size_t *count) {
  *count = tok ? tok->prefix_count : 0;
  return tok ? tok->prefix_ids : NULL;
}

const uint32_t *afm_tokenizer_suffix_ids(const afm_tokenizer *tok,
                                         size_t *count) {
  *count = tok ? tok->suffix_count : 0;
  return tok ? tok->suffix_ids : NULL;
}
