/*===- code_loader.h - the code section as a shared library --------*- C -*-===*
 *
 * The code section is a shared library in memory. dlopen needs a path, so
 * the bytes go to an anonymous file first: a memfd opened through
 * /proc/self/fd on Linux, else a private temporary file that is unlinked
 * as soon as it is loaded.
 *
 *===----------------------------------------------------------------------===*/

#ifndef AFM_RUNTIME_CODE_LOADER_H
#define AFM_RUNTIME_CODE_LOADER_H

#include "afm/kernel_abi.h"
#include "afm/runtime.h"

#include <stddef.h>
#include <stdint.h>

typedef struct afm_code afm_code;

/* Loads `size` bytes of shared library. `name` starts error messages. */
afm_status afm_code_load(const char *name, const uint8_t *image, size_t size,
                         afm_code **out);

/* Looks up entry point `symbol`; `role` ("PREFILL") names it in errors. */
afm_status afm_code_entry(afm_code *code, const char *name, const char *symbol,
                          const char *role, afm_entry_fn *out);

/* Reads the record of what the code was compiled for (kernel_abi.h's
 * afm_model_facts); AFM_ERR_CODE when the code exports none or one of
 * another ABI version. */
afm_status afm_code_facts(afm_code *code, const char *name,
                          afm_model_facts *out);

/* The code's `afm_adapter_slots` table (kernel_abi.h), or NULL when it
 * exports none (a model without adapter slots). */
const uint64_t *afm_code_adapter_slots(afm_code *code);

/* The code's `afm_track_count` (kernel_abi.h), or NULL when it exports
 * none (a model without track blocks). */
const uint64_t *afm_code_track_count(afm_code *code);

void afm_code_free(afm_code *code);

#endif /* AFM_RUNTIME_CODE_LOADER_H */
