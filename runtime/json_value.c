/*===- json_value.c - a small JSON reader for schemas ---------------------===*
 *
 * Recursive descent over the text, depth-limited (JV_MAX_DEPTH). Strings
 * are checked for valid UTF-8 and decoded (\uXXXX surrogate pairs joined;
 * a lone surrogate is an error: a schema's strings must be text).
 *
 *===----------------------------------------------------------------------===*/

#include "json_value.h"

#include "error.h"
#include "tokenizer_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct reader {
  const char *s;
  size_t n, at;
  const char *what;
} reader;

static afm_status fail(const reader *r, const char *message) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < r->at && i < r->n; ++i) {
    if (r->s[i] == '\n') {
      ++line;
      column = 1;
    } else
      ++column;
  }
  return afm_error(AFM_ERR_ARGUMENT, "%s: invalid JSON at line %zu, column "
                                     "%zu: %s",
                   r->what, line, column, message);
}

static void skipSpace(reader *r) {
  while (r->at < r->n && (r->s[r->at] == ' ' || r->s[r->at] == '\t' ||
                          r->s[r->at] == '\n' || r->s[r->at] == '\r'))
    ++r->at;
}

/* Appends one byte to a growing string. */
typedef struct sbuf {
  char *data;
  size_t size, capacity;
} sbuf;

static int put(sbuf *b, const char *data, size_t n) {
  if (b->size + n + 1 > b->capacity) {
    size_t capacity = b->capacity ? b->capacity : 16;
    while (capacity < b->size + n + 1)
      capacity *= 2;
    char *grown = realloc(b->data, capacity);
    if (!grown)
      return 0;
    b->data = grown;
    b->capacity = capacity;
  }
  memcpy(b->data + b->size, data, n);
  b->size += n;
  b->data[b->size] = '\0';
  return 1;
}

static int hex4(const char *s, unsigned *out) {
  unsigned v = 0;
  for (int i = 0; i < 4; ++i) {
    char c = s[i];
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (d < 0)
      return 0;
    v = v * 16 + (unsigned)d;
  }
  *out = v;
  return 1;
}

static size_t utf8Encode(unsigned c, char *o) {
  if (c < 0x80) {
    o[0] = (char)c;
    return 1;
  }
  if (c < 0x800) {
    o[0] = (char)(0xc0 | (c >> 6));
    o[1] = (char)(0x80 | (c & 0x3f));
    return 2;
  }
  if (c < 0x10000) {
    o[0] = (char)(0xe0 | (c >> 12));
    o[1] = (char)(0x80 | ((c >> 6) & 0x3f));
    o[2] = (char)(0x80 | (c & 0x3f));
    return 3;
  }
  o[0] = (char)(0xf0 | (c >> 18));
  o[1] = (char)(0x80 | ((c >> 12) & 0x3f));
  o[2] = (char)(0x80 | ((c >> 6) & 0x3f));
  o[3] = (char)(0x80 | (c & 0x3f));
  return 4;
}

