/*===- model.c - loading an .afmb file -------------------------------------===*
 *
 * map the file -> validate the layout -> decode the manifest -> load the
 * code -> resolve the entry points. Any failure unwinds what was done and
 * leaves the caller's `out` NULL.
 *
 *===----------------------------------------------------------------------===*/

#include "model.h"

#include "afm/adapter_format.h"

#include "arena.h"
#include "error.h"
#include "format.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

afm_status afm_map_file(const char *path, void **map, size_t *size) {
  *map = NULL;
  *size = 0;
  /* O_NONBLOCK: a FIFO must not block the open; S_ISREG rejects it below. */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return afm_error(AFM_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int err = errno;
    close(fd);
    return afm_error(AFM_ERR_IO, "%s: cannot stat: %s", path, strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return afm_error(AFM_ERR_IO, "%s: not a regular file%s", path,
                     S_ISDIR(st.st_mode) ? " (it is a directory)" : "");
  }
  if ((uint64_t)st.st_size > SIZE_MAX) {
    close(fd);
    return afm_error(AFM_ERR_IO, "%s: %llu bytes do not fit in memory", path,
                     (unsigned long long)st.st_size);
  }
  if (st.st_size > 0) {
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int err = errno;
      close(fd);
      return afm_error(AFM_ERR_IO, "%s: cannot map %llu bytes: %s", path,
                       (unsigned long long)st.st_size, strerror(err));
    }
    /* The file's page cache is then read in huge folios and mapped by
     * 2 MiB entries, where the file system supports them. */
    afm_advise_huge_pages(p, (size_t)st.st_size);
    *map = p;
    *size = (size_t)st.st_size;
  }
  close(fd);
  return AFM_OK;
}

static void destroy(afm_model *model) {
  afm_tokenizer_free(model->tokenizer);
  afm_code_free(model->code);
  afm_manifest_release(&model->manifest);
  if (model->map)
    munmap(model->map, model->map_size);
  free(model);
}

/* The tokenizer section, whose ids must all be rows of the logits. */
static afm_status loadTokenizer(afm_model *model, const char *path,
                                const uint8_t *data, size_t size) {
  afm_status status = afm_tokenizer_load(data, size, &model->tokenizer);
  if (status != AFM_OK) {
    char message[512];
    snprintf(message, sizeof(message), "%s", afm_last_error());
    return afm_error(status, "%s: tokenizer section: %s", path, message);
  }
  uint32_t limit = afm_tokenizer_id_limit(model->tokenizer);
  if (limit > model->manifest.vocab_size)
    return afm_error(AFM_ERR_FORMAT,
                     "%s: the tokenizer has ids up to %u, past the model's "
                     "vocab_size %u",
                     path, limit - 1, model->manifest.vocab_size);
  return AFM_OK;
}

