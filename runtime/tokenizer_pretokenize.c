/*===- tokenizer_pretokenize.c - Split and ByteLevel pre-tokenizers -------===*
 *
 * Pieces are spans of one buffer. Split keeps the bytes and cuts spans
 * where its regex matches (PCRE2 with UTF and UCP, run on each piece alone
 * as tokenizers does, so lookarounds never see a neighbour); ByteLevel
 * rewrites every byte as the printable character GPT-2's bytes_to_unicode
 * gives it, after an optional leading space and an optional GPT-2 split;
 * Metaspace writes spaces as its replacement character (SentencePiece's
 * U+2581) and splits in front of each.
 *
 *===----------------------------------------------------------------------===*/

#include "error.h"
#include "tokenizer_internal.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <stdlib.h>
#include <string.h>

void *tk_regex_compile(const char *pattern, size_t length, const char *where) {
  int code;
  PCRE2_SIZE offset;
  pcre2_code *regex = pcre2_compile(
      (PCRE2_SPTR)pattern, length, PCRE2_UTF | PCRE2_UCP, &code, &offset, NULL);
  if (!regex) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(code, message, sizeof(message));
    char shown[256];
    afm_error(AFM_ERR_FORMAT,
              "tokenizer: %s: the regex '%s' does not compile: %s (at "
              "offset %zu)",
              where, afm_printable(pattern, shown, sizeof(shown)),
              (const char *)message, (size_t)offset);
    return NULL;
  }
  /* JIT is a speed-up only: where it is unavailable the interpreter runs
   * the same pattern. */
  (void)pcre2_jit_compile(regex, PCRE2_JIT_COMPLETE);
  return regex;
}

void tk_regex_free(void *regex) { pcre2_code_free((pcre2_code *)regex); }

int tk_regex_matches_at(void *regex, const char *text, size_t n, size_t at) {
  pcre2_match_data *data =
      pcre2_match_data_create_from_pattern((pcre2_code *)regex, NULL);
  if (!data)
    return 0;
  int rc = pcre2_match((pcre2_code *)regex, (PCRE2_SPTR)text, n, at,
                       PCRE2_ANCHORED, data, NULL);
  pcre2_match_data_free(data);
  return rc > 0;
}

/* The matches of `regex` in text[0..n) as alternating spans: pushes
 * (start, length) to `parts` and whether each is a match to `isMatch`. */
typedef struct partList {
  tk_spans spans;
  unsigned char *isMatch;
  size_t capacity;
} partList;

static afm_status pushPart(partList *parts, size_t start, size_t length,
                           int match) {
  afm_status status = tk_spans_push(&parts->spans, start, length);
  if (status != AFM_OK)
    return status;
  if (parts->spans.count > parts->capacity) {
    size_t capacity = parts->spans.capacity;
    unsigned char *grown = realloc(parts->isMatch, capacity);
    if (!grown)
      return afm_error(AFM_ERR_MEMORY, "tokenizer: out of memory");
    parts->isMatch = grown;
    parts->capacity = capacity;
  }
  parts->isMatch[parts->spans.count - 1] = (unsigned char)match;
  return AFM_OK;
}

static afm_status findMatches(pcre2_code *regex, const char *text, size_t n,
                              pcre2_match_data *data, partList *parts) {
  size_t previous = 0, from = 0;
  while (from <= n) {
    int rc = pcre2_match(regex, (PCRE2_SPTR)text, n, from, 0, data, NULL);
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT)
      rc = pcre2_match(regex, (PCRE2_SPTR)text, n, from, PCRE2_NO_JIT, data,
                       NULL);
    if (rc == PCRE2_ERROR_NOMATCH)
      break;
    if (rc < 0) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(rc, message, sizeof(message));
      return afm_error(AFM_ERR_ARGUMENT,
                       "tokenizer: the pre-tokenizer regex failed on a "
                       "%zu-byte piece: %s",
                       n, (const char *)message);
    }
    PCRE2_SIZE *ovector = pcre2_get_ovector_pointer(data);
    size_t start = ovector[0], end = ovector[1];
    if (start != previous) {
      afm_status status = pushPart(parts, previous, start - previous, 0);
      if (status != AFM_OK)
        return status;
    }
    afm_status status = pushPart(parts, start, end - start, 1);
    if (status != AFM_OK)
      return status;
    previous = end;
    /* An empty match moves on by one character, like Oniguruma's find
     * iterator. */
    if (end == start) {
      if (end >= n)
        break;
      from = end + tk_utf8_char_length((unsigned char)text[end]);
    } else
      from = end;
  }
  if (previous != n)
    return pushPart(parts, previous, n - previous, 0);
  return AFM_OK;
}

/* tokenizers' SplitDelimiterBehavior over one piece's parts; offsets are
 * made absolute with `base`. Empty results are dropped, as tokenizers
 * drops empty splits. */
