/*===- speculative.c - a draft proposes, the target verifies ---------------===*
 *
 * Speculative sampling (Leviathan et al. 2023, "Fast Inference from
 * Transformers via Speculative Decoding"; Chen et al. 2023). Each round:
 *
 *   1. The draft model, from the pending token t, proposes d1..dk one at a
 *      time, each drawn from its distribution q_i (after the same warpers
 *      and grammar mask as the target's).
 *   2. The target runs [t, d1..dk] through its verify entry in one step:
 *      row i holds the logits p_i of the token after position i.
 *   3. d_i is kept with probability min(1, p_{i-1}(d_i) / q_i(d_i)). At the
 *      first rejection a correction is drawn from max(0, p_{i-1} - q_i),
 *      renormalized; if all are kept, a bonus token is drawn from p_k.
 *
 * Every token delivered so has exactly the target's distribution, so
 * greedy output (one-hot distributions) is the target's greedy output.
 * The caches then hold rows for rejected drafts: both sessions rewind to
 * the accepted prefix (afm_session_rewind; the ring caches of local layers
 * keep the spare slots for it).
 *
 * Positions: at the start of a round the target has processed P positions
 * and the pending token t (delivered, not processed) is the last of `lag`,
 * the tokens the draft has not processed yet.
 *
 *===----------------------------------------------------------------------===*/

#include "error.h"
#include "generate_internal.h"
#include "sampler_internal.h"

#include <stdlib.h>
#include <string.h>

/* The most tokens drafted per round: the verify entry's rows, at most 16,
 * hold the pending token and the drafts. */
#define AFM_MAX_DRAFT_TOKENS 15

afm_status afm_speculative_check(afm_session *target,
                                 const afm_generate_options *o) {
  afm_session *draft = o->draft;
  const afm_model *tm = afm_session_model(target);
  const afm_model *dm = afm_session_model(draft);
  int32_t k = o->draft_tokens;
  if (draft == target)
    return afm_error(AFM_ERR_ARGUMENT,
                     "afm_generate: the draft must be another session than "
                     "the target's");
  if (k < 1 || k > AFM_MAX_DRAFT_TOKENS)
    return afm_error(AFM_ERR_ARGUMENT,
                     "afm_generate: draft_tokens is %d, expected 1 to %d", k,
                     AFM_MAX_DRAFT_TOKENS);
  if (afm_model_vocab_size(dm) != afm_model_vocab_size(tm))
    return afm_error(AFM_ERR_ARGUMENT,
                     "afm_generate: the draft model's vocabulary has %d "
                     "entries and the target's %d; they must share one",
                     afm_model_vocab_size(dm), afm_model_vocab_size(tm));
  const afm_tokenizer *tt = afm_model_tokenizer(tm);
  const afm_tokenizer *dt = afm_model_tokenizer(dm);
  if (tt && dt && afm_tokenizer_id_limit(tt) != afm_tokenizer_id_limit(dt))
    return afm_error(AFM_ERR_ARGUMENT,
                     "afm_generate: the draft's tokenizer has %u ids and the "
                     "target's %u; they must share one",
                     afm_tokenizer_id_limit(dt), afm_tokenizer_id_limit(tt));
  int32_t verify = afm_model_verify_tokens(tm);
  if (verify == 0)
    return afm_error(AFM_ERR_ARGUMENT,
                     "afm_generate: the target model has no verify entry "
                     "(compile it with afm-compile --verify-tokens %d for %d "
                     "draft tokens)",
                     k + 1, k);
  if (verify < k + 1)
    return afm_error(AFM_ERR_ARGUMENT,
                     "afm_generate: %d draft tokens need a target verify "
                     "entry of %d tokens, and the target's takes %d "
                     "(compile it with afm-compile --verify-tokens %d)",
                     k, k + 1, verify, k + 1);
  if (k > 1 && afm_model_verify_tokens(dm) < k)
    return afm_error(AFM_ERR_ARGUMENT,
                     "afm_generate: the draft model rewinds up to %d drafted "
                     "tokens, which needs it compiled with afm-compile "
                     "--verify-tokens %d or more (it has %d)",
                     k - 1, k, afm_model_verify_tokens(dm));
  if (afm_session_position(draft) != afm_session_position(target))
    return afm_error(AFM_ERR_ARGUMENT,
                     "afm_generate: the draft session holds %lld positions "
                     "and the target's %lld; they must hold the same context",
                     (long long)afm_session_position(draft),
                     (long long)afm_session_position(target));
  if (o->sampling.repetition_penalty != 1.0f ||
      o->sampling.presence_penalty != 0.0f)
    return afm_error(AFM_ERR_ARGUMENT,
                     "afm_generate: the repetition and presence penalties "
                     "are not supported with a draft model");
  return AFM_OK;
}

