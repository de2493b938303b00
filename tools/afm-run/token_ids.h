/*===- token_ids.h - "--prompt 1,2,3" for the tools that run models -*- C -*-===*
 *
 * afm-run, afm-run-mpi and afm-adapter-sessions all take prompts as token
 * ids on the command line; they parse them here, so that the three accept
 * and refuse the same strings.
 *
 *===----------------------------------------------------------------------===*/

#ifndef AFM_TOOLS_TOKEN_IDS_H
#define AFM_TOOLS_TOKEN_IDS_H

#include <stddef.h>
#include <stdint.h>

/* How many ids `text` would hold if well formed: its commas plus one (the
 * size to allocate before afm_parse_token_ids). */
size_t afm_count_token_ids(const char *text);

/* Parses `text`: one or more decimal integers in [0, INT32_MAX], each only
 * digits, separated by single commas (no sign, space, or empty item). On
 * success writes them to `out` (at most `capacity`) and returns how many;
 * otherwise returns -1. The runtime checks each id against the model's
 * vocabulary. */
long afm_parse_token_ids(const char *text, int32_t *out, size_t capacity);

#endif /* AFM_TOOLS_TOKEN_IDS_H */
