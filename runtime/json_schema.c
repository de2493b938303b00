/*===- json_schema.c - a JSON Schema subset to a byte NFA -----------------===*
 *
 * The schema is walked once, each subschema becoming a Thompson fragment
 * (grammar_nfa.h) of the compact JSON texts it accepts: no whitespace
 * anywhere, object properties in the schema's order (optional ones may be
 * left out), strings of any JSON characters and escapes, numbers in a
 * range that survives JSON.parse exactly. With no $ref the language is
 * regular; bounded counts (maxLength, maxItems) unroll into copies, so
 * they are capped (JS_MAX_COUNT) and so is the automaton (NFA_MAX_STATES).
 * Anything outside the subset is an error naming the keyword and its JSON
 * pointer: a keyword that was silently ignored would let the output break
 * the schema.
 *
 *===----------------------------------------------------------------------===*/

#include "json_schema.h"

#include "error.h"
#include "json_value.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
  T_NULL = 1,
  T_BOOLEAN = 2,
  T_INTEGER = 4,
  T_NUMBER = 8,
  T_STRING = 16,
  T_ARRAY = 32,
  T_OBJECT = 64
};

static const char *const typeNames[] = {"null",   "boolean", "integer",
                                        "number", "string",  "array",
                                        "object"};

typedef struct ctx {
  nfa *n;
  char path[1024]; /* JSON pointer of the subschema, "#" at the root */
  size_t length;
  int depth;
} ctx;

static afm_status schemaError(const ctx *c, const char *format, ...)
    AFM_PRINTF_LIKE(2, 3);
static afm_status schemaError(const ctx *c, const char *format, ...) {
  char message[512], where[512];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  return afm_error(AFM_ERR_ARGUMENT, "json schema: %s at %s", message,
                   afm_printable(c->path, where, sizeof(where)));
}

/* Appends "/segment" to the path; returns the length to go back to. */
static size_t pushPath(ctx *c, const char *segment) {
  size_t saved = c->length;
  int wrote = snprintf(c->path + c->length, sizeof(c->path) - c->length, "/%s",
                       segment);
  if (wrote > 0)
    c->length += (size_t)wrote < sizeof(c->path) - c->length
                     ? (size_t)wrote
                     : sizeof(c->path) - c->length - 1;
  return saved;
}

static void popPath(ctx *c, size_t saved) {
  c->length = saved;
  c->path[saved] = '\0';
}

static afm_status checkOverflow(const ctx *c) {
  if (!c->n->overflow)
    return AFM_OK;
  if (c->n->out_of_memory)
    return afm_error(AFM_ERR_MEMORY, "json schema: out of memory");
  return schemaError(c, "the automaton exceeds %u states (bounded strings "
                        "and arrays unroll: lower maxLength or maxItems)",
                     NFA_MAX_STATES);
}

/*---------------------------------------------------- canonical JSON text --*/

typedef struct sbuf {
  char *data;
  size_t size, capacity;
  int failed;
} sbuf;

static void put(sbuf *b, const char *s, size_t n) {
  if (b->failed)
    return;
  if (b->size + n + 1 > b->capacity) {
    size_t capacity = b->capacity ? b->capacity : 64;
    while (capacity < b->size + n + 1)
      capacity *= 2;
    char *grown = realloc(b->data, capacity);
    if (!grown) {
      b->failed = 1;
      return;
    }
    b->data = grown;
    b->capacity = capacity;
  }
  memcpy(b->data + b->size, s, n);
  b->size += n;
  b->data[b->size] = '\0';
}

/* A JSON string literal of `s`: quotes, backslashes and control
 * characters escaped, everything else as its UTF-8. */
static void putString(sbuf *b, const char *s, size_t n) {
  put(b, "\"", 1);
  for (size_t i = 0; i < n; ++i) {
    unsigned char ch = (unsigned char)s[i];
    char escape[8];
    if (ch == '"' || ch == '\\') {
      escape[0] = '\\';
      escape[1] = (char)ch;
      put(b, escape, 2);
    } else if (ch < 0x20) {
      snprintf(escape, sizeof(escape), "\\u%04x", ch);
      put(b, escape, 6);
    } else
      put(b, (const char *)&s[i], 1);
  }
  put(b, "\"", 1);
}

