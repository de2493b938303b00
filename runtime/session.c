/*===- session.c - one sequence: KV memory, logits, threads ----------------===*
 *
 * A session owns everything that changes while a sequence runs; the model
 * it points to stays read-only. Arguments are checked in full before any
 * entry point runs, so a failed call leaves the session as it was.
 *
 *===----------------------------------------------------------------------===*/

#include "adapter.h"
#include "argmax.h"
#include "arena.h"
#include "checked_math.h"
#include "error.h"
#include "model.h"
#include "thread_pool.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Memory handed to compiled code is 64-byte aligned (kernel_abi.h). */
#define AFM_BUFFER_ALIGNMENT 64
/* More threads than this is a caller's mistake, not a machine. */
#define AFM_MAX_THREADS 1024

struct afm_session {
  afm_model *model; /* one reference held */
  afm_thread_pool *pool;
  afm_host_api host;
  afm_arena kv_arena; /* KV caches and scratch, touched only as used */
  float *logits;     /* prefill and decode write here */
  float *rows;       /* verify writes here: max_tokens x vocab (or NULL) */
  const float *last; /* logits of the last processed position, or NULL */
  size_t row_count;  /* rows of the last call if it was a verify, else 0 */
  int32_t *tokens;   /* the padded buffer entry points read */
  int64_t position;
  /* The furthest position any call has written KV rows for since the
   * last reset: rewinding is safe while it is at most the ring caches'
   * slack ahead (afm_session_rewind). */
  int64_t written;
  /* Attached with afm_session_set_adapter (one reference held), or NULL;
   * its factors are in the arena's slots, written again after a reset. */
  afm_adapter *adapter;
};

/* A zeroed, 64-byte aligned buffer of at least `bytes` (at least one
 * alignment unit, so even an empty arena is a valid pointer). */
static void *allocBuffer(uint64_t bytes) {
  uint64_t rounded;
  if (!afm_checked_align(bytes ? bytes : 1, AFM_BUFFER_ALIGNMENT, &rounded) ||
      rounded > SIZE_MAX)
    return NULL;
  void *buffer = aligned_alloc(AFM_BUFFER_ALIGNMENT, (size_t)rounded);
  if (buffer)
    memset(buffer, 0, (size_t)rounded);
  return buffer;
}

static afm_status resolveThreads(const afm_session_options *options,
                                 int32_t *threads) {
  int32_t requested = options ? options->num_threads : 0;
  if (requested < 0 || requested > AFM_MAX_THREADS)
    return afm_error(AFM_ERR_ARGUMENT,
                     "afm_session_create: num_threads is %d, expected 0 "
                     "(one per online CPU) to %d",
                     requested, AFM_MAX_THREADS);
  if (requested == 0) {
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    requested = online < 1                 ? 1
                : online > AFM_MAX_THREADS ? AFM_MAX_THREADS
                                           : (int32_t)online;
  }
  *threads = requested;
  return AFM_OK;
}

/* Distributed tracks: a range inside the model's tracks, with a reduction. */
static afm_status checkTracks(const afm_model *model,
                              const afm_session_options *options) {
  if (!options || !options->track_allreduce) {
    if (options && (options->track_begin != 0 || options->track_end != 0))
      return afm_error(AFM_ERR_ARGUMENT,
                       "afm_session_create: tracks %d..%d without a "
                       "track_allreduce: a session computes every track "
                       "unless it shares them with other processes",
                       options->track_begin, options->track_end);
    return AFM_OK;
  }
  uint32_t tracks = model->manifest.num_tracks;
  if (tracks == 0)
    return afm_error(AFM_ERR_ARGUMENT,
                     "afm_session_create: the model has no track blocks to "
                     "share between processes");
  if (options->track_begin < 0 || options->track_begin >= options->track_end ||
      (uint32_t)options->track_end > tracks)
    return afm_error(AFM_ERR_ARGUMENT,
                     "afm_session_create: tracks %d..%d are not a non-empty "
                     "range of the model's %u",
                     options->track_begin, options->track_end, tracks);
  return AFM_OK;
}

