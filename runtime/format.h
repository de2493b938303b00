/*===- format.h - the .afmb header, section table and checksums ----*- C -*-===*
 *
 * Validates the container of docs/afmb-format.md over bytes already in
 * memory: header, section table, bounds, alignment, overlap and checksums.
 * Knows nothing about what is inside the sections.
 *
 *===----------------------------------------------------------------------===*/

#ifndef AFM_RUNTIME_FORMAT_H
#define AFM_RUNTIME_FORMAT_H

#include "afm/runtime.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct afm_section {
  uint32_t index; /* position in the section table */
  uint32_t kind;
  uint32_t alignment;
  uint64_t offset;
  uint64_t size;
  uint64_t checksum;
} afm_section;

/* The validated layout of one file. */
typedef struct afm_layout {
  uint16_t version_major;
  uint16_t version_minor;
  afm_section manifest;
  afm_section weights;
  afm_section code;
  /* The optional tokenizer section (format 1.1); zero when absent. */
  bool has_tokenizer;
  afm_section tokenizer;
} afm_layout;

/* Checks `size` bytes at `data` against the format and fills `out`. The
 * manifest, code and tokenizer checksums are always verified, the weights
 * checksum only with `verify_weights`. `name` (the path) starts every error message. */
afm_status afm_layout_parse(const char *name, const uint8_t *data,
                            uint64_t size, bool verify_weights,
                            afm_layout *out);

#endif /* AFM_RUNTIME_FORMAT_H */
