/*===- fake_model.c - a predictable stand-in for compiled model code -------===*
 *
 * The code section of the runtime tests: exports afm_prefill and afm_decode
 * with the kernel ABI signature and math simple enough to predict by hand,
 * yet dependent on everything the runtime passes in:
 *
 *   weights   u32[4] = {FAKE_MODEL_MAGIC, vocab_size, context_length,
 *             prefill max_tokens} at offset 0 (the "fake.config" tensor)
 *   kv_arena  i32[context_length]: slot p holds the token at position p
 *   logits    1 at index hot = (S + last + salt) % vocab_size and at its
 *             twin (hot + vocab_size / 2) % vocab_size, 0 elsewhere, where
 *             S = sum of every slot of the arena after the new tokens are
 *             recorded, last = position + count - 1, salt = 0 for prefill
 *             and 1 for decode (so using the wrong entry shows). The two
 *             equal maxima make argmax's lowest-index rule matter.
 *
 * Both loops run through host->parallel_for. A wrong magic, a padding
 * token that is not zero or a count outside [1, max_tokens] sets every
 * logit to -1, so no prediction matches.
 *
 *===----------------------------------------------------------------------===*/

#include "afm/kernel_abi.h"

#include <stdint.h>
#include <string.h>

#define FAKE_MODEL_MAGIC 0x4b414641u /* "AFAK" */

#if defined(__GNUC__)
#define FAKE_EXPORT __attribute__((visibility("default")))
#else
#define FAKE_EXPORT
#endif

/* The sizes the fake model is "compiled" for: placeholders here, which
 * the test packer (TestBinary.cpp, withFacts) overwrites in the library's
 * bytes with those of the manifest it writes. */
FAKE_EXPORT const afm_model_facts afm_compiled_facts = {
    AFM_KERNEL_ABI_VERSION, 0, 0, 0, 0, 0, 0, 0};

/* Adapter slots (kernel_abi.h): a count of 0 (none) unless the test packer
 * patches in a count and up to 4 slots (withAdapterSlots). The fake math
 * ignores them. The last word is not zero so that the array stays in the
 * file's data (a zero one could go to .bss, which has no bytes to patch). */
FAKE_EXPORT const uint64_t afm_adapter_slots[13] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, FAKE_MODEL_MAGIC};

/* Tracks per PT-MoE block (kernel_abi.h's afm_track_count): 0, none,
 * unless the test packer patches a count in (withTrackCount). The second
 * word keeps the array in the file's data, as above. */
FAKE_EXPORT const uint64_t afm_track_count[2] = {0, FAKE_MODEL_MAGIC};

typedef struct config {
  uint32_t magic, vocab, context, prefill_max_tokens;
} config;

typedef struct record_job {
  const int32_t *tokens;
  int32_t *slots;
} record_job;

typedef struct logits_job {
  float *logits;
  int64_t hot, twin;
} logits_job;

static void recordToken(void *ctx, int64_t i) {
  record_job *job = ctx;
  job->slots[i] = job->tokens[i];
}

static void writeLogit(void *ctx, int64_t v) {
  logits_job *job = ctx;
  job->logits[v] = v == job->hot || v == job->twin ? 1.0f : 0.0f;
}

static void poison(float *logits, uint32_t vocab) {
  for (uint32_t v = 0; v < vocab; ++v)
    logits[v] = -1.0f;
}

static void run(const uint8_t *weights, const int32_t *tokens, int64_t count,
                int64_t position, uint8_t *kv_arena, float *logits,
                const afm_host_api *host, int64_t maxTokens, int64_t salt) {
  config c;
  memcpy(&c, weights, sizeof(c));
  if (c.magic != FAKE_MODEL_MAGIC || c.vocab == 0) {
    /* Without the config the vocabulary size is unknown: touch nothing. */
    return;
  }
  if (count < 1 || count > maxTokens) {
    poison(logits, c.vocab);
    return;
  }
  for (int64_t i = count; i < maxTokens; ++i)
    if (tokens[i] != 0) {
      poison(logits, c.vocab);
      return;
    }
  int32_t *slots = (int32_t *)(void *)kv_arena;
  record_job record = {tokens, slots + position};
  host->parallel_for(host->pool, count, recordToken, &record);

  int64_t sum = 0;
  for (uint32_t p = 0; p < c.context; ++p)
    sum += slots[p];
  int64_t last = position + count - 1;
  int64_t hot = (sum + last + salt) % (int64_t)c.vocab;
  logits_job job = {logits, hot, (hot + c.vocab / 2) % (int64_t)c.vocab};
  host->parallel_for(host->pool, c.vocab, writeLogit, &job);
}

FAKE_EXPORT void afm_prefill(const uint8_t *weights, const int32_t *tokens,
                             int64_t count, int64_t position, uint8_t *kv_arena,
                             float *logits, const afm_host_api *host) {
  config c;
  memcpy(&c, weights, sizeof(c));
  run(weights, tokens, count, position, kv_arena, logits, host,
      c.prefill_max_tokens, 0);
}

FAKE_EXPORT void afm_decode(const uint8_t *weights, const int32_t *tokens,
                            int64_t count, int64_t position, uint8_t *kv_arena,
                            float *logits, const afm_host_api *host) {
  run(weights, tokens, count, position, kv_arena, logits, host, 1, 1);
}
