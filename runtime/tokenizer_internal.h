/*===- tokenizer_internal.h - the loaded tokenizer and its parts ---*- C -*-===*
 *
 * A tokenizer loaded from runtime/proto/tokenizer.proto, resolved into the
 * tables encode and decode use: hash maps for the vocabulary and the
 * merges, an id -> text table, a byte trie for the added tokens, compiled
 * PCRE2 patterns. Immutable after afm_tokenizer_load; every call keeps its
 * scratch memory to itself.
 *
 *===----------------------------------------------------------------------===*/

#ifndef AFM_RUNTIME_TOKENIZER_INTERNAL_H
#define AFM_RUNTIME_TOKENIZER_INTERNAL_H

#include "afm/tokenizer.h"

#include <stddef.h>
#include <stdint.h>

#define AFM_TOKENIZER_FORMAT_VERSION 1u
/* Ids are kept below this bound so that tables indexed by id stay small
 * for any input (real vocabularies have at most a few hundred thousand). */
#define AFM_TOKENIZER_MAX_ID (1u << 24)

/*--- Growing buffers ------------------------------------------------------*/

typedef struct tk_buf {
  char *data;
  size_t size, capacity;
} tk_buf;

typedef struct tk_span {
  size_t start, length;
} tk_span;

typedef struct tk_spans {
  tk_span *items;
  size_t count, capacity;
} tk_spans;

typedef struct tk_ids {
  int32_t *items;
  size_t count, capacity;
} tk_ids;

/* Each returns AFM_OK or AFM_ERR_MEMORY (with the message set). */
afm_status tk_buf_append(tk_buf *buf, const void *data, size_t size);
afm_status tk_spans_push(tk_spans *spans, size_t start, size_t length);
afm_status tk_ids_push(tk_ids *ids, int32_t id);

/*--- UTF-8 ----------------------------------------------------------------*/

/* Length of the valid UTF-8 sequence at `s` (at most `n` bytes), 0 if
 * there is none. */
size_t tk_utf8_valid_length(const unsigned char *s, size_t n);
/* The byte offset of the first invalid sequence, or `n` if all is valid. */
size_t tk_utf8_check(const char *s, size_t n);
/* Appends `s` with every maximal invalid subsequence replaced by U+FFFD,
 * as Rust's String::from_utf8_lossy does. */
afm_status tk_utf8_append_lossy(tk_buf *out, const char *s, size_t n);
/* Length of the character starting at a valid UTF-8 lead byte. */
static inline size_t tk_utf8_char_length(unsigned char lead) {
  return lead < 0x80 ? 1 : lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4;
}

/*--- Hash maps ------------------------------------------------------------*/

uint64_t tk_hash_bytes(const void *data, size_t size);

/* Strings (slices of one blob) to ids, open addressing. */
typedef struct tk_strmap {
  uint32_t *slots; /* entry index + 1, 0 = empty */
  size_t mask;
  const char *blob;
  const uint32_t *starts, *lengths, *ids; /* per entry */
} tk_strmap;

/* Id of `key`, or -1. */
int64_t tk_strmap_get(const tk_strmap *map, const char *key, size_t size);

/* (left, right) id pairs to (rank, merged id). */
typedef struct tk_pairmap {
  uint64_t *keys; /* (left << 32 | right) + 1, 0 = empty */
  uint32_t *ranks, *merged;
  size_t mask;
} tk_pairmap;

/* Whether the pair merges, and into what at which rank. */
int tk_pairmap_get(const tk_pairmap *map, uint32_t left, uint32_t right,
                   uint32_t *rank, uint32_t *merged);
/* Inserts into a map with free slots; 0 if the pair is already there. */
int tk_pairmap_insert(tk_pairmap *map, uint32_t left, uint32_t right,
                      uint32_t rank, uint32_t merged);

/*--- The tokenizer --------------------------------------------------------*/

typedef enum tk_normalizer_kind {
  TK_NFC,
  TK_NFD,
  TK_NFKC,
  TK_NFKD,
  TK_PREPEND,
  TK_REPLACE
} tk_normalizer_kind;

typedef struct tk_normalizer {
  tk_normalizer_kind kind;
  char *pattern, *content;
  size_t pattern_length, content_length;
} tk_normalizer;

typedef enum tk_behavior {
  TK_REMOVED,
  TK_ISOLATED,
  TK_MERGED_WITH_PREVIOUS,
  TK_MERGED_WITH_NEXT,
  TK_CONTIGUOUS
} tk_behavior;

typedef enum tk_pretokenizer_kind {
  TK_PRE_SPLIT,
  TK_PRE_BYTE_LEVEL,
  TK_PRE_METASPACE
} tk_pretokenizer_kind;

typedef enum tk_prepend_scheme {
  TK_PREPEND_ALWAYS,
  TK_PREPEND_NEVER,
  TK_PREPEND_FIRST
} tk_prepend_scheme;

typedef struct tk_pretokenizer {
  tk_pretokenizer_kind kind;
  void *regex; /* pcre2_code_8 *, NULL for ByteLevel without a split */
  tk_behavior behavior;
  int invert;
  int add_prefix_space;
  /* Metaspace */
  char *replacement;
  size_t replacement_length;
  tk_prepend_scheme prepend_scheme;
  int split;
} tk_pretokenizer;

typedef enum tk_decoder_kind {
  TK_DEC_BYTE_LEVEL,
  TK_DEC_BYTE_FALLBACK,
  TK_DEC_FUSE,
  TK_DEC_REPLACE,
  TK_DEC_STRIP,
  TK_DEC_METASPACE
} tk_decoder_kind;

