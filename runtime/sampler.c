/*===- sampler.c - logits to the next token --------------------------------===*
 *
 * The order and the rules of Hugging Face transformers' generate: the
 * repetition penalty (and llama.cpp's presence penalty) on the logits, then
 * temperature, top-k, top-p and min-p on the probabilities, then one draw
 * from what is left, renormalized. Masses are summed in double.
 *
 * At a vocabulary of 150,000 a full sort per token would cost milliseconds,
 * so only candidates are sorted: the k best when top-k is set (a bounded
 * heap), and for top-p alone the tokens above a threshold that is lowered
 * until they hold at least top_p of the mass (the nucleus is then among
 * them, since it takes the most likely tokens first).
 *
 *===----------------------------------------------------------------------===*/

#include "afm/generate.h"

#include "argmax.h"
#include "error.h"
#include "sampler_internal.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct afm_sampler {
  afm_sampling_options options;
  int32_t vocab_size;
  int32_t id_limit; /* candidates are ids below it */
  uint64_t state[4]; /* xoshiro256** */
  uint32_t *counts;  /* occurrences in the context, per id */
  double *probs;     /* id_limit: unnormalized probabilities */
  int32_t *ids;      /* id_limit: candidate ids */
};

/*-------------------------------------------------------------- generator --*/

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t nextRandom(uint64_t s[4]) {
  uint64_t result = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

/* Uniform in [0, 1), 53 random bits. */
static double nextUniform(uint64_t s[4]) {
  return (double)(nextRandom(s) >> 11) * 0x1.0p-53;
}

/*---------------------------------------------------------------- options --*/

void afm_sampling_options_init(afm_sampling_options *options) {
  if (!options)
    return;
  memset(options, 0, sizeof(*options));
  options->top_p = 1.0f;
  options->repetition_penalty = 1.0f;
}

static afm_status checkOptions(const afm_sampling_options *o) {
  if (isnan(o->temperature))
    return afm_error(AFM_ERR_ARGUMENT, "sampling: temperature is NaN");
  if (o->top_k < 0)
    return afm_error(AFM_ERR_ARGUMENT,
                     "sampling: top_k is %d, expected >= 0 (0 keeps all)",
                     o->top_k);
  if (!(o->top_p > 0.0f && o->top_p <= 1.0f))
    return afm_error(AFM_ERR_ARGUMENT,
                     "sampling: top_p is %g, expected in (0, 1] (1 keeps all)",
                     (double)o->top_p);
  if (!(o->min_p >= 0.0f && o->min_p <= 1.0f))
    return afm_error(AFM_ERR_ARGUMENT,
                     "sampling: min_p is %g, expected in [0, 1] (0 keeps all)",
                     (double)o->min_p);
  if (!(o->repetition_penalty > 0.0f) || isinf(o->repetition_penalty))
    return afm_error(AFM_ERR_ARGUMENT,
                     "sampling: repetition_penalty is %g, expected a finite "
                     "number > 0 (1 = none)",
                     (double)o->repetition_penalty);
  if (!isfinite(o->presence_penalty))
    return afm_error(AFM_ERR_ARGUMENT,
                     "sampling: presence_penalty is %g, expected a finite "
                     "number (0 = none)",
                     (double)o->presence_penalty);
  return AFM_OK;
}

afm_status afm_sampler_create(const afm_sampling_options *options,
                              int32_t vocab_size, int32_t id_limit,
                              afm_sampler **out) {
  if (!out)
    return afm_error(AFM_ERR_ARGUMENT, "afm_sampler_create: `out` is NULL");
  *out = NULL;
  if (vocab_size < 1 || id_limit < 1 || id_limit > vocab_size)
    return afm_error(AFM_ERR_ARGUMENT,
                     "afm_sampler_create: vocab_size %d and id_limit %d, "
                     "expected 1 <= id_limit <= vocab_size",
                     vocab_size, id_limit);
  afm_sampling_options defaults;
  afm_sampling_options_init(&defaults);
  if (!options)
    options = &defaults;
  afm_status status = checkOptions(options);
  if (status != AFM_OK)
    return status;
  afm_sampler *s = calloc(1, sizeof(*s));
  if (!s)
    return afm_error(AFM_ERR_MEMORY, "afm_sampler_create: out of memory");
  s->options = *options;
  s->vocab_size = vocab_size;
  s->id_limit = id_limit;
  s->counts = calloc((size_t)vocab_size, sizeof(*s->counts));
  s->probs = malloc((size_t)id_limit * sizeof(*s->probs));
  s->ids = malloc((size_t)id_limit * sizeof(*s->ids));
  if (!s->counts || !s->probs || !s->ids) {
    afm_sampler_free(s);
    return afm_error(AFM_ERR_MEMORY,
                     "afm_sampler_create: out of memory for a vocabulary of "
                     "%d",
                     vocab_size);
  }
  uint64_t seed = options->seed;
  for (int i = 0; i < 4; ++i)
    s->state[i] = splitmix64(&seed);
  *out = s;
  return AFM_OK;
}

void afm_sampler_free(afm_sampler *sampler) {
  if (!sampler)
    return;
  free(sampler->counts);
  free(sampler->probs);
  free(sampler->ids);
  free(sampler);
}

afm_status afm_sampler_accept(afm_sampler *sampler, int32_t token) {
  if (!sampler)
    return afm_error(AFM_ERR_ARGUMENT, "afm_sampler_accept: `sampler` is NULL");
  if (token < 0 || token >= sampler->vocab_size)
    return afm_error(AFM_ERR_ARGUMENT,
                     "afm_sampler_accept: token %d is outside the vocabulary "
                     "[0, %d)",
                     token, sampler->vocab_size);
  if (sampler->counts[token] < UINT32_MAX)
    ++sampler->counts[token];
  return AFM_OK;
}

void afm_sampler_reset(afm_sampler *sampler) {
  if (sampler)
    memset(sampler->counts, 0,
           (size_t)sampler->vocab_size * sizeof(*sampler->counts));
}

/*--------------------------------------------------------------- sampling --*/

/* The logit of `id` after the penalties. */
static double penalized(const afm_sampler *s, const float *logits, int32_t id) {
  double logit = logits[id];
  if (s->counts[id] == 0)
    return logit;
  double r = s->options.repetition_penalty;
  logit = logit > 0 ? logit / r : logit * r;
  return logit - s->options.presence_penalty;
}

/* a before b in the candidates' order: more likely first, lower id on
 * ties. */
static bool before(const double *probs, int32_t a, int32_t b) {
  return probs[a] > probs[b] || (probs[a] == probs[b] && a < b);
}

/* Sorts ids[0..n) by `before` (heap sort: no recursion, no allocation). */
static void siftDown(const double *probs, int32_t *ids, size_t root, size_t n) {
  for (;;) {
    size_t child = 2 * root + 1;
    if (child >= n)
      return;
    /* A min-heap in the candidates' order: the root is the one that comes
     * last. */
    if (child + 1 < n && before(probs, ids[child], ids[child + 1]))
      ++child;
    if (!before(probs, ids[root], ids[child]))
      return;
    int32_t t = ids[root];
    ids[root] = ids[child];
    ids[child] = t;
    root = child;
  }
}

static void heapify(const double *probs, int32_t *ids, size_t n) {
  for (size_t i = n / 2; i-- > 0;)
    siftDown(probs, ids, i, n);
}

/* The k first ids in the candidates' order into ids[0..k) (as a heap, not
 * sorted: no later step needs the order). */
static size_t selectTopK(const double *probs, int32_t *ids, int32_t limit,
                         size_t k) {
  /* ids[0..k) is a heap whose root is the weakest of the k kept. */
  for (int32_t id = 0; id < (int32_t)k; ++id)
    ids[id] = id;
  heapify(probs, ids, k);
  for (int32_t id = (int32_t)k; id < limit; ++id)
    if (before(probs, id, ids[0])) {
      ids[0] = id;
      siftDown(probs, ids, 0, k);
    }
  return k;
}

static void swapIds(int32_t *ids, size_t a, size_t b) {
  int32_t t = ids[a];
  ids[a] = ids[b];
  ids[b] = t;
}

/* Top-p without sorting: moves the nucleus of ids[0..n) to the front and
 * returns its size. In the candidates' order a token is kept while the
 * mass before it is below `target`; so every token more likely than the
 * least likely kept one is kept, and among equals the lower ids go first.
 * Quickselect by mass: partition around a pivot into more likely, equal
 * and less likely; keep all of the first part if its mass stays below
 * the target, else look only inside it. Expected O(n). */
static size_t selectNucleus(const double *probs, int32_t *ids, size_t n,
                            double target) {
  size_t lo = 0, hi = n; /* ids[0..lo) kept; the answer ends in [lo, hi] */
  double taken = 0;      /* mass of ids[0..lo) */
  uint64_t mix = n;
  while (lo < hi) {
    /* A pseudo-random pivot, the same for the same input. */
    mix = mix * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
    double pivot = probs[ids[lo + (size_t)((mix >> 33) % (hi - lo))]];
    /* Three-way partition: [lo, gt) > pivot, [gt, lt) == pivot,
     * [lt, hi) < pivot. */
    size_t gt = lo, i = lo, lt = hi;
    while (i < lt) {
      double p = probs[ids[i]];
      if (p > pivot)
        swapIds(ids, gt++, i++);
      else if (p < pivot)
        swapIds(ids, i, --lt);
      else
        ++i;
    }
    double greater = 0;
    for (size_t j = lo; j < gt; ++j)
      greater += probs[ids[j]];
    if (lo < gt && taken + greater >= target) {
      /* The last kept token is among the more likely ones. */
      hi = gt;
      continue;
    }
    taken += greater;
    lo = gt;
    /* The ties, lowest id first: kept while the mass before is below the
     * target. Insertion sort: ties of one value are few. */
    for (size_t j = gt + 1; j < lt; ++j)
      for (size_t k = j; k > gt && ids[k - 1] > ids[k]; --k)
        swapIds(ids, k - 1, k);
    for (; lo < lt; ++lo) {
      if (lo > 0 && taken >= target)
        return lo;
      taken += probs[ids[lo]];
    }
  }
  return lo;
}

/* exp((logit - top) / T), the probability relative to the most likely
 * token. In float: expf is several times faster than exp, and a relative
 * error of 1e-7 in a probability changes no draw that matters; sums stay
 * in double. */
static double scaledExp(double logit, double top, float invT) {
  return (double)expf((float)(logit - top) * invT);
}

/* Greedy with no penalty to apply: the largest logit, lowest id on ties,
 * from the floats as they are (argmax.h: nothing converted or written; the
 * general loop below converts each logit to double, stores it and reads a
 * count per id, 494 -> 19 us per draw at a vocabulary of 150000 on the
 * Granite Rapids VM). Returns false when a logit is NaN, so that the
 * general loop names the first one. */
static bool greedyBest(const afm_sampler *s, const float *logits,
                       int32_t *bestId) {
  const afm_sampling_options *o = &s->options;
  bool greedy = o->temperature <= 0 || o->top_k == 1;
  if (!greedy || o->repetition_penalty != 1.0f || o->presence_penalty != 0)
    return false;
  bool sawNan;
  int32_t best = afm_argmax(logits, s->id_limit, &sawNan);
  if (sawNan)
    return false;
  *bestId = best;
  return true;
}

/* What one draw picks from: after the penalties and the warpers, the
 * candidates ids[0..*n) with unnormalized probabilities probs[id] of total
 * *mass; or, greedy (temperature 0, top-k 1, an infinite logit, one id),
 * *n = 0 and *best the largest penalized logit, lowest id on ties. */
static afm_status candidates(afm_sampler *s, const float *logits,
                             const char *function, size_t *count,
                             double *totalMass, int32_t *bestId) {
  const afm_sampling_options *o = &s->options;
  int32_t limit = s->id_limit;
  *count = 0;
  if (greedyBest(s, logits, bestId))
    return AFM_OK;

  /* Penalties, the largest logit (lowest id on ties), NaN check. */
  double *probs = s->probs;
  int32_t best = 0;
  for (int32_t id = 0; id < limit; ++id) {
    double logit = penalized(s, logits, id);
    if (isnan(logit))
      return afm_error(AFM_ERR_ARGUMENT, "%s: the logit of token %d is NaN",
                       function, id);
    probs[id] = logit;
    if (logit > probs[best])
      best = id;
  }
  *bestId = best;
  *count = 0;
  double top = probs[best];
  if (o->temperature <= 0 || o->top_k == 1 || isinf(top) || limit == 1)
    return AFM_OK;

  /* Candidates, sorted most likely first when a filter needs the order,
   * and their probabilities after temperature, unnormalized (the largest
   * is 1). Top-k picks by logit, as transformers' TopKLogitsWarper does,
   * so only its k candidates pay for an exp. */
  float invT = 1.0f / o->temperature;
  int32_t *ids = s->ids;
  size_t n = 0;
  double total = 0; /* the mass top-p is relative to */
  if (o->top_k > 0 && o->top_k < limit) {
    n = selectTopK(probs, ids, limit, (size_t)o->top_k);
    for (size_t i = 0; i < n; ++i)
      total += probs[ids[i]] = scaledExp(probs[ids[i]], top, invT);
  } else {
    for (int32_t id = 0; id < limit; ++id)
      if ((total += probs[id] = scaledExp(probs[id], top, invT), probs[id]) >
          0)
        ids[n++] = id;
  }

  /* Top-p over what top-k kept (or over all): keep a token while the mass
   * of the ones before it is below top_p (transformers'
   * TopPLogitsWarper). */
  if (o->top_p < 1.0f)
    n = selectNucleus(probs, ids, n, (double)o->top_p * total);

  /* Min-p: relative to the most likely token, which is always kept. */
  double mass = 0;
  size_t kept = 0;
  double cutoff = (double)o->min_p; /* times the largest probability, 1 */
  for (size_t i = 0; i < n; ++i) {
    double p = probs[ids[i]];
    if (p > 0 && (p >= cutoff || p == 1.0)) {
      ids[kept++] = ids[i];
      mass += p;
    }
  }
  *count = kept;
  *totalMass = mass;
  return AFM_OK;
}

afm_status afm_sampler_sample(afm_sampler *sampler, const float *logits,
                              int32_t *token) {
  if (!sampler || !logits || !token)
    return afm_error(AFM_ERR_ARGUMENT, "afm_sampler_sample: `%s` is NULL",
                     !sampler ? "sampler" : !logits ? "logits" : "token");
  afm_sampler *s = sampler;
  size_t n;
  double mass = 0;
  int32_t best;
  afm_status status =
      candidates(s, logits, "afm_sampler_sample", &n, &mass, &best);
  if (status != AFM_OK || n == 0) {
    *token = best;
    return status;
  }
  /* One draw over what is left, renormalized. */
  const int32_t *ids = s->ids;
  double u = nextUniform(s->state) * mass;
  for (size_t i = 0; i < n; ++i) {
    u -= s->probs[ids[i]];
    if (u < 0) {
      *token = ids[i];
      return AFM_OK;
    }
  }
  *token = ids[n - 1]; /* rounding left u at the edge; p > 0 for all n */
  return AFM_OK;
}

/*------------------------------------------------- speculative decoding --*/

afm_status afm_sampler_distribution(afm_sampler *s, const float *logits,
                                    double *probs) {
  size_t n;
  double mass = 0;
  int32_t best;
  afm_status status =
      candidates(s, logits, "afm_sampler_distribution", &n, &mass, &best);
  if (status != AFM_OK)
    return status;
  memset(probs, 0, (size_t)s->id_limit * sizeof(*probs));
  if (n == 0) {
    probs[best] = 1;
    return AFM_OK;
  }
  for (size_t i = 0; i < n; ++i)
    probs[s->ids[i]] = s->probs[s->ids[i]] / mass;
  return AFM_OK;
}

double afm_sampler_uniform(afm_sampler *s) { return nextUniform(s->state); }

int32_t afm_sampler_draw(afm_sampler *s, const double *weights, double total) {
  double u = nextUniform(s->state) * total;
  int32_t last = 0;
  for (int32_t id = 0; id < s->id_limit; ++id) {
    if (weights[id] <= 0)
      continue;
    last = id;
    u -= weights[id];
    if (u < 0)
      return id;
  }
  return last; /* rounding left u at the edge: the last id with weight */
}

int32_t afm_sampler_id_limit(const afm_sampler *s) { return s->id_limit; }