/* The compact text of a value (an enum or const member). */
static void putValue(sbuf *b, const jv_value *v) {
  switch (v->kind) {
  case JV_NULL:
    put(b, "null", 4);
    break;
  case JV_TRUE:
    put(b, "true", 4);
    break;
  case JV_FALSE:
    put(b, "false", 5);
    break;
  case JV_NUMBER:
    put(b, v->text, v->length);
    break;
  case JV_STRING:
    putString(b, v->text, v->length);
    break;
  case JV_ARRAY:
    put(b, "[", 1);
    for (size_t i = 0; i < v->count; ++i) {
      if (i)
        put(b, ",", 1);
      putValue(b, &v->items[i]);
    }
    put(b, "]", 1);
    break;
  case JV_OBJECT:
    put(b, "{", 1);
    for (size_t i = 0; i < v->count; ++i) {
      if (i)
        put(b, ",", 1);
      putString(b, v->keys[i], v->key_lengths[i]);
      put(b, ":", 1);
      putValue(b, &v->items[i]);
    }
    put(b, "}", 1);
    break;
  }
}

/* One literal fragment of the value's text. */
static afm_status literal(ctx *c, const jv_value *v, nfa_frag *out) {
  sbuf b = {NULL, 0, 0, 0};
  putValue(&b, v);
  if (b.failed) {
    free(b.data);
    return afm_error(AFM_ERR_MEMORY, "json schema: out of memory");
  }
  *out = nfa_bytes(c->n, b.data, b.size);
  free(b.data);
  return checkOverflow(c);
}

/*---------------------------------------------------------- the fragments --*/

typedef afm_status (*emitFn)(ctx *c, const void *arg, nfa_frag *out);

/* `min` to `max` copies of what `emit` makes (max SIZE_MAX: unbounded). */
static afm_status repeat(ctx *c, emitFn emit, const void *arg, size_t min,
                         size_t max, nfa_frag *out) {
  nfa_frag f = nfa_empty(c->n), x;
  afm_status status = AFM_OK;
  for (size_t i = 0; i < min && status == AFM_OK; ++i)
    if ((status = emit(c, arg, &x)) == AFM_OK)
      f = nfa_concat(c->n, f, x);
  if (status == AFM_OK && max == SIZE_MAX) {
    if ((status = emit(c, arg, &x)) == AFM_OK)
      f = nfa_concat(c->n, f, nfa_star(c->n, x));
  } else if (status == AFM_OK) {
    nfa_frag tail = nfa_empty(c->n);
    for (size_t i = min; i < max && status == AFM_OK; ++i)
      if ((status = emit(c, arg, &x)) == AFM_OK)
        tail = nfa_optional(c->n, nfa_concat(c->n, x, tail));
    f = nfa_concat(c->n, f, tail);
  }
  *out = f;
  return status == AFM_OK ? checkOverflow(c) : status;
}

static afm_status digit(ctx *c, const void *arg, nfa_frag *out) {
  *out = nfa_range(c->n, '0', '9');
  return checkOverflow(c);
}

static void hexSet(uint32_t set[8]) {
  nfa_set_add(set, '0', '9');
  nfa_set_add(set, 'a', 'f');
  nfa_set_add(set, 'A', 'F');
}

/* One character of a JSON string: printable ASCII but '"' and '\\', a
 * valid UTF-8 sequence (Unicode table 3-7), or an escape. \u escapes of
 * surrogates are left out, so each unit is one code point, as
 * minLength and maxLength count. */
