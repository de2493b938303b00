/*===- afm-run.c - run a compiled model greedily ---------------------------===*
 *
 * afm-run MODEL.afmb --prompt 1,2,3 --decode N: prefills the prompt, then
 * decodes N tokens, each the argmax of the previous logits. Uses only the
 * public runtime API (include/afm/runtime.h).
 *
 *===----------------------------------------------------------------------===*/

#include "afm/runtime.h"

#include "profile.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char usage[] =
    "usage: afm-run MODEL.afmb --prompt T1,T2,... [options]\n"
    "\n"
    "Runs a compiled model greedily: prefills the prompt (logits L0, first\n"
    "token t1 = argmax L0), then for k = 1..N decodes t_k (logits L_k,\n"
    "t_{k+1} = argmax L_k). Prints the N+1 generated tokens and timings.\n"
    "\n"
    "options:\n"
    "  --prompt T1,T2,...  prompt token ids, comma-separated (required)\n"
    "  --decode N          tokens to decode after the prompt (default 0)\n"
    "  --threads T         threads for the model's kernels; 0 = one per\n"
    "                      online CPU (default 0)\n"
    "  --logits-out FILE   write L0..LN to FILE as raw little-endian f32,\n"
    "                      vocab_size floats each, concatenated\n"
    "  --verify-weights    also check the weights section's checksum\n"
    "  --profile           sample the decode steps' CPU time (SIGPROF every\n"
    "                      1 ms of CPU, or the kernel's coarser tick)\n"
    "                      and print, per afm op its parallel tasks were\n"
    "                      lowered from (linear, swiglu, attention, lm_head,\n"
    "                      ...), CPU ms per step and share; code outside\n"
    "                      tasks shows as serial code, runtime or library.\n"
    "                      Linux on x86-64 and AArch64\n"
    "  --quiet             print only the tokens line\n"
    "  --help              show this help\n"
    "\n"
    "output:\n"
    "  tokens: t1 ... t_{N+1}\n"
    "  ttft_ms: prefill wall time in milliseconds\n"
    "  decode_tokens_per_s: N / decode wall time\n"
    "  kv_bytes: KV caches of the session\n"
    "  arena_bytes: the session's arena: KV caches and scratch memory\n"
    "  weight_bytes: size of the weights section\n"
    "  target: the target the model was compiled for\n"
    "\n"
    "Errors go to stderr as 'afm-run: error: ...' with exit status 1.\n";

typedef struct options {
  const char *model;
  int32_t *prompt;
  size_t prompt_size;
  long decode;
  long threads;
  const char *logits_out;
  bool verify_weights;
  bool profile;
  bool quiet;
} options;

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static int
fail(const char *format, ...) {
  va_list args;
  va_start(args, format);
  fputs("afm-run: error: ", stderr);
  vfprintf(stderr, format, args);
  fputc('\n', stderr);
  va_end(args);
  return 1;
}

static int failRuntime(void) { return fail("%s", afm_last_error()); }

/* A whole decimal number in [min, max]. */
static bool parseLong(const char *text, long min, long max, long *out) {
  char *end;
  errno = 0;
  long value = strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value < min || value > max)
    return false;
  *out = value;
  return true;
}

/* "1,2,3" -> {1, 2, 3}. Token ids are checked against the vocabulary by
 * the runtime, here only for being integers. */
static bool parsePrompt(const char *text, options *o) {
  size_t commas = 0;
  for (const char *p = text; *p; ++p)
    commas += *p == ',';
  o->prompt = calloc(commas + 1, sizeof(int32_t));
  if (!o->prompt)
    return false;
  const char *p = text;
  for (;;) {
    char *end;
    errno = 0;
    long long value = strtoll(p, &end, 10);
    if (errno != 0 || end == p || value < INT32_MIN || value > INT32_MAX ||
        (*end != ',' && *end != '\0'))
      return false;
    o->prompt[o->prompt_size++] = (int32_t)value;
    if (*end == '\0')
      return true;
    p = end + 1;
  }
}

/* Parses argv; returns -1 to go on, else the exit status. */
static int parseArgs(int argc, char **argv, options *o) {
  for (int i = 1; i < argc; ++i) {
    const char *arg = argv[i];
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      fputs(usage, stdout);
      return 0;
    }
    if (strcmp(arg, "--quiet") == 0) {
      o->quiet = true;
      continue;
    }
    if (strcmp(arg, "--verify-weights") == 0) {
      o->verify_weights = true;
      continue;
    }
    if (strcmp(arg, "--profile") == 0) {
      if (!afm_profile_supported())
        return fail("--profile needs Linux on x86-64 or AArch64");
      o->profile = true;
      continue;
    }
    if (arg[0] != '-' || arg[1] == '\0') {
      if (o->model)
        return fail("more than one model given ('%s'); see --help", arg);
      o->model = arg;
      continue;
    }
    /* The flags that take a value: "--flag VALUE" or "--flag=VALUE". */
    static const char *const valued[] = {"--prompt", "--decode", "--threads",
                                         "--logits-out"};
    const char *value = NULL;
    size_t which = 0;
    for (; which < sizeof(valued) / sizeof(valued[0]); ++which) {
      size_t length = strlen(valued[which]);
      if (strncmp(arg, valued[which], length) != 0)
        continue;
      if (arg[length] == '=')
        value = arg + length + 1;
      else if (arg[length] == '\0' && i + 1 < argc)
        value = argv[++i];
      else if (arg[length] == '\0')
        return fail("%s needs a value; see --help", valued[which]);
      else
        continue;
      break;
    }
    if (!value)
      return fail("unknown option '%s'; see --help", arg);
    switch (which) {
    case 0:
      if (!parsePrompt(value, o))
        return fail("--prompt '%s' is not a comma-separated list of token "
                    "ids",
                    value);
      break;
    case 1:
      if (!parseLong(value, 0, INT32_MAX, &o->decode))
        return fail("--decode '%s' is not a number of tokens >= 0", value);
      break;
    case 2:
      if (!parseLong(value, 0, INT32_MAX, &o->threads))
        return fail("--threads '%s' is not a number of threads >= 0", value);
      break;
    default:
      o->logits_out = value;
      break;
    }
  }
  if (!o->model)
    return fail("no model given; see --help");
  if (!o->prompt)
    return fail("no --prompt given; see --help");
  return -1;
}

