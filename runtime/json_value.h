/*===- json_value.h - a small JSON reader for schemas ---------------*- C -*-===*
 *
 * Parses JSON text (RFC 8259) into a tree the schema compiler walks:
 * objects keep their members in text order (a schema's properties are
 * emitted in that order), strings are decoded to UTF-8, numbers keep their
 * text. Nesting is limited, so hostile input cannot exhaust the stack.
 *
 *===----------------------------------------------------------------------===*/

#ifndef AFM_RUNTIME_JSON_VALUE_H
#define AFM_RUNTIME_JSON_VALUE_H

#include "afm/runtime.h"

#include <stddef.h>

#define JV_MAX_DEPTH 64

typedef enum jv_kind {
  JV_NULL,
  JV_FALSE,
  JV_TRUE,
  JV_NUMBER,
  JV_STRING,
  JV_ARRAY,
  JV_OBJECT
} jv_kind;

typedef struct jv_value jv_value;
struct jv_value {
  jv_kind kind;
  char *text; /* string: decoded UTF-8; number: its source text */
  size_t length;
  double number;
  /* array items, object member values (keys in `keys`) */
  jv_value *items;
  char **keys;
  size_t *key_lengths;
  size_t count;
};

/* Parses `length` bytes; on failure AFM_ERR_ARGUMENT with the line and
 * column, prefixed by `what`. */
afm_status jv_parse(const char *text, size_t length, const char *what,
                    jv_value *out);
void jv_free(jv_value *value);

/* The member `key` of an object, or NULL. */
const jv_value *jv_get(const jv_value *object, const char *key);

#endif /* AFM_RUNTIME_JSON_VALUE_H */
