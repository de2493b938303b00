/*===- error.h - statuses and the thread-local last error ----------*- C -*-===*
 *
 * Every failing path of the runtime ends in afm_error(): it formats the
 * calling thread's message (what afm_last_error() returns) and hands back
 * the status to return, so a check reads `return afm_error(...)`.
 *
 *===----------------------------------------------------------------------===*/

#ifndef AFM_RUNTIME_ERROR_H
#define AFM_RUNTIME_ERROR_H

#include "afm/runtime.h"

#include <stddef.h>

#if defined(__GNUC__) || defined(__clang__)
#define AFM_PRINTF_LIKE(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define AFM_PRINTF_LIKE(fmt, args)
#endif

/* Sets the calling thread's last-error message (printf-style) and returns
 * `status`. Messages longer than the buffer are cut, never overflowed. */
afm_status afm_error(afm_status status, const char *format, ...)
    AFM_PRINTF_LIKE(2, 3);

/* Copies `text` into `buf` (`size` bytes) with every byte outside
 * printable ASCII written as \xNN, cut to fit; returns `buf`. For strings
 * from a file that a message echoes: a corrupted name must not put control
 * sequences on the user's terminal. */
const char *afm_printable(const char *text, char *buf, size_t size);

#endif /* AFM_RUNTIME_ERROR_H */
