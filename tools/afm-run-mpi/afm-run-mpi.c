/*===- afm-run-mpi.c - PT-MoE tracks on separate MPI ranks -----------------===*
 *
 * mpirun -np P afm-run-mpi MODEL.afmb --prompt 1,2,3 --decode N
 *
 * Every rank loads the model and computes its share of the tracks of every
 * track block (a contiguous range, tracks split as evenly as they go); at
 * each block's end the partial sums are combined with one MPI_Allreduce
 * (the paper's track parallelism: processes synchronize only at track-
 * block boundaries). Everything else (embedding, LM head) every rank
 * computes itself, so every rank has the logits. Greedy decoding in
 * afm-run's protocol (--prompt, --decode, --logits-out); rank 0 prints.
 *
 *===----------------------------------------------------------------------===*/

#define _POSIX_C_SOURCE 200809L

#include "afm/runtime.h"
#include "token_ids.h"

#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char usage[] =
    "usage: mpirun -np P afm-run-mpi MODEL.afmb --prompt T1,T2,... "
    "[options]\n"
    "\n"
    "Runs a PT-MoE model (afm-pt-moe) with its tracks split between the P\n"
    "MPI ranks (P at most the tracks per block): each computes a range of\n"
    "the tracks, and each track block ends with one MPI_Allreduce of the\n"
    "block's sum. Greedy decoding as afm-run --prompt; rank 0 prints the\n"
    "tokens, the speed and, per decoded token, the reductions, the bytes\n"
    "each rank contributes and the time spent in them.\n"
    "\n"
    "  --prompt T1,...     prompt token ids\n"
    "  --decode N          tokens to decode after the prompt (default 16)\n"
    "  --threads T         kernel threads per rank (default 1)\n"
    "  --logits-out FILE   rank 0 writes the logits of the prompt's last\n"
    "                      token and of every step (raw f32)\n";

enum { MAX_PROMPT = 4096 };

/* The reduction the runtime calls at each track block's end. */
typedef struct reducer {
  MPI_Comm comm;
  long long calls, bytes;
  double seconds;
  int failed;
} reducer;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void allreduce(void *user, float *data, int64_t count) {
  reducer *r = user;
  double start = now();
  if (count > INT32_MAX ||
      MPI_Allreduce(MPI_IN_PLACE, data, (int)count, MPI_FLOAT, MPI_SUM,
                    r->comm) != MPI_SUCCESS)
    r->failed = 1;
  r->seconds += now() - start;
  r->calls += 1;
  r->bytes += count * (int64_t)sizeof(float);
}