static afm_status stringUnit(ctx *c, const void *arg, nfa_frag *out) {
  nfa *n = c->n;
  uint32_t ascii[8] = {0};
  nfa_set_add(ascii, 0x20, 0x7f);
  ascii['"' >> 5] &= ~(1u << ('"' & 31));
  ascii['\\' >> 5] &= ~(1u << ('\\' & 31));
  nfa_frag f = nfa_class(n, ascii);
  /* Multi-byte UTF-8 (Unicode's table 3-7): the lead bytes, the range of
   * the second byte, and how many continuation bytes follow it. */
  static const unsigned char rows[][5] = {
      {0xc2, 0xdf, 0x80, 0xbf, 0}, {0xe0, 0xe0, 0xa0, 0xbf, 1},
      {0xe1, 0xec, 0x80, 0xbf, 1}, {0xed, 0xed, 0x80, 0x9f, 1},
      {0xee, 0xef, 0x80, 0xbf, 1}, {0xf0, 0xf0, 0x90, 0xbf, 2},
      {0xf1, 0xf3, 0x80, 0xbf, 2}, {0xf4, 0xf4, 0x80, 0x8f, 2}};
  for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); ++r) {
    nfa_frag seq = nfa_concat(n, nfa_range(n, rows[r][0], rows[r][1]),
                              nfa_range(n, rows[r][2], rows[r][3]));
    for (unsigned k = 0; k < rows[r][4]; ++k)
      seq = nfa_concat(n, seq, nfa_range(n, 0x80, 0xbf));
    f = nfa_alt(n, f, seq);
  }
  /* Escapes. */
  uint32_t simple[8] = {0}, hex[8] = {0}, hexNoD[8] = {0}, low[8] = {0};
  for (const char *e = "\"\\/bfnrt"; *e; ++e)
    nfa_set_add(simple, (unsigned char)*e, (unsigned char)*e);
  hexSet(hex);
  hexSet(hexNoD);
  hexNoD['d' >> 5] &= ~(1u << ('d' & 31));
  hexNoD['D' >> 5] &= ~(1u << ('D' & 31));
  nfa_set_add(low, '0', '7');
  uint32_t dD[8] = {0};
  nfa_set_add(dD, 'd', 'd');
  nfa_set_add(dD, 'D', 'D');
  nfa_frag u1 = nfa_concat(
      n, nfa_concat(n, nfa_concat(n, nfa_class(n, hexNoD), nfa_class(n, hex)),
                    nfa_class(n, hex)),
      nfa_class(n, hex));
  nfa_frag u2 = nfa_concat(
      n, nfa_concat(n, nfa_concat(n, nfa_class(n, dD), nfa_class(n, low)),
                    nfa_class(n, hex)),
      nfa_class(n, hex));
  nfa_frag escape = nfa_concat(
      n, nfa_bytes(n, "\\", 1),
      nfa_alt(n, nfa_class(n, simple),
              nfa_concat(n, nfa_bytes(n, "u", 1), nfa_alt(n, u1, u2))));
  *out = nfa_alt(n, f, escape);
  return checkOverflow(c);
}

/* -?(0|[1-9][0-9]{0,14}): at most 15 digits, exact in a double. */
static nfa_frag integerFrag(ctx *c) {
  nfa *n = c->n;
  nfa_frag digits;
  repeat(c, digit, NULL, 0, 14, &digits);
  nfa_frag whole = nfa_alt(n, nfa_bytes(n, "0", 1),
                           nfa_concat(n, nfa_range(n, '1', '9'), digits));
  return nfa_concat(n, nfa_optional(n, nfa_bytes(n, "-", 1)), whole);
}

/* An integer, then (\.[0-9]{1,15})?([eE][+-]?[0-9]{1,2})?: finite after
 * JSON.parse. */
static nfa_frag numberFrag(ctx *c) {
  nfa *n = c->n;
  nfa_frag fraction, exponent;
  repeat(c, digit, NULL, 1, 15, &fraction);
  repeat(c, digit, NULL, 1, 2, &exponent);
  uint32_t e[8] = {0}, sign[8] = {0};
  nfa_set_add(e, 'e', 'e');
  nfa_set_add(e, 'E', 'E');
  nfa_set_add(sign, '+', '+');
  nfa_set_add(sign, '-', '-');
  nfa_frag f = integerFrag(c);
  f = nfa_concat(
      n, f, nfa_optional(n, nfa_concat(n, nfa_bytes(n, ".", 1), fraction)));
  return nfa_concat(
      n, f,
      nfa_optional(n, nfa_concat(n,
                                 nfa_concat(n, nfa_class(n, e),
                                            nfa_optional(n, nfa_class(n, sign))),
                                 exponent)));
}

static afm_status emitSchema(ctx *c, const jv_value *schema, nfa_frag *out);

/* A non-negative whole number keyword, at most JS_MAX_COUNT. */
static afm_status countKeyword(ctx *c, const jv_value *schema,
                               const char *key, size_t *value) {
  const jv_value *v = jv_get(schema, key);
  if (!v)
    return AFM_OK;
  size_t saved = pushPath(c, key);
  afm_status status = AFM_OK;
  if (v->kind != JV_NUMBER || !(v->number >= 0))
    status = schemaError(c, "'%s' must be a whole number >= 0", key);
  else if (v->number > JS_MAX_COUNT)
    status = schemaError(c, "'%s' is %s, more than the %d supported (the "
                            "automaton unrolls bounded counts)",
                         key, v->text, JS_MAX_COUNT);
  else if (floor(v->number) != v->number)
    status = schemaError(c, "'%s' must be a whole number >= 0", key);
  else
    *value = (size_t)v->number;
  popPath(c, saved);
  return status;
}

