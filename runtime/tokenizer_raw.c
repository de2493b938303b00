/*===- tokenizer_raw.c - the exact bytes one token adds mid-text ----------===*
 *
 * Constrained decoding (grammar.c) needs, for every id, the bytes the
 * token contributes to the text, before decode's lossy UTF-8 step: a
 * byte-level token may be half a character, and a grammar over bytes must
 * see that half. This runs the decoder chain on one token as if it stood
 * in the middle of a text:
 *   ByteLevel     each character back to its byte, no U+FFFD repair
 *   ByteFallback  "<0xNN>" is the byte NN
 *   Replace       applied (e.g. Llama 2's U+2581 -> space)
 *   Metaspace     the replacement is a space (never dropped: not the
 *                 first token)
 *   Strip         applied while the chain still works per token; after a
 *                 Fuse or ByteLevel (which join all tokens into one) it
 *                 only touches the start and end of the whole text, so a
 *                 token in the middle keeps its bytes
 * So for ordinary tokens the concatenated bytes equal
 * afm_tokenizer_decode of the same ids whenever that text is valid UTF-8,
 * except at the very start of a text, where a leading-space Strip or a
 * Metaspace "first" scheme removes a space: callers treat generated text
 * as a continuation. Added and special tokens give no bytes.
 *
 *===----------------------------------------------------------------------===*/

#include "error.h"
#include "tokenizer_internal.h"

#include <stdlib.h>
#include <string.h>

/* Appends s[0..n) with every `pattern` replaced by `content`. */
static afm_status rawReplace(tk_buf *out, const char *s, size_t n,
                             const char *pattern, size_t patternLength,
                             const char *content, size_t contentLength) {
  afm_status status = tk_buf_append(out, "", 0);
  size_t i = 0, run = 0;
  while (patternLength && i + patternLength <= n && status == AFM_OK) {
    if (memcmp(s + i, pattern, patternLength) != 0) {
      ++i;
      continue;
    }
    status = tk_buf_append(out, s + run, i - run);
    if (status == AFM_OK)
      status = tk_buf_append(out, content, contentLength);
    i += patternLength;
    run = i;
  }
  return status == AFM_OK ? tk_buf_append(out, s + run, n - run) : status;
}

/* One decoder on the token's current bytes (cur), result in next. */
static afm_status rawStep(const tk_decoder *d, const tk_buf *cur, tk_buf *next,
                          int *joined) {
  const unsigned char *s = (const unsigned char *)cur->data;
  size_t n = cur->size;
  afm_status status = tk_buf_append(next, "", 0);
  switch (d->kind) {
  case TK_DEC_BYTE_LEVEL: {
    int mapped = 1;
    for (size_t i = 0; i < n && mapped && status == AFM_OK;) {
      size_t length = tk_utf8_char_length(s[i]);
      if (i + length > n)
        length = n - i;
      int b = tk_byte_level_byte(tk_decode_char(s + i, length));
      if (b < 0)
        mapped = 0;
      else {
        unsigned char byte = (unsigned char)b;
        status = tk_buf_append(next, &byte, 1);
      }
      i += length;
    }
    if (!mapped) {
      next->size = 0;
      status = tk_buf_append(next, s, n);
    }
    *joined = 1;
    return status;
  }
  case TK_DEC_BYTE_FALLBACK: {
    int b = tk_fallback_byte((const char *)s, n);
    if (b >= 0) {
      unsigned char byte = (unsigned char)b;
      return tk_buf_append(next, &byte, 1);
    }
    return tk_buf_append(next, s, n);
  }
  case TK_DEC_FUSE:
    *joined = 1;
    return tk_buf_append(next, s, n);
  case TK_DEC_REPLACE:
    return rawReplace(next, (const char *)s, n, d->pattern, d->pattern_length,
                      d->content, d->content_length);
  case TK_DEC_METASPACE:
    return rawReplace(next, (const char *)s, n, d->content, d->content_length,
                      " ", 1);
  case TK_DEC_STRIP: {
    size_t begin = 0, end = n;
    if (!*joined)
      tk_strip_span(d, (const char *)s, n, &begin, &end);
    return tk_buf_append(next, s + begin, end - begin);
  }
  }
  return status;
}

int tk_token_raw_bytes(const afm_tokenizer *tok, int32_t id, tk_buf *out,
                       tk_buf *scratch, afm_status *status) {
  *status = AFM_OK;
  out->size = 0;
  if (id < 0 || (uint32_t)id >= tok->id_limit)
    return 0;
  uint8_t flags = tok->flags[id];
  if (!(flags & TK_ID_PRESENT) || (flags & (TK_ID_ADDED | TK_ID_SPECIAL)))
    return 0;
  tk_buf *cur = out, *next = scratch;
  *status = tk_buf_append(cur, tok->texts + tok->text_start[id],
                          tok->text_length[id]);
  int joined = 0;
  for (size_t i = 0; i < tok->decoder_count && *status == AFM_OK; ++i) {
    next->size = 0;
    *status = rawStep(&tok->decoders[i], cur, next, &joined);
    tk_buf *swap = cur;
    cur = next;
    next = swap;
  }
  if (*status == AFM_OK && cur != out) {
    out->size = 0;
    *status = tk_buf_append(out, cur->data, cur->size);
  }
  return *status == AFM_OK;
}

afm_status afm_tokenizer_token_bytes(const afm_tokenizer *tokenizer,
                                     int32_t id, char **bytes,
                                     size_t *length) {
  if (!tokenizer || !bytes || !length)
    return afm_error(AFM_ERR_ARGUMENT,
                     "afm_tokenizer_token_bytes: NULL argument");
  *bytes = NULL;
  *length = 0;
  if (id < 0 || (uint32_t)id >= tokenizer->id_limit)
    return afm_error(AFM_ERR_ARGUMENT,
                     "afm_tokenizer_token_bytes: id %d is outside [0, %u)", id,
                     tokenizer->id_limit);
  tk_buf out = {NULL, 0, 0}, scratch = {NULL, 0, 0};
  afm_status status;
  int has = tk_token_raw_bytes(tokenizer, id, &out, &scratch, &status);
  free(scratch.data);
  if (status == AFM_OK && has)
    status = tk_buf_append(&out, "", 0); /* non-NULL even when empty */
  if (status != AFM_OK || !has) {
    free(out.data);
    return status;
  }
  *bytes = out.data;
  *length = out.size;
  return AFM_OK;
}