static double nowSeconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Appends the session's logits to `out` as little-endian f32. */
static bool writeLogits(FILE *out, const afm_session *session, int32_t vocab) {
  const float *logits = afm_session_logits(session);
  for (int32_t v = 0; v < vocab; ++v) {
    uint32_t bits;
    memcpy(&bits, &logits[v], sizeof(bits));
    unsigned char le[4] = {(unsigned char)bits, (unsigned char)(bits >> 8),
                           (unsigned char)(bits >> 16),
                           (unsigned char)(bits >> 24)};
    if (fwrite(le, 1, sizeof(le), out) != sizeof(le))
      return false;
  }
  return true;
}

/* Greedy generation; fills tokens[0..decode] and the two wall times. */
static int generate(const options *o, afm_model *model, afm_session *session,
                    FILE *logitsOut, int32_t *tokens, double *prefillSeconds,
                    double *decodeSeconds) {
  int32_t vocab = afm_model_vocab_size(model);
  double start = nowSeconds();
  if (afm_session_prefill(session, o->prompt, o->prompt_size) != AFM_OK ||
      afm_session_argmax(session, &tokens[0]) != AFM_OK)
    return failRuntime();
  *prefillSeconds = nowSeconds() - start;
  if (logitsOut && !writeLogits(logitsOut, session, vocab))
    return fail("cannot write --logits-out '%s'", o->logits_out);

  char error[128];
  if (o->profile && !afm_profile_start(1000, error, sizeof(error)))
    return fail("%s", error);
  double decodeTotal = 0;
  for (long k = 1; k <= o->decode; ++k) {
    start = nowSeconds();
    if (afm_session_decode(session, tokens[k - 1]) != AFM_OK ||
        afm_session_argmax(session, &tokens[k]) != AFM_OK)
      return failRuntime();
    decodeTotal += nowSeconds() - start;
    if (logitsOut && !writeLogits(logitsOut, session, vocab))
      return fail("cannot write --logits-out '%s'", o->logits_out);
  }
  *decodeSeconds = decodeTotal;
  return 0;
}

static int run(const options *o) {
  afm_model *model = NULL;
  afm_session *session = NULL;
  FILE *logitsOut = NULL;
  int32_t *tokens = calloc((size_t)o->decode + 1, sizeof(int32_t));
  int status = 1;
  double prefillSeconds = 0, decodeSeconds = 0;
  afm_session_options sessionOptions = {(int32_t)o->threads};
  if (!tokens) {
    fail("out of memory");
    goto done;
  }
  if (afm_model_load(o->model, o->verify_weights ? AFM_LOAD_VERIFY_WEIGHTS : 0,
                     &model) != AFM_OK ||
      afm_session_create(model, &sessionOptions, &session) != AFM_OK) {
    failRuntime();
    goto done;
  }
  if (o->logits_out && !(logitsOut = fopen(o->logits_out, "wb"))) {
    fail("cannot open --logits-out '%s': %s", o->logits_out, strerror(errno));
    goto done;
  }
  int generated = generate(o, model, session, logitsOut, tokens,
                           &prefillSeconds, &decodeSeconds);
  if (o->profile)
    afm_profile_stop();
  if (generated != 0)
    goto done;
  if (logitsOut) {
    int closed = fclose(logitsOut);
    logitsOut = NULL;
    if (closed != 0) {
      fail("cannot write --logits-out '%s'", o->logits_out);
      goto done;
    }
  }

  printf("tokens:");
  for (long k = 0; k <= o->decode; ++k)
    printf(" %d", tokens[k]);
  printf("\n");
  if (!o->quiet) {
    printf("ttft_ms: %.3f\n", prefillSeconds * 1e3);
    printf("decode_tokens_per_s: %.1f\n",
           o->decode > 0 && decodeSeconds > 0
               ? (double)o->decode / decodeSeconds
               : 0.0);
    printf("kv_bytes: %llu\n", (unsigned long long)afm_model_kv_bytes(model));
    printf("arena_bytes: %llu\n",
           (unsigned long long)afm_model_arena_bytes(model));
    printf("weight_bytes: %llu\n",
           (unsigned long long)afm_model_weight_bytes(model));
    printf("target: %s\n", afm_model_target(model));
  }
  /* While the model is loaded: its code's symbols name the samples. */
  if (o->profile)
    afm_profile_report(stdout, o->decode, decodeSeconds);
  status = fflush(stdout) == 0 ? 0 : 1;

done:
  if (logitsOut)
    fclose(logitsOut);
  afm_session_free(session);
  afm_model_free(model);
  free(tokens);
  return status;
}

int main(int argc, char **argv) {
  options o = {0};
  int status = parseArgs(argc, argv, &o);
  if (status < 0)
    status = run(&o);
  free(o.prompt);
  return status;
}