typedef struct speculation {
  afm_generation *gen;
  int32_t limit;     /* ids the sampler picks from */
  double *drafts;    /* k rows of `limit`: the draft's distributions */
  double *target;    /* `limit`: the target's distribution at one row */
  int32_t *sequence; /* [t, d1..dk] */
  int32_t *lag;      /* tokens the draft has not processed, t last */
  size_t lag_count;
  afm_grammar_state *draft_state; /* the grammar through the drafts */
} speculation;

/* The distribution the next token is drawn from at `position` (positions
 * processed before it) with `ahead` drafted tokens before it not yet
 * counted as generated, after the grammar's mask at `state`; *complete
 * when the grammar's text is complete and nothing may follow. */
static afm_status distributionAt(afm_generation *gen, afm_grammar_state *state,
                                 const float *logits, int64_t position,
                                 int64_t ahead, double *probs,
                                 bool *complete) {
  *complete = false;
  if (state) {
    afm_status status = afm_generation_mask(gen, state, logits, position,
                                            ahead, &logits, complete);
    if (status != AFM_OK || *complete)
      return status;
  }
  double start = afm_now_seconds();
  afm_status status = afm_sampler_distribution(gen->sampler, logits, probs);
  gen->r.sample_seconds += afm_now_seconds() - start;
  return status;
}

/* Proposes up to `count` tokens into sequence[1..]; *drafted of them. The
 * draft first catches up on `lag`. */
static afm_status proposeDrafts(speculation *sp, int64_t position, int count,
                                int *drafted) {
  afm_generation *gen = sp->gen;
  afm_session *draft = gen->o->draft;
  *drafted = 0;
  if (count == 0)
    return AFM_OK;
  /* One decode step per owed token (at most 3): a prefill call would run
   * its whole chunk of rows (128 at the paper's size) for them. */
  afm_status status = AFM_OK;
  for (size_t i = 0; status == AFM_OK && i < sp->lag_count; ++i)
    status = afm_session_decode(draft, sp->lag[i]);
  sp->lag_count = 0;
  if (status == AFM_OK && sp->draft_state)
    status = afm_grammar_state_copy(sp->draft_state, gen->g.state);
  for (int i = 1; status == AFM_OK && i <= count; ++i) {
    double *q = sp->drafts + (size_t)(i - 1) * (size_t)sp->limit;
    bool complete;
    status = distributionAt(gen, sp->draft_state, afm_session_logits(draft),
                            position + i, i - 1, q, &complete);
    if (status != AFM_OK || complete)
      break;
    int32_t d = afm_sampler_draw(gen->sampler, q, 1.0);
    sp->sequence[i] = d;
    *drafted = i;
    if (afm_generation_is_stop_id(gen, d))
      break; /* nothing follows an end id */
    if (sp->draft_state &&
        (status = afm_grammar_state_advance(sp->draft_state, d)) != AFM_OK)
      break;
    if (i < count)
      status = afm_session_decode(draft, d);
  }
  return status;
}

/* Checks the drafts against the verify rows, delivering the kept ones and
 * the correction or bonus token; *used is how many rows were consumed
 * (the target keeps positions [0, P + used)) and *next the pending token
 * afterwards. */
static afm_status acceptDrafts(speculation *sp, int64_t position, int drafted,
                               int *used, int32_t *next) {
  afm_generation *gen = sp->gen;
  const afm_generate_options *o = gen->o;
  size_t rows;
  const float *logits = afm_session_verify_logits(gen->session, &rows);
  afm_status status = AFM_OK;
  *used = 0;
  for (int i = 1; i <= drafted + 1; ++i) {
    const float *row = logits + (size_t)(i - 1) * (size_t)gen->vocab;
    *used = i;
    if (o->logits_callback)
      o->logits_callback(o->logits_user, row);
    bool complete;
    status = distributionAt(gen, gen->g.state, row, position + i, 0,
                            sp->target, &complete);
    if (status != AFM_OK)
      return status;
    if (complete) {
      gen->r.stop_reason = AFM_STOP_GRAMMAR;
      gen->stopped = true;
      return AFM_OK;
    }
    double *p = sp->target;
    int32_t y;
    bool rejected = false;
    if (i <= drafted) {
      const double *q = sp->drafts + (size_t)(i - 1) * (size_t)sp->limit;
      int32_t d = sp->sequence[i];
      /* Keep d with probability min(1, p(d) / q(d)); q(d) > 0, it was
       * drawn from q. */
      if (afm_sampler_uniform(gen->sampler) * q[d] < p[d]) {
        y = d;
        ++gen->r.accepted_tokens;
      } else {
        double total = 0;
        for (int32_t id = 0; id < sp->limit; ++id) {
          double excess = p[id] - q[id];
          p[id] = excess > 0 ? excess : 0;
          total += p[id];
        }
        /* p == q up to rounding: the correction is drawn from p (= q). */
        y = total > 0 ? afm_sampler_draw(gen->sampler, p, total)
                      : afm_sampler_draw(gen->sampler, q, 1.0);
        rejected = true;
      }
    } else {
      y = afm_sampler_draw(gen->sampler, p, 1.0);
    }
    status = afm_generation_emit(gen, y);
    *next = y;
    if (status != AFM_OK || gen->stopped || rejected)
      return status;
  }
  return status;
}