typedef struct tk_decoder {
  tk_decoder_kind kind;
  char *pattern, *content;
  size_t pattern_length, content_length;
  uint32_t start, stop;
  tk_prepend_scheme prepend_scheme;
} tk_decoder;

/* The added tokens' byte trie: node 0 is the root; children through a
 * (node, byte) hash. */
typedef struct tk_trie {
  uint64_t *keys; /* (node << 8 | byte) + 1, 0 = empty */
  uint32_t *children;
  size_t mask;
  int32_t *token; /* per node: the added token ending there, or -1 */
  size_t node_count;
  uint8_t first_bytes[32]; /* bitmap of the root's children */
} tk_trie;

enum {
  TK_ID_PRESENT = 1,
  TK_ID_ADDED = 2,
  TK_ID_SPECIAL = 4,
  /* Added tokens' matching options. */
  TK_ID_LSTRIP = 8,
  TK_ID_RSTRIP = 16,
  TK_ID_SINGLE_WORD = 32
};

struct afm_tokenizer {
  uint32_t id_limit;
  /* id -> text: texts[text_start[id] .. + text_length[id]], flags[id]. */
  char *texts;
  uint32_t *text_start, *text_length;
  uint8_t *flags;

  /* The model's vocabulary (added tokens are not in it). */
  char *vocab_blob;
  uint32_t *vocab_starts, *vocab_lengths, *vocab_ids;
  tk_strmap vocab;
  tk_pairmap merges;
  int32_t byte_ids[256]; /* <0xNN> tokens, -1 where absent */
  int has_unk, fuse_unk, byte_fallback, ignore_merges;
  uint32_t unk_id;

  tk_normalizer *normalizers;
  size_t normalizer_count;
  tk_pretokenizer *pretokenizers;
  size_t pretokenizer_count;
  tk_decoder *decoders;
  size_t decoder_count;
  tk_trie added;
  /* One character of Rust's regex \w, and of \s (White_Space): what
   * single_word, lstrip and rstrip look at. */
  void *word_char, *space_char;

  uint32_t *prefix_ids, *suffix_ids;
  size_t prefix_count, suffix_count;
};

/*--- Steps of encode and decode (tokenizer_*.c) -----------------------------*/

/* tokenizer_added.c: the trie of the added tokens. */
afm_status tk_trie_build(afm_tokenizer *tok);
void tk_trie_free(tk_trie *trie);
/* The leftmost-longest added token in text[from..n): its start, length and
 * id; 0 if none. */
int tk_trie_find(const tk_trie *trie, const char *text, size_t n, size_t from,
                 size_t *start, size_t *length, int32_t *id);

/* Whether the character at text[at] (of n bytes) matches `regex`, a
 * one-character class from tk_regex_compile. */
int tk_regex_matches_at(void *regex, const char *text, size_t n, size_t at);

/* tokenizer_normalize.c: applies every normalizer to `in`, result in
 * `out` (both are reset as needed). */
afm_status tk_normalize(const afm_tokenizer *tok, tk_buf *in, tk_buf *out,
                        tk_buf **result);

/* tokenizer_pretokenize.c: one pre-tokenizer over the pieces of `buf`;
 * the new pieces (and bytes) go to out_buf/out_spans. `at_text_start`:
 * the piece starting at 0 starts the whole text (Metaspace's "first"). */
afm_status tk_pretokenize(const tk_pretokenizer *pre, const tk_buf *buf,
                          const tk_spans *spans, int at_text_start,
                          tk_buf *out_buf, tk_spans *out_spans);
/* Compiles a PCRE2 pattern (UTF, UCP); NULL with the message set. */
void *tk_regex_compile(const char *pattern, size_t length, const char *where);
void tk_regex_free(void *regex);

/* tokenizer_bpe.c: the ids of one pre-tokenized word. */
typedef struct tk_bpe_scratch {
  void *symbols, *heap;
  size_t symbol_capacity, heap_capacity;
} tk_bpe_scratch;
afm_status tk_bpe_word(const afm_tokenizer *tok, const char *word,
                       size_t length, tk_bpe_scratch *scratch, tk_ids *out);
void tk_bpe_scratch_free(tk_bpe_scratch *scratch);

/* tokenizer_decode.c: the text of `count` ids, appended to `out`. */
afm_status tk_decode(const afm_tokenizer *tok, const int32_t *ids, size_t count,
                     int skip_special, tk_buf *out);

/* tokenizer_decode.c: GPT-2's unicode_to_bytes (the byte of a byte-level
 * character, or -1); the code point of a UTF-8 character of `length`
 * bytes; the byte of a "<0xNN>" token (Rust's u8::from_str_radix on "NN",
 * which also takes "+N"), or -1. */
int tk_byte_level_byte(unsigned code);
unsigned tk_decode_char(const unsigned char *s, size_t length);
int tk_fallback_byte(const char *s, size_t n);
/* Strip's span of s[0..n): up to `start` leading and `stop` trailing
 * copies of its character off. */
void tk_strip_span(const tk_decoder *d, const char *s, size_t n,
                   size_t *begin, size_t *end);

/* tokenizer_raw.c: the bytes token `id` adds in the middle of a text
 * (decoder chain without the lossy UTF-8 step) into `out`; 0 for ids that
 * give none (added, special, absent) or on failure (*status set). */
int tk_token_raw_bytes(const afm_tokenizer *tok, int32_t id, tk_buf *out,
                       tk_buf *scratch, afm_status *status);

#endif /* AFM_RUNTIME_TOKENIZER_INTERNAL_H */