/* A pair of count keywords (minItems/maxItems, minLength/maxLength):
 * *min 0 and *max SIZE_MAX when absent; min above max is an error. */
static afm_status countBounds(ctx *c, const jv_value *schema,
                              const char *minKey, const char *maxKey,
                              size_t *min, size_t *max) {
  *min = 0;
  *max = SIZE_MAX;
  afm_status status = countKeyword(c, schema, minKey, min);
  if (status == AFM_OK)
    status = countKeyword(c, schema, maxKey, max);
  if (status != AFM_OK)
    return status;
  if (*min > *max)
    return schemaError(c, "%s %zu is more than %s %zu", minKey, *min, maxKey,
                       *max);
  return AFM_OK;
}

static afm_status arrayItem(ctx *c, const void *arg, nfa_frag *out) {
  const jv_value *items = arg;
  size_t saved = pushPath(c, "items");
  afm_status status = emitSchema(c, items, out);
  popPath(c, saved);
  return status;
}

static afm_status commaItem(ctx *c, const void *arg, nfa_frag *out) {
  nfa_frag item;
  afm_status status = arrayItem(c, arg, &item);
  *out = nfa_concat(c->n, nfa_bytes(c->n, ",", 1), item);
  return status;
}

static afm_status arrayFrag(ctx *c, const jv_value *schema, nfa_frag *out) {
  const jv_value *items = jv_get(schema, "items");
  if (!items)
    return schemaError(c, "an array needs 'items' (an array of any JSON "
                          "values could nest without bound)");
  if (items->kind != JV_OBJECT) {
    size_t saved = pushPath(c, "items");
    afm_status status = schemaError(
        c, "'items' must be a schema object (tuple forms are not supported)");
    popPath(c, saved);
    return status;
  }
  size_t min, max;
  afm_status status = countBounds(c, schema, "minItems", "maxItems", &min, &max);
  if (status != AFM_OK)
    return status;
  nfa *n = c->n;
  nfa_frag body;
  if (max == 0)
    body = nfa_empty(n);
  else {
    nfa_frag first, rest;
    status = arrayItem(c, items, &first);
    if (status == AFM_OK)
      status = repeat(c, commaItem, items, min > 0 ? min - 1 : 0,
                      max == SIZE_MAX ? SIZE_MAX : max - 1, &rest);
    if (status != AFM_OK)
      return status;
    body = nfa_concat(n, first, rest);
    if (min == 0)
      body = nfa_optional(n, body);
  }
  *out = nfa_concat(n, nfa_concat(n, nfa_bytes(n, "[", 1), body),
                    nfa_bytes(n, "]", 1));
  return checkOverflow(c);
}

static afm_status stringFrag(ctx *c, const jv_value *schema, nfa_frag *out) {
  size_t min, max;
  afm_status status =
      countBounds(c, schema, "minLength", "maxLength", &min, &max);
  if (status != AFM_OK)
    return status;
  nfa_frag body;
  status = repeat(c, stringUnit, NULL, min, max, &body);
  if (status != AFM_OK)
    return status;
  nfa *n = c->n;
  *out = nfa_concat(n, nfa_concat(n, nfa_bytes(n, "\"", 1), body),
                    nfa_bytes(n, "\"", 1));
  return checkOverflow(c);
}

/* Properties in the schema's order, each required or optional. Two
 * tracks of states: `none` while no property has been written (the next
 * one has no comma), `some` after one has. Each property's value is built
 * once and entered from both tracks, so optional properties do not double
 * the automaton at each level. */
