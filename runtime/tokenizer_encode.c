/*===- tokenizer_encode.c - text to ids -----------------------------------===*
 *
 * tokenizers' encode with add_special_tokens = false: the raw text is cut
 * at its added tokens; each stretch between them is normalized,
 * pre-tokenized into words and each word run through BPE.
 *
 *===----------------------------------------------------------------------===*/

#include "error.h"
#include "tokenizer_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct scratch {
  tk_buf raw, normalized, pieces[2];
  tk_spans spans[2];
  tk_bpe_scratch bpe;
} scratch;

static void freeScratch(scratch *s) {
  free(s->raw.data);
  free(s->normalized.data);
  free(s->pieces[0].data);
  free(s->pieces[1].data);
  free(s->spans[0].items);
  free(s->spans[1].items);
  tk_bpe_scratch_free(&s->bpe);
}

/* `atTextStart`: the stretch begins the text (no added token before it). */
static afm_status encodeStretch(const afm_tokenizer *tok, const char *text,
                                size_t n, int atTextStart, scratch *s,
                                tk_ids *out) {
  if (n == 0)
    return AFM_OK;
  s->raw.size = 0;
  afm_status status = tk_buf_append(&s->raw, text, n);
  tk_buf *normalized = NULL;
  if (status == AFM_OK)
    status = tk_normalize(tok, &s->raw, &s->normalized, &normalized);
  if (status != AFM_OK || normalized->size == 0)
    return status;
  /* Pieces alternate between two buffers, one per pre-tokenizer. */
  tk_buf *buf = normalized;
  tk_spans *spans = &s->spans[0];
  spans->count = 0;
  status = tk_spans_push(spans, 0, normalized->size);
  for (size_t i = 0; i < tok->pretokenizer_count && status == AFM_OK; ++i) {
    int next = (spans == &s->spans[0]);
    status = tk_pretokenize(&tok->pretokenizers[i], buf, spans, atTextStart,
                            &s->pieces[next], &s->spans[next]);
    buf = &s->pieces[next];
    spans = &s->spans[next];
  }
  for (size_t i = 0; i < spans->count && status == AFM_OK; ++i)
    status = tk_bpe_word(tok, buf->data + spans->items[i].start,
                         spans->items[i].length, &s->bpe, out);
  return status;
}

/* The start of the character that ends at `end`. */
static size_t previousChar(const char *text, size_t end) {
  size_t i = end - 1;
  while (i > 0 && ((unsigned char)text[i] & 0xc0) == 0x80)
    --i;
  return i;
}

/* Whether the character before `at` is a word character (Rust's \w). */
static int isWordBefore(const afm_tokenizer *tok, const char *text, size_t at) {
  return tk_regex_matches_at(tok->word_char, text, at, previousChar(text, at));
}

afm_status afm_tokenizer_encode(const afm_tokenizer *tok, const char *text,
                                size_t length, int32_t **ids, size_t *count) {
  if (!tok || (!text && length) || !ids || !count)
    return afm_error(AFM_ERR_ARGUMENT, "afm_tokenizer_encode: NULL argument");
  *ids = NULL;
  *count = 0;
  size_t bad = tk_utf8_check(text, length);
  if (bad != length)
    return afm_error(AFM_ERR_ARGUMENT,
                     "afm_tokenizer_encode: the text is not valid UTF-8 at "
                     "byte %zu",
                     bad);
  scratch s;
  memset(&s, 0, sizeof(s));
  tk_ids out = {NULL, 0, 0};
  afm_status status = AFM_OK;
  /* tokenizers' AddedVocabulary::find_matches: matches come from a
   * non-overlapping scan (`scan`), one discarded by single_word still
   * consumes its text, and lstrip/rstrip widen a match over whitespace,
   * lstrip never back into text already emitted (`emitted`). */
  size_t scan = 0, emitted = 0, start, matched;
  int32_t id;
  while (status == AFM_OK &&
         tk_trie_find(&tok->added, text, length, scan, &start, &matched, &id)) {
    size_t stop = start + matched;
    scan = stop;
    uint8_t flags = tok->flags[id];
    if ((flags & TK_ID_SINGLE_WORD) &&
        ((start > 0 && isWordBefore(tok, text, start)) ||
         (stop < length &&
          tk_regex_matches_at(tok->word_char, text, length, stop))))
      continue;
    if (flags & TK_ID_LSTRIP) {
      size_t widened = start;
      while (widened > emitted) {
        size_t previous = previousChar(text, widened);
        if (!tk_regex_matches_at(tok->space_char, text, length, previous))
          break;
        widened = previous;
      }
      start = widened;
    }
    if (flags & TK_ID_RSTRIP)
      while (stop < length &&
             tk_regex_matches_at(tok->space_char, text, length, stop))
        stop += tk_utf8_char_length((unsigned char)text[stop]);
    if (emitted < start)
      status = encodeStretch(tok, text + emitted, start - emitted, emitted == 0,
                             &s, &out);
    if (status == AFM_OK)
      status = tk_ids_push(&out, id);
    emitted = stop;
  }
  if (status == AFM_OK && emitted < length)
    status = encodeStretch(tok, text + emitted, length - emitted, emitted == 0,
                           &s, &out);
  freeScratch(&s);
  if (status != AFM_OK) {
    free(out.items);
    return status;
  }
  *ids = out.items;
  *count = out.count;
  return AFM_OK;
}
