/*===- grammar.c - token masks from a byte automaton ----------------------===*
 *
 * The schema's NFA (json_schema.c) is determinized lazily: a DFA state is
 * a sorted set of NFA states (those that read a byte, and the accepting
 * one), and its 256 successors are filled in as bytes are first read from
 * it. The mask of a DFA state is one walk of the vocabulary's byte trie
 * (token_trie.h) that follows the DFA and skips every subtree that reaches
 * the dead state; it is cached with the state, together with what the
 * token budget needs:
 *   - each DFA state's distance: the fewest bytes to an accepting state
 *     (the minimum of its NFA states', computed once on the NFA);
 *   - the tokens that move the text further from completion (with the
 *     distance they lead to), few in practice: closing a string and opening
 *     the next property, say;
 *   - the tokens that bring it closer.
 * With R tokens left (this one included) and distance d <= R, a token is
 * allowed if its new distance is at most R - 1. While R - 1 >= d that is
 * every token but the far-reaching ones above the bound; when R == d only
 * the tokens that bring it closer. Every byte has a token in real
 * vocabularies (byte-level BPE, byte fallback), so one of those exists
 * while d > 0, and the text completes within the budget.
 *
 * Memory: the DFA grows with what generation visits (capped at
 * GRAMMAR_MAX_DFA_STATES); masks (two bitsets of the vocabulary per state)
 * are dropped all at once when they pass GRAMMAR_MASK_CACHE_BYTES, and
 * rebuilt on demand. Nothing else is allocated per step.
 *
 *===----------------------------------------------------------------------===*/

#include "afm/grammar.h"

#include "error.h"
#include "grammar_nfa.h"
#include "json_schema.h"
#include "token_trie.h"

#include <stdlib.h>
#include <string.h>

#define GRAMMAR_MAX_DFA_STATES (1u << 18)
#define GRAMMAR_MASK_CACHE_BYTES ((size_t)128 << 20)

typedef struct dfa_state {
  uint32_t *set; /* NFA states, sorted */
  uint32_t set_size;
  uint32_t dist;
  int accepting;
  int32_t *next; /* 256 successors, -1 not yet known; NULL until needed */
  /* The masks, NULL until built. */
  uint64_t *full, *closer;
  size_t full_count, closer_count;
  uint32_t *far_ids, *far_dist; /* tokens leading further, farthest first */
  size_t far_count;
} dfa_state;

struct afm_grammar {
  const afm_tokenizer *tokenizer;
  nfa nfa;
  token_trie trie;
  int has_trie;
  size_t words; /* 64-bit words of a mask */
  dfa_state *states;
  size_t state_count, state_capacity;
  uint32_t *table; /* open addressing: state index + 1, 0 empty */
  size_t table_mask;
  size_t cache_bytes, mask_bytes, masked_states;
  /* Scratch for closures and walks, sized once. */
  uint32_t *stamp, stamp_now;
  uint32_t *stack, *found;
  uint32_t *walk; /* DFA state per trie depth */
  uint32_t *far_ids, *far_dist; /* a walk's far tokens, before sorting */
  uint32_t start;
};

struct afm_grammar_state {
  afm_grammar *grammar;
  uint32_t current;
  uint64_t *scratch; /* the filtered mask */
};

/*------------------------------------------------------------- DFA states --*/

static uint64_t hashSet(const uint32_t *set, size_t n) {
  uint64_t h = 1469598103934665603ull ^ n;
  for (size_t i = 0; i < n; ++i) {
    h ^= set[i];
    h *= 1099511628211ull;
  }
  return h ^ (h >> 29);
}

static int compareU32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

static afm_status growTable(afm_grammar *g) {
  size_t size = g->table ? (g->table_mask + 1) * 2 : 1024;
  uint32_t *table = calloc(size, sizeof(*table));
  if (!table)
    return afm_error(AFM_ERR_MEMORY, "grammar: out of memory");
  for (size_t i = 0; i < g->state_count; ++i) {
    dfa_state *s = &g->states[i];
    size_t at = hashSet(s->set, s->set_size) & (size_t)(size - 1);
    while (table[at])
      at = (at + 1) & (size - 1);
    table[at] = (uint32_t)i + 1;
  }
  g->cache_bytes += (size - (g->table ? g->table_mask + 1 : 0)) *
                    sizeof(*table);
  free(g->table);
  g->table = table;
  g->table_mask = size - 1;
  return AFM_OK;
}

