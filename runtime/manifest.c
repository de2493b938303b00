/*===- manifest.c - decoding and validating the manifest -------------------===*
 *
 * The manifest is the runtime's only source of sizes for memory it hands to
 * compiled code, so every bound is checked here, once, at load.
 *
 *===----------------------------------------------------------------------===*/

#include "manifest.h"

#include "afm/afmb_format.h"
#include "afm/kernel_abi.h"
#include "checked_math.h"
#include "error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned long long ull;

/* The container format and architecture this process can load code of. */
#if defined(__APPLE__)
#define AFM_HOST_OBJECT_FORMAT "macho"
#else
#define AFM_HOST_OBJECT_FORMAT "elf"
#endif

#if defined(__x86_64__) || defined(_M_X64)
#define AFM_HOST_ARCH "x86_64"
#elif defined(__aarch64__) || defined(_M_ARM64)
#define AFM_HOST_ARCH "aarch64"
#else
#define AFM_HOST_ARCH "unknown"
#endif

/* The architecture component of a target triple, with the aliases LLVM
 * accepts folded to one name ("arm64-apple-macosx" -> "aarch64"). */
static void tripleArch(const char *triple, char *arch, size_t archSize) {
  size_t length = strcspn(triple, "-");
  if (length >= archSize)
    length = archSize - 1;
  memcpy(arch, triple, length);
  arch[length] = '\0';
  if (strcmp(arch, "amd64") == 0)
    strcpy(arch, "x86_64");
  else if (strcmp(arch, "arm64") == 0)
    strcpy(arch, "aarch64");
}

static afm_status checkTarget(const char *name,
                              const Afm__Manifest__Target *target) {
  if (!target)
    return afm_error(AFM_ERR_FORMAT, "%s: the manifest has no target", name);
  char shown[2][128];
  if (strcmp(target->object_format, AFM_HOST_OBJECT_FORMAT) != 0)
    return afm_error(
        AFM_ERR_TARGET,
        "%s: the code is a '%s' object, but this platform loads "
        "'%s' objects",
        name, afm_printable(target->object_format, shown[0], sizeof(shown[0])),
        AFM_HOST_OBJECT_FORMAT);
  if (target->triple[0] == '\0')
    return afm_error(AFM_ERR_TARGET,
                     "%s: the manifest's target triple is empty", name);
  char arch[32];
  tripleArch(target->triple, arch, sizeof(arch));
  if (strcmp(arch, AFM_HOST_ARCH) != 0)
    return afm_error(AFM_ERR_TARGET,
                     "%s: the code is for %s (triple '%s'), but this process "
                     "runs on %s",
                     name, afm_printable(arch, shown[0], sizeof(shown[0])),
                     afm_printable(target->triple, shown[1], sizeof(shown[1])),
                     AFM_HOST_ARCH);
  return AFM_OK;
}

static afm_status checkModel(const char *name,
                             const Afm__Manifest__ModelInfo *model) {
  if (!model)
    return afm_error(AFM_ERR_FORMAT, "%s: the manifest has no model info",
                     name);
  if (model->vocab_size == 0 || model->vocab_size > INT32_MAX)
    return afm_error(AFM_ERR_FORMAT,
                     "%s: model vocab_size is %u, expected 1 to %d", name,
                     model->vocab_size, INT32_MAX);
  if (model->context_length == 0 || model->context_length > INT32_MAX)
    return afm_error(AFM_ERR_FORMAT,
                     "%s: model context_length is %u, expected 1 to %d", name,
                     model->context_length, INT32_MAX);
  return AFM_OK;
}

static const char *entryKindName(Afm__Manifest__EntryPoint__Kind kind) {
  switch (kind) {
  case AFM__MANIFEST__ENTRY_POINT__KIND__PREFILL:
    return "PREFILL";
  case AFM__MANIFEST__ENTRY_POINT__KIND__DECODE:
    return "DECODE";
  case AFM__MANIFEST__ENTRY_POINT__KIND__VERIFY:
    return "VERIFY";
  default:
    return "unknown";
  }
}

