/*===- adapter.c - LoRA adapters attached to sessions at run time ----------===*
 *
 * An adapter file (include/afm/adapter_format.h) is read whole and checked
 * in the order a hostile file needs: header, sizes, checksum, manifest,
 * then every tensor against the model's slot table. Attaching copies the
 * factors into the session's slots (the compiled code reads them from the
 * arena like its KV caches); the slots the adapter does not fill are zero.
 *
 *===----------------------------------------------------------------------===*/

#include "adapter.h"

#include "afm/adapter_format.h"
#include "checked_math.h"
#include "error.h"
#include "manifest.pb-c.h"
#include "model.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

typedef unsigned long long ull;

struct afm_adapter {
  atomic_int references; /* the caller's, plus one per session using it */
  afm_model *model;      /* one reference held */
  void *map;             /* the whole file, mmapped read-only */
  size_t map_size;
  Afm__Manifest__AdapterManifest *manifest;
  /* For each of the model's slots, the adapter's values or NULL (zeros). */
  const float **values;
  uint64_t bytes;
};

static uint64_t readLE(const uint8_t *p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}

static afm_status checkHeader(const char *path, const uint8_t *data,
                              size_t size, uint64_t *manifestOffset,
                              uint64_t *manifestSize) {
  if (size < AFM_ADAPTER_HEADER_SIZE ||
      memcmp(data, AFM_ADAPTER_MAGIC, AFM_ADAPTER_MAGIC_SIZE) != 0)
    return afm_error(AFM_ERR_FORMAT,
                     "%s: not an afm adapter file (afm-compile --adapter "
                     "writes them)",
                     path);
  uint32_t version = (uint32_t)readLE(data + AFM_ADAPTER_HEADER_VERSION, 4);
  if (version != AFM_ADAPTER_VERSION)
    return afm_error(AFM_ERR_VERSION,
                     "%s: adapter format version %u; this runtime reads "
                     "version %d",
                     path, version, AFM_ADAPTER_VERSION);
  uint64_t headerSize = readLE(data + AFM_ADAPTER_HEADER_HEADER_SIZE, 4);
  uint64_t fileSize = readLE(data + AFM_ADAPTER_HEADER_FILE_SIZE, 8);
  if (headerSize != AFM_ADAPTER_HEADER_SIZE || fileSize != size)
    return afm_error(AFM_ERR_FORMAT,
                     "%s: the header says %llu header bytes and %llu file "
                     "bytes; the file has %zu (truncated or extended?)",
                     path, (ull)headerSize, (ull)fileSize, size);
  uint64_t stored = readLE(data + AFM_ADAPTER_HEADER_CHECKSUM, 8);
  uint64_t actual = afmb_fnv1a64_update(AFMB_FNV1A64_INIT, data,
                                        AFM_ADAPTER_HEADER_CHECKSUM);
  actual = afmb_fnv1a64_update(actual, data + AFM_ADAPTER_HEADER_CHECKSUM + 8,
                               size - AFM_ADAPTER_HEADER_CHECKSUM - 8);
  if (stored != actual)
    return afm_error(AFM_ERR_FORMAT,
                     "%s: checksum mismatch: the header says 0x%016llx, the "
                     "file hashes to 0x%016llx",
                     path, (ull)stored, (ull)actual);
  *manifestOffset = readLE(data + AFM_ADAPTER_HEADER_MANIFEST_OFFSET, 8);
  *manifestSize = readLE(data + AFM_ADAPTER_HEADER_MANIFEST_SIZE, 8);
  uint64_t end;
  if (*manifestOffset < AFM_ADAPTER_HEADER_SIZE ||
      !afm_checked_add(*manifestOffset, *manifestSize, &end) || end > size)
    return afm_error(AFM_ERR_FORMAT,
                     "%s: the manifest (offset %llu, %llu bytes) is not "
                     "inside the file",
                     path, (ull)*manifestOffset, (ull)*manifestSize);
  return AFM_OK;
}

/* The index of the model's slot called `name`, or -1. */
static long findSlot(const afm_manifest *m, const char *name) {
  for (size_t i = 0; i < m->adapter_slot_count; ++i)
    if (strcmp(m->adapter_slots[i]->name, name) == 0)
      return (long)i;
  return -1;
}

/* Every tensor names one of the model's slots (at most once), has its
 * shape, lies inside the file, aligned, and holds finite values. */
