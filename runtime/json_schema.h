/*===- json_schema.h - a JSON Schema subset to a byte NFA ----------*- C -*-===*/

#ifndef AFM_RUNTIME_JSON_SCHEMA_H
#define AFM_RUNTIME_JSON_SCHEMA_H

#include "grammar_nfa.h"

/* Nested schemas deeper than this are refused. */
#define JS_MAX_DEPTH 32
/* minLength, maxLength, minItems, maxItems above this are refused. */
#define JS_MAX_COUNT 4096

/* The NFA of the compact JSON texts `length` bytes of JSON Schema accept
 * (docs/generation.md lists the subset); AFM_ERR_ARGUMENT naming the
 * keyword and its JSON pointer for anything outside it. */
afm_status js_compile(const char *schema, size_t length, nfa *out);

#endif /* AFM_RUNTIME_JSON_SCHEMA_H */