static afm_status loadInto(afm_model *model, const char *path, uint32_t flags) {
  afm_status status = afm_map_file(path, &model->map, &model->map_size);
  if (status != AFM_OK)
    return status;
  const uint8_t *bytes = model->map;
  afm_layout layout;
  status = afm_layout_parse(path, bytes, model->map_size,
                            (flags & AFM_LOAD_VERIFY_WEIGHTS) != 0, &layout);
  if (status != AFM_OK)
    return status;
  model->weights = bytes + layout.weights.offset;
  model->weights_size = layout.weights.size;
  status = afm_manifest_decode(path, bytes + layout.manifest.offset,
                               (size_t)layout.manifest.size,
                               layout.weights.size, &model->manifest);
  if (status != AFM_OK)
    return status;
  status = afm_code_load(path, bytes + layout.code.offset,
                         (size_t)layout.code.size, &model->code);
  if (status != AFM_OK)
    return status;
  /* No size the runtime uses comes from the manifest alone. */
  afm_model_facts facts;
  status = afm_code_facts(model->code, path, &facts);
  if (status == AFM_OK)
    status = afm_manifest_check_facts(path, &model->manifest, &facts,
                                      model->weights_size);
  if (status == AFM_OK)
    status = afm_manifest_check_tracks(path, &model->manifest,
                                       afm_code_track_count(model->code));
  if (status == AFM_OK)
    status = afm_manifest_check_adapter_slots(
        path, &model->manifest, afm_code_adapter_slots(model->code));
  if (status != AFM_OK)
    return status;
  /* What an adapter compiled for this model depends on. */
  model->adapter_identity = afm_adapter_identity_start(layout.weights.checksum);
  for (size_t i = 0; i < model->manifest.adapter_slot_count; ++i) {
    const Afm__Manifest__AdapterSlot *slot = model->manifest.adapter_slots[i];
    model->adapter_identity = afm_adapter_identity_add_slot(
        model->adapter_identity, slot->name, slot->rows, slot->cols);
  }
  const Afm__Manifest__EntryPoint *prefill = model->manifest.prefill;
  const Afm__Manifest__EntryPoint *decode = model->manifest.decode;
  status = afm_code_entry(model->code, path, prefill->symbol, "PREFILL",
                          &model->prefill.fn);
  if (status == AFM_OK)
    status = afm_code_entry(model->code, path, decode->symbol, "DECODE",
                            &model->decode.fn);
  model->prefill.max_tokens = prefill->max_tokens;
  model->decode.max_tokens = decode->max_tokens;
  const Afm__Manifest__EntryPoint *verify = model->manifest.verify;
  if (status == AFM_OK && verify) {
    status = afm_code_entry(model->code, path, verify->symbol, "VERIFY",
                            &model->verify.fn);
    model->verify.max_tokens = verify->max_tokens;
  }
  if (status == AFM_OK && layout.has_tokenizer)
    status = loadTokenizer(model, path, bytes + layout.tokenizer.offset,
                           (size_t)layout.tokenizer.size);
  return status;
}

afm_status afm_model_load(const char *path, uint32_t flags, afm_model **out) {
  if (!out)
    return afm_error(AFM_ERR_ARGUMENT, "afm_model_load: `out` is NULL");
  *out = NULL;
  if (!path)
    return afm_error(AFM_ERR_ARGUMENT, "afm_model_load: `path` is NULL");
  if ((flags & ~(uint32_t)AFM_LOAD_VERIFY_WEIGHTS) != 0)
    return afm_error(AFM_ERR_ARGUMENT, "afm_model_load: unknown flags 0x%x",
                     flags & ~(uint32_t)AFM_LOAD_VERIFY_WEIGHTS);
  afm_model *model = calloc(1, sizeof(*model));
  if (!model)
    return afm_error(AFM_ERR_MEMORY, "%s: out of memory", path);
  atomic_init(&model->references, 1);
  afm_status status = loadInto(model, path, flags);
  if (status != AFM_OK) {
    destroy(model);
    return status;
  }
  *out = model;
  return AFM_OK;
}

void afm_model_retain(afm_model *model) {
  atomic_fetch_add(&model->references, 1);
}

void afm_model_release(afm_model *model) {
  if (model && atomic_fetch_sub(&model->references, 1) == 1)
    destroy(model);
}

void afm_model_free(afm_model *model) { afm_model_release(model); }

int32_t afm_model_vocab_size(const afm_model *model) {
  return model ? (int32_t)model->manifest.vocab_size : 0;
}

int32_t afm_model_context_length(const afm_model *model) {
  return model ? (int32_t)model->manifest.context_length : 0;
}

uint64_t afm_model_kv_bytes(const afm_model *model) {
  return model ? model->manifest.kv_cache_bytes : 0;
}

uint64_t afm_model_arena_bytes(const afm_model *model) {
  return model ? model->manifest.arena_bytes : 0;
}

uint64_t afm_model_weight_bytes(const afm_model *model) {
  return model ? model->weights_size : 0;
}

int32_t afm_model_num_tracks(const afm_model *model) {
  return model ? (int32_t)model->manifest.num_tracks : 0;
}

const char *afm_model_target(const afm_model *model) {
  return model ? model->manifest.target_name : "";
}

const afm_tokenizer *afm_model_tokenizer(const afm_model *model) {
  return model ? model->tokenizer : NULL;
}

const int32_t *afm_model_eos_ids(const afm_model *model, size_t *count) {
  if (count)
    *count = model ? model->manifest.eos_count : 0;
  return model && model->manifest.eos_count > 0 ? model->manifest.eos_ids
                                                : NULL;
}
