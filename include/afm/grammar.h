/*===- afm/grammar.h - guided generation: JSON Schema constraints ---*- C -*-===*
 *
 * A grammar restricts which tokens the sampler may pick so that the
 * generated text stays in a language: here, the compact JSON texts a JSON
 * Schema (a subset, docs/generation.md) accepts. The schema compiles to a
 * byte-level automaton; each step, the tokens whose bytes
 * (afm_tokenizer_token_bytes) the automaton can read from its current
 * state are allowed, end-of-sequence only where the text is complete. A
 * token budget is honoured: near its end only tokens that bring the text
 * closer to completion are allowed, so the output is always complete
 * within the budget.
 *
 * Pass a grammar to afm_generate through afm_generate_options.grammar.
 * A grammar caches the automaton it determinizes on demand and the masks
 * of its states: use it from one thread at a time.
 *
 * Statuses and afm_last_error() are those of afm/runtime.h.
 *
 *===----------------------------------------------------------------------===*/

#ifndef AFM_GRAMMAR_H
#define AFM_GRAMMAR_H

#include "afm/runtime.h"
#include "afm/tokenizer.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct afm_grammar afm_grammar;

/* Compiles `length` bytes of a JSON Schema. With a tokenizer, the grammar
 * can mask its tokens (the tokenizer must outlive the grammar); with NULL
 * it only matches bytes (afm_grammar_match). AFM_ERR_ARGUMENT for invalid
 * JSON (line and column) and for anything outside the supported subset,
 * naming the keyword and its JSON pointer, e.g. "json schema: unsupported
 * keyword 'pattern' at #/properties/name/pattern". */
afm_status afm_grammar_compile_json_schema(const afm_tokenizer *tokenizer,
                                           const char *schema, size_t length,
                                           afm_grammar **out);
void afm_grammar_free(afm_grammar *grammar);

/* Whether `length` bytes can start an accepted text (1) or not (0);
 * *complete (may be NULL) is whether they are a whole accepted text. */
int afm_grammar_match(afm_grammar *grammar, const char *bytes, size_t length,
                      int *complete);

/* The fewest bytes of an accepted text: with one token per byte at worst,
 * the fewest tokens a generation needs. */
size_t afm_grammar_min_bytes(const afm_grammar *grammar);

typedef struct afm_grammar_stats {
  size_t nfa_states;
  size_t dfa_states;   /* determinized so far */
  size_t masked_states; /* states whose masks are cached */
  size_t cache_bytes;  /* the DFA and the cached masks */
  size_t trie_nodes;   /* the vocabulary's byte trie */
  size_t tokens;       /* tokens with bytes (the others are never allowed) */
} afm_grammar_stats;

void afm_grammar_get_stats(const afm_grammar *grammar,
                           afm_grammar_stats *stats);

/* A position in the grammar during one generation. */
typedef struct afm_grammar_state afm_grammar_state;

/* Needs a grammar compiled with a tokenizer. */
afm_status afm_grammar_state_create(afm_grammar *grammar,
                                    afm_grammar_state **out);
void afm_grammar_state_free(afm_grammar_state *state);
/* Back to the start of the text. */
void afm_grammar_state_reset(afm_grammar_state *state);
/* Moves `to` to where `from` is (two states of one grammar): a draft's
 * tentative position, say. */
afm_status afm_grammar_state_copy(afm_grammar_state *to,
                                  const afm_grammar_state *from);

/* The tokens allowed next when `remaining` tokens (>= 1, this one
 * included) may still be generated: a bitset over the tokenizer's ids
 * (bit id % 64 of word id / 64), valid until the next call, with
 * *count bits set; *accepting is whether the text so far is complete
 * (end-of-sequence may end it). A token is allowed when its bytes keep the
 * text a prefix of an accepted one that can still be completed in
 * remaining - 1 tokens. AFM_ERR_ARGUMENT when `remaining` is less than the
 * bytes still needed (afm_grammar_state_distance). */
afm_status afm_grammar_state_allowed(afm_grammar_state *state,
                                     int64_t remaining, const uint64_t **bits,
                                     size_t *count, int *accepting);

/* Moves past `token`'s bytes; AFM_ERR_ARGUMENT if the grammar refuses
 * them. */
afm_status afm_grammar_state_advance(afm_grammar_state *state, int32_t token);

/* Bytes still needed to complete the text (0: complete). */
size_t afm_grammar_state_distance(const afm_grammar_state *state);

#ifdef __cplusplus
}
#endif

#endif /* AFM_GRAMMAR_H */
