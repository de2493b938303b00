/*===- adapter_format.h - the run-time adapter file ------------------*- C -*-===*
 *
 * An adapter file holds the factors of one LoRA adapter, compiled against
 * one base .afmb by `afm-compile --adapter`, for the runtime to copy into a
 * session's adapter slots (afm_session_set_adapter).
 *
 *   header    64 bytes at offset 0 (fields below, little-endian)
 *   manifest  afm.manifest.AdapterManifest (runtime/proto/manifest.proto)
 *   tensors   f32 row-major, each 64-byte aligned, at the offsets the
 *             manifest gives
 *
 * The checksum is FNV-1a 64 over the whole file except its own 8 bytes.
 * The base identity is a hash of what the adapter depends on: the base's
 * weights (the weights section's checksum) and its slot table (each slot's
 * name and shape, in manifest order); any other difference (target,
 * context, KV format) leaves the adapter usable.
 *
 *===----------------------------------------------------------------------===*/

#ifndef AFM_ADAPTER_FORMAT_H
#define AFM_ADAPTER_FORMAT_H

#include "afm/afmb_format.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AFM_ADAPTER_MAGIC "AFMADPT\0"
#define AFM_ADAPTER_MAGIC_SIZE 8
#define AFM_ADAPTER_VERSION 1

#define AFM_ADAPTER_HEADER_SIZE 64
#define AFM_ADAPTER_HEADER_VERSION 8        /* u32 */
#define AFM_ADAPTER_HEADER_HEADER_SIZE 12   /* u32 */
#define AFM_ADAPTER_HEADER_FILE_SIZE 16     /* u64 */
#define AFM_ADAPTER_HEADER_MANIFEST_OFFSET 24
#define AFM_ADAPTER_HEADER_MANIFEST_SIZE 32
#define AFM_ADAPTER_HEADER_CHECKSUM 40      /* u64 */
/* Bytes 48..63 are reserved and zero. */
#define AFM_ADAPTER_TENSOR_ALIGNMENT 64

/* The identity hash, step by step: start with the base's weights checksum,
 * then add each slot in manifest order. */
static inline uint64_t afm_adapter_identity_start(uint64_t weights_checksum) {
  uint8_t bytes[8];
  for (int i = 0; i < 8; ++i)
    bytes[i] = (uint8_t)(weights_checksum >> (8 * i));
  return afmb_fnv1a64_update(AFMB_FNV1A64_INIT, bytes, sizeof(bytes));
}

static inline uint64_t afm_adapter_identity_add_slot(uint64_t hash,
                                                     const char *name,
                                                     uint32_t rows,
                                                     uint32_t cols) {
  uint8_t shape[8];
  for (int i = 0; i < 4; ++i) {
    shape[i] = (uint8_t)(rows >> (8 * i));
    shape[4 + i] = (uint8_t)(cols >> (8 * i));
  }
  /* The terminating NUL separates the name from the shape. */
  hash = afmb_fnv1a64_update(hash, (const uint8_t *)name, strlen(name) + 1);
  return afmb_fnv1a64_update(hash, shape, sizeof(shape));
}

#ifdef __cplusplus
}
#endif

#endif /* AFM_ADAPTER_FORMAT_H */
