/*===- grammar_nfa.h - byte-level NFAs for constrained decoding ----*- C -*-===*
 *
 * Thompson fragments over bytes: a state either matches one byte of a
 * class (a 256-bit set, shared in a table) or has up to two epsilon edges.
 * json_schema.c builds a schema's language from these; grammar.c runs it
 * as a lazily determinized DFA. The state count is capped, so a hostile
 * schema (maxLength 10^9) is an error, not an exhausted machine.
 *
 *===----------------------------------------------------------------------===*/

#ifndef AFM_RUNTIME_GRAMMAR_NFA_H
#define AFM_RUNTIME_GRAMMAR_NFA_H

#include "afm/runtime.h"

#include <stddef.h>
#include <stdint.h>

#define NFA_NONE UINT32_MAX
/* At most this many states (12 bytes each): about 16 Ki characters of
 * bounded strings. */
#define NFA_MAX_STATES (1u << 20)

enum { NFA_EPS = 0, NFA_CLASS = 1, NFA_ACCEPT = 2 };

typedef struct nfa_state {
  uint8_t kind;
  uint16_t cls; /* NFA_CLASS: index into the class table */
  uint32_t out, out2;
} nfa_state;

typedef struct nfa {
  nfa_state *states;
  size_t count, capacity;
  uint32_t (*classes)[8]; /* 256-bit byte sets */
  size_t class_count, class_capacity;
  int overflow; /* the state cap or memory ran out */
  int out_of_memory;
  uint32_t start;
  uint32_t *dist; /* per state: fewest bytes to an accepting state */
} nfa;

/* A piece of automaton: enter at `start`, leave through `end`, an epsilon
 * state whose edges are still free. */
typedef struct nfa_frag {
  uint32_t start, end;
} nfa_frag;

void nfa_free(nfa *n);

/* Each returns a fragment; on overflow n->overflow is set and the result
 * is a harmless placeholder (callers check the flag once per step). */
nfa_frag nfa_empty(nfa *n);
nfa_frag nfa_class(nfa *n, const uint32_t set[8]);
nfa_frag nfa_range(nfa *n, unsigned lo, unsigned hi);
nfa_frag nfa_bytes(nfa *n, const char *bytes, size_t length);
nfa_frag nfa_concat(nfa *n, nfa_frag a, nfa_frag b);
nfa_frag nfa_alt(nfa *n, nfa_frag a, nfa_frag b);
nfa_frag nfa_optional(nfa *n, nfa_frag a);
nfa_frag nfa_star(nfa *n, nfa_frag a);

/* A lone epsilon state, and an epsilon edge from a state with a free
 * edge (an end, or a state made by nfa_eps with fewer than two edges). */
uint32_t nfa_eps(nfa *n);
void nfa_link(nfa *n, uint32_t from, uint32_t to);

/* Ends the automaton: `whole` then an accepting state; computes dist. */
afm_status nfa_finish(nfa *n, nfa_frag whole);

/* Byte sets. */
static inline void nfa_set_add(uint32_t set[8], unsigned lo, unsigned hi) {
  for (unsigned b = lo; b <= hi; ++b)
    set[b >> 5] |= 1u << (b & 31);
}
static inline int nfa_set_has(const uint32_t set[8], unsigned b) {
  return (set[b >> 5] >> (b & 31)) & 1u;
}

#endif /* AFM_RUNTIME_GRAMMAR_NFA_H */