/* Every end-of-sequence id names a token of the vocabulary. */
static afm_status checkGeneration(const char *name,
                                  const Afm__Manifest__Manifest *m) {
  const Afm__Manifest__Generation *g = m->generation;
  if (!g)
    return AFM_OK;
  for (size_t i = 0; i < g->n_eos_ids; ++i)
    if (g->eos_ids[i] >= m->model->vocab_size)
      return afm_error(AFM_ERR_FORMAT,
                       "%s: generation eos_ids[%zu] is %u, not below "
                       "vocab_size %u",
                       name, i, g->eos_ids[i], m->model->vocab_size);
  return AFM_OK;
}

static const char *entrySymbol(Afm__Manifest__EntryPoint__Kind kind) {
  switch (kind) {
  case AFM__MANIFEST__ENTRY_POINT__KIND__PREFILL:
    return AFM_PREFILL_SYMBOL;
  case AFM__MANIFEST__ENTRY_POINT__KIND__DECODE:
    return AFM_DECODE_SYMBOL;
  default:
    return AFM_VERIFY_SYMBOL;
  }
}

/* Exactly one PREFILL and one DECODE entry, at most one VERIFY, each named
 * as the kernel ABI names it. */
static afm_status checkEntries(const char *name,
                               const Afm__Manifest__Manifest *m,
                               afm_manifest *out) {
  /* Index of the entry of each kind seen so far, SIZE_MAX for none. */
  size_t seen[3] = {SIZE_MAX, SIZE_MAX, SIZE_MAX};
  for (size_t i = 0; i < m->n_entry_points; ++i) {
    const Afm__Manifest__EntryPoint *e = m->entry_points[i];
    if (e->kind != AFM__MANIFEST__ENTRY_POINT__KIND__PREFILL &&
        e->kind != AFM__MANIFEST__ENTRY_POINT__KIND__DECODE &&
        e->kind != AFM__MANIFEST__ENTRY_POINT__KIND__VERIFY)
      return afm_error(AFM_ERR_FORMAT,
                       "%s: entry point %zu has unknown kind %d", name, i,
                       (int)e->kind);
    if (seen[e->kind] != SIZE_MAX)
      return afm_error(AFM_ERR_FORMAT,
                       "%s: entry points %zu and %zu are both %s; expected "
                       "exactly one",
                       name, seen[e->kind], i, entryKindName(e->kind));
    if (e->symbol[0] == '\0')
      return afm_error(AFM_ERR_FORMAT,
                       "%s: entry point %zu (%s) has an empty symbol", name, i,
                       entryKindName(e->kind));
    const char *expected = entrySymbol(e->kind);
    if (strcmp(e->symbol, expected) != 0) {
      char shown[128];
      return afm_error(AFM_ERR_FORMAT,
                       "%s: entry point %zu (%s) is named '%s'; the kernel ABI "
                       "names it '%s'",
                       name, i, entryKindName(e->kind),
                       afm_printable(e->symbol, shown, sizeof(shown)),
                       expected);
    }
    seen[e->kind] = i;
  }
  for (int kind = 0; kind < 2; ++kind)
    if (seen[kind] == SIZE_MAX)
      return afm_error(AFM_ERR_FORMAT, "%s: the manifest has no %s entry point",
                       name,
                       entryKindName((Afm__Manifest__EntryPoint__Kind)kind));
  out->prefill =
      m->entry_points[seen[AFM__MANIFEST__ENTRY_POINT__KIND__PREFILL]];
  out->decode = m->entry_points[seen[AFM__MANIFEST__ENTRY_POINT__KIND__DECODE]];
  size_t verify = seen[AFM__MANIFEST__ENTRY_POINT__KIND__VERIFY];
  out->verify = verify == SIZE_MAX ? NULL : m->entry_points[verify];
  char symbol[128];
  if (out->prefill->max_tokens < 1)
    return afm_error(
        AFM_ERR_FORMAT,
        "%s: the PREFILL entry point '%s' has max_tokens 0, "
        "expected at least 1",
        name, afm_printable(out->prefill->symbol, symbol, sizeof(symbol)));
  if (out->decode->max_tokens != 1)
    return afm_error(AFM_ERR_FORMAT,
                     "%s: the DECODE entry point '%s' has max_tokens %u, "
                     "expected 1",
                     name,
                     afm_printable(out->decode->symbol, symbol, sizeof(symbol)),
                     out->decode->max_tokens);
  if (out->verify && (out->verify->max_tokens < 2 ||
                      out->verify->max_tokens > AFM_MAX_VERIFY_TOKENS))
    return afm_error(AFM_ERR_FORMAT,
                     "%s: the VERIFY entry point has max_tokens %u, expected "
                     "2 to %d",
                     name, out->verify->max_tokens, AFM_MAX_VERIFY_TOKENS);
  return AFM_OK;
}