static afm_status objectFrag(ctx *c, const jv_value *schema, nfa_frag *out) {
  nfa *n = c->n;
  const jv_value *properties = jv_get(schema, "properties");
  const jv_value *required = jv_get(schema, "required");
  afm_status status = AFM_OK;
  if (properties && properties->kind != JV_OBJECT) {
    size_t saved = pushPath(c, "properties");
    status = schemaError(c, "'properties' must be an object");
    popPath(c, saved);
    return status;
  }
  if (required) {
    size_t saved = pushPath(c, "required");
    if (required->kind != JV_ARRAY)
      status = schemaError(c, "'required' must be an array of names");
    for (size_t i = 0; status == AFM_OK && i < required->count; ++i) {
      const jv_value *name = &required->items[i];
      if (name->kind != JV_STRING)
        status = schemaError(c, "'required' must be an array of names");
      else {
        int found = 0;
        for (size_t p = 0; properties && p < properties->count; ++p)
          found |= properties->key_lengths[p] == name->length &&
                   memcmp(properties->keys[p], name->text, name->length) == 0;
        if (!found) {
          char printable[256];
          status = schemaError(
              c, "required property '%s' is not in 'properties' (only "
                 "declared properties are generated)",
              afm_printable(name->text, printable, sizeof(printable)));
        }
      }
    }
    popPath(c, saved);
    if (status != AFM_OK)
      return status;
  }
  const jv_value *additional = jv_get(schema, "additionalProperties");
  if (additional && additional->kind != JV_OBJECT &&
      additional->kind != JV_TRUE && additional->kind != JV_FALSE) {
    size_t saved = pushPath(c, "additionalProperties");
    status = schemaError(c, "'additionalProperties' must be a boolean or a "
                            "schema");
    popPath(c, saved);
    return status;
  }

  nfa_frag open = nfa_bytes(n, "{", 1);
  uint32_t none = open.end, some = NFA_NONE;
  size_t saved = pushPath(c, "properties");
  for (size_t p = 0; properties && p < properties->count; ++p) {
    for (size_t q = 0; q < p; ++q)
      if (properties->key_lengths[q] == properties->key_lengths[p] &&
          memcmp(properties->keys[q], properties->keys[p],
                 properties->key_lengths[p]) == 0) {
        popPath(c, saved);
        return schemaError(c, "property %zu repeats a name", p);
      }
    int isRequired = 0;
    for (size_t i = 0; required && i < required->count; ++i)
      isRequired |= required->items[i].length == properties->key_lengths[p] &&
                    memcmp(required->items[i].text, properties->keys[p],
                           properties->key_lengths[p]) == 0;
    size_t inner = pushPath(c, properties->keys[p]);
    nfa_frag value;
    status = emitSchema(c, &properties->items[p], &value);
    popPath(c, inner);
    if (status != AFM_OK)
      break;
    sbuf key = {NULL, 0, 0, 0};
    put(&key, ",", 1);
    putString(&key, properties->keys[p], properties->key_lengths[p]);
    put(&key, ":", 1);
    if (key.failed) {
      free(key.data);
      status = afm_error(AFM_ERR_MEMORY, "json schema: out of memory");
      break;
    }
    uint32_t nextNone = NFA_NONE, nextSome = nfa_eps(n);
    if (none != NFA_NONE) {
      nfa_frag k = nfa_bytes(n, key.data + 1, key.size - 1);
      nfa_link(n, none, k.start);
      nfa_link(n, k.end, value.start);
      if (!isRequired) {
        nextNone = nfa_eps(n);
        nfa_link(n, none, nextNone);
      }
    }
    if (some != NFA_NONE) {
      nfa_frag k = nfa_bytes(n, key.data, key.size);
      nfa_link(n, some, k.start);
      nfa_link(n, k.end, value.start);
      if (!isRequired)
        nfa_link(n, some, nextSome);
    }
    free(key.data);
    nfa_link(n, value.end, nextSome);
    none = nextNone;
    some = nextSome;
    if ((status = checkOverflow(c)) != AFM_OK)
      break;
  }
  popPath(c, saved);
  if (status != AFM_OK)
    return status;
  nfa_frag close = nfa_bytes(n, "}", 1);
  if (none != NFA_NONE)
    nfa_link(n, none, close.start);
  if (some != NFA_NONE)
    nfa_link(n, some, close.start);
  *out = (nfa_frag){open.start, close.end};
  return checkOverflow(c);
}

/*------------------------------------------------------------ the keywords --*/

typedef struct keyword {
  const char *name;
  int types; /* the types it applies to; 0: any schema */
} keyword;

