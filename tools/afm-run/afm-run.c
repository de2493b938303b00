/*===- afm-run.c - run a compiled model -----------------------------------===*
 *
 * afm-run MODEL.afmb --text "...": continues a text, streaming it as it is
 * generated (the model's tokenizer, afm/generate.h).
 * afm-run MODEL.afmb --prompt 1,2,3 --decode N: prefills token ids, then
 * decodes N tokens, each sampled from the previous logits (greedy by
 * default), and prints ids and timings. Uses only the public runtime API.
 *
 *===----------------------------------------------------------------------===*/

#include "afm/generate.h"
#include "afm/grammar.h"
#include "afm/runtime.h"

#include "profile.h"
#include "read_file.h"
#include "token_ids.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char usage[] =
    "usage: afm-run MODEL.afmb --text \"...\" [options]\n"
    "       afm-run MODEL.afmb --prompt T1,T2,... [--decode N] [options]\n"
    "\n"
    "Text: encodes the text with the model's tokenizer (packed by\n"
    "afm-compile --tokenizer or --model), after its prefix ids (e.g. BOS),\n"
    "and prints the continuation to stdout as it is generated, until an\n"
    "end-of-sequence id, a --stop string, --max-tokens or the end of the\n"
    "context. Statistics go to stderr.\n"
    "\n"
    "Token ids: prefills the prompt (logits L0, first token t1 sampled from\n"
    "L0), then for k = 1..N decodes t_k (logits L_k, t_{k+1} sampled from\n"
    "L_k). Prints the N+1 tokens and timings. Greedy by default: t = argmax,\n"
    "lowest id on ties.\n"
    "\n"
    "input:\n"
    "  --text TEXT         the text to continue (UTF-8)\n"
    "  --no-bos            do not put the tokenizer's prefix ids (BOS)\n"
    "                      before the text\n"
    "  --prompt T1,T2,...  prompt token ids, comma-separated\n"
    "  --tokens T1,T2,...  the same as --prompt\n"
    "  --decode N          ids: tokens to decode after the prompt (default 0)\n"
    "  --max-tokens N      text: tokens to generate at most; 0 = until the\n"
    "                      context is full (default 256)\n"
    "  --stop STRING       text: end where the output contains STRING (not\n"
    "                      printed); may be repeated\n"
    "  --ignore-eos        text: go on past end-of-sequence ids\n"
    "  --json-schema FILE  text: guided generation; the output is compact\n"
    "                      JSON (no whitespace) that the JSON Schema in FILE\n"
    "                      accepts, complete within --max-tokens (a subset\n"
    "                      of JSON Schema: docs/generation.md)\n"
    "  --samples N         text: generate N continuations, one per line, with\n"
    "                      seeds S, S+1, ..., S+N-1 (default 1)\n"
    "\n"
    "sampling (Hugging Face transformers' order: penalties, temperature,\n"
    "top-k, top-p, min-p):\n"
    "  --temperature T     0 = greedy (default 0)\n"
    "  --top-k K           keep the K most likely tokens; 0 = all (default)\n"
    "  --top-p P           keep the smallest set of mass >= P; 1 = all\n"
    "  --min-p P           drop tokens below P times the most likely; 0 =\n"
    "                      none (default)\n"
    "  --repetition-penalty R  divide positive / multiply negative logits of\n"
    "                      tokens already in the context; 1 = none (default)\n"
    "  --presence-penalty F    subtract F from the logits of tokens already\n"
    "                      in the context; 0 = none (default)\n"
    "  --seed S            the generator's seed (default 0): the same seed\n"
    "                      and options give the same output\n"
    "\n"
    "adapters:\n"
    "  --adapter FILE      attach a LoRA adapter compiled for MODEL\n"
    "                      (afm-compile --adapter; MODEL needs\n"
    "                      afm-compile --adapter-rank); prints\n"
    "                      adapter_bytes and adapter_attach_ms\n"
    "\n"
    "speculative decoding (the output keeps the model's distribution; greedy\n"
    "output is the model's own greedy output):\n"
    "  --draft FILE        a draft .afmb with the same vocabulary (a smaller\n"
    "                      model, or the first layers of this one); it\n"
    "                      proposes tokens, MODEL checks them in one step.\n"
    "                      MODEL needs afm-compile --verify-tokens K+1, the\n"
    "                      draft --verify-tokens K (for K > 1)\n"
    "  --draft-tokens K    tokens the draft proposes per step, 1 to 15\n"
    "                      (default 4)\n"
    "\n"
    "run:\n"
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
    "                      tasks shows as serial code (by op where it is\n"
    "                      an outlined loop), runtime or library.\n"
    "                      Linux on x86-64 and AArch64. With --text the\n"
    "                      samples span the prefill and the decode steps\n"
    "  --profile-prefill   the same for the prompt's prefill instead of the\n"
    "                      decode steps: CPU ms of the whole prefill per op\n"
    "                      (with --prompt token ids)\n"
    "  --quiet             print only the tokens line\n"
    "  --help              show this help\n"
    "\n"
    "output (token ids):\n"
    "  tokens: t1 ... t_{N+1}\n"
    "  ttft_ms: prefill wall time in milliseconds\n"
    "  decode_tokens_per_s: N / decode wall time\n"
    "  kv_bytes: KV caches of the session\n"
    "  arena_bytes: the session's arena: KV caches and scratch memory\n"
    "  weight_bytes: size of the weights section\n"
    "  target: the target the model was compiled for\n"
    "output (text): the continuation on stdout; on stderr, unless --quiet,\n"
    "  prompt and generated token counts, the stop reason, ttft_ms,\n"
    "  decode_tokens_per_s and sample_ms_per_token (the sampler's time);\n"
    "  with --json-schema also mask_ms_per_token (the grammar's masks),\n"
    "  with --draft (both modes) verify_steps, drafted_tokens,\n"
    "  accepted_tokens, acceptance_rate (accepted / drafted),\n"
    "  tokens_per_step (generated tokens per verify step) and draft_ms\n"
    "  (the draft's share of the decode time),\n"
    "  grammar_dfa_states, grammar_cache_bytes and grammar_tokens (tokens\n"
    "  with bytes, the others are never allowed); with --samples, totals\n"
    "  over the samples\n"
    "\n"
    "Errors go to stderr as 'afm-run: error: ...' with exit status 1.\n";