static afm_status checkTensors(const char *path, afm_adapter *adapter) {
  const afm_manifest *m = &adapter->model->manifest;
  const Afm__Manifest__AdapterManifest *am = adapter->manifest;
  const uint8_t *data = adapter->map;
  char shown[128];
  for (size_t i = 0; i < am->n_tensors; ++i) {
    const Afm__Manifest__AdapterTensor *t = am->tensors[i];
    const char *what = afm_printable(t->slot, shown, sizeof(shown));
    long slot = findSlot(m, t->slot);
    if (slot < 0)
      return afm_error(AFM_ERR_MISMATCH,
                       "%s: tensor %zu fills slot '%s', which the model does "
                       "not have",
                       path, i, what);
    const Afm__Manifest__AdapterSlot *s = m->adapter_slots[slot];
    if (adapter->values[slot])
      return afm_error(AFM_ERR_FORMAT, "%s: slot '%s' is filled twice", path,
                       what);
    if (t->rows != s->rows || t->cols != s->cols || t->bytes != s->bytes)
      return afm_error(AFM_ERR_MISMATCH,
                       "%s: tensor '%s' is %u x %u (%llu bytes); the model's "
                       "slot is %u x %u",
                       path, what, t->rows, t->cols, (ull)t->bytes, s->rows,
                       s->cols);
    uint64_t end;
    if (t->offset % AFM_ADAPTER_TENSOR_ALIGNMENT != 0 ||
        t->offset < AFM_ADAPTER_HEADER_SIZE ||
        !afm_checked_add(t->offset, t->bytes, &end) ||
        end > adapter->map_size)
      return afm_error(AFM_ERR_FORMAT,
                       "%s: tensor '%s' at offset %llu of %llu bytes is not "
                       "a %d-byte aligned part of the file",
                       path, what, (ull)t->offset, (ull)t->bytes,
                       AFM_ADAPTER_TENSOR_ALIGNMENT);
    const float *values = (const float *)(data + t->offset);
    for (uint64_t k = 0; k < t->bytes / sizeof(float); ++k)
      if (!(values[k] - values[k] == 0.0f))
        return afm_error(AFM_ERR_FORMAT,
                         "%s: tensor '%s' holds a non-finite value at %llu",
                         path, what, (ull)k);
    adapter->values[slot] = values;
    adapter->bytes += t->bytes;
  }
  return AFM_OK;
}

static void destroy(afm_adapter *adapter) {
  if (adapter->manifest)
    afm__manifest__adapter_manifest__free_unpacked(adapter->manifest, NULL);
  if (adapter->map)
    munmap(adapter->map, adapter->map_size);
  free(adapter->values);
  afm_model_release(adapter->model);
  free(adapter);
}

static afm_status loadInto(afm_adapter *adapter, const char *path) {
  afm_status status = afm_map_file(path, &adapter->map, &adapter->map_size);
  if (status != AFM_OK)
    return status;
  const uint8_t *data = adapter->map;
  uint64_t manifestOffset = 0, manifestSize = 0;
  status = checkHeader(path, data, adapter->map_size, &manifestOffset,
                       &manifestSize);
  if (status != AFM_OK)
    return status;
  adapter->manifest = afm__manifest__adapter_manifest__unpack(
      NULL, (size_t)manifestSize, data + manifestOffset);
  if (!adapter->manifest)
    return afm_error(AFM_ERR_FORMAT,
                     "%s: the manifest (%llu bytes) is not a valid "
                     "afm.manifest.AdapterManifest protobuf",
                     path, (ull)manifestSize);
  const afm_model *model = adapter->model;
  if (adapter->manifest->base_identity != model->adapter_identity)
    return afm_error(AFM_ERR_MISMATCH,
                     "%s: the adapter was compiled for another base model "
                     "(base identity 0x%016llx; this model is 0x%016llx: "
                     "other weights or other adapter slots); compile it "
                     "again with afm-compile --adapter --base for this model",
                     path, (ull)adapter->manifest->base_identity,
                     (ull)model->adapter_identity);
  adapter->values = calloc(model->manifest.adapter_slot_count,
                           sizeof(*adapter->values));
  if (!adapter->values)
    return afm_error(AFM_ERR_MEMORY, "%s: out of memory", path);
  return checkTensors(path, adapter);
}

int32_t afm_model_adapter_rank(const afm_model *model) {
  if (!model || model->manifest.adapter_slot_count == 0)
    return 0;
  return (int32_t)model->manifest.message->adapters->rank;
}

afm_status afm_adapter_load(afm_model *model, const char *path,
                            afm_adapter **out) {
  if (!out)
    return afm_error(AFM_ERR_ARGUMENT, "afm_adapter_load: `out` is NULL");
  *out = NULL;
  if (!model || !path)
    return afm_error(AFM_ERR_ARGUMENT,
                     "afm_adapter_load: `model` or `path` is NULL");
  if (model->manifest.adapter_slot_count == 0)
    return afm_error(AFM_ERR_STATE,
                     "%s: the model has no adapter slots (compile it with "
                     "afm-compile --adapter-rank)",
                     path);
  afm_adapter *adapter = calloc(1, sizeof(*adapter));
  if (!adapter)
    return afm_error(AFM_ERR_MEMORY, "%s: out of memory", path);
  atomic_init(&adapter->references, 1);
  afm_model_retain(model);
  adapter->model = model;
  afm_status status = loadInto(adapter, path);
  if (status != AFM_OK) {
    destroy(adapter);
    return status;
  }
  *out = adapter;
  return AFM_OK;
}

void afm_adapter_retain(afm_adapter *adapter) {
  atomic_fetch_add(&adapter->references, 1);
}

void afm_adapter_free(afm_adapter *adapter) {
  if (adapter && atomic_fetch_sub(&adapter->references, 1) == 1)
    destroy(adapter);
}

uint64_t afm_adapter_bytes(const afm_adapter *adapter) {
  return adapter ? adapter->bytes : 0;
}

const afm_model *afm_adapter_model(const afm_adapter *adapter) {
  return adapter->model;
}

void afm_adapter_write_slots(const afm_model *model,
                             const afm_adapter *adapter, uint8_t *arena) {
  const afm_manifest *m = &model->manifest;
  for (size_t i = 0; i < m->adapter_slot_count; ++i) {
    const Afm__Manifest__AdapterSlot *slot = m->adapter_slots[i];
    const float *values = adapter ? adapter->values[i] : NULL;
    if (values)
      memcpy(arena + slot->offset, values, (size_t)slot->bytes);
    else
      memset(arena + slot->offset, 0, (size_t)slot->bytes);
  }
}