/* The DFA state of the sorted set found[0..n), made if new. */
static afm_status intern(afm_grammar *g, size_t n, uint32_t *out) {
  if (!g->table || g->state_count * 2 >= g->table_mask + 1) {
    afm_status status = growTable(g);
    if (status != AFM_OK)
      return status;
  }
  qsort(g->found, n, sizeof(*g->found), compareU32);
  size_t at = hashSet(g->found, n) & g->table_mask;
  for (; g->table[at]; at = (at + 1) & g->table_mask) {
    dfa_state *s = &g->states[g->table[at] - 1];
    if (s->set_size == n && memcmp(s->set, g->found, n * sizeof(*s->set)) == 0) {
      *out = g->table[at] - 1;
      return AFM_OK;
    }
  }
  if (g->state_count >= GRAMMAR_MAX_DFA_STATES)
    return afm_error(AFM_ERR_MEMORY,
                     "grammar: the lazily built DFA passed %u states",
                     GRAMMAR_MAX_DFA_STATES);
  if (g->state_count == g->state_capacity) {
    size_t capacity = g->state_capacity ? g->state_capacity * 2 : 256;
    dfa_state *grown = realloc(g->states, capacity * sizeof(*grown));
    if (!grown)
      return afm_error(AFM_ERR_MEMORY, "grammar: out of memory");
    g->cache_bytes += (capacity - g->state_capacity) * sizeof(*grown);
    g->states = grown;
    g->state_capacity = capacity;
  }
  dfa_state *s = &g->states[g->state_count];
  memset(s, 0, sizeof(*s));
  s->set = malloc((n ? n : 1) * sizeof(*s->set));
  if (!s->set)
    return afm_error(AFM_ERR_MEMORY, "grammar: out of memory");
  memcpy(s->set, g->found, n * sizeof(*s->set));
  s->set_size = (uint32_t)n;
  s->dist = UINT32_MAX;
  for (size_t i = 0; i < n; ++i) {
    if (g->nfa.dist[g->found[i]] < s->dist)
      s->dist = g->nfa.dist[g->found[i]];
    if (g->nfa.states[g->found[i]].kind == NFA_ACCEPT)
      s->accepting = 1;
  }
  g->cache_bytes += n * sizeof(*s->set);
  g->table[at] = (uint32_t)g->state_count + 1;
  *out = (uint32_t)g->state_count++;
  return AFM_OK;
}

/* Adds the epsilon closure of NFA state `from` to found[*n..). */
static void closure(afm_grammar *g, uint32_t from, size_t *n) {
  size_t top = 0;
  g->stack[top++] = from;
  while (top) {
    uint32_t s = g->stack[--top];
    if (g->stamp[s] == g->stamp_now)
      continue;
    g->stamp[s] = g->stamp_now;
    const nfa_state *st = &g->nfa.states[s];
    if (st->kind == NFA_EPS) {
      if (st->out2 != NFA_NONE)
        g->stack[top++] = st->out2;
      if (st->out != NFA_NONE)
        g->stack[top++] = st->out;
    } else
      g->found[(*n)++] = s;
  }
}

static void newStamp(afm_grammar *g) {
  if (++g->stamp_now == 0) {
    memset(g->stamp, 0, g->nfa.count * sizeof(*g->stamp));
    g->stamp_now = 1;
  }
}

/* The successor of state `from` on `byte` (0 is the dead state). */
static afm_status step(afm_grammar *g, uint32_t from, unsigned byte,
                       uint32_t *out) {
  dfa_state *s = &g->states[from];
  if (s->next && s->next[byte] >= 0) {
    *out = (uint32_t)s->next[byte];
    return AFM_OK;
  }
  if (!s->next) {
    s->next = malloc(256 * sizeof(*s->next));
    if (!s->next)
      return afm_error(AFM_ERR_MEMORY, "grammar: out of memory");
    for (int b = 0; b < 256; ++b)
      s->next[b] = -1;
    g->cache_bytes += 256 * sizeof(*s->next);
  }
  newStamp(g);
  size_t n = 0;
  for (uint32_t i = 0; i < s->set_size; ++i) {
    const nfa_state *st = &g->nfa.states[s->set[i]];
    if (st->kind == NFA_CLASS && nfa_set_has(g->nfa.classes[st->cls], byte))
      closure(g, st->out, &n);
  }
  uint32_t to;
  afm_status status = intern(g, n, &to);
  if (status != AFM_OK)
    return status;
  g->states[from].next[byte] = (int32_t)to; /* states may have moved */
  *out = to;
  return AFM_OK;
}

