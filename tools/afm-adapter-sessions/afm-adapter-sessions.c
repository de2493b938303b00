/*===- afm-adapter-sessions.c - sessions with different adapters at once ---===*
 *
 * afm-adapter-sessions MODEL.afmb --prompt 1,2,3 --decode N SESSION...
 *
 * Loads MODEL once and runs one session per SESSION argument, each on its
 * own thread and all at the same time: the same prompt, then N greedy
 * decode steps, every step started together (a barrier), so the sessions'
 * entry points run concurrently over the one loaded model. SESSION is
 * ADAPTER:LOGITS, an adapter file (afm-compile --adapter) or "none", and
 * the file the session's logits go to (raw f32, one vocab row per step,
 * as afm-run --logits-out). Each adapter is loaded once, however many
 * sessions use it.
 *
 *===----------------------------------------------------------------------===*/

#define _POSIX_C_SOURCE 200809L

#include "afm/runtime.h"
#include "token_ids.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char usage[] =
    "usage: afm-adapter-sessions MODEL.afmb --prompt T1,T2,... --decode N\n"
    "                            [--threads T] ADAPTER:LOGITS...\n"
    "\n"
    "Runs one session of MODEL per ADAPTER:LOGITS argument, concurrently\n"
    "(one thread each, the steps started together): the prompt, then N\n"
    "greedy tokens. ADAPTER is an adapter file for MODEL or 'none'; the\n"
    "session's logits (prompt's last, then each step's) go to LOGITS as raw\n"
    "f32. Prints, per session, its tokens; per adapter, its bytes and the\n"
    "time to load it.\n"
    "\n"
    "  --threads T   kernel threads per session (default 1)\n";

enum { MAX_SESSIONS = 16, MAX_PROMPT = 1024 };

typedef struct job {
  afm_session *session;
  FILE *logits;
  int32_t *tokens; /* decode + 1 */
  int failed;
  char error[512];
} job;

static struct {
  afm_model *model;
  int32_t prompt[MAX_PROMPT];
  size_t prompt_size;
  long decode;
  size_t vocab;
  pthread_barrier_t step;
} shared;

static void record(job *j, const char *what) {
  if (!j->failed)
    snprintf(j->error, sizeof(j->error), "%s: %s", what, afm_last_error());
  j->failed = 1;
}

