/*===- map_file.h - a file mapped read-only, as models are ------*- C -*-===*/

#ifndef AFM_RUNTIME_MAP_FILE_H
#define AFM_RUNTIME_MAP_FILE_H

#include "afm/runtime.h"

#include <stddef.h>

/* Maps `path` read-only and private, with huge pages advised: how a model
 * (.afmb) and an adapter file are read. An empty file maps as (NULL, 0):
 * there is nothing to map, and the format check reports it. AFM_ERR_IO
 * naming the path. afm-bench maps a file this way to measure the read rate
 * of the very pages a model's weights are in (--read-file). */
afm_status afm_map_file(const char *path, void **map, size_t *size);

#endif /* AFM_RUNTIME_MAP_FILE_H */
