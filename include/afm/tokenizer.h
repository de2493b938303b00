/*===- afm/tokenizer.h - the runtime tokenizer's C API -------------*- C -*-===*
 *
 * Text to token ids and back, with the vocabulary, merges, normalizers,
 * pre-tokenizers and decoders of a Hugging Face tokenizer.json, byte for
 * byte as the `tokenizers` library does (add_special_tokens = false). The
 * compiler converts the tokenizer.json (lib/Tokenizer) into the binary form
 * afm_tokenizer_load reads (runtime/proto/tokenizer.proto).
 *
 * Statuses and afm_last_error() are those of afm/runtime.h. A loaded
 * tokenizer is immutable: any number of threads may encode and decode with
 * it at once; a detokenizer belongs to one thread at a time.
 *
 *===----------------------------------------------------------------------===*/

#ifndef AFM_TOKENIZER_H
#define AFM_TOKENIZER_H

#include "afm/runtime.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct afm_tokenizer afm_tokenizer;
typedef struct afm_detokenizer afm_detokenizer;

/* Builds a tokenizer from `size` bytes of its binary form (copied: `data`
 * may be freed afterwards). Every field is checked: AFM_ERR_FORMAT for
 * truncated or inconsistent data (ids out of range, a regex PCRE2 refuses,
 * ...), AFM_ERR_VERSION for another format version. */
afm_status afm_tokenizer_load(const void *data, size_t size,
                              afm_tokenizer **out);
void afm_tokenizer_free(afm_tokenizer *tokenizer);

/* One past the largest token id (model vocabulary and added tokens). */
uint32_t afm_tokenizer_id_limit(const afm_tokenizer *tokenizer);

/* The ids a single sequence gets before and after it when the tokenizer's
 * post-processor adds special tokens (e.g. BOS); encode never adds them. */
const uint32_t *afm_tokenizer_prefix_ids(const afm_tokenizer *tokenizer,
                                         size_t *count);
const uint32_t *afm_tokenizer_suffix_ids(const afm_tokenizer *tokenizer,
                                         size_t *count);

/* Encodes `length` bytes of UTF-8 (AFM_ERR_ARGUMENT if not valid UTF-8).
 * Special tokens written in the text become their ids. On success *ids is
 * a malloc'ed array of *count ids (NULL when 0) for the caller to free(). */
afm_status afm_tokenizer_encode(const afm_tokenizer *tokenizer,
                                const char *text, size_t length, int32_t **ids,
                                size_t *count);

/* Decodes `count` ids into UTF-8 text (invalid byte sequences become
 * U+FFFD as in tokenizers). Ids that name no token are skipped, as in
 * tokenizers; ids < 0 or >= afm_tokenizer_id_limit are AFM_ERR_ARGUMENT.
 * With skip_special, special added tokens are left out. On success *text
 * is malloc'ed, NUL-terminated, *length bytes long, for the caller to
 * free(). */
afm_status afm_tokenizer_decode(const afm_tokenizer *tokenizer,
                                const int32_t *ids, size_t count,
                                int skip_special, char **text, size_t *length);

/* The exact bytes token `id` adds when it stands in the middle of a text:
 * the decoder chain on that token alone, without decode's replacement of
 * invalid UTF-8 (a byte-level token may be part of a character). For
 * ordinary tokens the bytes of a sequence join into afm_tokenizer_decode
 * of it whenever that is valid UTF-8, except that a decoder may drop a
 * space at the very start of a text (Llama 2's Strip, Metaspace's
 * "first"). *bytes is malloc'ed (*length bytes, NUL-terminated) for the
 * caller to free(), or NULL for added and special tokens and ids without a
 * token, which give no text of their own. */
afm_status afm_tokenizer_token_bytes(const afm_tokenizer *tokenizer,
                                     int32_t id, char **bytes,
                                     size_t *length);

/* Streaming decode: feed ids one at a time and get the text they complete.
 * Text is only released once it no longer ends in an incomplete UTF-8
 * character (or the U+FFFD of one), so a multi-byte character split over
 * several byte tokens comes out whole. This is tokenizers' DecodeStream:
 * the pieces and the flush join into afm_tokenizer_decode of all ids for
 * the decoder chains of real tokenizers (checked on Llama 2/3, Qwen 3 and
 * Gemma 3); a chain that rewrites text it already released (a Strip after
 * the first token) is AFM_ERR_STATE. The detokenizer keeps a pointer to
 * `tokenizer`, which must outlive it. */
afm_status afm_detokenizer_create(const afm_tokenizer *tokenizer,
                                  int skip_special, afm_detokenizer **out);
void afm_detokenizer_free(afm_detokenizer *detokenizer);

/* Adds one id. *text (valid until the next call on this detokenizer, not
 * NUL-terminated) receives the *length new bytes, often 0. */
afm_status afm_detokenizer_push(afm_detokenizer *detokenizer, int32_t id,
                                const char **text, size_t *length);

/* Whatever is still held back (an incomplete character at the end of the
 * stream, as U+FFFD), then starts over. */
afm_status afm_detokenizer_flush(afm_detokenizer *detokenizer,
                                 const char **text, size_t *length);

#ifdef __cplusplus
}
#endif

#endif /* AFM_TOKENIZER_H */