/* Every tensor inside the weights section, at a 64-byte aligned offset. */
static afm_status checkTensors(const char *name,
                               const Afm__Manifest__Manifest *m,
                               uint64_t weightsSize) {
  char shown[128];
  for (size_t i = 0; i < m->n_tensors; ++i) {
    const Afm__Manifest__Tensor *t = m->tensors[i];
    if (t->offset % AFMB_TENSOR_ALIGNMENT != 0)
      return afm_error(AFM_ERR_FORMAT,
                       "%s: tensor %zu ('%s') offset %llu is not %d-byte "
                       "aligned",
                       name, i, afm_printable(t->name, shown, sizeof(shown)),
                       (ull)t->offset, AFMB_TENSOR_ALIGNMENT);
    uint64_t end;
    if (!afm_checked_add(t->offset, t->size, &end) || end > weightsSize)
      return afm_error(AFM_ERR_FORMAT,
                       "%s: tensor %zu ('%s') at offset %llu of %llu bytes "
                       "ends past the weights section size %llu",
                       name, i, afm_printable(t->name, shown, sizeof(shown)),
                       (ull)t->offset, (ull)t->size, (ull)weightsSize);
  }
  return AFM_OK;
}

/* Every KV buffer inside the arena a session allocates. */
static afm_status checkKVCache(const char *name,
                               const Afm__Manifest__KVCacheLayout *kv,
                               uint64_t *arenaBytes, uint64_t *cacheBytes) {
  *arenaBytes = kv ? kv->arena_bytes : 0;
  *cacheBytes = kv && kv->n_buffers ? 0 : *arenaBytes;
  if (!kv)
    return AFM_OK;
  if (kv->state_bytes) {
    if (kv->n_buffers || kv->state_bytes > kv->arena_bytes)
      return afm_error(AFM_ERR_FORMAT,
                       "%s: the KV layout's state of %llu bytes must go "
                       "without buffers and inside the arena of %llu bytes",
                       name, (ull)kv->state_bytes, (ull)kv->arena_bytes);
    *cacheBytes = kv->state_bytes;
  }
  for (size_t i = 0; i < kv->n_buffers; ++i) {
    const Afm__Manifest__KVBuffer *b = kv->buffers[i];
    uint64_t end, scalesEnd;
    if (!afm_checked_add(b->offset, b->bytes, &end) || end > kv->arena_bytes)
      return afm_error(AFM_ERR_FORMAT,
                       "%s: KV buffer %zu (layer %u) at offset %llu of %llu "
                       "bytes ends past the arena of %llu bytes",
                       name, i, b->layer, (ull)b->offset, (ull)b->bytes,
                       (ull)kv->arena_bytes);
    if (!afm_checked_add(b->scales_offset, b->scales_bytes, &scalesEnd) ||
        scalesEnd > kv->arena_bytes)
      return afm_error(AFM_ERR_FORMAT,
                       "%s: KV buffer %zu (layer %u) has scales at offset "
                       "%llu of %llu bytes past the arena of %llu bytes",
                       name, i, b->layer, (ull)b->scales_offset,
                       (ull)b->scales_bytes, (ull)kv->arena_bytes);
    if (end > *cacheBytes)
      *cacheBytes = end;
    if (scalesEnd > *cacheBytes)
      *cacheBytes = scalesEnd;
  }
  return AFM_OK;
}

