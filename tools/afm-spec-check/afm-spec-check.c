/*===- afm-spec-check.c - does speculative sampling keep the target's law? -===*
 *
 * afm-spec-check TARGET.afmb DRAFT.afmb --prompt 1,2,3 [options]
 *
 * The first L generated tokens of speculative sampling (afm_generate with a
 * draft) must follow the target model's own distribution over sequences.
 * This tool computes that distribution exactly, by enumerating every
 * sequence of L tokens the warped target distribution allows (top-k, so
 * there are at most k^L) with the target's logits for each prefix and its
 * own softmax, then draws N samples speculatively (seeds 0..N-1) and runs
 * a chi-square goodness-of-fit test over the sequences. As a control that
 * the test can tell distributions apart, the same test is run on N
 * samples of the draft model alone, whose law differs, and on N samples
 * of the target itself at a 25% higher temperature (same support).
 *
 * The warper here is written independently of the runtime's sampler:
 * temperature, then the top-k logits (ties to the lower id), softmax.
 *
 *===----------------------------------------------------------------------===*/

#include "afm/generate.h"
#include "afm/runtime.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: afm-spec-check TARGET.afmb DRAFT.afmb --prompt T1,T2,... "
    "[options]\n"
    "\n"
    "Checks that speculative sampling (the target verifies what the draft\n"
    "proposes) gives the target's distribution over the first L tokens: a\n"
    "chi-square test of N speculative samples against the exact law, and\n"
    "the same test on N samples of the draft alone and of the target at a\n"
    "25% higher temperature (controls that must fail).\n"
    "\n"
    "  --prompt T1,...     prompt token ids\n"
    "  --tokens L          tokens per sample (default 3)\n"
    "  --draft-tokens K    tokens the draft proposes per step (default 2)\n"
    "  --top-k K           top-k of both models' sampling (default 6)\n"
    "  --temperature T     (default 1)\n"
    "  --samples N         (default 20000)\n"
    "  --alpha A           significance level (default 0.001)\n"
    "\n"
    "Prints, for the speculative samples and the control, the statistic,\n"
    "its degrees of freedom, the p-value and 'consistent' or\n"
    "'inconsistent'; samples outside the exact law's support count as\n"
    "'impossible'. Exit status 0 when both ran.\n";

enum { MAX_TOKENS = 4, MAX_TOP_K = 16, MAX_PROMPT = 256 };

typedef struct options {
  const char *target, *draft;
  int32_t prompt[MAX_PROMPT];
  size_t prompt_size;
  int tokens, draft_tokens, top_k;
  float temperature;
  long samples;
  double alpha;
} options;

static int fail(const char *message, const char *detail) {
  fprintf(stderr, "afm-spec-check: error: %s%s\n", message,
          detail ? detail : "");
  return 1;
}

/*------------------------------------------------------- the exact law --*/

typedef struct path {
  int32_t tokens[MAX_TOKENS];
  double probability;
  long observed;
} path;

typedef struct law {
  path *paths;
  size_t count, capacity;
} law;

/* The warped distribution of `logits`: the top_k ids and their
 * probabilities after temperature. */
static int warp(const float *logits, int32_t vocab, int topK, float temperature,
                int32_t *ids, double *probs) {
  int n = 0;
  for (int32_t id = 0; id < vocab; ++id) {
    /* Insert id into the sorted top list (larger logit first, lower id
     * first on ties). */
    if (n == topK && !(logits[id] > logits[ids[n - 1]]))
      continue;
    int at = n < topK ? n++ : n - 1;
    while (at > 0 && logits[id] > logits[ids[at - 1]]) {
      ids[at] = ids[at - 1];
      --at;
    }
    ids[at] = id;
  }
  double total = 0;
  for (int i = 0; i < n; ++i)
    total += probs[i] = exp((double)(logits[ids[i]] - logits[ids[0]]) /
                            (double)temperature);
  for (int i = 0; i < n; ++i)
    probs[i] /= total;
  return n;
}

static bool addPath(law *l, const int32_t *tokens, int length, double p) {
  if (l->count == l->capacity) {
    size_t capacity = l->capacity ? 2 * l->capacity : 256;
    path *grown = realloc(l->paths, capacity * sizeof(path));
    if (!grown)
      return false;
    l->paths = grown;
    l->capacity = capacity;
  }
  path *out = &l->paths[l->count++];
  memset(out, 0, sizeof(*out));
  memcpy(out->tokens, tokens, (size_t)length * sizeof(int32_t));
  out->probability = p;
  return true;
}