/*------------------------------------------------------------------ masks --*/

static void dropMasks(afm_grammar *g) {
  for (size_t i = 0; i < g->state_count; ++i) {
    dfa_state *s = &g->states[i];
    free(s->full);
    free(s->closer);
    free(s->far_ids);
    free(s->far_dist);
    s->full = s->closer = NULL;
    s->far_ids = s->far_dist = NULL;
    s->far_count = 0;
  }
  g->cache_bytes -= g->mask_bytes;
  g->mask_bytes = 0;
  g->masked_states = 0;
}

/* Sorts the far tokens farthest first (insertion into a heap would do as
 * well; they are few). */
static void sortFar(uint32_t *ids, uint32_t *dist, size_t n) {
  for (size_t i = 1; i < n; ++i) {
    uint32_t id = ids[i], d = dist[i];
    size_t j = i;
    for (; j > 0 && dist[j - 1] < d; --j) {
      ids[j] = ids[j - 1];
      dist[j] = dist[j - 1];
    }
    ids[j] = id;
    dist[j] = d;
  }
}

static afm_status buildMasks(afm_grammar *g, uint32_t index) {
  size_t bytes = g->words * sizeof(uint64_t);
  if (g->mask_bytes + 2 * bytes > GRAMMAR_MASK_CACHE_BYTES)
    dropMasks(g);
  uint64_t *full = calloc(g->words, sizeof(uint64_t));
  uint64_t *closer = calloc(g->words, sizeof(uint64_t));
  if (!full || !closer) {
    free(full);
    free(closer);
    return afm_error(AFM_ERR_MEMORY, "grammar: out of memory for a mask");
  }
  const token_trie *t = &g->trie;
  uint32_t dist = g->states[index].dist;
  size_t fullCount = 0, closerCount = 0, farCount = 0;
  g->walk[0] = index;
  afm_status status = AFM_OK;
  for (size_t i = 1; i < t->node_count && status == AFM_OK;) {
    const tt_node *node = &t->nodes[i];
    uint32_t to;
    status = step(g, g->walk[node->depth - 1], node->byte, &to);
    if (status != AFM_OK)
      break;
    if (to == 0) {
      i = node->next;
      continue;
    }
    g->walk[node->depth] = to;
    uint32_t d = g->states[to].dist;
    for (uint32_t k = node->token_begin; k < node->token_end; ++k) {
      uint32_t id = (uint32_t)t->ids[k];
      full[id >> 6] |= 1ull << (id & 63);
      ++fullCount;
      if (d < dist) {
        closer[id >> 6] |= 1ull << (id & 63);
        ++closerCount;
      } else if (d > dist) {
        g->far_ids[farCount] = id;
        g->far_dist[farCount++] = d;
      }
    }
    ++i;
  }
  uint32_t *farIds = NULL, *farDist = NULL;
  if (status == AFM_OK && farCount) {
    farIds = malloc(farCount * sizeof(*farIds));
    farDist = malloc(farCount * sizeof(*farDist));
    if (!farIds || !farDist)
      status = afm_error(AFM_ERR_MEMORY, "grammar: out of memory for a mask");
  }
  if (status != AFM_OK) {
    free(full);
    free(closer);
    free(farIds);
    free(farDist);
    return status;
  }
  if (farCount) {
    memcpy(farIds, g->far_ids, farCount * sizeof(*farIds));
    memcpy(farDist, g->far_dist, farCount * sizeof(*farDist));
    sortFar(farIds, farDist, farCount);
  }
  dfa_state *s = &g->states[index];
  s->full = full;
  s->closer = closer;
  s->full_count = fullCount;
  s->closer_count = closerCount;
  s->far_ids = farIds;
  s->far_dist = farDist;
  s->far_count = farCount;
  size_t used = 2 * bytes + farCount * 2 * sizeof(uint32_t);
  g->mask_bytes += used;
  g->cache_bytes += used;
  ++g->masked_states;
  return AFM_OK;
}

/*-------------------------------------------------------------------- API --*/

