/*===- runtime.h - the afm runtime C API ----------------------------*- C -*-===*
 *
 * Loads a compiled model (.afmb), opens sessions on it, runs prompts and
 * decodes token by token. No LLVM or MLIR inside, no math kernels: all math
 * comes from the model's compiled code.
 *
 * Errors: every fallible call returns an afm_status; AFM_OK is 0. On error,
 * afm_last_error() returns a message for the calling thread describing what
 * went wrong (file, section, field, values), valid until that thread's next
 * afm_* call. Nothing in this API aborts the process on bad input.
 *
 * Ownership: objects returned through `out` parameters belong to the caller
 * and are released with the matching *_free function. A session keeps its
 * model alive: it holds a reference to the model, so afm_model_free and
 * afm_session_free may come in either order. afm_model_free drops the
 * caller's reference; the model is unloaded when the last reference goes,
 * the caller's or a session's.
 *
 *===----------------------------------------------------------------------===*/

#ifndef AFM_RUNTIME_H
#define AFM_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum afm_status {
  AFM_OK = 0,
  AFM_ERR_IO = 1,           /* cannot open, stat, map or read the file */
  AFM_ERR_FORMAT = 2,       /* not an .afmb, truncated, corrupted, inconsistent */
  AFM_ERR_VERSION = 3,      /* unsupported format major or kernel ABI version */
  AFM_ERR_TARGET = 4,       /* code for another CPU/OS than this process */
  AFM_ERR_CODE = 5,         /* the code section cannot be loaded or lacks a symbol */
  AFM_ERR_ARGUMENT = 6,     /* null pointer, bad token id, count 0, ... */
  AFM_ERR_CONTEXT_FULL = 7, /* position + tokens would exceed context_length */
  AFM_ERR_MEMORY = 8,       /* allocation failed */
  AFM_ERR_STATE = 9,        /* e.g. decode or logits before any prefill */
  AFM_ERR_MISMATCH = 10     /* an adapter compiled for another base model */
} afm_status;

typedef struct afm_model afm_model;
typedef struct afm_session afm_session;

/* Human-readable name of a status ("AFM_ERR_FORMAT", ...). */
const char *afm_status_name(afm_status status);

/* The calling thread's message for its last failed call ("" if none). */
const char *afm_last_error(void);

/*---------------------------------------------------------------- models --*/

enum {
  /* Also verify the weights section's checksum (reads every weight once). */
  AFM_LOAD_VERIFY_WEIGHTS = 1u << 0
};

afm_status afm_model_load(const char *path, uint32_t flags, afm_model **out);
/* Drops the caller's reference: the model stays loaded until its sessions
   are freed too. */
void afm_model_free(afm_model *model);

int32_t afm_model_vocab_size(const afm_model *model);
int32_t afm_model_context_length(const afm_model *model);
/* Bytes of the KV caches of one session. */
uint64_t afm_model_kv_bytes(const afm_model *model);
/* Bytes of the arena one session allocates: the KV caches, then the
   scratch memory of the compiled code (its temporaries). */
uint64_t afm_model_arena_bytes(const afm_model *model);
/* Size of the weights section, in bytes: about what one decode step reads
   (every weight once; the embedding only one row of it). */
uint64_t afm_model_weight_bytes(const afm_model *model);
/* Tracks of each PT-MoE track block (0 for other models). */
int32_t afm_model_num_tracks(const afm_model *model);
/* Target name recorded at compile time, e.g. "x86-64-v3". */
const char *afm_model_target(const afm_model *model);

/*-------------------------------------------------------------- sessions --*/

/* PT-MoE tracks across processes: completes a track block's sum in place
 * (`count` floats: this process's tracks summed; afterwards every
 * track's), e.g. with MPI_Allreduce; called once per track block per
 * prefill, decode or verify call, from the thread that made it. */
typedef void (*afm_track_allreduce_fn)(void *user, float *data,
                                       int64_t count);

typedef struct afm_session_options {
  /* Threads for the compiled kernels; 0 means one per online CPU. */
  int32_t num_threads;
  /* A PT-MoE model's tracks split between processes (tools/afm-run-mpi):
   * this session computes tracks [track_begin, track_end) of every track
   * block, and track_allreduce sums each block over the processes. With
   * track_allreduce NULL (the default) the session computes every track
   * and both must be 0. */
  int32_t track_begin;
  int32_t track_end;
  afm_track_allreduce_fn track_allreduce;
  void *track_user;
} afm_session_options;