/* Every rank's verdict: 0 on all when every rank succeeded. */
static int agree(int failed) {
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return any;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);

  const char *modelPath = NULL, *logitsPath = NULL;
  static int32_t prompt[MAX_PROMPT];
  size_t promptSize = 0;
  long decode = 16, threads = 1;
  /* What is wrong with the command line, said once by rank 0. */
  char problem[256] = "";
  for (int i = 1; i < argc && !problem[0]; ++i) {
    const char *arg = argv[i];
    const char *value = i + 1 < argc ? argv[i + 1] : NULL;
    int takesValue = strcmp(arg, "--prompt") == 0 ||
                     strcmp(arg, "--decode") == 0 ||
                     strcmp(arg, "--threads") == 0 ||
                     strcmp(arg, "--logits-out") == 0;
    if (strcmp(arg, "--help") == 0) {
      if (rank == 0)
        fputs(usage, stdout);
      MPI_Finalize();
      return 0;
    }
    if (takesValue && !value) {
      snprintf(problem, sizeof(problem), "%s needs a value", arg);
    } else if (strcmp(arg, "--prompt") == 0) {
      long count = afm_parse_token_ids(value, prompt, MAX_PROMPT);
      promptSize = count > 0 ? (size_t)count : 0;
      if (count < 0)
        snprintf(problem, sizeof(problem),
                 "--prompt takes comma-separated token ids (at most %d), "
                 "got '%.80s'",
                 MAX_PROMPT, value);
      ++i;
    } else if (strcmp(arg, "--decode") == 0 ||
               strcmp(arg, "--threads") == 0) {
      int isDecode = strcmp(arg, "--decode") == 0;
      long low = isDecode ? 0 : 1, high = isDecode ? 1000000 : 1024;
      char *end;
      long number = strtol(value, &end, 10);
      if (end == value || *end != '\0' || number < low || number > high)
        snprintf(problem, sizeof(problem),
                 "%s takes a whole number from %ld to %ld, got '%.80s'", arg,
                 low, high, value);
      *(isDecode ? &decode : &threads) = number;
      ++i;
    } else if (strcmp(arg, "--logits-out") == 0) {
      logitsPath = value;
      ++i;
    } else if (arg[0] == '-') {
      snprintf(problem, sizeof(problem), "unknown option '%.80s'", arg);
    } else if (modelPath) {
      snprintf(problem, sizeof(problem),
               "one model only: got '%.80s' and '%.80s'", modelPath, arg);
    } else {
      modelPath = arg;
    }
  }
  if (!problem[0] && !modelPath)
    snprintf(problem, sizeof(problem), "no MODEL.afmb given");
  else if (!problem[0] && promptSize == 0)
    snprintf(problem, sizeof(problem), "--prompt is required");
  if (problem[0]) {
    if (rank == 0)
      fprintf(stderr, "afm-run-mpi: %s\n\n%s", problem, usage);
    MPI_Finalize();
    return 2;
  }

  int status = 1;
  afm_model *model = NULL;
  afm_session *session = NULL;
  FILE *logitsOut = NULL;
  int32_t *tokens = calloc((size_t)decode + 1, sizeof(int32_t));
  reducer reduce = {MPI_COMM_WORLD, 0, 0, 0.0, 0};
  char message[512] = "";
  int failed = !tokens;
  if (!failed && afm_model_load(modelPath, 0, &model) != AFM_OK) {
    snprintf(message, sizeof(message), "%s", afm_last_error());
    failed = 1;
  }
  int32_t tracks = model ? afm_model_num_tracks(model) : 0;
  if (!failed && (tracks < ranks)) {
    snprintf(message, sizeof(message),
             "%s has %d tracks per block: it cannot be split between %d "
             "ranks%s",
             modelPath, tracks, ranks,
             tracks == 0 ? " (it is not a PT-MoE model)" : "");
    failed = 1;
  }
  afm_session_options options = {0};
  options.num_threads = (int32_t)threads;
  options.track_begin = (int32_t)((int64_t)rank * tracks / ranks);
  options.track_end = (int32_t)((int64_t)(rank + 1) * tracks / ranks);
  options.track_allreduce = allreduce;
  options.track_user = &reduce;
  if (!failed && afm_session_create(model, &options, &session) != AFM_OK) {
    snprintf(message, sizeof(message), "%s", afm_last_error());
    failed = 1;
  }
  if (!failed && rank == 0 && logitsPath &&
      !(logitsOut = fopen(logitsPath, "wb"))) {
    snprintf(message, sizeof(message), "cannot open --logits-out '%s'",
             logitsPath);
    failed = 1;
  }
  /* Every rank must take part in every reduction: stop together. */
  if (agree(failed)) {
    if (message[0])
      fprintf(stderr, "afm-run-mpi: rank %d: %s\n", rank, message);
    goto done;
  }

  size_t vocab = (size_t)afm_model_vocab_size(model);
  MPI_Barrier(MPI_COMM_WORLD);
  double start = now();
  afm_status run = afm_session_prefill(session, prompt, promptSize);
  double prefillSeconds = now() - start;
  long long prefillCalls = reduce.calls;
  double decodeStart = now(), reduceBefore = reduce.seconds;
  long long bytesBefore = reduce.bytes;
  for (long step = 0; run == AFM_OK && step <= decode; ++step) {
    if (logitsOut) {
      const float *logits = afm_session_logits(session);
      if (fwrite(logits, sizeof(float), vocab, logitsOut) != vocab)
        failed = 1;
    }
    run = afm_session_argmax(session, &tokens[step]);
    if (run == AFM_OK && step < decode)
      run = afm_session_decode(session, tokens[step]);
  }
  double decodeSeconds = now() - decodeStart;
  if (run != AFM_OK) {
    fprintf(stderr, "afm-run-mpi: rank %d: %s\n", rank, afm_last_error());
    failed = 1;
  }
  if (reduce.failed) {
    fprintf(stderr, "afm-run-mpi: rank %d: MPI_Allreduce failed\n", rank);
    failed = 1;
  }
  /* Every rank chose the same tokens (they hold the same logits). */
  int32_t *all = rank == 0 ? calloc((size_t)ranks * (size_t)(decode + 1),
                                    sizeof(int32_t))
                           : NULL;
  MPI_Gather(tokens, (int)(decode + 1), MPI_INT32_T, all, (int)(decode + 1),
             MPI_INT32_T, 0, MPI_COMM_WORLD);
  if (rank == 0)
    for (int r = 1; r < ranks; ++r)
      if (memcmp(all, all + (size_t)r * (size_t)(decode + 1),
                 (size_t)(decode + 1) * sizeof(int32_t)) != 0) {
        fprintf(stderr, "afm-run-mpi: rank %d chose other tokens than rank "
                        "0\n", r);
        failed = 1;
      }
  free(all);
  if (logitsOut && fclose(logitsOut) != 0)
    failed = 1;
  logitsOut = NULL;
  if (agree(failed))
    goto done;
  if (rank == 0) {
    printf("tokens:");
    for (long k = 0; k <= decode; ++k)
      printf(" %d", tokens[k]);
    printf("\n");
    printf("ranks: %d\n", ranks);
    printf("tracks_per_rank: %d-%d of %d\n", options.track_end - options.track_begin,
           (int)(((int64_t)tracks + ranks - 1) / ranks), tracks);
    printf("ttft_ms: %.3f\n", prefillSeconds * 1e3);
    printf("decode_tokens_per_s: %.1f\n",
           decode > 0 ? (double)decode / decodeSeconds : 0.0);
    printf("prefill_reductions: %lld\n", prefillCalls);
    if (decode > 0) {
      printf("reductions_per_token: %.2f\n",
             (double)(reduce.calls - prefillCalls) / (double)decode);
      printf("reduce_bytes_per_token: %.0f\n",
             (double)(reduce.bytes - bytesBefore) / (double)decode);
      printf("reduce_ms_per_token: %.3f\n",
             (reduce.seconds - reduceBefore) * 1e3 / (double)decode);
    }
  }
  status = 0;

done:
  if (logitsOut)
    fclose(logitsOut);
  afm_session_free(session);
  afm_model_free(model);
  free(tokens);
  MPI_Finalize();
  return status;
}