static void *runSession(void *arg) {
  job *j = arg;
  for (long step = 0; step <= shared.decode; ++step) {
    /* Every session starts each step together. */
    pthread_barrier_wait(&shared.step);
    if (j->failed)
      continue;
    afm_status status =
        step == 0
            ? afm_session_prefill(j->session, shared.prompt,
                                  shared.prompt_size)
            : afm_session_decode(j->session, j->tokens[step - 1]);
    if (status != AFM_OK) {
      record(j, step == 0 ? "prefill" : "decode");
      continue;
    }
    const float *logits = afm_session_logits(j->session);
    if (fwrite(logits, sizeof(float), shared.vocab, j->logits) !=
        shared.vocab) {
      snprintf(j->error, sizeof(j->error), "cannot write the logits");
      j->failed = 1;
    }
    if (afm_session_argmax(j->session, &j->tokens[step]) != AFM_OK)
      record(j, "argmax");
  }
  return NULL;
}

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  const char *modelPath = NULL;
  const char *specs[MAX_SESSIONS];
  size_t sessions = 0;
  long threads = 1;
  shared.decode = -1;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--help") == 0) {
      fputs(usage, stdout);
      return 0;
    }
    if (strcmp(argv[i], "--prompt") == 0 && i + 1 < argc) {
      long count = afm_parse_token_ids(argv[++i], shared.prompt, MAX_PROMPT);
      shared.prompt_size = count > 0 ? (size_t)count : 0;
      if (count < 0) {
        fprintf(stderr, "afm-adapter-sessions: --prompt needs 1 to %d token "
                        "ids, comma-separated\n", MAX_PROMPT);
        return 2;
      }
    } else if (strcmp(argv[i], "--decode") == 0 && i + 1 < argc) {
      shared.decode = strtol(argv[++i], NULL, 10);
    } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      threads = strtol(argv[++i], NULL, 10);
    } else if (argv[i][0] == '-') {
      fprintf(stderr, "afm-adapter-sessions: unknown option '%s'\n%s",
              argv[i], usage);
      return 2;
    } else if (!modelPath) {
      modelPath = argv[i];
    } else if (sessions == MAX_SESSIONS) {
      fprintf(stderr, "afm-adapter-sessions: at most %d sessions\n",
              MAX_SESSIONS);
      return 2;
    } else {
      specs[sessions++] = argv[i];
    }
  }
  if (!modelPath || !shared.prompt_size || shared.decode < 0 ||
      shared.decode > 100000 || sessions == 0 || threads < 1 ||
      threads > 64) {
    fputs(usage, stderr);
    return 2;
  }

  int status = 1;
  job jobs[MAX_SESSIONS] = {{0}};
  afm_adapter *adapters[MAX_SESSIONS] = {0};
  const char *adapterPaths[MAX_SESSIONS] = {0};
  size_t adapterCount = 0;
  pthread_t tids[MAX_SESSIONS];
  size_t started = 0;
  if (afm_model_load(modelPath, 0, &shared.model) != AFM_OK) {
    fprintf(stderr, "afm-adapter-sessions: %s\n", afm_last_error());
    return 1;
  }
  shared.vocab = (size_t)afm_model_vocab_size(shared.model);
  afm_session_options options = {.num_threads = (int32_t)threads};
  for (size_t s = 0; s < sessions; ++s) {
    const char *colon = strrchr(specs[s], ':');
    if (!colon || colon == specs[s] || !colon[1]) {
      fprintf(stderr, "afm-adapter-sessions: '%s' is not ADAPTER:LOGITS\n",
              specs[s]);
      goto done;
    }
    char path[4096];
    snprintf(path, sizeof(path), "%.*s", (int)(colon - specs[s]), specs[s]);
    afm_adapter *adapter = NULL;
    if (strcmp(path, "none") != 0) {
      for (size_t a = 0; a < adapterCount && !adapter; ++a)
        if (strcmp(adapterPaths[a], path) == 0)
          adapter = adapters[a];
      if (!adapter) {
        double start = seconds();
        if (afm_adapter_load(shared.model, path, &adapter) != AFM_OK) {
          fprintf(stderr, "afm-adapter-sessions: %s\n", afm_last_error());
          goto done;
        }
        printf("adapter %s: %llu bytes, loaded in %.3f ms\n", path,
               (unsigned long long)afm_adapter_bytes(adapter),
               (seconds() - start) * 1e3);
        adapterPaths[adapterCount] = strdup(path);
        adapters[adapterCount++] = adapter;
      }
    }
    jobs[s].tokens = calloc((size_t)shared.decode + 1, sizeof(int32_t));
    jobs[s].logits = fopen(colon + 1, "wb");
    if (!jobs[s].tokens || !jobs[s].logits ||
        afm_session_create(shared.model, &options, &jobs[s].session) !=
            AFM_OK ||
        afm_session_set_adapter(jobs[s].session, adapter) != AFM_OK) {
      fprintf(stderr, "afm-adapter-sessions: session %zu: %s\n", s,
              jobs[s].logits ? afm_last_error() : "cannot open its logits");
      goto done;
    }
  }
  pthread_barrier_init(&shared.step, NULL, (unsigned)sessions);
  for (; started < sessions; ++started)
    if (pthread_create(&tids[started], NULL, runSession, &jobs[started]) != 0)
      break;
  if (started < sessions) {
    /* The barrier waits for every session: nothing can run. */
    fprintf(stderr, "afm-adapter-sessions: cannot start %zu threads\n",
            sessions);
    exit(1);
  }
  for (size_t s = 0; s < sessions; ++s)
    pthread_join(tids[s], NULL);
  pthread_barrier_destroy(&shared.step);
  status = 0;
  for (size_t s = 0; s < sessions; ++s) {
    if (jobs[s].failed) {
      fprintf(stderr, "afm-adapter-sessions: session %zu: %s\n", s,
              jobs[s].error);
      status = 1;
      continue;
    }
    printf("session %zu tokens:", s);
    for (long k = 0; k <= shared.decode; ++k)
      printf(" %d", jobs[s].tokens[k]);
    printf("\n");
  }

done:
  for (size_t s = 0; s < sessions; ++s) {
    if (jobs[s].logits && fclose(jobs[s].logits) != 0 && status == 0) {
      fprintf(stderr, "afm-adapter-sessions: cannot write the logits of "
                      "session %zu\n", s);
      status = 1;
    }
    afm_session_free(jobs[s].session);
    free(jobs[s].tokens);
  }
  for (size_t a = 0; a < adapterCount; ++a) {
    afm_adapter_free(adapters[a]);
    free((void *)adapterPaths[a]);
  }
  afm_model_free(shared.model);
  return status;
}
