/*===- afmb_format.h - constants of the .afmb file layout ----------*- C -*-===*
 *
 * The numbers of docs/afmb-format.md, shared by the writer (C++, lib/Package)
 * and the loader (C, runtime/) so that both sides agree by construction.
 * Plain C, constants and one inline hash; no declarations to link against.
 *
 *===----------------------------------------------------------------------===*/

#ifndef AFM_AFMB_FORMAT_H
#define AFM_AFMB_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "AFMB\0\r\n\x1a": the \0 and \r\n catch text-mode transfers. */
#define AFMB_MAGIC "AFMB\0\r\n\x1a"
#define AFMB_MAGIC_SIZE 8
#define AFMB_VERSION_MAJOR 1
#define AFMB_VERSION_MINOR 1

/* Header: 64 bytes at offset 0; field offsets. */
#define AFMB_HEADER_SIZE 64
#define AFMB_HEADER_VERSION_MAJOR 8
#define AFMB_HEADER_VERSION_MINOR 10
#define AFMB_HEADER_HEADER_SIZE 12
#define AFMB_HEADER_FILE_SIZE 16
#define AFMB_HEADER_TABLE_OFFSET 24
#define AFMB_HEADER_SECTION_COUNT 32
#define AFMB_HEADER_FLAGS 36
#define AFMB_HEADER_CHECKSUM 40
/* The header checksum covers bytes [0, AFMB_HEADER_CHECKSUM). */

#define AFMB_TABLE_ALIGNMENT 8
#define AFMB_MAX_SECTIONS 64

/* Section table entry: 32 bytes; field offsets. */
#define AFMB_SECTION_ENTRY_SIZE 32
#define AFMB_SECTION_KIND 0
#define AFMB_SECTION_ALIGNMENT 4
#define AFMB_SECTION_OFFSET 8
#define AFMB_SECTION_SIZE 16
#define AFMB_SECTION_CHECKSUM 24

enum {
  AFMB_SECTION_KIND_MANIFEST = 1,
  AFMB_SECTION_KIND_WEIGHTS = 2,
  AFMB_SECTION_KIND_CODE = 3,
  /* Optional (format 1.1): the runtime tokenizer,
     runtime/proto/tokenizer.proto. */
  AFMB_SECTION_KIND_TOKENIZER = 4
};

/* The weights section is page-aligned so it can be used in place; each
 * tensor inside it is 64-byte aligned. */
#define AFMB_WEIGHTS_ALIGNMENT 4096
#define AFMB_TENSOR_ALIGNMENT 64

/* FNV-1a 64 of `size` bytes, continuing from `hash` (start with
 * AFMB_FNV1A64_INIT). */
#define AFMB_FNV1A64_INIT UINT64_C(0xcbf29ce484222325)
static inline uint64_t afmb_fnv1a64_update(uint64_t hash, const uint8_t *data,
                                           size_t size) {
  for (size_t i = 0; i < size; ++i)
    hash = (hash ^ data[i]) * UINT64_C(0x100000001b3);
  return hash;
}

#ifdef __cplusplus
}
#endif

#endif /* AFM_AFMB_FORMAT_H */