/* Every continuation of `prefix` (depth tokens so far) with probability
 * `p`, by running the target on prompt + prefix. */
static int enumerate(const options *o, afm_session *target, int32_t *context,
                     int32_t *prefix, int depth, double p, law *l) {
  if (depth == o->tokens)
    return addPath(l, prefix, depth, p) ? 0 : fail("out of memory", NULL);
  if (afm_session_reset(target) != AFM_OK ||
      afm_session_prefill(target, context, o->prompt_size + (size_t)depth) !=
          AFM_OK)
    return fail(afm_last_error(), NULL);
  int32_t vocab = afm_model_vocab_size(afm_session_model(target));
  int32_t ids[MAX_TOP_K];
  double probs[MAX_TOP_K];
  int n = warp(afm_session_logits(target), vocab, o->top_k, o->temperature,
               ids, probs);
  for (int i = 0; i < n; ++i) {
    prefix[depth] = ids[i];
    context[o->prompt_size + (size_t)depth] = ids[i];
    if (enumerate(o, target, context, prefix, depth + 1, p * probs[i], l))
      return 1;
  }
  return 0;
}

/*------------------------------------------------------------ sampling --*/

typedef struct collected {
  int32_t tokens[MAX_TOKENS];
  int count;
} collected;

static int collect(void *user, int32_t token, const char *text,
                   size_t length) {
  (void)text;
  (void)length;
  collected *c = user;
  if (token >= 0 && c->count < MAX_TOKENS)
    c->tokens[c->count++] = token;
  return 0;
}

/* N samples of `session` (speculative when `draft` is given) tallied into
 * `l`; *impossible counts samples outside its support. */
static int sample(const options *o, afm_session *session, afm_session *draft,
                  law *l, long *impossible) {
  for (size_t i = 0; i < l->count; ++i)
    l->paths[i].observed = 0;
  *impossible = 0;
  afm_generate_options g;
  afm_generate_options_init(&g);
  g.sampling.temperature = o->temperature;
  g.sampling.top_k = o->top_k;
  g.max_tokens = o->tokens;
  g.stop_at_eos = 0;
  g.draft = draft;
  g.draft_tokens = o->draft_tokens;
  for (long s = 0; s < o->samples; ++s) {
    g.sampling.seed = (uint64_t)s;
    collected c = {{0}, 0};
    if (afm_session_reset(session) != AFM_OK ||
        (draft && afm_session_reset(draft) != AFM_OK) ||
        afm_generate(session, o->prompt, o->prompt_size, &g, collect, &c,
                     NULL) != AFM_OK)
      return fail(afm_last_error(), NULL);
    if (c.count != o->tokens)
      return fail("a sample stopped early", NULL);
    size_t i = 0;
    while (i < l->count &&
           memcmp(l->paths[i].tokens, c.tokens,
                  (size_t)o->tokens * sizeof(int32_t)) != 0)
      ++i;
    if (i == l->count)
      ++*impossible;
    else
      ++l->paths[i].observed;
  }
  return 0;
}

/*---------------------------------------------------------- chi-square --*/

/* Pearson's statistic over the paths, cells with an expected count below 5
 * pooled into one; the upper tail by the Wilson-Hilferty approximation. */
static void report(const char *name, const options *o, const law *l,
                   long impossible) {
  double n = (double)o->samples, chi2 = 0, pooledE = 0, pooledO = 0;
  long cells = 0;
  for (size_t i = 0; i < l->count; ++i) {
    double e = n * l->paths[i].probability, obs = (double)l->paths[i].observed;
    if (e < 5) {
      pooledE += e;
      pooledO += obs;
      continue;
    }
    chi2 += (obs - e) * (obs - e) / e;
    ++cells;
  }
  if (pooledE > 0) {
    chi2 += (pooledO - pooledE) * (pooledO - pooledE) / pooledE;
    ++cells;
  }
  double df = (double)(cells > 1 ? cells - 1 : 1);
  double z = (cbrt(chi2 / df) - (1 - 2 / (9 * df))) / sqrt(2 / (9 * df));
  double p = 0.5 * erfc(z / sqrt(2.0));
  bool consistent = impossible == 0 && p >= o->alpha;
  printf("%s: chi2 %.1f df %.0f p %.3g impossible %ld: %s\n", name, chi2, df,
         p, impossible, consistent ? "consistent" : "inconsistent");
}

/*------------------------------------------------------------- options --*/

static bool parseInt(const char *text, long lo, long hi, long *out) {
  char *end;
  long v = strtol(text, &end, 10);
  if (end == text || *end || v < lo || v > hi)
    return false;
  *out = v;
  return true;
}