enum { MAX_STOPS = 16 };

typedef struct options {
  const char *model;
  int32_t *prompt;
  size_t prompt_size;
  const char *text;
  bool no_bos;
  long max_tokens;
  const char *stops[MAX_STOPS];
  size_t stop_count;
  bool ignore_eos;
  const char *json_schema;
  long samples;
  afm_sampling_options sampling;
  long decode;
  long threads;
  const char *logits_out;
  const char *draft;
  long draft_tokens; /* 0: not given (4 with --draft) */
  const char *adapter;
  bool verify_weights;
  bool profile;
  bool profile_prefill;
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

/* A finite decimal number. */
static bool parseFloat(const char *text, float *out) {
  char *end;
  errno = 0;
  float value = strtof(text, &end);
  if (errno != 0 || end == text || *end != '\0' || !isfinite(value))
    return false;
  *out = value;
  return true;
}

/* "1,2,3" -> {1, 2, 3} (token_ids.h). */
static bool parsePrompt(const char *text, options *o) {
  size_t capacity = afm_count_token_ids(text);
  o->prompt = calloc(capacity, sizeof(int32_t));
  if (!o->prompt)
    return false;
  long count = afm_parse_token_ids(text, o->prompt, capacity);
  if (count < 0)
    return false;
  o->prompt_size = (size_t)count;
  return true;
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
    if (strcmp(arg, "--no-bos") == 0) {
      o->no_bos = true;
      continue;
    }
    if (strcmp(arg, "--ignore-eos") == 0) {
      o->ignore_eos = true;
      continue;
    }
    if (strcmp(arg, "--profile") == 0) {
      if (!afm_profile_supported())
        return fail("--profile needs Linux on x86-64 or AArch64");
      o->profile = true;
      continue;
    }
    if (strcmp(arg, "--profile-prefill") == 0) {
      if (!afm_profile_supported())
        return fail("--profile-prefill needs Linux on x86-64 or AArch64");
      o->profile_prefill = true;
      continue;
    }
    if (arg[0] != '-' || arg[1] == '\0') {
      if (o->model)
        return fail("more than one model given ('%s'); see --help", arg);
      o->model = arg;
      continue;
    }
    /* The flags that take a value: "--flag VALUE" or "--flag=VALUE". */
    static const char *const valued[] = {
        "--prompt",      "--decode", "--threads",    "--logits-out",
        "--tokens",      "--text",   "--max-tokens", "--stop",
        "--temperature", "--top-k",  "--top-p",      "--min-p",
        "--repetition-penalty",      "--presence-penalty",
        "--seed",        "--json-schema",          "--samples",
        "--draft",       "--draft-tokens", "--adapter"};
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
    long number;
    switch (which) {
    case 0:
    case 4:
      if (o->prompt)
        return fail("the prompt ids are given twice; see --help");
      if (!parsePrompt(value, o))
        return fail("%s '%s' is not a comma-separated list of token ids "
                    "(whole numbers from 0 to 2147483647)",
                    valued[which], value);
      break;
    case 1:
      if (!parseLong(value, 0, INT32_MAX, &o->decode))
        return fail("--decode '%s' is not a number of tokens >= 0", value);
      break;
    case 2:
      if (!parseLong(value, 0, INT32_MAX, &o->threads))
        return fail("--threads '%s' is not a number of threads >= 0", value);
      break;
    case 3:
      o->logits_out = value;
      break;
    case 5:
      o->text = value;
      break;
    case 6:
      if (!parseLong(value, 0, INT32_MAX, &o->max_tokens))
        return fail("--max-tokens '%s' is not a number of tokens >= 0",
                    value);
      break;
    case 7:
      if (value[0] == '\0')
        return fail("--stop needs a non-empty string");
      if (o->stop_count == MAX_STOPS)
        return fail("more than %d --stop strings", MAX_STOPS);
      o->stops[o->stop_count++] = value;
      break;
    case 9:
      if (!parseLong(value, 0, INT32_MAX, &number))
        return fail("--top-k '%s' is not a number >= 0", value);
      o->sampling.top_k = (int32_t)number;
      break;
    case 14:
      if (!parseLong(value, 0, LONG_MAX, &number))
        return fail("--seed '%s' is not a number >= 0", value);
      o->sampling.seed = (uint64_t)number;
      break;
    case 15:
      o->json_schema = value;
      break;
    case 16:
      if (!parseLong(value, 1, INT32_MAX, &o->samples))
        return fail("--samples '%s' is not a number >= 1", value);
      break;
    case 17:
      o->draft = value;
      break;
    case 18:
      if (!parseLong(value, 1, 15, &o->draft_tokens))
        return fail("--draft-tokens '%s' is not a number from 1 to 15",
                    value);
      break;
    case 19:
      o->adapter = value;
      break;
    default: {
      /* The sampling options that are numbers; the runtime checks their
       * ranges and names the field. */
      float *fields[] = {&o->sampling.temperature, NULL,
                         &o->sampling.top_p,       &o->sampling.min_p,
                         &o->sampling.repetition_penalty,
                         &o->sampling.presence_penalty};
      if (!parseFloat(value, fields[which - 8]))
        return fail("%s '%s' is not a number", valued[which], value);
      break;
    }
    }
  }
  if (!o->model)
    return fail("no model given; see --help");
  if (!o->prompt == !o->text)
    return fail("give either --text or --prompt token ids; see --help");
  if (o->text && (o->decode || o->logits_out))
    return fail("--decode and --logits-out are for --prompt token ids; with "
                "--text, use --max-tokens");
  if (o->prompt && (o->stop_count || o->ignore_eos || o->no_bos ||
                    o->max_tokens >= 0 || o->json_schema || o->samples > 1))
    return fail("--stop, --ignore-eos, --no-bos, --max-tokens, --json-schema "
                "and --samples are for --text; with token ids, use --decode");
  if (o->draft_tokens && !o->draft)
    return fail("--draft-tokens goes with --draft MODEL.afmb");
  if (o->draft && (o->profile || o->profile_prefill))
    return fail("--profile and --profile-prefill sample one model; they do "
                "not go with --draft");
  if (o->profile && o->profile_prefill)
    return fail("--profile samples the decode steps and --profile-prefill "
                "the prefill; give one");
  if (o->text && o->profile_prefill)
    return fail("--profile-prefill is for --prompt token ids; with --text, "
                "--profile samples the prefill and the decode steps");
  return -1;
}