afm_status afm_session_create(afm_model *model,
                              const afm_session_options *options,
                              afm_session **out) {
  if (!out)
    return afm_error(AFM_ERR_ARGUMENT, "afm_session_create: `out` is NULL");
  *out = NULL;
  if (!model)
    return afm_error(AFM_ERR_ARGUMENT, "afm_session_create: `model` is NULL");
  int32_t threads = 1;
  afm_status status = resolveThreads(options, &threads);
  if (status == AFM_OK)
    status = checkTracks(model, options);
  if (status != AFM_OK)
    return status;

  afm_session *s = calloc(1, sizeof(*s));
  if (!s)
    return afm_error(AFM_ERR_MEMORY, "afm_session_create: out of memory");
  afm_model_retain(model);
  s->model = model;
  uint32_t tokenCapacity = model->prefill.max_tokens;
  if (model->decode.max_tokens > tokenCapacity)
    tokenCapacity = model->decode.max_tokens;
  if (model->verify.max_tokens > tokenCapacity)
    tokenCapacity = model->verify.max_tokens;
  status = afm_arena_create(model->manifest.arena_bytes, "afm_session_create",
                            &s->kv_arena);
  if (status != AFM_OK) {
    afm_session_free(s);
    return status;
  }
  s->logits =
      allocBuffer((uint64_t)model->manifest.vocab_size * sizeof(float));
  s->tokens = allocBuffer((uint64_t)tokenCapacity * sizeof(int32_t));
  if (model->verify.max_tokens)
    s->rows = allocBuffer((uint64_t)model->verify.max_tokens *
                          model->manifest.vocab_size * sizeof(float));
  if (!s->logits || !s->tokens || (model->verify.max_tokens && !s->rows)) {
    afm_session_free(s);
    return afm_error(AFM_ERR_MEMORY,
                     "afm_session_create: cannot allocate %u logits and %u "
                     "tokens",
                     model->manifest.vocab_size, tokenCapacity);
  }
  status = afm_thread_pool_create(threads, &s->pool);
  if (status != AFM_OK) {
    afm_session_free(s);
    return status;
  }
  s->host.parallel_for = afm_thread_pool_parallel_for;
  s->host.pool = s->pool;
  s->host.num_threads = afm_thread_pool_size(s->pool);
  if (options && options->track_allreduce) {
    s->host.track_begin = options->track_begin;
    s->host.track_end = options->track_end;
    s->host.track_allreduce = options->track_allreduce;
    s->host.track_ctx = options->track_user;
  } else {
    s->host.track_begin = 0;
    s->host.track_end = INT64_MAX;
    s->host.track_allreduce = afm_track_allreduce_local;
    s->host.track_ctx = NULL;
  }
  *out = s;
  return AFM_OK;
}

void afm_session_free(afm_session *session) {
  if (!session)
    return;
  afm_thread_pool_free(session->pool);
  free(session->tokens);
  free(session->logits);
  free(session->rows);
  afm_arena_free(&session->kv_arena);
  afm_adapter_free(session->adapter);
  afm_model_release(session->model);
  free(session);
}

/* Room for `count` more positions, and every token in the vocabulary. */
static afm_status checkAppend(const afm_session *s, const char *function,
                              const int32_t *tokens, size_t count) {
  const afm_manifest *m = &s->model->manifest;
  uint64_t room = (uint64_t)m->context_length - (uint64_t)s->position;
  if ((uint64_t)count > room)
    return afm_error(AFM_ERR_CONTEXT_FULL,
                     "%s: position %lld + %zu token%s exceeds the context "
                     "length %u",
                     function, (long long)s->position, count,
                     count == 1 ? "" : "s", m->context_length);
  for (size_t i = 0; i < count; ++i)
    if (tokens[i] < 0 || (uint32_t)tokens[i] >= m->vocab_size)
      return afm_error(AFM_ERR_ARGUMENT,
                       "%s: token %zu is %d, outside the vocabulary [0, %u)",
                       function, i, tokens[i], m->vocab_size);
  return AFM_OK;
}

/* Runs `entry` on `count` tokens at the current position through the padded
 * buffer: exactly max_tokens entries, zeros after the first `count`. The
 * logits go to `out`: one row, or one per token for the verify entry. */
AFM_CALLS_LOADED_CODE
static void runEntry(afm_session *s, const afm_entry *entry,
                     const int32_t *tokens, size_t count, float *out) {
  memcpy(s->tokens, tokens, count * sizeof(int32_t));
  memset(s->tokens + count, 0, (entry->max_tokens - count) * sizeof(int32_t));
  entry->fn(s->model->weights, s->tokens, (int64_t)count, s->position,
            s->kv_arena.data, out, &s->host);
  s->position += (int64_t)count;
  if (s->position > s->written)
    s->written = s->position;
  s->last = out;
  s->row_count = 0;
}

afm_status afm_session_prefill(afm_session *session, const int32_t *tokens,
                               size_t count) {
  if (!session || !tokens)
    return afm_error(AFM_ERR_ARGUMENT, "afm_session_prefill: `%s` is NULL",
                     session ? "tokens" : "session");
  if (count == 0)
    return afm_error(AFM_ERR_ARGUMENT,
                     "afm_session_prefill: count is 0, at least 1 token is "
                     "needed");
  afm_status status =
      checkAppend(session, "afm_session_prefill", tokens, count);
  if (status != AFM_OK)
    return status;
  const afm_entry *prefill = &session->model->prefill;
  for (size_t done = 0; done < count;) {
    size_t chunk =
        count - done < prefill->max_tokens ? count - done : prefill->max_tokens;
    runEntry(session, prefill, tokens + done, chunk, session->logits);
    done += chunk;
  }
  return AFM_OK;
}

afm_status afm_session_decode(afm_session *session, int32_t token) {
  if (!session)
    return afm_error(AFM_ERR_ARGUMENT, "afm_session_decode: `session` is NULL");
  if (session->position == 0)
    return afm_error(AFM_ERR_STATE,
                     "afm_session_decode: the context is empty; prefill a "
                     "prompt first");
  afm_status status = checkAppend(session, "afm_session_decode", &token, 1);
  if (status != AFM_OK)
    return status;
  runEntry(session, &session->model->decode, &token, 1, session->logits);
  return AFM_OK;
}

