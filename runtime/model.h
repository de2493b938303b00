/*===- model.h - the loaded model, shared by the sessions on it ---*- C -*-===*/

#ifndef AFM_RUNTIME_MODEL_H
#define AFM_RUNTIME_MODEL_H

#include "afm/kernel_abi.h"
#include "afm/runtime.h"
#include "afm/tokenizer.h"
#include "code_loader.h"
#include "manifest.h"
#include "map_file.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct afm_entry {
  afm_entry_fn fn;
  uint32_t max_tokens; /* the tokens buffer the entry reads */
} afm_entry;

/* Read-only once loaded; only the reference count changes. */
struct afm_model {
  atomic_int references; /* the caller's, plus one per session */
  void *map;             /* the whole file, mmapped read-only */
  size_t map_size;
  const uint8_t *weights; /* inside `map` */
  uint64_t weights_size;
  afm_manifest manifest;
  afm_code *code;
  afm_entry prefill;
  afm_entry decode;
  afm_entry verify; /* max_tokens 0: the model has none */
  afm_tokenizer *tokenizer; /* from the optional tokenizer section */
  /* include/afm/adapter_format.h: the weights checksum and the adapter
   * slots, hashed; an adapter file must name the same. */
  uint64_t adapter_identity;
};

void afm_model_retain(afm_model *model);
/* Drops one reference; the last one unloads the model. */
void afm_model_release(afm_model *model);

#endif /* AFM_RUNTIME_MODEL_H */
