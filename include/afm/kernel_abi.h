/*===- kernel_abi.h - ABI between compiled models and the runtime -*- C -*-===*
 *
 * A compiled model is a shared library (ELF or Mach-O) stored in the code
 * section of an .afmb file. It exports the entry points named in the
 * manifest, all with the signature `afm_entry_fn`, and calls back into the
 * runtime only through `afm_host_api`. Plain C, no allocation contract: the
 * code may call malloc/free from the C library it is loaded into.
 *
 *===----------------------------------------------------------------------===*/

#ifndef AFM_KERNEL_ABI_H
#define AFM_KERNEL_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever the entry signature or afm_host_api changes. The manifest
 * records the version the code was compiled for; the runtime refuses others. */
#define AFM_KERNEL_ABI_VERSION 3

/* What the runtime offers compiled code. */
typedef struct afm_host_api {
  /* Runs fn(ctx, i) for every i in [0, n) on the runtime's threads and
   * returns when all calls have returned. May run them inline when the
   * session has one thread. */
  void (*parallel_for)(void *pool, int64_t n,
                       void (*fn)(void *ctx, int64_t i), void *ctx);
  void *pool;
  /* Number of threads parallel_for may use (>= 1). */
  int64_t num_threads;
  /* PT-MoE track blocks (docs/semantics.md): the code computes only tracks
   * [track_begin, track_end) of each block (0 and INT64_MAX: all of them),
   * sums them, then calls track_allreduce once per block with that sum
   * (`count` floats, in place), which must leave the sum over every
   * track, from every process that shares the work, before it returns.
   * One process alone passes a function that does nothing. Never NULL. */
  int64_t track_begin;
  int64_t track_end;
  void (*track_allreduce)(void *ctx, float *data, int64_t count);
  void *track_ctx;
} afm_host_api;

/* A track_allreduce for one process that runs every track: the sum is
 * already complete. */
static inline void afm_track_allreduce_local(void *ctx, float *data,
                                             int64_t count) {
  (void)ctx;
  (void)data;
  (void)count;
}

/* What the code was compiled for, exported as the constant
 * `afm_compiled_facts` (AFM_MODEL_FACTS_SYMBOL). The code has these sizes
 * built in, so the runtime takes none of them from the manifest alone: it
 * checks every manifest field against this record at load and refuses a
 * disagreement (a manifest edited with its checksums recomputed would
 * otherwise overflow buffers or give wrong tokens). All fields are u64 so
 * that the layout is the same in every compiler: an array of 8 u64. */
#define AFM_MODEL_FACTS_SYMBOL "afm_compiled_facts"
typedef struct afm_model_facts {
  uint64_t abi_version;        /* AFM_KERNEL_ABI_VERSION */
  uint64_t vocab_size;         /* logits the entries write */
  uint64_t context_length;     /* positions the KV caches hold */
  uint64_t prefill_max_tokens; /* tokens buffer of afm_prefill */
  uint64_t decode_max_tokens;  /* tokens buffer of afm_decode (1) */
  uint64_t weights_bytes;      /* weights the code reads: the section's
                                * size at least */
  uint64_t arena_bytes;        /* KV caches and scratch the code uses */
  uint64_t verify_max_tokens;  /* tokens buffer of afm_verify; 0: none */
} afm_model_facts;

/* With run-time adapter slots (afm-compile --adapter-rank) the code also
 * exports the constant `afm_adapter_slots`: u64 [1 + 3n], n and then each
 * slot's arena offset, rows and columns (f32 factors), in the manifest's
 * order. The runtime checks the manifest's slot table against it, so an
 * edited manifest cannot make an attached adapter land elsewhere in the
 * arena. Code without slots exports nothing. */
#define AFM_ADAPTER_SLOTS_SYMBOL "afm_adapter_slots"

/* A model with PT-MoE track blocks also exports the constant
 * `afm_track_count` (u64): the tracks of each block, which a manifest's
 * model.num_tracks must equal (it is how callers split the tracks
 * between processes). */
#define AFM_TRACK_COUNT_SYMBOL "afm_track_count"

/* The entry points' names. The manifest repeats them; the runtime refuses
 * any other (a manifest naming, say, the decode entry as the prefill one,
 * or a libc function, would run the wrong code). */
#define AFM_PREFILL_SYMBOL "afm_prefill"
#define AFM_DECODE_SYMBOL "afm_decode"
/* Optional (afm-compile --verify-tokens T): T rows in, the logits of
 * every real row out, for speculative decoding. */
#define AFM_VERIFY_SYMBOL "afm_verify"

/* Every entry point (prefill, decode, verify) has this signature.
 *   weights   start of the weights section (mmapped, read-only, 64-byte
 *             aligned; each tensor at the offset the manifest gives)
 *   tokens    `max_tokens` token ids (the entry's max_tokens in the
 *             manifest); only the first `count` are meaningful, the rest
 *             are padding the code must ignore
 *   count     1 <= count <= max_tokens
 *   position  position of tokens[0]; the KV caches hold positions
 *             [0, position) of this sequence
 *   kv_arena  the session's KV memory (afm_compiled_facts.arena_bytes,
 *             64-byte aligned, zeroed at session start and reset); the
 *             entry appends the `count` new positions. Past the caches it
 *             is the entries' scratch memory (their temporaries), so
 *             compiled code needs no allocation per call
 *   logits    vocab_size floats: written with the logits of position
 *             `position + count - 1`. Verify: max_tokens x vocab_size
 *             floats, row r the logits of position `position + r` for
 *             r < count (later rows unspecified)
 *   host      runtime services (threads); never NULL. Compiled code runs
 *             its parallel loops as parallel_for calls of internal
 *             trampolines `void(void *ctx, int64_t i)`
 * Preconditions checked by the runtime, not the code: token ids in
 * [0, vocab_size), position + count <= context_length. */
typedef void (*afm_entry_fn)(const uint8_t *weights, const int32_t *tokens,
                             int64_t count, int64_t position,
                             uint8_t *kv_arena, float *logits,
                             const afm_host_api *host);

/* Marks a function that calls compiled code through a pointer (the
 * runtime's entry points and tasks, the compiler's host-run graphs).
 * UBSan's -fsanitize=function checks such a call by reading a signature
 * word just before the callee; compiled models carry none, and an entry
 * point at the start of the text segment sits right after the loader's
 * unmapped padding page, so the check itself faults. */
#if defined(__clang__)
#define AFM_CALLS_LOADED_CODE __attribute__((no_sanitize("function")))
#else
#define AFM_CALLS_LOADED_CODE
#endif

#ifdef __cplusplus
}
#endif

#endif /* AFM_KERNEL_ABI_H */