void afm_grammar_free(afm_grammar *g) {
  if (!g)
    return;
  dropMasks(g);
  for (size_t i = 0; i < g->state_count; ++i) {
    free(g->states[i].set);
    free(g->states[i].next);
  }
  free(g->states);
  free(g->table);
  free(g->stamp);
  free(g->stack);
  free(g->found);
  free(g->walk);
  free(g->far_ids);
  free(g->far_dist);
  nfa_free(&g->nfa);
  if (g->has_trie)
    tt_free(&g->trie);
  free(g);
}

afm_status afm_grammar_compile_json_schema(const afm_tokenizer *tokenizer,
                                           const char *schema, size_t length,
                                           afm_grammar **out) {
  if (!out || (!schema && length))
    return afm_error(AFM_ERR_ARGUMENT,
                     "afm_grammar_compile_json_schema: NULL argument");
  *out = NULL;
  afm_grammar *g = calloc(1, sizeof(*g));
  if (!g)
    return afm_error(AFM_ERR_MEMORY, "grammar: out of memory");
  g->tokenizer = tokenizer;
  afm_status status = js_compile(schema ? schema : "", length, &g->nfa);
  if (status != AFM_OK) {
    free(g);
    return status;
  }
  size_t n = g->nfa.count;
  g->stamp = calloc(n, sizeof(*g->stamp));
  /* A closure pushes each state at most twice per edge into it. */
  g->stack = malloc(2 * n * sizeof(*g->stack) + sizeof(*g->stack));
  g->found = malloc(n * sizeof(*g->found) + sizeof(*g->found));
  if (!g->stamp || !g->stack || !g->found) {
    afm_grammar_free(g);
    return afm_error(AFM_ERR_MEMORY, "grammar: out of memory");
  }
  g->cache_bytes = n * (sizeof(nfa_state) + 4 * sizeof(uint32_t));
  if (tokenizer) {
    status = tt_build(tokenizer, &g->trie);
    if (status != AFM_OK) {
      afm_grammar_free(g);
      return status;
    }
    g->has_trie = 1;
    g->words = (g->trie.id_limit + 63) / 64;
    g->walk = malloc((g->trie.max_depth + 1) * sizeof(*g->walk));
    g->far_ids = malloc((g->trie.id_count + 1) * sizeof(*g->far_ids));
    g->far_dist = malloc((g->trie.id_count + 1) * sizeof(*g->far_dist));
    if (!g->walk || !g->far_ids || !g->far_dist) {
      afm_grammar_free(g);
      return afm_error(AFM_ERR_MEMORY, "grammar: out of memory");
    }
    g->cache_bytes += g->trie.node_count * sizeof(tt_node);
  }
  /* State 0: the dead state (no NFA states); then the start. */
  uint32_t dead;
  status = intern(g, 0, &dead);
  if (status == AFM_OK) {
    newStamp(g);
    size_t count = 0;
    closure(g, g->nfa.start, &count);
    status = intern(g, count, &g->start);
  }
  if (status != AFM_OK) {
    afm_grammar_free(g);
    return status;
  }
  *out = g;
  return AFM_OK;
}

int afm_grammar_match(afm_grammar *g, const char *bytes, size_t length,
                      int *complete) {
  if (complete)
    *complete = 0;
  if (!g || (!bytes && length))
    return 0;
  uint32_t s = g->start;
  for (size_t i = 0; i < length; ++i)
    if (step(g, s, (unsigned char)bytes[i], &s) != AFM_OK || s == 0)
      return 0;
  if (complete)
    *complete = g->states[s].accepting;
  return 1;
}

size_t afm_grammar_min_bytes(const afm_grammar *g) {
  return g ? g->states[g->start].dist : 0;
}

void afm_grammar_get_stats(const afm_grammar *g, afm_grammar_stats *stats) {
  if (!stats)
    return;
  memset(stats, 0, sizeof(*stats));
  if (!g)
    return;
  stats->nfa_states = g->nfa.count;
  stats->dfa_states = g->state_count;
  stats->masked_states = g->masked_states;
  stats->cache_bytes = g->cache_bytes;
  stats->trie_nodes = g->trie.node_count;
  stats->tokens = g->trie.id_count;
}