/* `options` may be NULL for defaults. */
afm_status afm_session_create(afm_model *model,
                              const afm_session_options *options,
                              afm_session **out);
void afm_session_free(afm_session *session);

/* Appends `count` tokens at the current position and computes the logits
 * of the last one. Tokens are processed in chunks of the prefill entry's
 * max_tokens. May be called again to extend the context. */
afm_status afm_session_prefill(afm_session *session, const int32_t *tokens,
                               size_t count);

/* Appends one token and computes its logits. */
afm_status afm_session_decode(afm_session *session, int32_t token);

/* Speculative decoding. A model compiled with --verify-tokens T has a
 * verify entry: up to T tokens in one step, the logits of every one out.
 * Tokens the target model rejects are dropped again with
 * afm_session_rewind. afm_model_verify_tokens is T, 0 without the entry. */
int32_t afm_model_verify_tokens(const afm_model *model);

/* Appends `count` tokens (1 .. T) at the current position and computes the
 * logits of each: row r is the logits of position (old position) + r.
 * AFM_ERR_STATE when the model has no verify entry. */
afm_status afm_session_verify(afm_session *session, const int32_t *tokens,
                              size_t count);

/* The rows of the last call if it was afm_session_verify (*rows of them,
 * vocab_size floats each), else NULL and *rows 0. */
const float *afm_session_verify_logits(const afm_session *session,
                                       size_t *rows);

/* Keeps only the first `position` positions of the context. Local layers
 * keep ring caches with T - 1 spare slots, so a rewind may drop at most
 * T - 1 positions counted from the furthest position ever written since
 * the last reset (the end of the last verify step, say); further back is
 * AFM_ERR_ARGUMENT (reset and prefill instead). Without a verify entry
 * only a rewind to the current position is allowed. No logits afterwards
 * until the next call computes some. */
afm_status afm_session_rewind(afm_session *session, int64_t position);

/* Logits of the last processed position (vocab_size floats), or NULL
 * before any token was processed. Valid until the next prefill, decode,
 * verify or rewind. */
const float *afm_session_logits(const afm_session *session);

/* Index of the largest logit (lowest index on ties); AFM_ERR_STATE before
 * any token was processed. */
afm_status afm_session_argmax(const afm_session *session, int32_t *token);

/*-------------------------------------------------------------- adapters --*/

/* A LoRA adapter compiled against one base model (afm-compile --adapter)
 * for a model built with adapter slots (afm-compile --adapter-rank). */
typedef struct afm_adapter afm_adapter;

/* Rank of the model's adapter slots; 0 when it has none. */
int32_t afm_model_adapter_rank(const afm_model *model);

/* Reads and checks the adapter file at `path` for `model`: AFM_ERR_FORMAT
 * for a damaged file, AFM_ERR_MISMATCH when it was compiled for another
 * base (other weights or other slots), AFM_ERR_STATE when the model has no
 * adapter slots. The adapter holds a reference to the model. */
afm_status afm_adapter_load(afm_model *model, const char *path,
                            afm_adapter **out);
/* Drops the caller's reference; sessions using the adapter keep theirs. */
void afm_adapter_free(afm_adapter *adapter);
/* Bytes of factors the adapter holds (what it costs in memory, and what
 * attaching it copies into a session). */
uint64_t afm_adapter_bytes(const afm_adapter *adapter);

/* Attaches `adapter` (loaded for the session's model) to the session, or
 * detaches the current one with NULL: from the next call on, every
 * adapted projection adds the adapter's low-rank term. The context is
 * kept (its KV entries were computed with the previous adapter: reset
 * first for a clean sequence). Sessions on one model may use different
 * adapters at the same time. The session holds a reference until it is
 * freed or given another adapter; a reset keeps the adapter attached. */
afm_status afm_session_set_adapter(afm_session *session,
                                   afm_adapter *adapter);

/* Number of positions in the context. */
int64_t afm_session_position(const afm_session *session);

/* The model the session runs (the session holds a reference to it). */
afm_model *afm_session_model(const afm_session *session);

/* Forgets the context: position 0, KV memory zeroed. */
afm_status afm_session_reset(afm_session *session);

#ifdef __cplusplus
}
#endif

#endif /* AFM_RUNTIME_H */
