/*===- tokenizer_stream.c - streaming detokenization ----------------------===*
 *
 * tokenizers' DecodeStream: the ids since the last release are decoded
 * again with each new one, and the text beyond what the previous window
 * decoded to is released once it no longer ends in U+FFFD. An incomplete
 * UTF-8 character (a byte token of a multi-byte character, a byte-level
 * token cut inside one) decodes to U+FFFD, so it is held back until the
 * rest arrives. Decoding the window rather than the last id alone keeps
 * the decoders' context (Strip drops the first space only at the start).
 *
 *===----------------------------------------------------------------------===*/

#include "error.h"
#include "tokenizer_internal.h"

#include <stdlib.h>
#include <string.h>

struct afm_detokenizer {
  const afm_tokenizer *tok;
  int skip_special;
  tk_ids ids;          /* the window */
  size_t prefix_index; /* ids of the window already released */
  tk_buf prefix;       /* the text they decoded to */
  tk_buf text;         /* the last decode of the window */
  tk_buf released;     /* what the last call hands out */
};

afm_status afm_detokenizer_create(const afm_tokenizer *tok, int skip_special,
                                  afm_detokenizer **out) {
  if (!tok || !out)
    return afm_error(AFM_ERR_ARGUMENT, "afm_detokenizer_create: NULL argument");
  *out = calloc(1, sizeof(afm_detokenizer));
  if (!*out)
    return afm_error(AFM_ERR_MEMORY, "afm_detokenizer_create: out of memory");
  (*out)->tok = tok;
  (*out)->skip_special = skip_special;
  return AFM_OK;
}

void afm_detokenizer_free(afm_detokenizer *d) {
  if (!d)
    return;
  free(d->ids.items);
  free(d->prefix.data);
  free(d->text.data);
  free(d->released.data);
  free(d);
}

static int endsWithReplacement(const tk_buf *b) {
  return b->size >= 3 && memcmp(b->data + b->size - 3, "\xef\xbf\xbd", 3) == 0;
}

afm_status afm_detokenizer_push(afm_detokenizer *d, int32_t id,
                                const char **text, size_t *length) {
  if (!d || !text || !length)
    return afm_error(AFM_ERR_ARGUMENT, "afm_detokenizer_push: NULL argument");
  *text = "";
  *length = 0;
  if (id < 0 || (uint32_t)id >= d->tok->id_limit)
    return afm_error(AFM_ERR_ARGUMENT,
                     "afm_detokenizer_push: id %d is outside [0, %u)", id,
                     d->tok->id_limit);
  afm_status status = tk_ids_push(&d->ids, id);
  if (status != AFM_OK)
    return status;
  d->text.size = 0;
  status =
      tk_decode(d->tok, d->ids.items, d->ids.count, d->skip_special, &d->text);
  if (status != AFM_OK) {
    --d->ids.count;
    return status;
  }
  if (d->text.size <= d->prefix.size || endsWithReplacement(&d->text))
    return AFM_OK;
  if (d->prefix.size &&
      memcmp(d->text.data, d->prefix.data, d->prefix.size) != 0)
    return afm_error(AFM_ERR_STATE,
                     "afm_detokenizer_push: the decoders rewrote text already "
                     "released");
  d->released.size = 0;
  status = tk_buf_append(&d->released, d->text.data + d->prefix.size,
                         d->text.size - d->prefix.size);
  if (status != AFM_OK)
    return status;
  /* The new window: the ids after the previous one's released ids. */
  size_t windowLength = d->ids.count - d->prefix_index;
  memmove(d->ids.items, d->ids.items + d->prefix_index,
          windowLength * sizeof(int32_t));
  d->ids.count = windowLength;
  d->prefix.size = 0;
  status = tk_decode(d->tok, d->ids.items, d->ids.count, d->skip_special,
                     &d->prefix);
  if (status != AFM_OK)
    return status;
  d->prefix_index = windowLength;
  *text = d->released.data;
  *length = d->released.size;
  return AFM_OK;
}

afm_status afm_detokenizer_flush(afm_detokenizer *d, const char **text,
                                 size_t *length) {
  if (!d || !text || !length)
    return afm_error(AFM_ERR_ARGUMENT, "afm_detokenizer_flush: NULL argument");
  *text = "";
  *length = 0;
  d->text.size = 0;
  afm_status status =
      tk_decode(d->tok, d->ids.items, d->ids.count, d->skip_special, &d->text);
  if (status != AFM_OK)
    return status;
  d->released.size = 0;
  if (d->text.size > d->prefix.size &&
      (!d->prefix.size ||
       memcmp(d->text.data, d->prefix.data, d->prefix.size) == 0))
    status = tk_buf_append(&d->released, d->text.data + d->prefix.size,
                           d->text.size - d->prefix.size);
  d->ids.count = 0;
  d->prefix_index = 0;
  d->prefix.size = 0;
  if (status != AFM_OK)
    return status;
  *text = d->released.data ? d->released.data : "";
  *length = d->released.size;
  return AFM_OK;
}
