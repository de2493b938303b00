/*===- afm/generate.h - sampling and the generate loop -------------*- C -*-===*
 *
 * Text generation on a session: a sampler that turns logits into the next
 * token (greedy by default; temperature, top-k, top-p, min-p, repetition
 * and presence penalties, a seeded generator so runs repeat), and a loop
 * that prefills a prompt, samples, decodes and streams each token and the
 * text it completes to a callback until an end-of-sequence id, a stop
 * string, a token budget or the end of the context; optionally guided by
 * a grammar (afm/grammar.h) so the text follows a JSON Schema.
 *
 * Statuses and afm_last_error() are those of afm/runtime.h.
 *
 *===----------------------------------------------------------------------===*/

#ifndef AFM_GENERATE_H
#define AFM_GENERATE_H

#include "afm/grammar.h"
#include "afm/runtime.h"
#include "afm/tokenizer.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*------------------------------------------------------- the model's text --*/

/* The tokenizer packed into the model at compile time (afm-compile
 * --tokenizer or --model), or NULL when it has none. Owned by the model. */
const afm_tokenizer *afm_model_tokenizer(const afm_model *model);

/* The ids that end generation (generation_config.json's eos_token_id),
 * *count of them; NULL and 0 when the model records none. */
const int32_t *afm_model_eos_ids(const afm_model *model, size_t *count);

/*--------------------------------------------------------------- sampling --*/

/* Applied in this order, as Hugging Face transformers' generate does:
 * penalties, temperature, top-k, top-p, min-p; then one draw. */
typedef struct afm_sampling_options {
  /* <= 0: greedy, the largest (penalized) logit, lowest id on ties. */
  float temperature;
  /* Keep only the k most likely tokens; 0 keeps all. */
  int32_t top_k;
  /* Keep the most likely tokens while the mass before each is < top_p
   * (the smallest set whose mass reaches top_p); 1 keeps all. (0, 1]. */
  float top_p;
  /* Drop tokens less likely than min_p times the most likely one; 0 keeps
   * all. [0, 1]. */
  float min_p;
  /* For each token seen in the context (prompt and generated): a positive
   * logit is divided by it, a negative one multiplied (transformers'
   * RepetitionPenaltyLogitsProcessor); 1 = none. > 0. */
  float repetition_penalty;
  /* Subtracted from the logit of each token seen in the context (the
   * OpenAI / llama.cpp presence penalty); 0 = none. */
  float presence_penalty;
  /* Seeds the generator: the same seed, options and logits give the same
   * tokens. */
  uint64_t seed;
} afm_sampling_options;

/* Greedy: temperature 0, top_k 0, top_p 1, min_p 0, repetition_penalty 1,
 * presence_penalty 0, seed 0. */
void afm_sampling_options_init(afm_sampling_options *options);

typedef struct afm_sampler afm_sampler;

/* A sampler over logits of `vocab_size` entries that only ever picks ids
 * below `id_limit` (1 .. vocab_size: e.g. the tokenizer's id limit, when
 * the logits have padding rows). Options out of range are
 * AFM_ERR_ARGUMENT naming the field. Allocates everything it needs here:
 * sampling allocates nothing. */
afm_status afm_sampler_create(const afm_sampling_options *options,
                              int32_t vocab_size, int32_t id_limit,
                              afm_sampler **out);
void afm_sampler_free(afm_sampler *sampler);

/* Records one token of the context, for the penalties. */
afm_status afm_sampler_accept(afm_sampler *sampler, int32_t token);

/* Forgets the context (the penalties' counts); the generator goes on. */
void afm_sampler_reset(afm_sampler *sampler);

/* Picks the next token from `logits` (vocab_size floats, not modified).
 * A NaN logit among the candidates is AFM_ERR_ARGUMENT. */
afm_status afm_sampler_sample(afm_sampler *sampler, const float *logits,
                              int32_t *token);

/*-------------------------------------------------------- the generate loop --*/