static afm_status parseString(reader *r, char **out, size_t *length) {
  sbuf b = {NULL, 0, 0};
  ++r->at; /* the opening quote */
  put(&b, "", 0);
  for (;;) {
    if (r->at >= r->n) {
      free(b.data);
      return fail(r, "unterminated string");
    }
    unsigned char c = (unsigned char)r->s[r->at];
    if (c == '"') {
      ++r->at;
      break;
    }
    if (c < 0x20) {
      free(b.data);
      return fail(r, "a control character in a string");
    }
    if (c == '\\') {
      if (r->at + 1 >= r->n) {
        free(b.data);
        return fail(r, "unterminated escape");
      }
      char e = r->s[r->at + 1], o[4];
      size_t k = 1;
      switch (e) {
      case '"': o[0] = '"'; break;
      case '\\': o[0] = '\\'; break;
      case '/': o[0] = '/'; break;
      case 'b': o[0] = '\b'; break;
      case 'f': o[0] = '\f'; break;
      case 'n': o[0] = '\n'; break;
      case 'r': o[0] = '\r'; break;
      case 't': o[0] = '\t'; break;
      case 'u': {
        unsigned u, low;
        if (r->at + 6 > r->n || !hex4(r->s + r->at + 2, &u)) {
          free(b.data);
          return fail(r, "a bad \\u escape");
        }
        r->at += 4;
        if (u >= 0xdc00 && u <= 0xdfff) {
          free(b.data);
          return fail(r, "a lone low surrogate");
        }
        if (u >= 0xd800 && u <= 0xdbff) {
          if (r->at + 8 > r->n || r->s[r->at + 2] != '\\' ||
              r->s[r->at + 3] != 'u' || !hex4(r->s + r->at + 4, &low) ||
              low < 0xdc00 || low > 0xdfff) {
            free(b.data);
            return fail(r, "a lone high surrogate");
          }
          u = 0x10000 + ((u - 0xd800) << 10) + (low - 0xdc00);
          r->at += 6;
        }
        k = utf8Encode(u, o);
        break;
      }
      default:
        free(b.data);
        return fail(r, "an unknown escape");
      }
      r->at += 2;
      if (!put(&b, o, k)) {
        free(b.data);
        return afm_error(AFM_ERR_MEMORY, "%s: out of memory", r->what);
      }
      continue;
    }
    size_t k = tk_utf8_valid_length((const unsigned char *)r->s + r->at,
                                    r->n - r->at);
    if (k == 0) {
      free(b.data);
      return fail(r, "invalid UTF-8 in a string");
    }
    if (!put(&b, r->s + r->at, k)) {
      free(b.data);
      return afm_error(AFM_ERR_MEMORY, "%s: out of memory", r->what);
    }
    r->at += k;
  }
  *out = b.data;
  *length = b.size;
  return AFM_OK;
}

static afm_status parseValue(reader *r, jv_value *v, int depth);

static afm_status parseNumber(reader *r, jv_value *v) {
  size_t start = r->at, i = r->at;
  const char *s = r->s;
#define DIGIT(k) ((k) < r->n && s[k] >= '0' && s[k] <= '9')
  if (i < r->n && s[i] == '-')
    ++i;
  if (i < r->n && s[i] == '0')
    ++i;
  else if (DIGIT(i))
    while (DIGIT(i))
      ++i;
  else {
    r->at = i;
    return fail(r, "expected a value");
  }
  if (i < r->n && s[i] == '.') {
    ++i;
    if (!DIGIT(i)) {
      r->at = i;
      return fail(r, "expected a digit after '.'");
    }
    while (DIGIT(i))
      ++i;
  }
  if (i < r->n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < r->n && (s[i] == '+' || s[i] == '-'))
      ++i;
    if (!DIGIT(i)) {
      r->at = i;
      return fail(r, "expected a digit in the exponent");
    }
    while (DIGIT(i))
      ++i;
  }
#undef DIGIT
  v->kind = JV_NUMBER;
  v->length = i - start;
  v->text = malloc(v->length + 1);
  if (!v->text)
    return afm_error(AFM_ERR_MEMORY, "%s: out of memory", r->what);
  memcpy(v->text, s + start, v->length);
  v->text[v->length] = '\0';
  v->number = strtod(v->text, NULL);
  r->at = i;
  return AFM_OK;
}

/* Appends one item to an array or object being built. */
static int grow(jv_value *v, size_t *capacity, int withKeys) {
  if (v->count < *capacity)
    return 1;
  size_t c = *capacity ? *capacity * 2 : 4;
  jv_value *items = realloc(v->items, c * sizeof(*items));
  if (!items)
    return 0;
  v->items = items;
  if (withKeys) {
    char **keys = realloc(v->keys, c * sizeof(*keys));
    if (!keys)
      return 0;
    v->keys = keys;
    size_t *lengths = realloc(v->key_lengths, c * sizeof(*lengths));
    if (!lengths)
      return 0;
    v->key_lengths = lengths;
  }
  *capacity = c;
  return 1;
}

