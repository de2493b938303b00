/*===- tokenizer_added.c - finding added tokens in raw text ---------------===*
 *
 * tokenizers splits the input on its added tokens first, with an
 * Aho-Corasick automaton in leftmost-longest mode: the match that starts
 * first wins, and of those the longest. A byte trie walked from each
 * candidate start gives the same answer; a bitmap of first bytes skips the
 * starts no token can have, so plain text costs one bit test per byte.
 *
 *===----------------------------------------------------------------------===*/

#include "error.h"
#include "tokenizer_internal.h"

#include <stdlib.h>
#include <string.h>

static uint64_t mixEdge(uint64_t key) {
  key ^= key >> 31;
  key *= 0x9e3779b97f4a7c15ull;
  key ^= key >> 29;
  return key;
}

static int64_t child(const tk_trie *trie, uint32_t node, unsigned char byte) {
  uint64_t key = (((uint64_t)node << 8) | byte) + 1;
  for (size_t slot = mixEdge(key) & trie->mask;;
       slot = (slot + 1) & trie->mask) {
    if (trie->keys[slot] == key)
      return trie->children[slot];
    if (!trie->keys[slot])
      return -1;
  }
}

afm_status tk_trie_build(afm_tokenizer *tok) {
  tk_trie *trie = &tok->added;
  size_t totalBytes = 0;
  for (uint32_t id = 0; id < tok->id_limit; ++id)
    if (tok->flags[id] & TK_ID_ADDED)
      totalBytes += tok->text_length[id];
  /* At most one node per byte, plus the root. */
  size_t slots = 16;
  while (slots < 2 * (totalBytes + 1))
    slots *= 2;
  trie->keys = calloc(slots, sizeof(uint64_t));
  trie->children = malloc(slots * sizeof(uint32_t));
  trie->token = malloc((totalBytes + 1) * sizeof(int32_t));
  if (!trie->keys || !trie->children || !trie->token)
    return afm_error(AFM_ERR_MEMORY, "tokenizer: out of memory while loading");
  trie->mask = slots - 1;
  trie->node_count = 1;
  trie->token[0] = -1;
  memset(trie->first_bytes, 0, sizeof(trie->first_bytes));
  for (uint32_t id = 0; id < tok->id_limit; ++id) {
    if (!(tok->flags[id] & TK_ID_ADDED))
      continue;
    const unsigned char *text =
        (const unsigned char *)tok->texts + tok->text_start[id];
    uint32_t node = 0;
    for (uint32_t i = 0; i < tok->text_length[id]; ++i) {
      int64_t next = child(trie, node, text[i]);
      if (next < 0) {
        uint64_t key = (((uint64_t)node << 8) | text[i]) + 1;
        size_t slot = mixEdge(key) & trie->mask;
        while (trie->keys[slot])
          slot = (slot + 1) & trie->mask;
        next = (int64_t)trie->node_count++;
        trie->keys[slot] = key;
        trie->children[slot] = (uint32_t)next;
        trie->token[next] = -1;
      }
      node = (uint32_t)next;
    }
    trie->token[node] = (int32_t)id;
    trie->first_bytes[text[0] >> 3] |= (uint8_t)(1u << (text[0] & 7));
  }
  return AFM_OK;
}

void tk_trie_free(tk_trie *trie) {
  free(trie->keys);
  free(trie->children);
  free(trie->token);
}

int tk_trie_find(const tk_trie *trie, const char *text, size_t n, size_t from,
                 size_t *start, size_t *length, int32_t *id) {
  if (!trie->keys || trie->node_count == 1)
    return 0;
  const unsigned char *u = (const unsigned char *)text;
  for (size_t s = from; s < n; ++s) {
    if (!(trie->first_bytes[u[s] >> 3] & (1u << (u[s] & 7))))
      continue;
    uint32_t node = 0;
    int found = 0;
    for (size_t i = s; i < n; ++i) {
      int64_t next = child(trie, node, u[i]);
      if (next < 0)
        break;
      node = (uint32_t)next;
      if (trie->token[node] >= 0) {
        *start = s;
        *length = i + 1 - s;
        *id = trie->token[node];
        found = 1;
      }
    }
    if (found)
      return 1;
  }
  return 0;
}
