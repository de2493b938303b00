/*===- tokenizer_util.c - buffers, UTF-8 and hash maps of the tokenizer ---===*/

#include "error.h"
#include "tokenizer_internal.h"

#include <stdlib.h>
#include <string.h>

static afm_status grow(void **items, size_t *capacity, size_t needed,
                       size_t itemSize) {
  if (needed <= *capacity)
    return AFM_OK;
  size_t capacity2 = *capacity ? *capacity : 16;
  while (capacity2 < needed) {
    if (capacity2 > SIZE_MAX / 2 / itemSize)
      return afm_error(AFM_ERR_MEMORY,
                       "tokenizer: buffer of %zu items "
                       "too large",
                       needed);
    capacity2 *= 2;
  }
  void *grown = realloc(*items, capacity2 * itemSize);
  if (!grown)
    return afm_error(AFM_ERR_MEMORY, "tokenizer: out of memory (%zu bytes)",
                     capacity2 * itemSize);
  *items = grown;
  *capacity = capacity2;
  return AFM_OK;
}

afm_status tk_buf_append(tk_buf *buf, const void *data, size_t size) {
  /* One spare byte so that a result can be NUL-terminated in place. */
  afm_status status =
      grow((void **)&buf->data, &buf->capacity, buf->size + size + 1, 1);
  if (status != AFM_OK)
    return status;
  if (size)
    memcpy(buf->data + buf->size, data, size);
  buf->data[buf->size + size] = '\0';
  buf->size += size;
  return AFM_OK;
}

afm_status tk_spans_push(tk_spans *spans, size_t start, size_t length) {
  afm_status status = grow((void **)&spans->items, &spans->capacity,
                           spans->count + 1, sizeof(tk_span));
  if (status != AFM_OK)
    return status;
  spans->items[spans->count++] = (tk_span){start, length};
  return AFM_OK;
}

afm_status tk_ids_push(tk_ids *ids, int32_t id) {
  afm_status status = grow((void **)&ids->items, &ids->capacity, ids->count + 1,
                           sizeof(int32_t));
  if (status != AFM_OK)
    return status;
  ids->items[ids->count++] = id;
  return AFM_OK;
}

/*--- UTF-8 ----------------------------------------------------------------*/

/* How many bytes of the sequence at `s` are a valid prefix of a UTF-8
 * character (the maximal subpart), and in `complete` whether they make a
 * whole one. */
static size_t utf8Prefix(const unsigned char *s, size_t n, int *complete) {
  unsigned char c = s[0];
  size_t need;
  unsigned char lo = 0x80, hi = 0xbf;
  *complete = 0;
  if (c < 0x80) {
    *complete = 1;
    return 1;
  }
  if (c >= 0xc2 && c <= 0xdf)
    need = 1;
  else if (c >= 0xe0 && c <= 0xef) {
    need = 2;
    if (c == 0xe0)
      lo = 0xa0;
    else if (c == 0xed)
      hi = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    need = 3;
    if (c == 0xf0)
      lo = 0x90;
    else if (c == 0xf4)
      hi = 0x8f;
  } else
    return 0;
  size_t i = 1;
  for (; i <= need; ++i) {
    if (i >= n)
      return i;
    unsigned char b = s[i];
    if (i == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xbf))
      return i;
  }
  *complete = 1;
  return i;
}

size_t tk_utf8_valid_length(const unsigned char *s, size_t n) {
  int complete;
  size_t length = utf8Prefix(s, n, &complete);
  return complete ? length : 0;
}

size_t tk_utf8_check(const char *s, size_t n) {
  const unsigned char *u = (const unsigned char *)s;
  size_t i = 0;
  while (i < n) {
    if (u[i] < 0x80) {
      ++i;
      continue;
    }
    size_t length = tk_utf8_valid_length(u + i, n - i);
    if (!length)
      return i;
    i += length;
  }
  return n;
}

afm_status tk_utf8_append_lossy(tk_buf *out, const char *s, size_t n) {
  if (n == 0)
    return tk_buf_append(out, "", 0);
  const unsigned char *u = (const unsigned char *)s;
  size_t i = 0, run = 0; /* run: start of the valid bytes not yet copied */
  while (i < n) {
    int complete;
    size_t length = utf8Prefix(u + i, n - i, &complete);
    if (complete) {
      i += length;
      continue;
    }
    afm_status status = tk_buf_append(out, s + run, i - run);
    if (status == AFM_OK)
      status = tk_buf_append(out, "\xef\xbf\xbd", 3);
    if (status != AFM_OK)
      return status;
    i += length ? length : 1;
    run = i;
  }
  return tk_buf_append(out, s + run, n - run);
}

/*--- Hash maps ------------------------------------------------------------*/

uint64_t tk_hash_bytes(const void *data, size_t size) {
  /* FNV-1a, then a final mix so that the low bits (the slot) depend on
   * every byte. */
  const unsigned char *p = data;
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < size; ++i)
    h = (h ^ p[i]) * 0x100000001b3ull;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

int64_t tk_strmap_get(const tk_strmap *map, const char *key, size_t size) {
  if (!map->slots)
    return -1;
  for (size_t slot = tk_hash_bytes(key, size) & map->mask;;
       slot = (slot + 1) & map->mask) {
    uint32_t entry = map->slots[slot];
    if (!entry)
      return -1;
    --entry;
    if (map->lengths[entry] == size &&
        memcmp(map->blob + map->starts[entry], key, size) == 0)
      return map->ids[entry];
  }
}

static uint64_t mixPair(uint64_t key) {
  key ^= key >> 31;
  key *= 0x9e3779b97f4a7c15ull;
  key ^= key >> 29;
  return key;
}

int tk_pairmap_get(const tk_pairmap *map, uint32_t left, uint32_t right,
                   uint32_t *rank, uint32_t *merged) {
  if (!map->keys)
    return 0;
  uint64_t key = (((uint64_t)left << 32) | right) + 1;
  for (size_t slot = mixPair(key) & map->mask;; slot = (slot + 1) & map->mask) {
    uint64_t k = map->keys[slot];
    if (!k)
      return 0;
    if (k == key) {
      *rank = map->ranks[slot];
      *merged = map->merged[slot];
      return 1;
    }
  }
}

int tk_pairmap_insert(tk_pairmap *map, uint32_t left, uint32_t right,
                      uint32_t rank, uint32_t merged) {
  uint64_t key = (((uint64_t)left << 32) | right) + 1;
  for (size_t slot = mixPair(key) & map->mask;; slot = (slot + 1) & map->mask) {
    uint64_t k = map->keys[slot];
    if (k == key)
      return 0;
    if (!k) {
      map->keys[slot] = key;
      map->ranks[slot] = rank;
      map->merged[slot] = merged;
      return 1;
    }
  }
}