static afm_status applyBehavior(const partList *parts, tk_behavior behavior,
                                int invert, size_t base, tk_spans *out) {
  size_t n = parts->spans.count;
  const tk_span *p = parts->spans.items;
  /* Pending output span (start, end), relative. */
  size_t outStart = 0, outEnd = 0;
  int have = 0;
#define FLUSH()                                                                \
  do {                                                                         \
    if (have && outEnd > outStart) {                                           \
      afm_status s_ = tk_spans_push(out, base + outStart, outEnd - outStart);  \
      if (s_ != AFM_OK)                                                        \
        return s_;                                                             \
    }                                                                          \
    have = 0;                                                                  \
  } while (0)
  switch (behavior) {
  case TK_REMOVED:
  case TK_ISOLATED:
    for (size_t i = 0; i < n; ++i) {
      int match = parts->isMatch[i] ^ invert;
      if (match && behavior == TK_REMOVED)
        continue;
      outStart = p[i].start, outEnd = p[i].start + p[i].length, have = 1;
      FLUSH();
    }
    return AFM_OK;
  case TK_MERGED_WITH_PREVIOUS: {
    int previousMatch = 0;
    for (size_t i = 0; i < n; ++i) {
      int match = parts->isMatch[i] ^ invert;
      if (match && !previousMatch && have) {
        outEnd = p[i].start + p[i].length;
      } else {
        FLUSH();
        outStart = p[i].start, outEnd = p[i].start + p[i].length, have = 1;
      }
      previousMatch = match;
    }
    FLUSH();
    return AFM_OK;
  }
  case TK_MERGED_WITH_NEXT: {
    /* Right to left, then emitted in order: spans[i] gets merged into the
     * span that follows it when it is a match and the next one is not. */
    size_t *starts = malloc((n ? n : 1) * sizeof(size_t));
    size_t *ends = malloc((n ? n : 1) * sizeof(size_t));
    if (!starts || !ends) {
      free(starts);
      free(ends);
      return afm_error(AFM_ERR_MEMORY, "tokenizer: out of memory");
    }
    size_t count = 0;
    int previousMatch = 0;
    for (size_t k = n; k-- > 0;) {
      int match = parts->isMatch[k] ^ invert;
      if (match && !previousMatch && count) {
        starts[count - 1] = p[k].start;
      } else {
        starts[count] = p[k].start;
        ends[count] = p[k].start + p[k].length;
        ++count;
      }
      previousMatch = match;
    }
    afm_status status = AFM_OK;
    for (size_t k = count; k-- > 0 && status == AFM_OK;)
      if (ends[k] > starts[k])
        status = tk_spans_push(out, base + starts[k], ends[k] - starts[k]);
    free(starts);
    free(ends);
    return status;
  }
  case TK_CONTIGUOUS: {
    int previousMatch = -1;
    for (size_t i = 0; i < n; ++i) {
      int match = parts->isMatch[i] ^ invert;
      if (have && match == previousMatch) {
        outEnd = p[i].start + p[i].length;
      } else {
        FLUSH();
        outStart = p[i].start, outEnd = p[i].start + p[i].length, have = 1;
      }
      previousMatch = match;
    }
    FLUSH();
    return AFM_OK;
  }
  }
#undef FLUSH
  return AFM_OK;
}

/* GPT-2's bytes_to_unicode: printable Latin-1 bytes stay themselves, the
 * others (0x00-0x20, 0x7f-0xa0, 0xad), in byte order, become U+0100 on. */
static unsigned byteLevelCode(unsigned char b) {
  if (b <= 0x20)
    return 0x100 + b;
  if (b >= 0x7f && b <= 0xa0)
    return 0x100 + 0x21 + (b - 0x7f);
  if (b == 0xad)
    return 0x143;
  return b;
}

static afm_status appendByteLevel(tk_buf *out, const char *text, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    unsigned code = byteLevelCode((unsigned char)text[i]);
    char utf8[2] = {(char)code, 0};
    size_t length = 1;
    if (code >= 0x80) {
      utf8[0] = (char)(0xc0 | (code >> 6));
      utf8[1] = (char)(0x80 | (code & 0x3f));
      length = 2;
    }
    afm_status status = tk_buf_append(out, utf8, length);
    if (status != AFM_OK)
      return status;
  }
  return AFM_OK;
}

/* Occurrences of a literal as alternating parts, like findMatches. */
static afm_status findLiteral(const char *text, size_t n, const char *literal,
                              size_t length, partList *parts) {
  size_t previous = 0;
  afm_status status = AFM_OK;
  for (size_t i = 0; i + length <= n && status == AFM_OK;) {
    if (memcmp(text + i, literal, length) != 0) {
      ++i;
      continue;
    }
    if (i != previous)
      status = pushPart(parts, previous, i - previous, 0);
    if (status == AFM_OK)
      status = pushPart(parts, i, length, 1);
    i += length;
    previous = i;
  }
  if (status == AFM_OK && previous != n)
    status = pushPart(parts, previous, n - previous, 0);
  return status;
}

