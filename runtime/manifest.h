/*===- manifest.h - decoding and validating the manifest -----------*- C -*-===*
 *
 * Unpacks the manifest section (protobuf-c) and checks everything the
 * runtime relies on before it runs any code: ABI version, target, shape,
 * entry points, tensor table against the weights, KV layout against the
 * arena.
 *
 *===----------------------------------------------------------------------===*/

#ifndef AFM_RUNTIME_MANIFEST_H
#define AFM_RUNTIME_MANIFEST_H

#include "afm/kernel_abi.h"
#include "afm/runtime.h"
#include "manifest.pb-c.h"

#include <stddef.h>
#include <stdint.h>

/* The most rows a VERIFY entry may have: its logits are rows x vocab
 * floats (afm-compile --verify-tokens caps it the same). */
#define AFM_MAX_VERIFY_TOKENS 16

/* More adapter slots than this is not a model (4 per layer and track). */
#define AFM_MAX_ADAPTER_SLOTS 65536

/* A manifest that passed validation, with the fields the runtime uses. */
typedef struct afm_manifest {
  Afm__Manifest__Manifest *message; /* owned; strings below point into it */
  const Afm__Manifest__EntryPoint *prefill;
  const Afm__Manifest__EntryPoint *decode;
  const Afm__Manifest__EntryPoint *verify; /* NULL: the model has none */
  const char *target_name; /* target.name, or target.triple if unnamed */
  uint32_t vocab_size;     /* 1 .. INT32_MAX */
  uint32_t context_length; /* 1 .. INT32_MAX */
  uint32_t num_tracks;     /* per PT-MoE track block; 0: none */
  uint64_t arena_bytes;
  /* Where the last KV buffer (codes or scales) ends: the caches' part of the
   * arena; the rest is the compiled code's scratch memory. The arena when
   * the manifest lists no buffers. */
  uint64_t kv_cache_bytes;
  /* generation.eos_ids (each < vocab_size, so also a valid int32_t), inside
   * `message`; NULL and 0 when the file records none. */
  const int32_t *eos_ids;
  size_t eos_count;
  /* Run-time adapter slots (inside `message`): each inside the arena after
   * the caches, 64-byte aligned, rows x cols f32, no two overlapping or
   * sharing a name. 0 and NULL without slots. */
  const Afm__Manifest__AdapterSlot *const *adapter_slots;
  size_t adapter_slot_count;
} afm_manifest;

/* Decodes and validates `size` bytes of manifest for a weights section of
 * `weights_size` bytes. On success the caller owns `out` and releases it
 * with afm_manifest_release. */
afm_status afm_manifest_decode(const char *name, const uint8_t *data,
                               size_t size, uint64_t weights_size,
                               afm_manifest *out);
/* Every size of the manifest against what the code was compiled for:
 * AFM_ERR_FORMAT naming the field and both values when they disagree (the
 * code would overflow its buffers or compute the wrong thing). */
afm_status afm_manifest_check_facts(const char *name,
                                    const afm_manifest *manifest,
                                    const afm_model_facts *facts,
                                    uint64_t weights_size);

/* The manifest's num_tracks against the code's `afm_track_count` (NULL
 * when it exports none: no track blocks). */
afm_status afm_manifest_check_tracks(const char *name,
                                     const afm_manifest *manifest,
                                     const uint64_t *code_tracks);

/* The adapter slot table against the code's `afm_adapter_slots` (NULL when
 * the code exports none): AFM_ERR_FORMAT when they disagree. */
afm_status afm_manifest_check_adapter_slots(const char *name,
                                            const afm_manifest *manifest,
                                            const uint64_t *code_slots);

void afm_manifest_release(afm_manifest *manifest);

#endif /* AFM_RUNTIME_MANIFEST_H */
