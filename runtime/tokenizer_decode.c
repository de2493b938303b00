/*===- tokenizer_decode.c - ids to text through the decoder chain ---------===*
 *
 * tokenizers' decode: every id's token text (added tokens included) goes
 * through the decoder chain as a list of strings, each decoder mapping the
 * list to a new one, and the result is their concatenation.
 *
 *===----------------------------------------------------------------------===*/

#include "error.h"
#include "tokenizer_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct tokenList {
  tk_buf buf;
  tk_spans spans;
} tokenList;

static afm_status pushToken(tokenList *list, const char *text, size_t n) {
  size_t start = list->buf.size;
  afm_status status = tk_buf_append(&list->buf, text, n);
  return status == AFM_OK ? tk_spans_push(&list->spans, start, n) : status;
}

static const char *tokenText(const tokenList *list, size_t i) {
  return list->buf.data + list->spans.items[i].start;
}

int tk_byte_level_byte(unsigned code) {
  if ((code >= 0x21 && code <= 0x7e) || (code >= 0xa1 && code <= 0xac) ||
      (code >= 0xae && code <= 0xff))
    return (int)code;
  if (code >= 0x100 && code <= 0x120)
    return (int)(code - 0x100);
  if (code >= 0x121 && code <= 0x142)
    return (int)(0x7f + code - 0x121);
  if (code == 0x143)
    return 0xad;
  return -1;
}

unsigned tk_decode_char(const unsigned char *s, size_t length) {
  switch (length) {
  case 1:
    return s[0];
  case 2:
    return ((s[0] & 0x1fu) << 6) | (s[1] & 0x3fu);
  case 3:
    return ((s[0] & 0x0fu) << 12) | ((s[1] & 0x3fu) << 6) | (s[2] & 0x3fu);
  default:
    return ((s[0] & 0x07u) << 18) | ((s[1] & 0x3fu) << 12) |
           ((s[2] & 0x3fu) << 6) | (s[3] & 0x3fu);
  }
}

/* All tokens' bytes, each character mapped back to its byte (a token with
 * any other character keeps its UTF-8), then one lossy UTF-8 string. */
static afm_status byteLevel(const tokenList *in, tokenList *out) {
  tk_buf bytes = {NULL, 0, 0};
  afm_status status = AFM_OK;
  for (size_t t = 0; t < in->spans.count && status == AFM_OK; ++t) {
    const unsigned char *s = (const unsigned char *)tokenText(in, t);
    size_t n = in->spans.items[t].length, mark = bytes.size;
    int mapped = 1;
    for (size_t i = 0; i < n && mapped && status == AFM_OK;) {
      size_t length = tk_utf8_char_length(s[i]);
      int b = tk_byte_level_byte(tk_decode_char(s + i, length));
      if (b < 0)
        mapped = 0;
      else {
        unsigned char byte = (unsigned char)b;
        status = tk_buf_append(&bytes, &byte, 1);
      }
      i += length;
    }
    if (!mapped) {
      bytes.size = mark;
      status = tk_buf_append(&bytes, s, n);
    }
  }
  size_t start = out->buf.size;
  if (status == AFM_OK)
    status = tk_utf8_append_lossy(&out->buf, bytes.data, bytes.size);
  if (status == AFM_OK)
    status = tk_spans_push(&out->spans, start, out->buf.size - start);
  free(bytes.data);
  return status;
}

static int hexDigit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

