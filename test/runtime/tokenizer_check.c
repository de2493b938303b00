/*===- tokenizer_check.c - the runtime tokenizer on a corpus, no LLVM -----===*
 *
 * afm-tokenizer-check TOKENIZER.bin RECORDS: loads a serialized tokenizer
 * (afm-tokenize --write-binary) and encodes each record of RECORDS (a
 * little-endian u32 length, then that many bytes of UTF-8; see
 * scripts/gen-tokenizer-corpus.mjs --records), then decodes the ids. One
 * line per record: the ids, then an FNV-1a hash of the decoded text. Built
 * for the host and cross-built for AArch64 with the runtime, so the lit
 * suite can compare the two under qemu.
 *
 *===----------------------------------------------------------------------===*/

#include "afm/tokenizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *readAll(const char *path, size_t *size) {
  FILE *file = fopen(path, "rb");
  if (!file)
    return NULL;
  size_t capacity = 1 << 16, used = 0;
  char *data = malloc(capacity);
  for (size_t got; data && (got = fread(data + used, 1, capacity - used,
                                        file)) > 0;) {
    used += got;
    if (used == capacity) {
      char *grown = realloc(data, capacity *= 2);
      if (!grown)
        free(data);
      data = grown;
    }
  }
  fclose(file);
  *size = used;
  return data;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: afm-tokenizer-check TOKENIZER.bin RECORDS\n");
    return 2;
  }
  size_t tokenizerSize, recordsSize;
  char *tokenizerBytes = readAll(argv[1], &tokenizerSize);
  char *records = readAll(argv[2], &recordsSize);
  if (!tokenizerBytes || !records) {
    fprintf(stderr, "afm-tokenizer-check: cannot read the inputs\n");
    return 1;
  }
  afm_tokenizer *tokenizer;
  if (afm_tokenizer_load(tokenizerBytes, tokenizerSize, &tokenizer) !=
      AFM_OK) {
    fprintf(stderr, "afm-tokenizer-check: %s\n", afm_last_error());
    return 1;
  }
  for (size_t offset = 0; offset + 4 <= recordsSize;) {
    const unsigned char *p = (const unsigned char *)records + offset;
    size_t length = p[0] | p[1] << 8 | p[2] << 16 | (size_t)p[3] << 24;
    offset += 4;
    if (length > recordsSize - offset) {
      fprintf(stderr, "afm-tokenizer-check: truncated record\n");
      return 1;
    }
    int32_t *ids;
    size_t count, textLength;
    char *text;
    if (afm_tokenizer_encode(tokenizer, records + offset, length, &ids,
                             &count) != AFM_OK ||
        afm_tokenizer_decode(tokenizer, ids, count, 0, &text, &textLength) !=
            AFM_OK) {
      fprintf(stderr, "afm-tokenizer-check: %s\n", afm_last_error());
      return 1;
    }
    unsigned long long hash = 1469598103934665603ull;
    for (size_t i = 0; i < textLength; ++i)
      hash = (hash ^ (unsigned char)text[i]) * 1099511628211ull;
    for (size_t i = 0; i < count; ++i)
      printf("%d ", ids[i]);
    printf("| %016llx\n", hash);
    free(ids);
    free(text);
    offset += length;
  }
  afm_tokenizer_free(tokenizer);
  free(tokenizerBytes);
  free(records);
  return 0;
}