typedef struct afm_generate_options {
  afm_sampling_options sampling;
  /* Tokens to generate at most; 0 = until the context is full. */
  int32_t max_tokens;
  /* Stop at the model's end-of-sequence ids (afm_model_eos_ids); 1 by
   * default. */
  int32_t stop_at_eos;
  /* More ids that end generation. */
  const int32_t *stop_ids;
  size_t stop_id_count;
  /* Generation ends where the text contains one of these (needs the
   * model's tokenizer); the text up to it is delivered, not the stop string
   * itself. Non-empty strings. */
  const char *const *stop_strings;
  size_t stop_string_count;
  /* Leave special tokens out of the streamed text; 1 by default. */
  int32_t skip_special;
  /* Guided generation (afm/grammar.h): only tokens that keep the text in
   * the grammar's language are sampled, end-of-sequence and stop ids only
   * where the text is complete, and the text is complete before the token
   * budget (max_tokens, or the context) runs out: near the end only tokens
   * that bring it closer to completion are allowed. The mask comes before
   * the penalties and the warpers (temperature, top-k, top-p, min-p), as a
   * logits processor passed to transformers' generate does, so top-k
   * counts allowed tokens only. Compiled with the model's tokenizer; used
   * by one generation at a time. NULL: none. */
  afm_grammar *grammar;
  /* Speculative decoding: a session of a draft model with the same
   * vocabulary, holding the same context as `session` (it gets the prompt
   * too). Each step the draft proposes up to draft_tokens tokens one by
   * one; the target checks them all in one verify step (its model needs
   * afm-compile --verify-tokens >= draft_tokens + 1, and the draft's
   * >= draft_tokens, for the rewinds) and keeps each with probability
   * min(1, p/q), drawing a correction from max(0, p - q) at the first
   * rejection (Leviathan et al. 2023; Chen et al. 2023). The output has the
   * target's distribution; greedy output is the target's greedy output.
   * With a grammar the draft proposes only tokens the grammar allows. The
   * repetition and presence penalties are not supported with a draft.
   * NULL: none. */
  afm_session *draft;
  int32_t draft_tokens; /* 1 .. 15 with a draft */
  /* Called with the logits each generated token is sampled from (the
   * target's, before the grammar's mask and the sampler; vocab_size
   * floats), in order, also for the id that ends generation. NULL: none. */
  void (*logits_callback)(void *user, const float *logits);
  void *logits_user;
} afm_generate_options;

/* Greedy sampling, no token budget, stop at EOS, no stop ids or strings,
 * special tokens skipped. */
void afm_generate_options_init(afm_generate_options *options);

typedef enum afm_stop_reason {
  AFM_STOP_LENGTH = 0,   /* max_tokens generated */
  AFM_STOP_EOS = 1,      /* an end-of-sequence or stop id was sampled */
  AFM_STOP_STRING = 2,   /* the text reached a stop string */
  AFM_STOP_CONTEXT = 3,  /* the context is full */
  AFM_STOP_CALLBACK = 4, /* the callback asked to stop */
  AFM_STOP_GRAMMAR = 5   /* the grammar's text is complete and nothing may
                            follow it (no end id to sample, or no budget) */
} afm_stop_reason;

/* Human-readable name of a stop reason ("length", "eos", ...). */
const char *afm_stop_reason_name(afm_stop_reason reason);

/* Called once per generated token, in order, with the text it completes
 * (with a tokenizer; often empty: text is held back while it could still
 * become a stop string or ends in an incomplete UTF-8 character). Called
 * once more with token -1 for the text still held back when generation
 * ends, if any. The id that ends generation (EOS or stop id) is not
 * delivered. Returning nonzero stops generation. */
typedef int (*afm_token_callback)(void *user, int32_t token, const char *text,
                                  size_t length);

typedef struct afm_generate_result {
  size_t prompt_tokens;
  size_t generated_tokens; /* delivered to the callback */
  afm_stop_reason stop_reason;
  double prefill_seconds; /* wall time of the prompt's prefill (the
                           * draft's too) */
  double decode_seconds;  /* wall time of the decode steps (the draft's
                           * and the verify steps, speculating) */
  double sample_seconds;  /* wall time of the sampler, all tokens */
  double mask_seconds;    /* wall time of the grammar's masks, all tokens */
  /* Speculative decoding (zeros without a draft): steps of the target's
   * verify entry, tokens the draft proposed and the ones the target kept,
   * and the draft's share of decode_seconds. */
  size_t verify_steps;
  size_t drafted_tokens;
  size_t accepted_tokens;
  double draft_seconds;
} afm_generate_result;

/* Appends `count` prompt tokens to the session (which may hold earlier
 * context), then generates. `options` and `callback` may be NULL;
 * `result` may be NULL. The prompt counts as context for the penalties.
 * The sampled token that ends generation by length is not decoded (its
 * logits are never needed), so the session's position is prompt + context
 * + generated - 1 after a LENGTH stop. */
afm_status afm_generate(afm_session *session, const int32_t *prompt,
                        size_t count, const afm_generate_options *options,
                        afm_token_callback callback, void *user,
                        afm_generate_result *result);

/* afm_generate on the model tokenizer's encoding of `length` bytes of UTF-8
 * `text`, after its prefix ids (e.g. BOS) when `add_special` is nonzero.
 * AFM_ERR_STATE when the model has no tokenizer. */
afm_status afm_generate_text(afm_session *session, const char *text,
                             size_t length, int add_special,
                             const afm_generate_options *options,
                             afm_token_callback callback, void *user,
                             afm_generate_result *result);

#ifdef __cplusplus
}
#endif

#endif /* AFM_GENERATE_H */
