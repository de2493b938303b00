/*===- generate.c - prefill, sample, decode, stream ------------------------===*
 *
 * The loop of afm/generate.h. Text goes through the streaming detokenizer,
 * then through a hold-back buffer: a piece is released only once no stop
 * string can start inside it, so a stop string split over several tokens
 * is never half delivered.
 *
 *===----------------------------------------------------------------------===*/

#include "afm/generate.h"

#include "error.h"
#include "generate_internal.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void afm_generate_options_init(afm_generate_options *options) {
  if (!options)
    return;
  memset(options, 0, sizeof(*options));
  afm_sampling_options_init(&options->sampling);
  options->stop_at_eos = 1;
  options->skip_special = 1;
}

const char *afm_stop_reason_name(afm_stop_reason reason) {
  switch (reason) {
  case AFM_STOP_LENGTH:
    return "length";
  case AFM_STOP_EOS:
    return "eos";
  case AFM_STOP_STRING:
    return "stop-string";
  case AFM_STOP_CONTEXT:
    return "context";
  case AFM_STOP_CALLBACK:
    return "callback";
  case AFM_STOP_GRAMMAR:
    return "grammar";
  }
  return "unknown";
}

double afm_now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/*------------------------------------------------------------ text output --*/


static afm_status append(textStream *t, const char *text, size_t length) {
  if (length == 0)
    return AFM_OK;
  if (t->length + length > t->capacity) {
    size_t capacity = t->capacity ? t->capacity : 256;
    while (capacity < t->length + length)
      capacity *= 2;
    char *grown = realloc(t->pending, capacity);
    if (!grown)
      return afm_error(AFM_ERR_MEMORY, "afm_generate: out of memory for text");
    t->pending = grown;
    t->capacity = capacity;
  }
  memcpy(t->pending + t->length, text, length);
  t->length += length;
  return AFM_OK;
}

/* Where the first stop string that ends after byte `from` starts, or -1. */
static ptrdiff_t findStop(const textStream *t, size_t from) {
  ptrdiff_t first = -1;
  for (size_t s = 0; s < t->stop_count; ++s) {
    size_t n = strlen(t->stops[s]);
    size_t start = from >= n - 1 ? from - (n - 1) : 0;
    for (size_t at = start; at + n <= t->length; ++at)
      if (memcmp(t->pending + at, t->stops[s], n) == 0) {
        if (first < 0 || (ptrdiff_t)at < first)
          first = (ptrdiff_t)at;
        break;
      }
  }
  return first;
}

/* How many leading bytes of the pending text no stop string can start
 * in: the text from the returned offset on is a proper prefix of a stop
 * string. */
static size_t releasable(const textStream *t) {
  size_t from = t->length > t->longest_stop ? t->length - t->longest_stop : 0;
  for (size_t at = from; at < t->length; ++at)
    for (size_t s = 0; s < t->stop_count; ++s) {
      size_t n = strlen(t->stops[s]);
      if (t->length - at < n &&
          memcmp(t->pending + at, t->stops[s], t->length - at) == 0)
        return at;
    }
  return t->length;
}

/* Gives the callback `token` and the first `length` pending bytes, which
 * leave the buffer. Returns whether the callback asked to stop. */
static bool release(textStream *t, int32_t token, size_t length) {
  int stop = 0;
  if (t->callback)
    stop = t->callback(t->user, token, t->pending, length);
  if (length < t->length) /* (pending is NULL until text arrives) */
    memmove(t->pending, t->pending + length, t->length - length);
  t->length -= length;
  return stop != 0;
}

/* Adds the detokenizer's next text (the piece of `token`, or for token -1
 * what it still holds) to the pending text; *stop is where a stop string
 * now starts in it, or -1. */
static afm_status addText(textStream *t, int32_t token, ptrdiff_t *stop) {
  *stop = -1;
  if (!t->detokenizer)
    return AFM_OK;
  const char *piece;
  size_t length, before = t->length;
  afm_status status =
      token >= 0
          ? afm_detokenizer_push(t->detokenizer, token, &piece, &length)
          : afm_detokenizer_flush(t->detokenizer, &piece, &length);
  if (status == AFM_OK)
    status = append(t, piece, length);
  if (status == AFM_OK && t->stop_count)
    *stop = findStop(t, before);
  return status;
}

/* Adds the text of `token` and releases what is safe; *reason is set when
 * generation must end here. */
static afm_status deliver(textStream *t, int32_t token, bool *stopped,
                          afm_stop_reason *reason) {
  ptrdiff_t stop;
  afm_status status = addText(t, token, &stop);
  if (status != AFM_OK)
    return status;
  if (stop >= 0) {
    release(t, token, (size_t)stop);
    t->length = 0;
    *stopped = true;
    *reason = AFM_STOP_STRING;
  } else if (release(t, token, t->stop_count ? releasable(t) : t->length)) {
    *stopped = true;
    *reason = AFM_STOP_CALLBACK;
  }
  return AFM_OK;
}