static double nowSeconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Appends one row of logits to `out` as little-endian f32. */
static bool writeRow(FILE *out, const float *logits, int32_t vocab) {
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

/* Appends the session's logits to `out` as little-endian f32. */
static bool writeLogits(FILE *out, const afm_session *session, int32_t vocab) {
  return writeRow(out, afm_session_logits(session), vocab);
}

/* Samples the next token of `session` (and counts it for the penalties). */
static bool sampleNext(afm_sampler *sampler, const afm_session *session,
                       int32_t *token) {
  return afm_sampler_sample(sampler, afm_session_logits(session), token) ==
             AFM_OK &&
         afm_sampler_accept(sampler, *token) == AFM_OK;
}

/* Generation on token ids; fills tokens[0..decode] and the two wall
 * times. */
static int generate(const options *o, afm_model *model, afm_session *session,
                    afm_sampler *sampler, FILE *logitsOut, int32_t *tokens,
                    double *prefillSeconds, double *decodeSeconds) {
  int32_t vocab = afm_model_vocab_size(model);
  char error[128];
  if (o->profile_prefill && !afm_profile_start(1000, error, sizeof(error)))
    return fail("%s", error);
  double start = nowSeconds();
  afm_status prefilled =
      afm_session_prefill(session, o->prompt, o->prompt_size);
  if (o->profile_prefill) {
    *prefillSeconds = nowSeconds() - start;
    afm_profile_stop();
  }
  if (prefilled != AFM_OK)
    return failRuntime();
  for (size_t i = 0; i < o->prompt_size; ++i)
    if (afm_sampler_accept(sampler, o->prompt[i]) != AFM_OK)
      return failRuntime();
  if (!sampleNext(sampler, session, &tokens[0]))
    return failRuntime();
  /* Profiled, the prefill's wall time is the one its samples cover. */
  if (!o->profile_prefill)
    *prefillSeconds = nowSeconds() - start;
  if (logitsOut && !writeLogits(logitsOut, session, vocab))
    return fail("cannot write --logits-out '%s'", o->logits_out);

  if (o->profile && !afm_profile_start(1000, error, sizeof(error)))
    return fail("%s", error);
  double decodeTotal = 0;
  for (long k = 1; k <= o->decode; ++k) {
    start = nowSeconds();
    if (afm_session_decode(session, tokens[k - 1]) != AFM_OK ||
        !sampleNext(sampler, session, &tokens[k]))
      return failRuntime();
    decodeTotal += nowSeconds() - start;
    if (logitsOut && !writeLogits(logitsOut, session, vocab))
      return fail("cannot write --logits-out '%s'", o->logits_out);
  }
  *decodeSeconds = decodeTotal;
  return 0;
}

/* --draft: the speculative statistics. */
static void printSpeculation(FILE *out, const afm_generate_result *r) {
  fprintf(out,
          "verify_steps: %zu\ndrafted_tokens: %zu\naccepted_tokens: %zu\n"
          "acceptance_rate: %.3f\ntokens_per_step: %.2f\ndraft_ms: %.3f\n",
          r->verify_steps, r->drafted_tokens, r->accepted_tokens,
          r->drafted_tokens ? (double)r->accepted_tokens /
                                  (double)r->drafted_tokens
                            : 0.0,
          r->verify_steps ? (double)(r->generated_tokens - 1) /
                                (double)r->verify_steps
                          : 0.0,
          r->draft_seconds * 1e3);
}

/* Token ids with --draft: afm_generate collects the ids and the logits
 * each was sampled from. */
typedef struct collected {
  int32_t *tokens;
  long count, capacity;
  FILE *logits;
  int32_t vocab;
  bool failed;
} collected;

static int collectToken(void *user, int32_t token, const char *text,
                        size_t length) {
  (void)text;
  (void)length;
  collected *c = user;
  if (token >= 0 && c->count < c->capacity)
    c->tokens[c->count++] = token;
  return 0;
}

static void collectLogits(void *user, const float *logits) {
  collected *c = user;
  if (c->logits && !writeRow(c->logits, logits, c->vocab))
    c->failed = true;
}

static int generateSpeculative(const options *o, afm_session *session,
                               afm_session *draft, FILE *logitsOut,
                               int32_t *tokens, double *prefillSeconds,
                               double *decodeSeconds,
                               afm_generate_result *result) {
  afm_generate_options generate;
  afm_generate_options_init(&generate);
  generate.sampling = o->sampling;
  generate.max_tokens = (int32_t)o->decode + 1;
  generate.stop_at_eos = 0;
  generate.draft = draft;
  generate.draft_tokens = (int32_t)o->draft_tokens;
  collected c = {.tokens = tokens,
                 .capacity = o->decode + 1,
                 .logits = logitsOut,
                 .vocab = afm_model_vocab_size(afm_session_model(session))};
  generate.logits_callback = collectLogits;
  generate.logits_user = &c;
  if (afm_generate(session, o->prompt, o->prompt_size, &generate,
                   collectToken, &c, result) != AFM_OK)
    return failRuntime();
  if (c.failed)
    return fail("cannot write --logits-out '%s'", o->logits_out);
  if (c.count != o->decode + 1)
    return fail("generation stopped after %ld of %ld tokens (%s)", c.count,
                o->decode + 1, afm_stop_reason_name(result->stop_reason));
  *prefillSeconds = result->prefill_seconds;
  *decodeSeconds = result->decode_seconds;
  return 0;
}

/* Streams the text of each token to stdout as it comes. */
static int printPiece(void *user, int32_t token, const char *text,
                      size_t length) {
  bool *failed = user;
  if (length && fwrite(text, 1, length, stdout) != length)
    *failed = true;
  fflush(stdout);
  return *failed;
}


/* --json-schema: the schema compiled against the model's tokenizer. */
static int compileSchema(const options *o, afm_session *session,
                         afm_grammar **grammar) {
  const afm_tokenizer *tokenizer =
      afm_model_tokenizer(afm_session_model(session));
  if (!tokenizer)
    return fail("--json-schema needs the model's tokenizer (compile it with "
                "--tokenizer or --model)");
  size_t length;
  char *schema = afm_run_read_file(o->json_schema, &length);
  if (!schema)
    return fail("cannot read --json-schema '%s': %s", o->json_schema,
                strerror(errno));
  afm_status status =
      afm_grammar_compile_json_schema(tokenizer, schema, length, grammar);
  free(schema);
  if (status != AFM_OK)
    return fail("%s: %s", o->json_schema, afm_last_error());
  return 0;
}

/* --text: generate with the model's tokenizer, print as it streams. */
static int runText(const options *o, afm_session *session,
                   afm_session *draft) {
  afm_generate_options generate;
  afm_generate_options_init(&generate);
  generate.sampling = o->sampling;
  generate.max_tokens = (int32_t)(o->max_tokens >= 0 ? o->max_tokens : 256);
  generate.stop_at_eos = !o->ignore_eos;
  generate.stop_strings = o->stops;
  generate.stop_string_count = o->stop_count;
  afm_grammar *grammar = NULL;
  if (o->json_schema && compileSchema(o, session, &grammar) != 0)
    return 1;
  generate.grammar = grammar;
  generate.draft = draft;
  generate.draft_tokens = (int32_t)o->draft_tokens;
  afm_generate_result total = {0}, result;
  bool failed = false;
  char error[128];
  if (o->profile && !afm_profile_start(1000, error, sizeof(error))) {
    afm_grammar_free(grammar);
    return fail("%s", error);
  }
  long samples = o->samples > 0 ? o->samples : 1;
  afm_status status = AFM_OK;
  for (long i = 0; i < samples && status == AFM_OK && !failed; ++i) {
    generate.sampling.seed = o->sampling.seed + (uint64_t)i;
    if (i > 0) {
      afm_session_reset(session);
      if (draft)
        afm_session_reset(draft);
    }
    status = afm_generate_text(session, o->text, strlen(o->text), !o->no_bos,
                               &generate, printPiece, &failed, &result);
    if (status != AFM_OK)
      break;
    if (failed || fputc('\n', stdout) == EOF || fflush(stdout) != 0)
      failed = true;
    total.prompt_tokens = result.prompt_tokens;
    total.generated_tokens += result.generated_tokens;
    total.stop_reason = result.stop_reason;
    total.prefill_seconds += result.prefill_seconds;
    total.decode_seconds += result.decode_seconds;
    total.sample_seconds += result.sample_seconds;
    total.mask_seconds += result.mask_seconds;
    total.verify_steps += result.verify_steps;
    total.drafted_tokens += result.drafted_tokens;
    total.accepted_tokens += result.accepted_tokens;
    total.draft_seconds += result.draft_seconds;
  }
  if (o->profile)
    afm_profile_stop();
  afm_grammar_stats stats;
  afm_grammar_get_stats(grammar, &stats);
  afm_grammar_free(grammar);
  if (status != AFM_OK)
    return failRuntime();
  if (failed)
    return fail("cannot write the text to stdout");
  result = total;
  if (!o->quiet) {
    size_t decoded = result.generated_tokens > (size_t)samples
                         ? result.generated_tokens - (size_t)samples
                         : 0;
    fprintf(stderr,
            "prompt_tokens: %zu\ngenerated_tokens: %zu\nstop: %s\n"
            "ttft_ms: %.3f\ndecode_tokens_per_s: %.1f\n"
            "sample_ms_per_token: %.3f\n",
            result.prompt_tokens, result.generated_tokens,
            afm_stop_reason_name(result.stop_reason),
            result.prefill_seconds * 1e3 / (double)samples,
            decoded > 0 && result.decode_seconds > 0
                ? (double)decoded / result.decode_seconds
                : 0.0,
            result.generated_tokens > 0
                ? result.sample_seconds * 1e3 /
                      (double)result.generated_tokens
                : 0.0);
    if (o->json_schema)
      fprintf(stderr,
              "mask_ms_per_token: %.3f\ndecode_ms_per_token: %.3f\n"
              "grammar_dfa_states: %zu\ngrammar_masked_states: %zu\n"
              "grammar_cache_bytes: %zu\ngrammar_tokens: %zu\n",
              result.generated_tokens > 0
                  ? result.mask_seconds * 1e3 /
                        (double)result.generated_tokens
                  : 0.0,
              decoded > 0 ? result.decode_seconds * 1e3 / (double)decoded
                          : 0.0,
              stats.dfa_states, stats.masked_states, stats.cache_bytes,
              stats.tokens);
    if (draft)
      printSpeculation(stderr, &result);
  }
  if (o->profile) {
    size_t decoded = result.generated_tokens > (size_t)samples
                         ? result.generated_tokens - (size_t)samples
                         : 0;
    char span[160];
    snprintf(span, sizeof(span),
             "the prefill of %zu tokens and %zu decode steps: %.1f ms wall, "
             "per decode step %.2f",
             result.prompt_tokens, decoded,
             (result.prefill_seconds + result.decode_seconds) * 1e3,
             decoded > 0 ? result.decode_seconds * 1e3 / (double)decoded
                         : 0.0);
    afm_profile_report(stderr, span, (long)decoded, "step");
  }
  return 0;
}

/* --adapter: load it for `model` and attach it to `session`, timed (the
 * file read and checked, then its factors copied into the session). */
static int attachAdapter(const options *o, afm_model *model,
                         afm_session *session) {
  struct timespec start, end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  afm_adapter *adapter = NULL;
  if (afm_adapter_load(model, o->adapter, &adapter) != AFM_OK ||
      afm_session_set_adapter(session, adapter) != AFM_OK) {
    fail("--adapter: %s", afm_last_error());
    afm_adapter_free(adapter);
    return 1;
  }
  clock_gettime(CLOCK_MONOTONIC, &end);
  if (!o->quiet)
    fprintf(stderr, "adapter_bytes: %llu\nadapter_attach_ms: %.3f\n",
            (unsigned long long)afm_adapter_bytes(adapter),
            (double)(end.tv_sec - start.tv_sec) * 1e3 +
                (double)(end.tv_nsec - start.tv_nsec) * 1e-6);
  afm_adapter_free(adapter); /* the session keeps its reference */
  return 0;
}

static int run(const options *o) {
  afm_model *model = NULL, *draftModel = NULL;
  afm_session *session = NULL, *draft = NULL;
  afm_generate_result speculation = {0};
  afm_sampler *sampler = NULL;
  FILE *logitsOut = NULL;
  int32_t *tokens = calloc((size_t)o->decode + 1, sizeof(int32_t));
  int status = 1;
  double prefillSeconds = 0, decodeSeconds = 0;
  afm_session_options sessionOptions = {.num_threads = (int32_t)o->threads};
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
  if (o->adapter && attachAdapter(o, model, session) != 0)
    goto done;
  if (o->draft &&
      (afm_model_load(o->draft, o->verify_weights ? AFM_LOAD_VERIFY_WEIGHTS : 0,
                      &draftModel) != AFM_OK ||
       afm_session_create(draftModel, &sessionOptions, &draft) != AFM_OK)) {
    fail("--draft: %s", afm_last_error());
    goto done;
  }
  if (o->text) {
    status = runText(o, session, draft);
    goto done;
  }
  int32_t vocab = afm_model_vocab_size(model);
  if (afm_sampler_create(&o->sampling, vocab, vocab, &sampler) != AFM_OK) {
    failRuntime();
    goto done;
  }
  if (o->logits_out && !(logitsOut = fopen(o->logits_out, "wb"))) {
    fail("cannot open --logits-out '%s': %s", o->logits_out, strerror(errno));
    goto done;
  }
  int generated =
      draft ? generateSpeculative(o, session, draft, logitsOut, tokens,
                                  &prefillSeconds, &decodeSeconds,
                                  &speculation)
            : generate(o, model, session, sampler, logitsOut, tokens,
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
    if (draft)
      printSpeculation(stdout, &speculation);
  }
  /* While the model is loaded: its code's symbols name the samples. */
  char span[128];
  if (o->profile) {
    snprintf(span, sizeof(span), "%ld decode steps of %.2f ms wall each",
             o->decode, o->decode > 0 ? decodeSeconds * 1e3 / (double)o->decode
                                      : 0.0);
    afm_profile_report(stdout, span, o->decode, "step");
  }
  if (o->profile_prefill) {
    snprintf(span, sizeof(span), "the prefill of %zu tokens, %.2f ms wall",
             o->prompt_size, prefillSeconds * 1e3);
    afm_profile_report(stdout, span, 1, "prefill");
  }
  status = fflush(stdout) == 0 ? 0 : 1;

done:
  if (logitsOut)
    fclose(logitsOut);
  afm_sampler_free(sampler);
  afm_session_free(session);
  afm_model_free(model);
  afm_session_free(draft);
  afm_model_free(draftModel);
  free(tokens);
  return status;
}

int main(int argc, char **argv) {
  options o = {0};
  o.max_tokens = -1; /* not given: 256 with --text */
  afm_sampling_options_init(&o.sampling);
  int status = parseArgs(argc, argv, &o);
  if (o.draft && !o.draft_tokens)
    o.draft_tokens = 4;
  if (status < 0)
    status = run(&o);
  free(o.prompt);
  return status;
}