static afm_status speculate(speculation *sp) {
  afm_generation *gen = sp->gen;
  const afm_generate_options *o = gen->o;
  afm_session *target = gen->session, *draft = o->draft;
  afm_generate_result *r = &gen->r;

  /* The first token, from the prompt's logits. */
  const float *first = afm_session_logits(target);
  if (o->logits_callback)
    o->logits_callback(o->logits_user, first);
  bool complete;
  afm_status status = distributionAt(gen, gen->g.state, first,
                                     afm_session_position(target), 0,
                                     sp->target, &complete);
  if (status != AFM_OK)
    return status;
  if (complete) {
    r->stop_reason = AFM_STOP_GRAMMAR;
    return AFM_OK;
  }
  int32_t t = afm_sampler_draw(gen->sampler, sp->target, 1.0);
  status = afm_generation_emit(gen, t);
  sp->lag[0] = t;
  sp->lag_count = 1;

  while (status == AFM_OK && !gen->stopped) {
    int64_t P = afm_session_position(target);
    if (P >= gen->context) {
      r->stop_reason = AFM_STOP_CONTEXT;
      break;
    }
    /* This round yields up to drafts + 1 tokens and writes as many rows. */
    int64_t remaining = afm_generation_remaining(gen, P + 1, 0);
    int count = o->draft_tokens;
    if (remaining - 1 < count)
      count = (int)(remaining - 1);

    double start = afm_now_seconds();
    int drafted = 0;
    status = proposeDrafts(sp, P, count, &drafted);
    double drafting = afm_now_seconds() - start;
    r->draft_seconds += drafting;
    if (status != AFM_OK)
      break;
    sp->sequence[0] = t;
    start = afm_now_seconds();
    status = afm_session_verify(target, sp->sequence, (size_t)drafted + 1);
    r->decode_seconds += drafting + (afm_now_seconds() - start);
    if (status != AFM_OK)
      break;
    ++r->verify_steps;
    r->drafted_tokens += (size_t)drafted;

    int used = 0;
    int32_t next = t;
    status = acceptDrafts(sp, P, drafted, &used, &next);
    if (status != AFM_OK)
      break;
    /* Both models keep t and the kept drafts; `next` is pending. */
    int64_t kept = P + used;
    status = afm_session_rewind(target, kept);
    if (status != AFM_OK || gen->stopped)
      break;
    int64_t draftAt = afm_session_position(draft);
    if (count == 0) {
      /* The draft ran nothing: it still owes the old lag (t last). */
      sp->lag[sp->lag_count++] = next;
    } else if (draftAt > kept) {
      status = afm_session_rewind(draft, kept);
      sp->lag[0] = next;
      sp->lag_count = 1;
    } else {
      /* The draft stopped short of the kept prefix (every draft kept):
       * it owes sequence[draftAt - P .. used), then `next`. */
      sp->lag_count = 0;
      for (int64_t i = draftAt - P; i < used; ++i)
        sp->lag[sp->lag_count++] = sp->sequence[i];
      sp->lag[sp->lag_count++] = next;
    }
    t = next;
  }
  return status;
}

afm_status afm_generation_speculate(afm_generation *gen) {
  const afm_generate_options *o = gen->o;
  int32_t k = o->draft_tokens;
  speculation sp = {.gen = gen, .limit = afm_sampler_id_limit(gen->sampler)};
  sp.drafts = malloc((size_t)k * (size_t)sp.limit * sizeof(double));
  sp.target = malloc((size_t)sp.limit * sizeof(double));
  sp.sequence = malloc(((size_t)k + 1) * sizeof(int32_t));
  /* The old lag (at most t and one more), the kept drafts, `next`. */
  sp.lag = malloc(((size_t)k + 4) * sizeof(int32_t));
  afm_status status = AFM_OK;
  if (!sp.drafts || !sp.target || !sp.sequence || !sp.lag)
    status = afm_error(AFM_ERR_MEMORY,
                       "afm_generate: out of memory for %d draft "
                       "distributions of %d ids",
                       k, sp.limit);
  if (status == AFM_OK && gen->g.state)
    status = afm_grammar_state_create(o->grammar, &sp.draft_state);
  if (status == AFM_OK)
    status = speculate(&sp);
  afm_grammar_state_free(sp.draft_state);
  free(sp.drafts);
  free(sp.target);
  free(sp.sequence);
  free(sp.lag);
  return status;
}