/* The end of the stream: what the detokenizer and the stop strings held. */
static afm_status finish(textStream *t, afm_stop_reason *reason) {
  if (*reason != AFM_STOP_STRING) {
    ptrdiff_t stop;
    afm_status status = addText(t, -1, &stop);
    if (status != AFM_OK)
      return status;
    if (stop >= 0) {
      t->length = (size_t)stop;
      *reason = AFM_STOP_STRING;
    }
  }
  if (t->length > 0)
    release(t, -1, t->length);
  return AFM_OK;
}

/*---------------------------------------------------------------- the loop --*/

bool afm_generation_is_stop_id(const afm_generation *gen, int32_t token) {
  const afm_generate_options *o = gen->o;
  for (size_t i = 0; o->stop_at_eos && i < gen->eos_count; ++i)
    if (gen->eos[i] == token)
      return true;
  for (size_t i = 0; i < o->stop_id_count; ++i)
    if (o->stop_ids[i] == token)
      return true;
  return false;
}

static afm_status checkOptions(const afm_generate_options *o,
                               const afm_tokenizer *tokenizer,
                               size_t *longest) {
  if (o->max_tokens < 0)
    return afm_error(AFM_ERR_ARGUMENT,
                     "afm_generate: max_tokens is %d, expected >= 0 (0 = "
                     "until the context is full)",
                     o->max_tokens);
  if (o->stop_id_count && !o->stop_ids)
    return afm_error(AFM_ERR_ARGUMENT, "afm_generate: stop_ids is NULL");
  if (o->stop_string_count && !o->stop_strings)
    return afm_error(AFM_ERR_ARGUMENT, "afm_generate: stop_strings is NULL");
  if (o->stop_string_count && !tokenizer)
    return afm_error(AFM_ERR_ARGUMENT,
                     "afm_generate: stop strings need text, and the model "
                     "has no tokenizer (compile it with --tokenizer)");
  *longest = 0;
  for (size_t i = 0; i < o->stop_string_count; ++i) {
    if (!o->stop_strings[i] || o->stop_strings[i][0] == '\0')
      return afm_error(AFM_ERR_ARGUMENT,
                       "afm_generate: stop string %zu is %s", i,
                       o->stop_strings[i] ? "empty" : "NULL");
    size_t n = strlen(o->stop_strings[i]);
    if (n > *longest)
      *longest = n;
  }
  return AFM_OK;
}

/*----------------------------------------------------------------- grammar --*/


int64_t afm_generation_remaining(const afm_generation *gen, int64_t position,
                                 int64_t ahead) {
  const afm_generate_options *o = gen->o;
  int64_t left = gen->context - position + 1;
  int64_t budget =
      (int64_t)o->max_tokens - (int64_t)gen->r.generated_tokens - ahead;
  if (o->max_tokens > 0 && budget < left)
    left = budget;
  return left;
}

static afm_status guideCreate(const afm_generate_options *o,
                              const afm_tokenizer *tokenizer, int32_t vocab,
                              bool canEnd, guide *g) {
  memset(g, 0, sizeof(*g));
  if (!o->grammar)
    return AFM_OK;
  if (!tokenizer)
    return afm_error(AFM_ERR_ARGUMENT,
                     "afm_generate: a grammar needs the model's tokenizer "
                     "(compile the model with --tokenizer or --model)");
  afm_status status = afm_grammar_state_create(o->grammar, &g->state);
  if (status != AFM_OK)
    return status;
  g->logits = malloc((size_t)vocab * sizeof(float));
  if (!g->logits)
    return afm_error(AFM_ERR_MEMORY, "afm_generate: out of memory");
  g->can_end = canEnd;
  g->id_limit = afm_tokenizer_id_limit(tokenizer);
  return AFM_OK;
}

/* The logits with every token the grammar refuses at -inf (end ids only
 * where the text is complete); *complete when the text is complete and
 * nothing may be sampled, which ends generation. */
