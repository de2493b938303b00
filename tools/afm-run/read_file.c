/*===- read_file.c - a whole file into memory ---------------------*- C -*-===*/

#include "read_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

char *afm_run_read_file(const char *path, size_t *length) {
  FILE *file = fopen(path, "rb");
  if (!file)
    return NULL;
  char *data = NULL;
  size_t size = 0, capacity = 0;
  for (;;) {
    if (size + 4096 + 1 > capacity) {
      capacity = capacity ? capacity * 2 : 8192;
      char *grown = realloc(data, capacity);
      if (!grown) {
        free(data);
        fclose(file);
        errno = ENOMEM;
        return NULL;
      }
      data = grown;
    }
    size_t got = fread(data + size, 1, 4096, file);
    size += got;
    if (got < 4096)
      break;
  }
  int failed = ferror(file);
  fclose(file);
  if (failed) {
    free(data);
    errno = EIO;
    return NULL;
  }
  data[size] = '\0';
  *length = size;
  return data;
}
