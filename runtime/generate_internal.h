/*===- generate_internal.h - the generate loop's shared parts ---*- C -*-===*
 *
 * afm_generate (generate.c) runs one of two loops over the same state: a
 * token at a time, or speculative (speculative.c: a draft model proposes,
 * the target checks several tokens in one verify step). Both sample,
 * mask and deliver tokens through these helpers. Not public API.
 *
 *===----------------------------------------------------------------------===*/

#ifndef AFM_RUNTIME_GENERATE_INTERNAL_H
#define AFM_RUNTIME_GENERATE_INTERNAL_H

#include "afm/generate.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Text on its way to the callback: the detokenizer, then a hold-back
 * buffer for the stop strings. */
typedef struct textStream {
  afm_detokenizer *detokenizer; /* NULL without a tokenizer */
  const char *const *stops;
  size_t stop_count;
  size_t longest_stop;
  char *pending; /* text not yet released */
  size_t length;
  size_t capacity;
  afm_token_callback callback;
  void *user;
} textStream;

/* The grammar of guided generation, with the masked copy of the logits. */
typedef struct guide {
  afm_grammar_state *state; /* NULL without a grammar */
  float *logits;            /* the masked copy, vocab_size floats */
  bool can_end;             /* an end id exists to sample */
  uint32_t id_limit;        /* the tokenizer's: the mask's size */
} guide;

/* One generation in progress. */
typedef struct afm_generation {
  afm_session *session;
  const afm_generate_options *o;
  const int32_t *eos; /* the model's end ids */
  size_t eos_count;
  int32_t vocab;
  int64_t context;
  afm_sampler *sampler;
  guide g;
  textStream text;
  afm_generate_result r;
  bool stopped; /* r.stop_reason is final */
} afm_generation;

double afm_now_seconds(void);

/* Tokens that may still be generated when the session has processed
 * `position` positions, the next one included, with `ahead` tokens
 * (drafts) before it not yet counted as generated. */
int64_t afm_generation_remaining(const afm_generation *gen, int64_t position,
                                 int64_t ahead);

/* Whether `token` ends generation (an end id or a stop id). */
bool afm_generation_is_stop_id(const afm_generation *gen, int32_t token);

/* The logits with every token the grammar refuses at `state` set to
 * -inf (end ids only where the text is complete), into gen->g.logits,
 * for the token after `position` processed positions and `ahead`
 * uncounted drafts (afm_generation_remaining gives its budget); *complete
 * when the text is complete and nothing may be sampled. Its time goes to
 * gen->r.mask_seconds. */
afm_status afm_generation_mask(afm_generation *gen, afm_grammar_state *state,
                               const float *logits, int64_t position,
                               int64_t ahead, const float **out,
                               bool *complete);

/* A sampled token: an end or stop id ends generation (not delivered);
 * anything else is counted, moves the grammar, goes to the text stream
 * and the penalties, and ends generation at max_tokens. Sets
 * gen->stopped and gen->r.stop_reason when generation ends here. */
afm_status afm_generation_emit(afm_generation *gen, int32_t token);

/* The speculative options and models fit together (speculative.c),
 * checked before anything runs. */
afm_status afm_speculative_check(afm_session *target,
                                 const afm_generate_options *o);

/* The speculative loop (speculative.c), after the prompt's prefill:
 * generates until gen->stopped or an error. */
afm_status afm_generation_speculate(afm_generation *gen);

#endif /* AFM_RUNTIME_GENERATE_INTERNAL_H */