static afm_status maskLogits(afm_generation *gen, afm_grammar_state *state,
                             const float *logits, int64_t remaining,
                             const float **out, bool *complete) {
  guide *g = &gen->g;
  const afm_generate_options *o = gen->o;
  const int32_t *eos = gen->eos;
  size_t eosCount = gen->eos_count;
  int32_t vocab = gen->vocab;
  const uint64_t *bits;
  size_t count;
  int accepting;
  afm_status status =
      afm_grammar_state_allowed(state, remaining, &bits, &count,
                                &accepting);
  if (status != AFM_OK)
    return status;
  *complete = accepting && count == 0 && !g->can_end;
  if (!accepting && count == 0)
    return afm_error(AFM_ERR_STATE,
                     "afm_generate: the grammar allows no token here");
  for (int32_t id = 0; id < vocab; ++id)
    g->logits[id] = -INFINITY;
  for (int32_t w = 0; (int64_t)w * 64 < (int64_t)g->id_limit; ++w)
    for (uint64_t word = bits[w]; word; word &= word - 1) {
      int32_t id = w * 64 + __builtin_ctzll(word);
      if (id < vocab)
        g->logits[id] = logits[id];
    }
  /* End ids end the text: only where it is complete. (A model's end id
   * may also be an ordinary token with bytes.) */
  for (size_t i = 0; o->stop_at_eos && i < eosCount; ++i)
    if (eos[i] >= 0 && eos[i] < vocab)
      g->logits[eos[i]] = accepting ? logits[eos[i]] : -INFINITY;
  for (size_t i = 0; i < o->stop_id_count; ++i)
    if (o->stop_ids[i] >= 0 && o->stop_ids[i] < vocab)
      g->logits[o->stop_ids[i]] = accepting ? logits[o->stop_ids[i]]
                                            : -INFINITY;
  *out = g->logits;
  return AFM_OK;
}

afm_status afm_generation_mask(afm_generation *gen, afm_grammar_state *state,
                               const float *logits, int64_t position,
                               int64_t ahead, const float **out,
                               bool *complete) {
  double start = afm_now_seconds();
  afm_status status =
      maskLogits(gen, state, logits,
                 afm_generation_remaining(gen, position, ahead), out, complete);
  gen->r.mask_seconds += afm_now_seconds() - start;
  return status;
}

afm_status afm_generation_emit(afm_generation *gen, int32_t token) {
  afm_generate_result *r = &gen->r;
  if (afm_generation_is_stop_id(gen, token)) {
    r->stop_reason = AFM_STOP_EOS;
    gen->stopped = true;
    return AFM_OK;
  }
  ++r->generated_tokens;
  afm_status status = AFM_OK;
  if (gen->g.state)
    status = afm_grammar_state_advance(gen->g.state, token);
  if (status == AFM_OK)
    status = deliver(&gen->text, token, &gen->stopped, &r->stop_reason);
  if (status == AFM_OK)
    status = afm_sampler_accept(gen->sampler, token);
  if (status == AFM_OK && !gen->stopped && gen->o->max_tokens > 0 &&
      r->generated_tokens == (size_t)gen->o->max_tokens) {
    r->stop_reason = AFM_STOP_LENGTH;
    gen->stopped = true;
  }
  return status;
}

/* One token per step: sample from the session's logits, deliver, decode. */
static afm_status generateByToken(afm_generation *gen) {
  afm_session *session = gen->session;
  afm_generate_result *r = &gen->r;
  afm_status status = AFM_OK;
  while (status == AFM_OK && !gen->stopped) {
    int32_t token;
    const float *logits = afm_session_logits(session);
    if (gen->o->logits_callback)
      gen->o->logits_callback(gen->o->logits_user, logits);
    if (gen->g.state) {
      bool complete = false;
      status = afm_generation_mask(gen, gen->g.state, logits,
                                   afm_session_position(session), 0, &logits,
                                   &complete);
      if (status != AFM_OK)
        break;
      if (complete) {
        r->stop_reason = AFM_STOP_GRAMMAR;
        break;
      }
    }
    double start = afm_now_seconds();
    status = afm_sampler_sample(gen->sampler, logits, &token);
    r->sample_seconds += afm_now_seconds() - start;
    if (status == AFM_OK)
      status = afm_generation_emit(gen, token);
    if (status != AFM_OK || gen->stopped)
      break;
    if (afm_session_position(session) >= gen->context) {
      r->stop_reason = AFM_STOP_CONTEXT;
      break;
    }
    start = afm_now_seconds();
    status = afm_session_decode(session, token);
    r->decode_seconds += afm_now_seconds() - start;
  }
  return status;
}

