/*===- tokenizer_bpe.c - BPE on one pre-tokenized word --------------------===*
 *
 * tokenizers' Word::merge_all: one symbol per character (or per byte
 * through <0xNN> byte fallback, or the unknown token), then the adjacent
 * pair of lowest merge rank merged first, the leftmost on ties, from a
 * binary heap of candidate pairs. Entries made stale by an earlier merge
 * are dropped when popped. O(n log n) in the word's length, which matters
 * for tokenizers without a pre-tokenizer (Gemma: a whole line is a word).
 *
 *===----------------------------------------------------------------------===*/

#include "error.h"
#include "tokenizer_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct symbol {
  uint32_t id;
  uint32_t length; /* bytes; 0 once merged into its left neighbour */
  int64_t prev, next;
} symbol;

typedef struct candidate {
  uint32_t rank, merged;
  size_t pos;
} candidate;

static int before(const candidate *a, const candidate *b) {
  return a->rank != b->rank ? a->rank < b->rank : a->pos < b->pos;
}

static afm_status reserve(void **items, size_t *capacity, size_t needed,
                          size_t size) {
  if (needed <= *capacity)
    return AFM_OK;
  size_t capacity2 = *capacity ? *capacity : 64;
  while (capacity2 < needed)
    capacity2 *= 2;
  void *grown = realloc(*items, capacity2 * size);
  if (!grown)
    return afm_error(AFM_ERR_MEMORY, "tokenizer: out of memory");
  *items = grown;
  *capacity = capacity2;
  return AFM_OK;
}

typedef struct heap {
  candidate *items;
  size_t count;
  tk_bpe_scratch *scratch;
} heap;

static afm_status heapPush(heap *h, candidate c) {
  afm_status status = reserve(&h->scratch->heap, &h->scratch->heap_capacity,
                              h->count + 1, sizeof(candidate));
  if (status != AFM_OK)
    return status;
  h->items = h->scratch->heap;
  size_t i = h->count++;
  while (i > 0) {
    size_t parent = (i - 1) / 2;
    if (!before(&c, &h->items[parent]))
      break;
    h->items[i] = h->items[parent];
    i = parent;
  }
  h->items[i] = c;
  return AFM_OK;
}

static candidate heapPop(heap *h) {
  candidate top = h->items[0];
  candidate last = h->items[--h->count];
  size_t i = 0;
  for (;;) {
    size_t child = 2 * i + 1;
    if (child >= h->count)
      break;
    if (child + 1 < h->count && before(&h->items[child + 1], &h->items[child]))
      ++child;
    if (!before(&h->items[child], &last))
      break;
    h->items[i] = h->items[child];
    i = child;
  }
  if (h->count)
    h->items[i] = last;
  return top;
}

typedef struct word {
  symbol *symbols;
  size_t count;
  tk_bpe_scratch *scratch;
} word;

static afm_status addSymbol(word *w, uint32_t id, uint32_t length) {
  afm_status status =
      reserve(&w->scratch->symbols, &w->scratch->symbol_capacity, w->count + 1,
              sizeof(symbol));
  if (status != AFM_OK)
    return status;
  w->symbols = w->scratch->symbols;
  int64_t i = (int64_t)w->count++;
  w->symbols[i] = (symbol){id, length, i - 1, -1};
  if (i > 0)
    w->symbols[i - 1].next = i;
  return AFM_OK;
}