static int parseArgs(int argc, char **argv, options *o) {
  for (int i = 1; i < argc; ++i) {
    const char *arg = argv[i];
    if (strcmp(arg, "--help") == 0) {
      fputs(usage, stdout);
      return 0;
    }
    if (arg[0] != '-') {
      if (!o->target)
        o->target = arg;
      else if (!o->draft)
        o->draft = arg;
      else
        return fail("more than two models given: ", arg);
      continue;
    }
    if (i + 1 >= argc)
      return fail("a value is missing after ", arg);
    const char *value = argv[++i];
    long v;
    if (strcmp(arg, "--prompt") == 0) {
      char *copy = strdup(value), *save = NULL;
      for (char *t = strtok_r(copy, ",", &save); t;
           t = strtok_r(NULL, ",", &save)) {
        if (o->prompt_size == MAX_PROMPT || !parseInt(t, 0, INT32_MAX, &v)) {
          free(copy);
          return fail("--prompt is not a list of token ids: ", value);
        }
        o->prompt[o->prompt_size++] = (int32_t)v;
      }
      free(copy);
    } else if (strcmp(arg, "--tokens") == 0 &&
               parseInt(value, 1, MAX_TOKENS, &v)) {
      o->tokens = (int)v;
    } else if (strcmp(arg, "--draft-tokens") == 0 &&
               parseInt(value, 1, 15, &v)) {
      o->draft_tokens = (int)v;
    } else if (strcmp(arg, "--top-k") == 0 &&
               parseInt(value, 1, MAX_TOP_K, &v)) {
      o->top_k = (int)v;
    } else if (strcmp(arg, "--samples") == 0 &&
               parseInt(value, 1, 100000000, &v)) {
      o->samples = v;
    } else if (strcmp(arg, "--temperature") == 0) {
      o->temperature = strtof(value, NULL);
      if (!(o->temperature > 0))
        return fail("--temperature must be > 0: ", value);
    } else if (strcmp(arg, "--alpha") == 0) {
      o->alpha = strtod(value, NULL);
      if (!(o->alpha > 0 && o->alpha < 1))
        return fail("--alpha must be in (0, 1): ", value);
    } else {
      return fail("unknown option or bad value: ", arg);
    }
  }
  if (!o->target || !o->draft || o->prompt_size == 0)
    return fail("give TARGET.afmb DRAFT.afmb --prompt ids; see --help", NULL);
  return -1;
}

int main(int argc, char **argv) {
  options o = {.tokens = 3,
               .draft_tokens = 2,
               .top_k = 6,
               .temperature = 1,
               .samples = 20000,
               .alpha = 0.001};
  int status = parseArgs(argc, argv, &o);
  if (status >= 0)
    return status;
  afm_model *tm = NULL, *dm = NULL;
  afm_session *target = NULL, *draft = NULL;
  afm_session_options one = {.num_threads = 1};
  law l = {0};
  status = 1;
  if (afm_model_load(o.target, 0, &tm) != AFM_OK ||
      afm_model_load(o.draft, 0, &dm) != AFM_OK ||
      afm_session_create(tm, &one, &target) != AFM_OK ||
      afm_session_create(dm, &one, &draft) != AFM_OK) {
    fail(afm_last_error(), NULL);
    goto done;
  }
  int32_t context[MAX_PROMPT + MAX_TOKENS], prefix[MAX_TOKENS];
  memcpy(context, o.prompt, o.prompt_size * sizeof(int32_t));
  if (enumerate(&o, target, context, prefix, 0, 1.0, &l))
    goto done;
  printf("exact: %zu sequences of %d tokens\n", l.count, o.tokens);
  long impossible;
  if (sample(&o, target, draft, &l, &impossible))
    goto done;
  report("speculative", &o, &l, impossible);
  if (sample(&o, draft, NULL, &l, &impossible))
    goto done;
  report("draft alone", &o, &l, impossible);
  /* A subtler control: the target itself at a temperature 25% higher,
   * the same support and a slightly flatter law. */
  options warmer = o;
  warmer.temperature = o.temperature * 1.25f;
  if (sample(&warmer, target, NULL, &l, &impossible))
    goto done;
  report("target at 1.25x temperature", &o, &l, impossible);
  status = fflush(stdout) == 0 ? 0 : 1;
done:
  free(l.paths);
  afm_session_free(target);
  afm_session_free(draft);
  afm_model_free(tm);
  afm_model_free(dm);
  return status;
}