static int compareSlotOffsets(const void *a, const void *b) {
  const Afm__Manifest__AdapterSlot *x = *(const Afm__Manifest__AdapterSlot *const *)a;
  const Afm__Manifest__AdapterSlot *y = *(const Afm__Manifest__AdapterSlot *const *)b;
  return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static int compareSlotNames(const void *a, const void *b) {
  const Afm__Manifest__AdapterSlot *x = *(const Afm__Manifest__AdapterSlot *const *)a;
  const Afm__Manifest__AdapterSlot *y = *(const Afm__Manifest__AdapterSlot *const *)b;
  return strcmp(x->name, y->name);
}

/* Every adapter slot inside the arena after the caches, aligned, sized as
 * its shape says, none overlapping another or sharing its name: attaching
 * an adapter writes exactly these bytes. */
static afm_status checkAdapters(const char *name,
                                const Afm__Manifest__Manifest *m,
                                afm_manifest *out) {
  const Afm__Manifest__AdapterLayout *layout = m->adapters;
  if (!layout || layout->n_slots == 0)
    return AFM_OK;
  if (layout->n_slots > AFM_MAX_ADAPTER_SLOTS)
    return afm_error(AFM_ERR_FORMAT,
                     "%s: %zu adapter slots, more than the %d a model can "
                     "have",
                     name, layout->n_slots, AFM_MAX_ADAPTER_SLOTS);
  char shown[128];
  for (size_t i = 0; i < layout->n_slots; ++i) {
    const Afm__Manifest__AdapterSlot *slot = layout->slots[i];
    uint64_t bytes, end;
    const char *what = afm_printable(slot->name, shown, sizeof(shown));
    if (slot->name[0] == '\0' || slot->rows == 0 || slot->cols == 0 ||
        !afm_checked_mul((uint64_t)slot->rows * slot->cols, sizeof(float),
                         &bytes) ||
        bytes != slot->bytes)
      return afm_error(AFM_ERR_FORMAT,
                       "%s: adapter slot %zu ('%s') must be named and hold "
                       "rows x cols f32 (%u x %u), not %llu bytes",
                       name, i, what, slot->rows, slot->cols,
                       (ull)slot->bytes);
    if (slot->offset % AFMB_TENSOR_ALIGNMENT != 0 ||
        slot->offset < out->kv_cache_bytes ||
        !afm_checked_add(slot->offset, slot->bytes, &end) ||
        end > out->arena_bytes)
      return afm_error(AFM_ERR_FORMAT,
                       "%s: adapter slot %zu ('%s') at offset %llu of %llu "
                       "bytes is not a %d-byte aligned part of the arena "
                       "between the KV caches (%llu bytes) and its end "
                       "(%llu)",
                       name, i, what, (ull)slot->offset, (ull)slot->bytes,
                       AFMB_TENSOR_ALIGNMENT, (ull)out->kv_cache_bytes,
                       (ull)out->arena_bytes);
    /* The layout's rank is each A factor's rows and each B factor's
     * columns: afm_model_adapter_rank and afm-compile --adapter read it. */
    size_t length = strlen(slot->name);
    int isA = length > 7 && strcmp(slot->name + length - 7, ".lora_a") == 0;
    int isB = length > 7 && strcmp(slot->name + length - 7, ".lora_b") == 0;
    if (!isA && !isB)
      return afm_error(AFM_ERR_FORMAT,
                       "%s: adapter slot %zu ('%s') is neither a .lora_a "
                       "nor a .lora_b factor",
                       name, i, what);
    uint32_t rank = isA ? slot->rows : slot->cols;
    if (rank != layout->rank)
      return afm_error(AFM_ERR_FORMAT,
                       "%s: adapter slot %zu ('%s') has rank %u (its %s); "
                       "the layout says %u",
                       name, i, what, rank, isA ? "rows" : "columns",
                       layout->rank);
  }
  const Afm__Manifest__AdapterSlot **sorted =
      malloc(layout->n_slots * sizeof(*sorted));
  if (!sorted)
    return afm_error(AFM_ERR_MEMORY, "%s: out of memory checking %zu adapter "
                     "slots", name, layout->n_slots);
  memcpy(sorted, layout->slots, layout->n_slots * sizeof(*sorted));
  afm_status status = AFM_OK;
  char other[128];
  qsort(sorted, layout->n_slots, sizeof(*sorted), compareSlotOffsets);
  for (size_t i = 1; i < layout->n_slots && status == AFM_OK; ++i)
    if (sorted[i - 1]->offset + sorted[i - 1]->bytes > sorted[i]->offset)
      status = afm_error(AFM_ERR_FORMAT,
                         "%s: adapter slots '%s' and '%s' overlap", name,
                         afm_printable(sorted[i - 1]->name, shown,
                                       sizeof(shown)),
                         afm_printable(sorted[i]->name, other,
                                       sizeof(other)));
  if (status == AFM_OK) {
    qsort(sorted, layout->n_slots, sizeof(*sorted), compareSlotNames);
    for (size_t i = 1; i < layout->n_slots && status == AFM_OK; ++i)
      if (strcmp(sorted[i - 1]->name, sorted[i]->name) == 0)
        status = afm_error(AFM_ERR_FORMAT,
                           "%s: two adapter slots are named '%s'", name,
                           afm_printable(sorted[i]->name, shown,
                                         sizeof(shown)));
  }
  free(sorted);
  if (status != AFM_OK)
    return status;
  out->adapter_slots =
      (const Afm__Manifest__AdapterSlot *const *)layout->slots;
  out->adapter_slot_count = layout->n_slots;
  return AFM_OK;
}

afm_status afm_manifest_decode(const char *name, const uint8_t *data,
                               size_t size, uint64_t weights_size,
                               afm_manifest *out) {
  memset(out, 0, sizeof(*out));
  Afm__Manifest__Manifest *m =
      afm__manifest__manifest__unpack(NULL, size, data);
  if (!m)
    return afm_error(AFM_ERR_FORMAT,
                     "%s: the manifest section (%zu bytes) is not a valid "
                     "afm.manifest.Manifest protobuf",
                     name, size);
  out->message = m;
  afm_status status = AFM_OK;
  if (m->abi_version != AFM_KERNEL_ABI_VERSION)
    status = afm_error(AFM_ERR_VERSION,
                       "%s: the code was compiled for kernel ABI version %u; "
                       "this runtime implements version %d",
                       name, m->abi_version, AFM_KERNEL_ABI_VERSION);
  if (status == AFM_OK)
    status = checkTarget(name, m->target);
  if (status == AFM_OK)
    status = checkModel(name, m->model);
  if (status == AFM_OK)
    status = checkEntries(name, m, out);
  if (status == AFM_OK)
    status = checkTensors(name, m, weights_size);
  if (status == AFM_OK)
    status = checkKVCache(name, m->kv_cache, &out->arena_bytes,
                          &out->kv_cache_bytes);
  if (status == AFM_OK)
    status = checkAdapters(name, m, out);
  if (status == AFM_OK)
    status = checkGeneration(name, m);
  if (status != AFM_OK) {
    afm_manifest_release(out);
    return status;
  }
  out->target_name =
      m->target->name[0] != '\0' ? m->target->name : m->target->triple;
  out->vocab_size = m->model->vocab_size;
  out->context_length = m->model->context_length;
  out->num_tracks = m->model->num_tracks;
  if (m->generation) {
    out->eos_ids = (const int32_t *)m->generation->eos_ids;
    out->eos_count = m->generation->n_eos_ids;
  }
  return AFM_OK;
}

static afm_status disagree(const char *name, const char *field,
                           uint64_t manifest, uint64_t code) {
  return afm_error(AFM_ERR_FORMAT,
                   "%s: the manifest's %s is %llu, but the code was compiled "
                   "for %llu",
                   name, field, (ull)manifest, (ull)code);
}

afm_status afm_manifest_check_facts(const char *name,
                                    const afm_manifest *manifest,
                                    const afm_model_facts *facts,
                                    uint64_t weights_size) {
  if (manifest->vocab_size != facts->vocab_size)
    return disagree(name, "vocab_size", manifest->vocab_size,
                    facts->vocab_size);
  if (manifest->context_length != facts->context_length)
    return disagree(name, "context_length", manifest->context_length,
                    facts->context_length);
  if (manifest->prefill->max_tokens != facts->prefill_max_tokens)
    return disagree(name, "PREFILL max_tokens", manifest->prefill->max_tokens,
                    facts->prefill_max_tokens);
  if (manifest->decode->max_tokens != facts->decode_max_tokens)
    return disagree(name, "DECODE max_tokens", manifest->decode->max_tokens,
                    facts->decode_max_tokens);
  uint64_t verify = manifest->verify ? manifest->verify->max_tokens : 0;
  if (verify != facts->verify_max_tokens)
    return disagree(name, "VERIFY max_tokens (0: no VERIFY entry)", verify,
                    facts->verify_max_tokens);
  if (manifest->arena_bytes != facts->arena_bytes)
    return disagree(name, "kv_cache.arena_bytes", manifest->arena_bytes,
                    facts->arena_bytes);
  if (weights_size < facts->weights_bytes)
    return afm_error(AFM_ERR_FORMAT,
                     "%s: the weights section has %llu bytes, but the code "
                     "reads %llu",
                     name, (ull)weights_size, (ull)facts->weights_bytes);
  return AFM_OK;
}

afm_status afm_manifest_check_tracks(const char *name,
                                     const afm_manifest *manifest,
                                     const uint64_t *code_tracks) {
  uint64_t tracks = code_tracks ? *code_tracks : 0;
  if (manifest->num_tracks != tracks)
    return disagree(name, "model num_tracks (0: no track blocks)",
                    manifest->num_tracks, tracks);
  return AFM_OK;
}

afm_status afm_manifest_check_adapter_slots(const char *name,
                                            const afm_manifest *manifest,
                                            const uint64_t *code_slots) {
  uint64_t count = code_slots ? code_slots[0] : 0;
  if (count != manifest->adapter_slot_count)
    return disagree(name, "adapter slot count",
                    manifest->adapter_slot_count, count);
  char shown[128];
  for (size_t i = 0; i < manifest->adapter_slot_count; ++i) {
    const Afm__Manifest__AdapterSlot *slot = manifest->adapter_slots[i];
    const uint64_t *code = code_slots + 1 + 3 * i;
    if (slot->offset != code[0] || slot->rows != code[1] ||
        slot->cols != code[2])
      return afm_error(AFM_ERR_FORMAT,
                       "%s: the manifest puts adapter slot %zu ('%s') at "
                       "arena offset %llu as %u x %u, but the code reads it "
                       "at %llu as %llu x %llu",
                       name, i,
                       afm_printable(slot->name, shown, sizeof(shown)),
                       (ull)slot->offset, slot->rows, slot->cols,
                       (ull)code[0], (ull)code[1], (ull)code[2]);
  }
  return AFM_OK;
}

void afm_manifest_release(afm_manifest *manifest) {
  if (manifest->message)
    afm__manifest__manifest__free_unpacked(manifest->message, NULL);
  memset(manifest, 0, sizeof(*manifest));
}
