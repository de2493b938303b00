/*===- token_trie.c - every token's raw bytes in one byte trie ------------===*
 *
 * Built from the tokens sorted by their bytes: consecutive tokens share
 * their longest common prefix, so each token adds the nodes past it, and
 * the nodes deeper than it are complete (their `next` is known).
 *
 *===----------------------------------------------------------------------===*/

#include "token_trie.h"

#include "error.h"
#include "tokenizer_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct entry {
  const unsigned char *bytes;
  uint32_t length;
  int32_t id;
} entry;

static int compareEntries(const void *a, const void *b) {
  const entry *x = a, *y = b;
  size_t n = x->length < y->length ? x->length : y->length;
  int c = memcmp(x->bytes, y->bytes, n);
  if (c)
    return c;
  if (x->length != y->length)
    return x->length < y->length ? -1 : 1;
  return x->id < y->id ? -1 : x->id > y->id;
}

void tt_free(token_trie *t) {
  free(t->nodes);
  free(t->ids);
  free(t->blob);
  free(t->start);
  free(t->length);
  memset(t, 0, sizeof(*t));
}

afm_status tt_build(const afm_tokenizer *tok, token_trie *t) {
  memset(t, 0, sizeof(*t));
  uint32_t limit = afm_tokenizer_id_limit(tok);
  t->id_limit = limit;
  t->start = malloc(limit * sizeof(uint32_t));
  t->length = malloc(limit * sizeof(uint32_t));
  tk_buf blob = {NULL, 0, 0}, one = {NULL, 0, 0}, scratch = {NULL, 0, 0};
  afm_status status = t->start && t->length
                          ? AFM_OK
                          : afm_error(AFM_ERR_MEMORY, "grammar: out of memory");
  size_t count = 0;
  for (uint32_t id = 0; id < limit && status == AFM_OK; ++id) {
    int has = tk_token_raw_bytes(tok, (int32_t)id, &one, &scratch, &status);
    t->length[id] = UINT32_MAX;
    if (status != AFM_OK || !has)
      continue;
    if (one.size >= 0xffff) /* depth is 16 bits; no real token is this long */
      continue;
    t->start[id] = (uint32_t)blob.size;
    t->length[id] = (uint32_t)one.size;
    status = tk_buf_append(&blob, one.data, one.size);
    count += one.size > 0;
  }
  free(one.data);
  free(scratch.data);
  t->blob = blob.data;
  entry *entries = NULL;
  if (status == AFM_OK) {
    entries = malloc((count ? count : 1) * sizeof(*entries));
    t->ids = malloc((count ? count : 1) * sizeof(*t->ids));
    /* At most one node per byte, plus the root. */
    t->nodes = malloc((blob.size + 1) * sizeof(*t->nodes));
    if (!entries || !t->ids || !t->nodes)
      status = afm_error(AFM_ERR_MEMORY, "grammar: out of memory for the "
                                         "token trie");
  }
  if (status != AFM_OK) {
    free(entries);
    tt_free(t);
    return status;
  }
  size_t n = 0;
  for (uint32_t id = 0; id < limit; ++id)
    if (t->length[id] != UINT32_MAX && t->length[id] > 0)
      entries[n++] = (entry){(const unsigned char *)t->blob + t->start[id],
                             t->length[id], (int32_t)id};
  qsort(entries, n, sizeof(*entries), compareEntries);

  /* path[d]: the node at depth d on the current path. */
  size_t maxDepth = 0;
  for (size_t i = 0; i < n; ++i)
    if (entries[i].length > maxDepth)
      maxDepth = entries[i].length;
  uint32_t *path = malloc((maxDepth + 1) * sizeof(*path));
  if (!path) {
    free(entries);
    tt_free(t);
    return afm_error(AFM_ERR_MEMORY, "grammar: out of memory");
  }
  t->nodes[0] = (tt_node){0, 0, 0, 0, 0};
  path[0] = 0;
  size_t nodes = 1, depth = 0;
  for (size_t i = 0; i < n; ++i) {
    const entry *e = &entries[i];
    size_t common = 0;
    if (i > 0) {
      const entry *p = &entries[i - 1];
      size_t m = p->length < e->length ? p->length : e->length;
      while (common < m && p->bytes[common] == e->bytes[common])
        ++common;
    }
    for (; depth > common; --depth)
      t->nodes[path[depth]].next = (uint32_t)nodes;
    for (size_t d = common + 1; d <= e->length; ++d) {
      t->nodes[nodes] =
          (tt_node){0, (uint32_t)i, (uint32_t)i, (uint16_t)d, e->bytes[d - 1]};
      path[d] = (uint32_t)nodes++;
    }
    depth = e->length;
    tt_node *end = &t->nodes[path[depth]];
    if (end->token_end == end->token_begin)
      end->token_begin = (uint32_t)i;
    end->token_end = (uint32_t)i + 1;
    t->ids[i] = e->id;
  }
  for (; depth > 0; --depth)
    t->nodes[path[depth]].next = (uint32_t)nodes;
  t->nodes[0].next = (uint32_t)nodes;
  free(path);
  free(entries);
  t->node_count = nodes;
  t->id_count = n;
  t->max_depth = maxDepth;
  return AFM_OK;
}