afm_status afm_grammar_state_create(afm_grammar *g, afm_grammar_state **out) {
  if (!g || !out)
    return afm_error(AFM_ERR_ARGUMENT,
                     "afm_grammar_state_create: NULL argument");
  *out = NULL;
  if (!g->has_trie)
    return afm_error(AFM_ERR_ARGUMENT,
                     "afm_grammar_state_create: the grammar was compiled "
                     "without a tokenizer");
  afm_grammar_state *s = calloc(1, sizeof(*s));
  if (s)
    s->scratch = malloc(g->words * sizeof(uint64_t));
  if (!s || !s->scratch) {
    free(s);
    return afm_error(AFM_ERR_MEMORY, "grammar: out of memory");
  }
  s->grammar = g;
  s->current = g->start;
  *out = s;
  return AFM_OK;
}

void afm_grammar_state_free(afm_grammar_state *s) {
  if (!s)
    return;
  free(s->scratch);
  free(s);
}

void afm_grammar_state_reset(afm_grammar_state *s) {
  if (s)
    s->current = s->grammar->start;
}

afm_status afm_grammar_state_copy(afm_grammar_state *to,
                                  const afm_grammar_state *from) {
  if (!to || !from)
    return afm_error(AFM_ERR_ARGUMENT,
                     "afm_grammar_state_copy: `%s` is NULL",
                     to ? "from" : "to");
  if (to->grammar != from->grammar)
    return afm_error(AFM_ERR_ARGUMENT,
                     "afm_grammar_state_copy: the states belong to different "
                     "grammars");
  to->current = from->current;
  return AFM_OK;
}

size_t afm_grammar_state_distance(const afm_grammar_state *s) {
  return s ? s->grammar->states[s->current].dist : 0;
}

afm_status afm_grammar_state_allowed(afm_grammar_state *s, int64_t remaining,
                                     const uint64_t **bits, size_t *count,
                                     int *accepting) {
  if (!s || !bits || !count || !accepting)
    return afm_error(AFM_ERR_ARGUMENT,
                     "afm_grammar_state_allowed: NULL argument");
  afm_grammar *g = s->grammar;
  uint32_t dist = g->states[s->current].dist;
  if (remaining < 1 || (uint64_t)remaining < dist)
    return afm_error(AFM_ERR_ARGUMENT,
                     "grammar: %lld tokens left, but the text needs at least "
                     "%u more bytes to be complete",
                     (long long)remaining, dist);
  if (!g->states[s->current].full) {
    afm_status status = buildMasks(g, s->current);
    if (status != AFM_OK)
      return status;
  }
  const dfa_state *d = &g->states[s->current];
  *accepting = d->accepting;
  uint64_t bound = (uint64_t)remaining - 1; /* tokens after this one */
  if (bound < dist) {
    if (d->closer_count == 0 && dist > 0)
      return afm_error(AFM_ERR_STATE,
                       "grammar: no token brings the text closer to "
                       "completion (the vocabulary lacks a byte)");
    *bits = d->closer;
    *count = d->closer_count;
    return AFM_OK;
  }
  if (d->far_count == 0 || d->far_dist[0] <= bound) {
    *bits = d->full;
    *count = d->full_count;
    return AFM_OK;
  }
  memcpy(s->scratch, d->full, g->words * sizeof(uint64_t));
  size_t removed = 0;
  for (size_t i = 0; i < d->far_count && d->far_dist[i] > bound; ++i) {
    uint32_t id = d->far_ids[i];
    s->scratch[id >> 6] &= ~(1ull << (id & 63));
    ++removed;
  }
  *bits = s->scratch;
  *count = d->full_count - removed;
  return AFM_OK;
}

afm_status afm_grammar_state_advance(afm_grammar_state *s, int32_t token) {
  if (!s)
    return afm_error(AFM_ERR_ARGUMENT,
                     "afm_grammar_state_advance: NULL argument");
  afm_grammar *g = s->grammar;
  const token_trie *t = &g->trie;
  if (token < 0 || (uint32_t)token >= t->id_limit ||
      t->length[token] == UINT32_MAX || t->length[token] == 0)
    return afm_error(AFM_ERR_ARGUMENT,
                     "grammar: token %d has no bytes the grammar could take",
                     token);
  uint32_t at = s->current;
  const char *bytes = t->blob + t->start[token];
  for (uint32_t i = 0; i < t->length[token]; ++i) {
    afm_status status = step(g, at, (unsigned char)bytes[i], &at);
    if (status != AFM_OK)
      return status;
    if (at == 0)
      return afm_error(AFM_ERR_ARGUMENT,
                       "grammar: token %d does not continue the text", token);
  }
  s->current = at;
  return AFM_OK;
}
