/*===- token_trie.h - every token's raw bytes in one byte trie ------*- C -*-===*
 *
 * The vocabulary as a byte trie laid out in preorder: a walk visits each
 * node once, in order, and skips a whole subtree with one jump (`next`),
 * so the constrained decoder's mask is one linear pass over the trie that
 * leaves out every subtree whose prefix the grammar refuses.
 *
 *===----------------------------------------------------------------------===*/

#ifndef AFM_RUNTIME_TOKEN_TRIE_H
#define AFM_RUNTIME_TOKEN_TRIE_H

#include "afm/tokenizer.h"

#include <stddef.h>
#include <stdint.h>

typedef struct tt_node {
  uint32_t next;                 /* the first node after this subtree */
  uint32_t token_begin, token_end; /* ids ending here: ids[begin..end) */
  uint16_t depth;                /* bytes from the root (root: 0) */
  uint8_t byte;                  /* the byte that leads here */
} tt_node;

typedef struct token_trie {
  tt_node *nodes; /* preorder; nodes[0] is the root */
  size_t node_count;
  int32_t *ids; /* token ids, sorted by their bytes */
  size_t id_count;
  size_t max_depth;
  /* Per id below id_limit: its raw bytes (blob[start .. start + length)),
   * length UINT32_MAX for ids that give none. */
  char *blob;
  uint32_t *start, *length;
  uint32_t id_limit;
} token_trie;

/* Every id's bytes (afm_tokenizer_token_bytes) into a trie; tokens with no
 * bytes or empty bytes are left out: they could never move the text. */
afm_status tt_build(const afm_tokenizer *tokenizer, token_trie *out);
void tt_free(token_trie *trie);

#endif /* AFM_RUNTIME_TOKEN_TRIE_H */