static const keyword keywords[] = {
    {"type", 0},           {"enum", 0},
    {"const", 0},          {"anyOf", 0},
    {"properties", T_OBJECT}, {"required", T_OBJECT},
    {"additionalProperties", T_OBJECT}, {"items", T_ARRAY},
    {"minItems", T_ARRAY}, {"maxItems", T_ARRAY},
    {"minLength", T_STRING}, {"maxLength", T_STRING},
    /* Annotations: they constrain nothing. */
    {"title", 0},          {"description", 0},
    {"default", 0},        {"examples", 0},
    {"$comment", 0},       {"$schema", 0},
    {"$id", 0},            {"deprecated", 0},
    {"readOnly", 0},       {"writeOnly", 0}};

static int valueHasType(const jv_value *v, int type) {
  switch (v->kind) {
  case JV_NULL:
    return type & T_NULL;
  case JV_TRUE:
  case JV_FALSE:
    return type & T_BOOLEAN;
  case JV_NUMBER:
    return (type & T_NUMBER) ||
           ((type & T_INTEGER) && floor(v->number) == v->number);
  case JV_STRING:
    return type & T_STRING;
  case JV_ARRAY:
    return type & T_ARRAY;
  case JV_OBJECT:
    return type & T_OBJECT;
  }
  return 0;
}

static afm_status parseTypes(ctx *c, const jv_value *type, int *types) {
  *types = 0;
  size_t count = type->kind == JV_ARRAY ? type->count : 1;
  size_t saved = pushPath(c, "type");
  afm_status status = AFM_OK;
  for (size_t i = 0; i < count && status == AFM_OK; ++i) {
    const jv_value *t = type->kind == JV_ARRAY ? &type->items[i] : type;
    int found = 0;
    for (int k = 0; t->kind == JV_STRING && k < 7; ++k)
      if (strcmp(t->text, typeNames[k]) == 0)
        found = 1 << k;
    if (!found) {
      char printable[128];
      status = schemaError(
          c, "type %s is not one of null, boolean, integer, number, string, "
             "array, object",
          t->kind == JV_STRING
              ? afm_printable(t->text, printable, sizeof(printable))
              : "(not a string)");
    }
    *types |= found;
  }
  popPath(c, saved);
  return status;
}

/* The alternatives of an enum (or the one value of a const). */
static afm_status enumFrag(ctx *c, const jv_value *values, int single,
                           int types, nfa_frag *out) {
  size_t count = single ? 1 : values->count;
  size_t saved = pushPath(c, single ? "const" : "enum");
  afm_status status = AFM_OK;
  if (!single && (values->kind != JV_ARRAY || values->count == 0))
    status = schemaError(c, "'enum' must be a non-empty array");
  nfa_frag f = {0, 0};
  for (size_t i = 0; i < count && status == AFM_OK; ++i) {
    const jv_value *v = single ? values : &values->items[i];
    if (types && !valueHasType(v, types)) {
      status = schemaError(c, "value %zu is not of the schema's 'type'", i);
      break;
    }
    nfa_frag one;
    status = literal(c, v, &one);
    f = i == 0 ? one : nfa_alt(c->n, f, one);
  }
  popPath(c, saved);
  *out = f;
  return status;
}

