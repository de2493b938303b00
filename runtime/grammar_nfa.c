/*===- grammar_nfa.c - byte-level Thompson fragments ----------------------===*/

#include "grammar_nfa.h"

#include "error.h"

#include <stdlib.h>
#include <string.h>

void nfa_free(nfa *n) {
  free(n->states);
  free(n->classes);
  free(n->dist);
  memset(n, 0, sizeof(*n));
}

static uint32_t newState(nfa *n, uint8_t kind, uint16_t cls) {
  if (n->overflow)
    return 0;
  if (n->count >= NFA_MAX_STATES) {
    n->overflow = 1;
    return 0;
  }
  if (n->count == n->capacity) {
    size_t capacity = n->capacity ? n->capacity * 2 : 1024;
    nfa_state *grown = realloc(n->states, capacity * sizeof(*grown));
    if (!grown) {
      n->overflow = n->out_of_memory = 1;
      return 0;
    }
    n->states = grown;
    n->capacity = capacity;
  }
  n->states[n->count] = (nfa_state){kind, cls, NFA_NONE, NFA_NONE};
  return (uint32_t)n->count++;
}

/* An epsilon edge from the free end `from` to `to`. */
static void nfaLink(nfa *n, uint32_t from, uint32_t to) {
  if (n->overflow)
    return;
  nfa_state *s = &n->states[from];
  if (s->out == NFA_NONE)
    s->out = to;
  else
    s->out2 = to; /* ends get at most two edges by construction */
}

uint32_t nfa_eps(nfa *n) { return newState(n, NFA_EPS, 0); }

void nfa_link(nfa *n, uint32_t from, uint32_t to) { nfaLink(n, from, to); }

nfa_frag nfa_empty(nfa *n) {
  uint32_t s = newState(n, NFA_EPS, 0);
  return (nfa_frag){s, s};
}

nfa_frag nfa_class(nfa *n, const uint32_t set[8]) {
  size_t c = 0;
  while (c < n->class_count && memcmp(n->classes[c], set, 32) != 0)
    ++c;
  if (c == n->class_count && !n->overflow) {
    if (c == 65535) {
      n->overflow = 1;
      return (nfa_frag){0, 0};
    }
    if (c == n->class_capacity) {
      size_t capacity = n->class_capacity ? n->class_capacity * 2 : 32;
      void *grown = realloc(n->classes, capacity * sizeof(*n->classes));
      if (!grown) {
        n->overflow = n->out_of_memory = 1;
        return (nfa_frag){0, 0};
      }
      n->classes = grown;
      n->class_capacity = capacity;
    }
    memcpy(n->classes[c], set, 32);
    ++n->class_count;
  }
  uint32_t s = newState(n, NFA_CLASS, (uint16_t)c);
  uint32_t e = newState(n, NFA_EPS, 0);
  if (!n->overflow)
    n->states[s].out = e;
  return (nfa_frag){s, e};
}

nfa_frag nfa_range(nfa *n, unsigned lo, unsigned hi) {
  uint32_t set[8] = {0};
  nfa_set_add(set, lo, hi);
  return nfa_class(n, set);
}

nfa_frag nfa_bytes(nfa *n, const char *bytes, size_t length) {
  nfa_frag f = nfa_empty(n);
  for (size_t i = 0; i < length; ++i) {
    unsigned char b = (unsigned char)bytes[i];
    f = nfa_concat(n, f, nfa_range(n, b, b));
  }
  return f;
}

nfa_frag nfa_concat(nfa *n, nfa_frag a, nfa_frag b) {
  nfaLink(n, a.end, b.start);
  return (nfa_frag){a.start, b.end};
}

nfa_frag nfa_alt(nfa *n, nfa_frag a, nfa_frag b) {
  uint32_t s = newState(n, NFA_EPS, 0), e = newState(n, NFA_EPS, 0);
  nfaLink(n, s, a.start);
  nfaLink(n, s, b.start);
  nfaLink(n, a.end, e);
  nfaLink(n, b.end, e);
  return (nfa_frag){s, e};
}

nfa_frag nfa_optional(nfa *n, nfa_frag a) {
  uint32_t s = newState(n, NFA_EPS, 0), e = newState(n, NFA_EPS, 0);
  nfaLink(n, s, a.start);
  nfaLink(n, s, e);
  nfaLink(n, a.end, e);
  return (nfa_frag){s, e};
}

nfa_frag nfa_star(nfa *n, nfa_frag a) {
  uint32_t s = newState(n, NFA_EPS, 0), e = newState(n, NFA_EPS, 0);
  nfaLink(n, s, a.start);
  nfaLink(n, s, e);
  nfaLink(n, a.end, s);
  return (nfa_frag){s, e};
}

afm_status nfa_finish(nfa *n, nfa_frag whole) {
  uint32_t accept = newState(n, NFA_ACCEPT, 0);
  nfaLink(n, whole.end, accept);
  if (n->overflow)
    return n->out_of_memory
               ? afm_error(AFM_ERR_MEMORY, "grammar: out of memory")
               : afm_error(AFM_ERR_ARGUMENT,
                           "grammar: the automaton exceeds %u states",
                           NFA_MAX_STATES);
  n->start = whole.start;
  n->dist = malloc(n->count * sizeof(*n->dist));
  if (!n->dist)
    return afm_error(AFM_ERR_MEMORY, "grammar: out of memory");
  /* Fewest bytes to acceptance: relaxation to a fixed point. States are
   * mostly created after the states they lead to are entered, so passes
   * from the last state back converge in a few rounds. */
  for (size_t i = 0; i < n->count; ++i)
    n->dist[i] = n->states[i].kind == NFA_ACCEPT ? 0 : UINT32_MAX;
  for (int changed = 1; changed;) {
    changed = 0;
    for (size_t i = n->count; i-- > 0;) {
      const nfa_state *s = &n->states[i];
      uint32_t best = n->dist[i];
      if (s->kind == NFA_CLASS) {
        if (n->dist[s->out] != UINT32_MAX && n->dist[s->out] + 1 < best)
          best = n->dist[s->out] + 1;
      } else if (s->kind == NFA_EPS) {
        if (s->out != NFA_NONE && n->dist[s->out] < best)
          best = n->dist[s->out];
        if (s->out2 != NFA_NONE && n->dist[s->out2] < best)
          best = n->dist[s->out2];
      }
      if (best != n->dist[i]) {
        n->dist[i] = best;
        changed = 1;
      }
    }
  }
  if (n->dist[n->start] == UINT32_MAX)
    return afm_error(AFM_ERR_ARGUMENT,
                     "grammar: the schema accepts no text at all");
  return AFM_OK;
}