afm_status afm_generate(afm_session *session, const int32_t *prompt,
                        size_t count, const afm_generate_options *options,
                        afm_token_callback callback, void *user,
                        afm_generate_result *result) {
  if (!session || !prompt)
    return afm_error(AFM_ERR_ARGUMENT, "afm_generate: `%s` is NULL",
                     session ? "prompt" : "session");
  afm_generate_options defaults;
  afm_generate_options_init(&defaults);
  const afm_generate_options *o = options ? options : &defaults;
  const afm_model *model = afm_session_model(session);
  const afm_tokenizer *tokenizer = afm_model_tokenizer(model);
  afm_generation gen = {.session = session,
                        .o = o,
                        .vocab = afm_model_vocab_size(model),
                        .context = afm_model_context_length(model),
                        .text = {.stops = o->stop_strings,
                                 .stop_count = o->stop_string_count,
                                 .callback = callback,
                                 .user = user},
                        .r = {.prompt_tokens = count}};
  gen.eos = afm_model_eos_ids(model, &gen.eos_count);
  afm_status status = checkOptions(o, tokenizer, &gen.text.longest_stop);
  if (status == AFM_OK && o->draft)
    status = afm_speculative_check(session, o);
  if (status != AFM_OK)
    return status;

  int32_t vocab = gen.vocab;
  int32_t limit =
      tokenizer ? (int32_t)afm_tokenizer_id_limit(tokenizer) : vocab;
  status = guideCreate(o, tokenizer, vocab,
                       (o->stop_at_eos && gen.eos_count > 0) ||
                           o->stop_id_count,
                       &gen.g);
  if (status == AFM_OK && gen.g.state) {
    /* The budget must fit the shortest complete text, one token a byte at
     * worst. */
    int64_t left = gen.context - afm_session_position(session) -
                   (int64_t)count + 1;
    if (o->max_tokens > 0 && o->max_tokens < left)
      left = o->max_tokens;
    size_t need = afm_grammar_min_bytes(o->grammar);
    if (left < 0 || (uint64_t)left < need)
      status = afm_error(AFM_ERR_ARGUMENT,
                         "afm_generate: the grammar's shortest text takes up "
                         "to %zu tokens, but only %lld can be generated "
                         "(max_tokens %d, context %lld)",
                         need, (long long)(left > 0 ? left : 0),
                         o->max_tokens, (long long)gen.context);
  }
  if (status == AFM_OK)
    status = afm_sampler_create(&o->sampling, vocab, limit, &gen.sampler);
  if (status == AFM_OK && tokenizer)
    status = afm_detokenizer_create(tokenizer, o->skip_special,
                                    &gen.text.detokenizer);
  double start = afm_now_seconds();
  if (status == AFM_OK)
    status = afm_session_prefill(session, prompt, count);
  if (status == AFM_OK && o->draft)
    status = afm_session_prefill(o->draft, prompt, count);
  gen.r.prefill_seconds = afm_now_seconds() - start;
  for (size_t i = 0; status == AFM_OK && i < count; ++i)
    status = afm_sampler_accept(gen.sampler, prompt[i]);

  if (status == AFM_OK)
    status = o->draft ? afm_generation_speculate(&gen) : generateByToken(&gen);
  if (status == AFM_OK)
    status = finish(&gen.text, &gen.r.stop_reason);
  afm_detokenizer_free(gen.text.detokenizer);
  afm_grammar_state_free(gen.g.state);
  free(gen.g.logits);
  afm_sampler_free(gen.sampler);
  free(gen.text.pending);
  if (status == AFM_OK && result)
    *result = gen.r;
  return status;
}

afm_status afm_generate_text(afm_session *session, const char *text,
                             size_t length, int add_special,
                             const afm_generate_options *options,
                             afm_token_callback callback, void *user,
                             afm_generate_result *result) {
  if (!session || !text)
    return afm_error(AFM_ERR_ARGUMENT, "afm_generate_text: `%s` is NULL",
                     session ? "text" : "session");
  const afm_tokenizer *tokenizer =
      afm_model_tokenizer(afm_session_model(session));
  if (!tokenizer)
    return afm_error(AFM_ERR_STATE,
                     "afm_generate_text: the model has no tokenizer "
                     "(compile it with --tokenizer or --model)");
  int32_t *ids = NULL;
  size_t count = 0;
  afm_status status =
      afm_tokenizer_encode(tokenizer, text, length, &ids, &count);
  if (status != AFM_OK)
    return status;
  size_t prefixCount = 0;
  const uint32_t *prefix = add_special
                               ? afm_tokenizer_prefix_ids(tokenizer,
                                                          &prefixCount)
                               : NULL;
  int32_t *prompt = malloc((prefixCount + count + 1) * sizeof(int32_t));
  if (!prompt) {
    free(ids);
    return afm_error(AFM_ERR_MEMORY, "afm_generate_text: out of memory");
  }
  for (size_t i = 0; i < prefixCount; ++i)
    prompt[i] = (int32_t)prefix[i];
  if (count)
    memcpy(prompt + prefixCount, ids, count * sizeof(int32_t));
  free(ids);
  if (prefixCount + count == 0) {
    free(prompt);
    return afm_error(AFM_ERR_ARGUMENT,
                     "afm_generate_text: the prompt is empty (no text and no "
                     "prefix ids): there is nothing to continue");
  }
  status = afm_generate(session, prompt, prefixCount + count, options,
                        callback, user, result);
  free(prompt);
  return status;
}