int32_t afm_model_verify_tokens(const afm_model *model) {
  return model ? (int32_t)model->verify.max_tokens : 0;
}

afm_status afm_session_verify(afm_session *session, const int32_t *tokens,
                              size_t count) {
  if (!session || !tokens)
    return afm_error(AFM_ERR_ARGUMENT, "afm_session_verify: `%s` is NULL",
                     session ? "tokens" : "session");
  const afm_entry *verify = &session->model->verify;
  if (verify->max_tokens == 0)
    return afm_error(AFM_ERR_STATE,
                     "afm_session_verify: the model has no verify entry "
                     "(compile it with afm-compile --verify-tokens N)");
  if (count == 0 || count > verify->max_tokens)
    return afm_error(AFM_ERR_ARGUMENT,
                     "afm_session_verify: count is %zu, expected 1 to %u "
                     "(the verify entry's max_tokens)",
                     count, verify->max_tokens);
  afm_status status = checkAppend(session, "afm_session_verify", tokens, count);
  if (status != AFM_OK)
    return status;
  uint32_t vocab = session->model->manifest.vocab_size;
  runEntry(session, verify, tokens, count, session->rows);
  session->last = session->rows + (count - 1) * (size_t)vocab;
  session->row_count = count;
  return AFM_OK;
}

const float *afm_session_verify_logits(const afm_session *session,
                                       size_t *rows) {
  if (rows)
    *rows = session ? session->row_count : 0;
  return session && session->row_count ? session->rows : NULL;
}

afm_status afm_session_rewind(afm_session *session, int64_t position) {
  if (!session)
    return afm_error(AFM_ERR_ARGUMENT, "afm_session_rewind: `session` is NULL");
  int64_t slack = session->model->verify.max_tokens
                      ? (int64_t)session->model->verify.max_tokens - 1
                      : 0;
  if (position < 0 || position > session->position)
    return afm_error(AFM_ERR_ARGUMENT,
                     "afm_session_rewind: position %lld is outside the "
                     "context [0, %lld]",
                     (long long)position, (long long)session->position);
  if (session->written - position > slack)
    return afm_error(AFM_ERR_ARGUMENT,
                     "afm_session_rewind: position %lld is more than %lld "
                     "behind the furthest position written (%lld): local "
                     "layers' ring caches keep only that many spare slots "
                     "(the verify entry's max_tokens - 1); reset and "
                     "prefill instead",
                     (long long)position, (long long)slack,
                     (long long)session->written);
  if (position != session->position) {
    session->position = position;
    session->last = NULL;
    session->row_count = 0;
  }
  return AFM_OK;
}

const float *afm_session_logits(const afm_session *session) {
  return session ? session->last : NULL;
}

afm_status afm_session_argmax(const afm_session *session, int32_t *token) {
  if (!session || !token)
    return afm_error(AFM_ERR_ARGUMENT, "afm_session_argmax: `%s` is NULL",
                     session ? "token" : "session");
  if (!session->last)
    return afm_error(AFM_ERR_STATE,
                     "afm_session_argmax: no logits yet; prefill a prompt "
                     "first");
  /* Lowest id on ties; a NaN never beats a number, and all NaN give 0 (a
   * caller that must not pass a NaN on checks the logits itself). */
  bool sawNan;
  *token = afm_argmax(session->last,
                      (int32_t)session->model->manifest.vocab_size, &sawNan);
  return AFM_OK;
}

int64_t afm_session_position(const afm_session *session) {
  return session ? session->position : 0;
}

afm_model *afm_session_model(const afm_session *session) {
  return session ? session->model : NULL;
}

afm_status afm_session_reset(afm_session *session) {
  if (!session)
    return afm_error(AFM_ERR_ARGUMENT, "afm_session_reset: `session` is NULL");
  afm_arena_clear(&session->kv_arena);
  if (session->adapter)
    afm_adapter_write_slots(session->model, session->adapter,
                            session->kv_arena.data);
  session->position = 0;
  session->written = 0;
  session->last = NULL;
  session->row_count = 0;
  return AFM_OK;
}

afm_status afm_session_set_adapter(afm_session *session,
                                   afm_adapter *adapter) {
  if (!session)
    return afm_error(AFM_ERR_ARGUMENT,
                     "afm_session_set_adapter: `session` is NULL");
  if (adapter && afm_adapter_model(adapter) != session->model)
    return afm_error(AFM_ERR_ARGUMENT,
                     "afm_session_set_adapter: the adapter was loaded for "
                     "another model than the session's (afm_adapter_load "
                     "it on the session's model)");
  if (adapter)
    afm_adapter_retain(adapter);
  afm_adapter_free(session->adapter);
  session->adapter = adapter;
  afm_adapter_write_slots(session->model, adapter, session->kv_arena.data);
  return AFM_OK;
}
