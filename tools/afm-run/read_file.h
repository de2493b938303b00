/*===- read_file.h - a whole file into memory ---------------------*- C -*-===*
 *
 * afm-run reads whole files twice: the --json-schema file, and the ELF
 * images --profile resolves samples against. One reader for both.
 *
 *===----------------------------------------------------------------------===*/

#ifndef AFM_RUN_READ_FILE_H
#define AFM_RUN_READ_FILE_H

#include <stddef.h>

/* The whole of a file, NUL-terminated (the terminator not counted in
 * *length), malloc'ed for the caller to free(); NULL with errno set when
 * it cannot be opened or read, or memory runs out. */
char *afm_run_read_file(const char *path, size_t *length);

#endif /* AFM_RUN_READ_FILE_H */