/* Metaspace on one piece: spaces become the replacement, which is put in
 * front when the scheme asks for it and it is not there already. */
static afm_status metaspace(const tk_pretokenizer *pre, const char *text,
                            size_t n, int atTextStart, tk_buf *out) {
  out->size = 0;
  tk_buf replaced = {NULL, 0, 0};
  afm_status status = tk_buf_append(&replaced, "", 0);
  for (size_t i = 0, run = 0; i <= n && status == AFM_OK; ++i) {
    if (i < n && text[i] != ' ')
      continue;
    status = tk_buf_append(&replaced, text + run, i - run);
    if (status == AFM_OK && i < n)
      status =
          tk_buf_append(&replaced, pre->replacement, pre->replacement_length);
    run = i + 1;
  }
  int startsWith =
      replaced.size >= pre->replacement_length &&
      memcmp(replaced.data, pre->replacement, pre->replacement_length) == 0;
  int prepend =
      !startsWith && (pre->prepend_scheme == TK_PREPEND_ALWAYS ||
                      (pre->prepend_scheme == TK_PREPEND_FIRST && atTextStart));
  if (status == AFM_OK && prepend)
    status = tk_buf_append(out, pre->replacement, pre->replacement_length);
  if (status == AFM_OK)
    status = tk_buf_append(out, replaced.data, replaced.size);
  free(replaced.data);
  return status;
}

afm_status tk_pretokenize(const tk_pretokenizer *pre, const tk_buf *buf,
                          const tk_spans *spans, int at_text_start,
                          tk_buf *out_buf, tk_spans *out_spans) {
  out_spans->count = 0;
  out_buf->size = 0;
  partList parts = {{NULL, 0, 0}, NULL, 0};
  pcre2_match_data *data =
      pre->regex
          ? pcre2_match_data_create_from_pattern((pcre2_code *)pre->regex, NULL)
          : NULL;
  if (pre->regex && !data)
    return afm_error(AFM_ERR_MEMORY, "tokenizer: out of memory");
  afm_status status = AFM_OK;
  tk_buf piece = {NULL, 0, 0};
  tk_spans pieces = {NULL, 0, 0};
  for (size_t i = 0; i < spans->count && status == AFM_OK; ++i) {
    const char *text = buf->data + spans->items[i].start;
    size_t n = spans->items[i].length;
    parts.spans.count = 0;
    if (pre->kind == TK_PRE_SPLIT) {
      status = findMatches((pcre2_code *)pre->regex, text, n, data, &parts);
      if (status == AFM_OK)
        status = applyBehavior(&parts, pre->behavior, pre->invert,
                               spans->items[i].start, out_spans);
      continue;
    }
    /* ByteLevel: the leading space, the split, then the byte mapping.
     * Metaspace: the replacement, then the split in front of each one. */
    piece.size = 0;
    if (pre->kind == TK_PRE_METASPACE) {
      status = metaspace(pre, text, n,
                         at_text_start && spans->items[i].start == 0, &piece);
    } else {
      if (pre->add_prefix_space && (n == 0 || text[0] != ' '))
        status = tk_buf_append(&piece, " ", 1);
      if (status == AFM_OK)
        status = tk_buf_append(&piece, text, n);
    }
    if (status != AFM_OK)
      break;
    pieces.count = 0;
    if (pre->kind == TK_PRE_METASPACE && pre->split) {
      status = findLiteral(piece.data, piece.size, pre->replacement,
                           pre->replacement_length, &parts);
      if (status == AFM_OK)
        status = applyBehavior(&parts, TK_MERGED_WITH_NEXT, 0, 0, &pieces);
    } else if (pre->regex) {
      status = findMatches((pcre2_code *)pre->regex, piece.data, piece.size,
                           data, &parts);
      if (status == AFM_OK)
        status = applyBehavior(&parts, TK_ISOLATED, 0, 0, &pieces);
    } else if (piece.size) {
      status = tk_spans_push(&pieces, 0, piece.size);
    }
    for (size_t k = 0; k < pieces.count && status == AFM_OK; ++k) {
      size_t start = out_buf->size;
      const char *bytes = piece.data + pieces.items[k].start;
      size_t length = pieces.items[k].length;
      status = pre->kind == TK_PRE_BYTE_LEVEL
                   ? appendByteLevel(out_buf, bytes, length)
                   : tk_buf_append(out_buf, bytes, length);
      if (status == AFM_OK)
        status = tk_spans_push(out_spans, start, out_buf->size - start);
    }
  }
  free(piece.data);
  free(pieces.items);
  free(parts.spans.items);
  free(parts.isMatch);
  pcre2_match_data_free(data);
  if (status == AFM_OK && pre->kind == TK_PRE_SPLIT) {
    /* Split keeps the bytes: the new spans index a copy of them. */
    status = tk_buf_append(out_buf, buf->data, buf->size);
  }
  return status;
}