static afm_status emitSchema(ctx *c, const jv_value *schema, nfa_frag *out) {
  if (c->depth >= JS_MAX_DEPTH)
    return schemaError(c, "schemas nest deeper than %d levels", JS_MAX_DEPTH);
  if (schema->kind == JV_TRUE || (schema->kind == JV_OBJECT &&
                                  schema->count == 0))
    return schemaError(c, "a schema that accepts any JSON value is not "
                          "supported (values could nest without bound): "
                          "give a 'type'");
  if (schema->kind == JV_FALSE)
    return schemaError(c, "the schema 'false' accepts nothing");
  if (schema->kind != JV_OBJECT)
    return schemaError(c, "a schema must be an object");

  int types = 0;
  const jv_value *type = jv_get(schema, "type");
  afm_status status = type ? parseTypes(c, type, &types) : AFM_OK;
  if (status != AFM_OK)
    return status;
  const jv_value *enumValues = jv_get(schema, "enum");
  const jv_value *constValue = jv_get(schema, "const");
  const jv_value *anyOf = jv_get(schema, "anyOf");

  /* Every keyword must be understood. */
  for (size_t i = 0; i < schema->count; ++i) {
    const char *key = schema->keys[i];
    size_t saved = pushPath(c, key);
    if (strcmp(key, "$ref") == 0 || strcmp(key, "$defs") == 0 ||
        strcmp(key, "definitions") == 0 || strcmp(key, "$dynamicRef") == 0 ||
        strcmp(key, "$recursiveRef") == 0)
      status = schemaError(c, "'%s' is not supported (no references or "
                              "recursion: inline the subschema)",
                           key);
    size_t k = 0, known = sizeof(keywords) / sizeof(keywords[0]);
    while (status == AFM_OK && k < known && strcmp(keywords[k].name, key) != 0)
      ++k;
    char printable[128];
    if (status == AFM_OK && k == known)
      status = schemaError(c, "unsupported keyword '%s'",
                           afm_printable(key, printable, sizeof(printable)));
    else if (status == AFM_OK && keywords[k].types &&
             !(keywords[k].types & types))
      status = schemaError(
          c, "keyword '%s' needs a 'type' it applies to (%s)", key,
          keywords[k].types == T_OBJECT  ? "object"
          : keywords[k].types == T_ARRAY ? "array"
                                         : "string");
    else if (status == AFM_OK && (enumValues || constValue || anyOf) &&
             keywords[k].types)
      status = schemaError(c, "keyword '%s' together with enum, const or "
                              "anyOf is not supported",
                           key);
    popPath(c, saved);
    if (status != AFM_OK)
      return status;
  }
  if (!!enumValues + !!constValue + !!anyOf > 1)
    return schemaError(c, "only one of enum, const and anyOf is supported "
                          "in a schema");

  ++c->depth;
  nfa *n = c->n;
  if (enumValues || constValue)
    status = enumFrag(c, enumValues ? enumValues : constValue, !enumValues,
                      types, out);
  else if (anyOf) {
    size_t saved = pushPath(c, "anyOf");
    if (anyOf->kind != JV_ARRAY || anyOf->count == 0 || type)
      status = schemaError(c, "'anyOf' must be a non-empty array of schemas, "
                              "without a 'type' beside it");
    nfa_frag f = {0, 0};
    for (size_t i = 0; status == AFM_OK && i < anyOf->count; ++i) {
      char index[32];
      snprintf(index, sizeof(index), "%zu", i);
      size_t inner = pushPath(c, index);
      nfa_frag one;
      status = emitSchema(c, &anyOf->items[i], &one);
      popPath(c, inner);
      f = i == 0 ? one : nfa_alt(n, f, one);
    }
    popPath(c, saved);
    *out = f;
  } else if (!types)
    status = schemaError(c, "the schema has no 'type', 'enum', 'const' or "
                            "'anyOf' (any JSON value could nest without "
                            "bound)");
  else {
    int first = 1;
    nfa_frag f = {0, 0};
    for (int k = 0; k < 7 && status == AFM_OK; ++k) {
      int t = 1 << k;
      if (!(types & t))
        continue;
      nfa_frag one;
      switch (t) {
      case T_NULL:
        one = nfa_bytes(n, "null", 4);
        break;
      case T_BOOLEAN:
        one = nfa_alt(n, nfa_bytes(n, "true", 4), nfa_bytes(n, "false", 5));
        break;
      case T_INTEGER:
        one = integerFrag(c);
        break;
      case T_NUMBER:
        one = numberFrag(c);
        break;
      case T_STRING:
        status = stringFrag(c, schema, &one);
        break;
      case T_ARRAY:
        status = arrayFrag(c, schema, &one);
        break;
      default:
        status = objectFrag(c, schema, &one);
        break;
      }
      if (status == AFM_OK)
        status = checkOverflow(c);
      if (status == AFM_OK) {
        f = first ? one : nfa_alt(n, f, one);
        first = 0;
      }
    }
    *out = f;
  }
  --c->depth;
  return status == AFM_OK ? checkOverflow(c) : status;
}

afm_status js_compile(const char *schema, size_t length, nfa *out) {
  memset(out, 0, sizeof(*out));
  jv_value root;
  afm_status status = jv_parse(schema, length, "json schema", &root);
  if (status != AFM_OK)
    return status;
  ctx c = {.n = out, .path = "#", .length = 1};
  nfa_frag whole;
  status = emitSchema(&c, &root, &whole);
  jv_free(&root);
  if (status == AFM_OK)
    status = nfa_finish(out, whole);
  if (status != AFM_OK)
    nfa_free(out);
  return status;
}