int tk_fallback_byte(const char *s, size_t n) {
  if (n != 6 || memcmp(s, "<0x", 3) != 0 || s[5] != '>')
    return -1;
  if (s[3] == '+')
    return hexDigit(s[4]);
  int hi = hexDigit(s[3]), lo = hexDigit(s[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

static afm_status flushBytes(tk_buf *bytes, tokenList *out) {
  if (bytes->size == 0)
    return AFM_OK;
  afm_status status = AFM_OK;
  if (tk_utf8_check(bytes->data, bytes->size) == bytes->size)
    status = pushToken(out, bytes->data, bytes->size);
  else /* one U+FFFD per byte, as tokenizers' ByteFallback does */
    for (size_t i = 0; i < bytes->size && status == AFM_OK; ++i)
      status = pushToken(out, "\xef\xbf\xbd", 3);
  bytes->size = 0;
  return status;
}

static afm_status byteFallback(const tokenList *in, tokenList *out) {
  tk_buf bytes = {NULL, 0, 0};
  afm_status status = AFM_OK;
  for (size_t t = 0; t < in->spans.count && status == AFM_OK; ++t) {
    const char *s = tokenText(in, t);
    size_t n = in->spans.items[t].length;
    int b = tk_fallback_byte(s, n);
    if (b >= 0) {
      unsigned char byte = (unsigned char)b;
      status = tk_buf_append(&bytes, &byte, 1);
      continue;
    }
    status = flushBytes(&bytes, out);
    if (status == AFM_OK)
      status = pushToken(out, s, n);
  }
  if (status == AFM_OK)
    status = flushBytes(&bytes, out);
  free(bytes.data);
  return status;
}

static afm_status replace(const tk_decoder *d, const tokenList *in,
                          tokenList *out) {
  afm_status status = AFM_OK;
  for (size_t t = 0; t < in->spans.count && status == AFM_OK; ++t) {
    const char *s = tokenText(in, t);
    size_t n = in->spans.items[t].length, start = out->buf.size;
    size_t i = 0, run = 0;
    while (i + d->pattern_length <= n && status == AFM_OK) {
      if (memcmp(s + i, d->pattern, d->pattern_length) != 0) {
        ++i;
        continue;
      }
      status = tk_buf_append(&out->buf, s + run, i - run);
      if (status == AFM_OK)
        status = tk_buf_append(&out->buf, d->content, d->content_length);
      i += d->pattern_length;
      run = i;
    }
    if (status == AFM_OK)
      status = tk_buf_append(&out->buf, s + run, n - run);
    if (status == AFM_OK)
      status = tk_spans_push(&out->spans, start, out->buf.size - start);
  }
  return status;
}

void tk_strip_span(const tk_decoder *d, const char *s, size_t n,
                   size_t *begin, size_t *end) {
  size_t c = d->content_length;
  *begin = 0;
  *end = n;
  if (c == 0)
    return;
  for (uint32_t k = 0; k < d->start && *begin + c <= *end &&
                       memcmp(s + *begin, d->content, c) == 0;
       ++k)
    *begin += c;
  for (uint32_t k = 0; k < d->stop && *end >= *begin + c &&
                       memcmp(s + *end - c, d->content, c) == 0;
       ++k)
    *end -= c;
}

/* Up to `start` leading and `stop` trailing copies of one character off
 * each token. */
static afm_status strip(const tk_decoder *d, const tokenList *in,
                        tokenList *out) {
  afm_status status = AFM_OK;
  for (size_t t = 0; t < in->spans.count && status == AFM_OK; ++t) {
    const char *s = tokenText(in, t);
    size_t begin, end;
    tk_strip_span(d, s, in->spans.items[t].length, &begin, &end);
    status = pushToken(out, s + begin, end - begin);
  }
  return status;
}

/* The replacement becomes a space, except in the first token, which loses
 * every one unless the scheme is "never" (tokenizers' Metaspace decoder). */
static afm_status metaspace(const tk_decoder *d, const tokenList *in,
                            tokenList *out) {
  afm_status status = AFM_OK;
  size_t c = d->content_length;
  for (size_t t = 0; t < in->spans.count && status == AFM_OK; ++t) {
    const char *s = tokenText(in, t);
    size_t n = in->spans.items[t].length, start = out->buf.size;
    int drop = t == 0 && d->prepend_scheme != TK_PREPEND_NEVER;
    status = tk_buf_append(&out->buf, "", 0);
    for (size_t i = 0, run = 0; i <= n && status == AFM_OK;) {
      if (i < n && (i + c > n || memcmp(s + i, d->content, c) != 0)) {
        ++i;
        continue;
      }
      status = tk_buf_append(&out->buf, s + run, i - run);
      if (i == n)
        break;
      if (status == AFM_OK && !drop)
        status = tk_buf_append(&out->buf, " ", 1);
      i += c;
      run = i;
    }
    if (status == AFM_OK)
      status = tk_spans_push(&out->spans, start, out->buf.size - start);
  }
  return status;
}

static afm_status fuse(const tokenList *in, tokenList *out) {
  /* Allocates the buffer even for no tokens: the one token it makes must
   * point somewhere. */
  afm_status status = tk_buf_append(&out->buf, "", 0);
  size_t start = out->buf.size;
  for (size_t t = 0; t < in->spans.count && status == AFM_OK; ++t)
    status =
        tk_buf_append(&out->buf, tokenText(in, t), in->spans.items[t].length);
  return status == AFM_OK
             ? tk_spans_push(&out->spans, start, out->buf.size - start)
             : status;
}

afm_status tk_decode(const afm_tokenizer *tok, const int32_t *ids, size_t count,
                     int skip_special, tk_buf *out) {
  tokenList lists[2];
  memset(lists, 0, sizeof(lists));
  tokenList *current = &lists[0], *next = &lists[1];
  afm_status status = AFM_OK;
  for (size_t i = 0; i < count && status == AFM_OK; ++i) {
    int32_t id = ids[i];
    if (id < 0 || (uint32_t)id >= tok->id_limit) {
      status = afm_error(AFM_ERR_ARGUMENT,
                         "afm_tokenizer_decode: id %d at %zu is outside [0, "
                         "%u)",
                         id, i, tok->id_limit);
      break;
    }
    uint8_t flags = tok->flags[id];
    /* Ids without a token are skipped, as tokenizers does. */
    if (!(flags & TK_ID_PRESENT) || (skip_special && (flags & TK_ID_SPECIAL)))
      continue;
    status = pushToken(current, tok->texts + tok->text_start[id],
                       tok->text_length[id]);
  }
  for (size_t i = 0; i < tok->decoder_count && status == AFM_OK; ++i) {
    const tk_decoder *d = &tok->decoders[i];
    next->buf.size = 0;
    next->spans.count = 0;
    switch (d->kind) {
    case TK_DEC_BYTE_LEVEL:
      status = byteLevel(current, next);
      break;
    case TK_DEC_BYTE_FALLBACK:
      status = byteFallback(current, next);
      break;
    case TK_DEC_FUSE:
      status = fuse(current, next);
      break;
    case TK_DEC_REPLACE:
      status = replace(d, current, next);
      break;
    case TK_DEC_STRIP:
      status = strip(d, current, next);
      break;
    case TK_DEC_METASPACE:
      status = metaspace(d, current, next);
      break;
    }
    tokenList *swap = current;
    current = next;
    next = swap;
  }
  for (size_t t = 0; t < current->spans.count && status == AFM_OK; ++t)
    status = tk_buf_append(out, tokenText(current, t),
                           current->spans.items[t].length);
  for (int k = 0; k < 2; ++k) {
    free(lists[k].buf.data);
    free(lists[k].spans.items);
  }
  return status;
}

afm_status afm_tokenizer_decode(const afm_tokenizer *tok, const int32_t *ids,
                                size_t count, int skip_special, char **text,
                                size_t *length) {
  if (!tok || (!ids && count) || !text || !length)
    return afm_error(AFM_ERR_ARGUMENT, "afm_tokenizer_decode: NULL argument");
  *text = NULL;
  *length = 0;
  tk_buf out = {NULL, 0, 0};
  afm_status status = tk_decode(tok, ids, count, skip_special, &out);
  if (status == AFM_OK)
    status = tk_buf_append(&out, "", 0); /* room for the NUL */
  if (status != AFM_OK) {
    free(out.data);
    return status;
  }
  out.data[out.size] = '\0';
  *text = out.data;
  *length = out.size;
  return AFM_OK;
}