/* The initial symbols, as tokenizers' BPE::merge_word builds them. */
static afm_status splitCharacters(const afm_tokenizer *tok, const char *text,
                                  size_t n, word *w) {
  int unkPending = 0;
  uint32_t unkLength = 0;
  afm_status status = AFM_OK;
  for (size_t i = 0; i < n && status == AFM_OK;) {
    size_t length = tk_utf8_char_length((unsigned char)text[i]);
    if (length > n - i)
      length = n - i;
    int64_t id = tk_strmap_get(&tok->vocab, text + i, length);
    if (id >= 0) {
      if (unkPending)
        status = addSymbol(w, tok->unk_id, unkLength);
      unkPending = 0;
      if (status == AFM_OK)
        status = addSymbol(w, (uint32_t)id, (uint32_t)length);
      i += length;
      continue;
    }
    if (tok->byte_fallback) {
      int all = 1;
      for (size_t k = 0; k < length; ++k)
        all &= tok->byte_ids[(unsigned char)text[i + k]] >= 0;
      if (all) {
        /* A pending unknown stays pending across these, as in
         * tokenizers. */
        for (size_t k = 0; k < length && status == AFM_OK; ++k)
          status = addSymbol(
              w, (uint32_t)tok->byte_ids[(unsigned char)text[i + k]], 1);
        i += length;
        continue;
      }
    }
    if (tok->has_unk) {
      if (unkPending && tok->fuse_unk) {
        unkLength += (uint32_t)length;
      } else {
        if (unkPending)
          status = addSymbol(w, tok->unk_id, unkLength);
        unkPending = 1;
        unkLength = (uint32_t)length;
      }
    }
    i += length;
  }
  if (status == AFM_OK && unkPending)
    status = addSymbol(w, tok->unk_id, unkLength);
  return status;
}

static afm_status mergeAll(const afm_tokenizer *tok, word *w) {
  heap h = {w->scratch->heap, 0, w->scratch};
  uint32_t rank, merged;
  afm_status status = AFM_OK;
  for (size_t i = 0; i + 1 < w->count && status == AFM_OK; ++i)
    if (tk_pairmap_get(&tok->merges, w->symbols[i].id, w->symbols[i + 1].id,
                       &rank, &merged))
      status = heapPush(&h, (candidate){rank, merged, i});
  while (h.count && status == AFM_OK) {
    candidate top = heapPop(&h);
    symbol *s = &w->symbols[top.pos];
    if (s->length == 0 || s->next < 0)
      continue;
    symbol *right = &w->symbols[s->next];
    /* Stale if the pair at this position is no longer the one queued. */
    if (!tk_pairmap_get(&tok->merges, s->id, right->id, &rank, &merged) ||
        merged != top.merged)
      continue;
    s->id = top.merged;
    s->length += right->length;
    s->next = right->next;
    right->length = 0;
    if (s->next >= 0)
      w->symbols[s->next].prev = (int64_t)top.pos;
    if (s->prev >= 0) {
      const symbol *left = &w->symbols[s->prev];
      if (tk_pairmap_get(&tok->merges, left->id, s->id, &rank, &merged))
        status = heapPush(&h, (candidate){rank, merged, (size_t)s->prev});
    }
    if (status == AFM_OK && s->next >= 0) {
      const symbol *next = &w->symbols[s->next];
      if (tk_pairmap_get(&tok->merges, s->id, next->id, &rank, &merged))
        status = heapPush(&h, (candidate){rank, merged, top.pos});
    }
  }
  return status;
}

afm_status tk_bpe_word(const afm_tokenizer *tok, const char *text,
                       size_t length, tk_bpe_scratch *scratch, tk_ids *out) {
  if (length == 0)
    return AFM_OK;
  if (tok->ignore_merges) {
    int64_t id = tk_strmap_get(&tok->vocab, text, length);
    if (id >= 0)
      return tk_ids_push(out, (int32_t)id);
  }
  word w = {scratch->symbols, 0, scratch};
  afm_status status = splitCharacters(tok, text, length, &w);
  if (status == AFM_OK)
    status = mergeAll(tok, &w);
  for (size_t i = 0; i < w.count && status == AFM_OK; ++i)
    if (w.symbols[i].length)
      status = tk_ids_push(out, (int32_t)w.symbols[i].id);
  return status;
}

void tk_bpe_scratch_free(tk_bpe_scratch *scratch) {
  free(scratch->symbols);
  free(scratch->heap);
}
