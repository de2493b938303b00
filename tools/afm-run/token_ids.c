/*===- token_ids.c - "--prompt 1,2,3" for the tools that run models -------===*/

#include "token_ids.h"

size_t afm_count_token_ids(const char *text) {
  size_t commas = 0;
  for (const char *p = text; *p; ++p)
    commas += *p == ',';
  return commas + 1;
}

long afm_parse_token_ids(const char *text, int32_t *out, size_t capacity) {
  size_t count = 0;
  const char *p = text;
  for (;;) {
    if (*p < '0' || *p > '9' || count == capacity)
      return -1;
    int64_t id = 0;
    for (; *p >= '0' && *p <= '9'; ++p) {
      id = id * 10 + (*p - '0');
      if (id > INT32_MAX)
        return -1;
    }
    out[count++] = (int32_t)id;
    if (*p == '\0')
      return (long)count;
    if (*p != ',')
      return -1;
    ++p;
  }
}