static afm_status parseContainer(reader *r, jv_value *v, int depth) {
  int object = r->s[r->at] == '{';
  char close = object ? '}' : ']';
  v->kind = object ? JV_OBJECT : JV_ARRAY;
  if (depth >= JV_MAX_DEPTH)
    return fail(r, "nested deeper than 64 levels");
  ++r->at;
  skipSpace(r);
  if (r->at < r->n && r->s[r->at] == close) {
    ++r->at;
    return AFM_OK;
  }
  size_t capacity = 0;
  for (;;) {
    if (!grow(v, &capacity, object))
      return afm_error(AFM_ERR_MEMORY, "%s: out of memory", r->what);
    jv_value *item = &v->items[v->count];
    memset(item, 0, sizeof(*item));
    if (object) {
      skipSpace(r);
      if (r->at >= r->n || r->s[r->at] != '"')
        return fail(r, "expected a member name in quotes");
      char *key;
      size_t keyLength;
      afm_status status = parseString(r, &key, &keyLength);
      if (status != AFM_OK)
        return status;
      v->keys[v->count] = key;
      v->key_lengths[v->count] = keyLength;
      ++v->count; /* the key is owned from here on */
      skipSpace(r);
      if (r->at >= r->n || r->s[r->at] != ':')
        return fail(r, "expected ':' after a member name");
      ++r->at;
      afm_status s2 = parseValue(r, item, depth + 1);
      if (s2 != AFM_OK)
        return s2;
    } else {
      ++v->count;
      afm_status status = parseValue(r, item, depth + 1);
      if (status != AFM_OK)
        return status;
    }
    skipSpace(r);
    if (r->at < r->n && r->s[r->at] == ',') {
      ++r->at;
      continue;
    }
    if (r->at < r->n && r->s[r->at] == close) {
      ++r->at;
      return AFM_OK;
    }
    return fail(r, object ? "expected ',' or '}'" : "expected ',' or ']'");
  }
}

static int literal(reader *r, const char *word) {
  size_t n = strlen(word);
  if (r->at + n <= r->n && memcmp(r->s + r->at, word, n) == 0) {
    r->at += n;
    return 1;
  }
  return 0;
}

static afm_status parseValue(reader *r, jv_value *v, int depth) {
  memset(v, 0, sizeof(*v));
  skipSpace(r);
  if (r->at >= r->n)
    return fail(r, "unexpected end of the text");
  char c = r->s[r->at];
  if (c == '{' || c == '[')
    return parseContainer(r, v, depth);
  if (c == '"') {
    v->kind = JV_STRING;
    return parseString(r, &v->text, &v->length);
  }
  if (literal(r, "true")) {
    v->kind = JV_TRUE;
    return AFM_OK;
  }
  if (literal(r, "false")) {
    v->kind = JV_FALSE;
    return AFM_OK;
  }
  if (literal(r, "null")) {
    v->kind = JV_NULL;
    return AFM_OK;
  }
  return parseNumber(r, v);
}

afm_status jv_parse(const char *text, size_t length, const char *what,
                    jv_value *out) {
  reader r = {text, length, 0, what};
  afm_status status = parseValue(&r, out, 0);
  if (status == AFM_OK) {
    skipSpace(&r);
    if (r.at != r.n)
      status = fail(&r, "text after the value");
  }
  if (status != AFM_OK)
    jv_free(out);
  return status;
}

void jv_free(jv_value *v) {
  if (!v)
    return;
  for (size_t i = 0; i < v->count; ++i) {
    jv_free(&v->items[i]);
    if (v->keys)
      free(v->keys[i]);
  }
  free(v->items);
  free(v->keys);
  free(v->key_lengths);
  free(v->text);
  memset(v, 0, sizeof(*v));
}

const jv_value *jv_get(const jv_value *object, const char *key) {
  if (!object || object->kind != JV_OBJECT)
    return NULL;
  size_t n = strlen(key);
  for (size_t i = 0; i < object->count; ++i)
    if (object->key_lengths[i] == n && memcmp(object->keys[i], key, n) == 0)
      return &object->items[i];
  return NULL;
}
