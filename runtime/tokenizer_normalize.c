/*===- tokenizer_normalize.c - the normalizer chain -----------------------===*
 *
 * Unicode normalization forms through utf8proc (Debian's libutf8proc), the
 * rest by hand. Offsets are not tracked: encode returns ids only.
 *
 *===----------------------------------------------------------------------===*/

#include "error.h"
#include "tokenizer_internal.h"

#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

static afm_status unicodeForm(tk_normalizer_kind kind, const tk_buf *in,
                              tk_buf *out) {
  int options = UTF8PROC_STABLE;
  switch (kind) {
  case TK_NFC:
    options |= UTF8PROC_COMPOSE;
    break;
  case TK_NFD:
    options |= UTF8PROC_DECOMPOSE;
    break;
  case TK_NFKC:
    options |= UTF8PROC_COMPOSE | UTF8PROC_COMPAT;
    break;
  default:
    options |= UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT;
    break;
  }
  out->size = 0;
  if (in->size == 0)
    return AFM_OK;
  utf8proc_uint8_t *mapped = NULL;
  utf8proc_ssize_t length = utf8proc_map((const utf8proc_uint8_t *)in->data,
                                         (utf8proc_ssize_t)in->size, &mapped,
                                         (utf8proc_option_t)options);
  if (length < 0)
    return afm_error(
        length == UTF8PROC_ERROR_NOMEM ? AFM_ERR_MEMORY : AFM_ERR_ARGUMENT,
        "tokenizer: Unicode normalization failed: %s", utf8proc_errmsg(length));
  afm_status status = tk_buf_append(out, mapped, (size_t)length);
  free(mapped);
  return status;
}

/* Every occurrence of the pattern, left to right without overlap (Rust's
 * str::replace). */
static afm_status replace(const tk_normalizer *n, const tk_buf *in,
                          tk_buf *out) {
  out->size = 0;
  size_t i = 0, run = 0;
  while (i + n->pattern_length <= in->size) {
    if (memcmp(in->data + i, n->pattern, n->pattern_length) != 0) {
      ++i;
      continue;
    }
    afm_status status = tk_buf_append(out, in->data + run, i - run);
    if (status == AFM_OK)
      status = tk_buf_append(out, n->content, n->content_length);
    if (status != AFM_OK)
      return status;
    i += n->pattern_length;
    run = i;
  }
  return tk_buf_append(out, in->data + run, in->size - run);
}

afm_status tk_normalize(const afm_tokenizer *tok, tk_buf *in, tk_buf *out,
                        tk_buf **result) {
  tk_buf *current = in, *next = out;
  for (size_t i = 0; i < tok->normalizer_count; ++i) {
    const tk_normalizer *n = &tok->normalizers[i];
    afm_status status = AFM_OK;
    switch (n->kind) {
    case TK_PREPEND:
      /* tokenizers prepends to non-empty text only. */
      if (current->size == 0)
        continue;
      next->size = 0;
      status = tk_buf_append(next, n->content, n->content_length);
      if (status == AFM_OK)
        status = tk_buf_append(next, current->data, current->size);
      break;
    case TK_REPLACE:
      status = replace(n, current, next);
      break;
    default:
      status = unicodeForm(n->kind, current, next);
      break;
    }
    if (status != AFM_OK)
      return status;
    tk_buf *swap = current;
    current = next;
    next = swap;
  }
  *result = current;
  return AFM_OK;
}
