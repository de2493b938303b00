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
  size_t position = 0;
  while (status == AFM_OK && position < length) {
    size_t start = length, matched = 0;
    int32_t id = -1;
    if (!tk_trie_find(&tok->added, text, length, position, &start, &matched,
                      &id))
      start = length;
    status = encodeStretch(tok, text + position, start - position,
                           position == 0, &s, &out);
    if (status == AFM_OK && id >= 0)
      status = tk_ids_push(&out, id);
    position = start + matched;
  }
  freeScratch(&s);
  if (status != AFM_OK) {
    free(out.items);
    return status;
  }
  *ids = out.items;
  *count = out.count;
  return AFM_OK;
}
