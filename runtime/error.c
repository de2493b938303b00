/*===- error.c - statuses and the thread-local last error -----------------===*/

#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* One buffer per thread: a message stays valid until the same thread fails
 * again, whatever other threads do. */
static _Thread_local char lastError[2048];

const char *afm_status_name(afm_status status) {
  switch (status) {
  case AFM_OK:
    return "AFM_OK";
  case AFM_ERR_IO:
    return "AFM_ERR_IO";
  case AFM_ERR_FORMAT:
    return "AFM_ERR_FORMAT";
  case AFM_ERR_VERSION:
    return "AFM_ERR_VERSION";
  case AFM_ERR_TARGET:
    return "AFM_ERR_TARGET";
  case AFM_ERR_CODE:
    return "AFM_ERR_CODE";
  case AFM_ERR_ARGUMENT:
    return "AFM_ERR_ARGUMENT";
  case AFM_ERR_CONTEXT_FULL:
    return "AFM_ERR_CONTEXT_FULL";
  case AFM_ERR_MEMORY:
    return "AFM_ERR_MEMORY";
  case AFM_ERR_STATE:
    return "AFM_ERR_STATE";
  case AFM_ERR_MISMATCH:
    return "AFM_ERR_MISMATCH";
  }
  return "AFM_ERR_UNKNOWN";
}

const char *afm_last_error(void) { return lastError; }

afm_status afm_error(afm_status status, const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(lastError, sizeof(lastError), format, args);
  va_end(args);
  return status;
}

const char *afm_printable(const char *text, char *buf, size_t size) {
  size_t used = 0;
  for (const unsigned char *p = (const unsigned char *)text; *p; ++p) {
    char escaped[5] = {(char)*p, '\0'};
    if (*p < 0x20 || *p > 0x7e || *p == '\\')
      snprintf(escaped, sizeof(escaped), "\\x%02x", *p);
    size_t length = strlen(escaped);
    if (used + length >= size)
      break;
    memcpy(buf + used, escaped, length);
    used += length;
  }
  buf[used] = '\0';
  return buf;
}
