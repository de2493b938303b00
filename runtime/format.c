/*===- format.c - the .afmb header, section table and checksums ------------===*
 *
 * Checks run from the outside in: the header before the table it points to,
 * the table before the sections, bounds before checksums, so that every
 * offset is known to be inside the file before it is dereferenced.
 *
 *===----------------------------------------------------------------------===*/

#include "format.h"

#include "afm/afmb_format.h"
#include "checked_math.h"
#include "error.h"

#include <stdio.h>
#include <string.h>

typedef unsigned long long ull;

static uint64_t readLE(const uint8_t *p, int bytes) {
  uint64_t value = 0;
  for (int i = bytes - 1; i >= 0; --i)
    value = (value << 8) | p[i];
  return value;
}

static const char *kindName(uint32_t kind) {
  switch (kind) {
  case AFMB_SECTION_KIND_MANIFEST:
    return "manifest";
  case AFMB_SECTION_KIND_WEIGHTS:
    return "weights";
  case AFMB_SECTION_KIND_CODE:
    return "code";
  case AFMB_SECTION_KIND_TOKENIZER:
    return "tokenizer";
  default:
    return "unknown";
  }
}

static afm_section readSection(const uint8_t *data, uint64_t tableOffset,
                               uint32_t index) {
  const uint8_t *p =
      data + tableOffset + (uint64_t)index * AFMB_SECTION_ENTRY_SIZE;
  afm_section s;
  s.index = index;
  s.kind = (uint32_t)readLE(p + AFMB_SECTION_KIND, 4);
  s.alignment = (uint32_t)readLE(p + AFMB_SECTION_ALIGNMENT, 4);
  s.offset = readLE(p + AFMB_SECTION_OFFSET, 8);
  s.size = readLE(p + AFMB_SECTION_SIZE, 8);
  s.checksum = readLE(p + AFMB_SECTION_CHECKSUM, 8);
  return s;
}

/* Where a file cut at `size` bytes ends, for the truncation message: inside
 * the section table or inside a section, as far as the surviving bytes say. */
static void describeCut(const uint8_t *data, uint64_t size,
                        uint64_t tableOffset, uint32_t count, char *buf,
                        size_t bufSize) {
  buf[0] = '\0';
  uint64_t tableBytes, tableEnd;
  if (count == 0 || count > AFMB_MAX_SECTIONS ||
      !afm_checked_mul(count, AFMB_SECTION_ENTRY_SIZE, &tableBytes) ||
      !afm_checked_add(tableOffset, tableBytes, &tableEnd))
    return;
  if (tableOffset < size && size < tableEnd) {
    snprintf(buf, bufSize, " inside the section table");
    return;
  }
  if (tableEnd > size)
    return;
  for (uint32_t i = 0; i < count; ++i) {
    afm_section s = readSection(data, tableOffset, i);
    if (s.offset <= size && size - s.offset < s.size) {
      snprintf(buf, bufSize, " inside section %u (%s)", i, kindName(s.kind));
      return;
    }
  }
}

static afm_status checkHeader(const char *name, const uint8_t *data,
                              uint64_t size, afm_layout *out) {
  if (size < AFMB_HEADER_SIZE)
    return afm_error(AFM_ERR_FORMAT,
                     "%s: the file is %llu bytes, smaller than the %d-byte "
                     ".afmb header%s",
                     name, (ull)size, AFMB_HEADER_SIZE,
                     size == 0 ? " (empty file)" : "");
  if (memcmp(data, AFMB_MAGIC, AFMB_MAGIC_SIZE) != 0)
    return afm_error(AFM_ERR_FORMAT,
                     "%s: not an .afmb file: bad magic %02x %02x %02x %02x "
                     "%02x %02x %02x %02x (expected 41 46 4d 42 00 0d 0a 1a)",
                     name, data[0], data[1], data[2], data[3], data[4], data[5],
                     data[6], data[7]);
  out->version_major = (uint16_t)readLE(data + AFMB_HEADER_VERSION_MAJOR, 2);
  out->version_minor = (uint16_t)readLE(data + AFMB_HEADER_VERSION_MINOR, 2);
  if (out->version_major != AFMB_VERSION_MAJOR)
    return afm_error(AFM_ERR_VERSION,
                     "%s: .afmb format version %u.%u; this runtime reads "
                     "version %d.x",
                     name, out->version_major, out->version_minor,
                     AFMB_VERSION_MAJOR);
  uint32_t headerSize = (uint32_t)readLE(data + AFMB_HEADER_HEADER_SIZE, 4);
  if (headerSize != AFMB_HEADER_SIZE)
    return afm_error(AFM_ERR_FORMAT, "%s: header_size is %u, expected %d", name,
                     headerSize, AFMB_HEADER_SIZE);
  uint64_t stored = readLE(data + AFMB_HEADER_CHECKSUM, 8);
  uint64_t actual =
      afmb_fnv1a64_update(AFMB_FNV1A64_INIT, data, AFMB_HEADER_CHECKSUM);
  if (stored != actual)
    return afm_error(AFM_ERR_FORMAT,
                     "%s: header checksum mismatch: the header says 0x%016llx, "
                     "bytes 0..%d hash to 0x%016llx",
                     name, (ull)stored, AFMB_HEADER_CHECKSUM - 1, (ull)actual);
  /* Fields a later minor version may give meaning: zero today, so a file
   * that uses them is refused rather than misread. */
  uint32_t flags = (uint32_t)readLE(data + AFMB_HEADER_FLAGS, 4);
  if (flags != 0)
    return afm_error(AFM_ERR_FORMAT,
                     "%s: header flags are 0x%08x; this runtime knows no "
                     "flags (they must be 0)",
                     name, flags);
  for (int i = AFMB_HEADER_CHECKSUM + 8; i < AFMB_HEADER_SIZE; ++i)
    if (data[i] != 0)
      return afm_error(AFM_ERR_FORMAT,
                       "%s: reserved header byte %d is 0x%02x, not 0", name, i,
                       data[i]);
  uint64_t fileSize = readLE(data + AFMB_HEADER_FILE_SIZE, 8);
  if (fileSize != size) {
    char where[64];
    describeCut(data, size, readLE(data + AFMB_HEADER_TABLE_OFFSET, 8),
                (uint32_t)readLE(data + AFMB_HEADER_SECTION_COUNT, 4), where,
                sizeof(where));
    if (size < fileSize)
      return afm_error(AFM_ERR_FORMAT,
                       "%s: the file is %llu bytes but its header says "
                       "%llu: truncated%s",
                       name, (ull)size, (ull)fileSize, where);
    return afm_error(AFM_ERR_FORMAT,
                     "%s: the file is %llu bytes but its header says %llu: "
                     "trailing bytes after the last section",
                     name, (ull)size, (ull)fileSize);
  }
  return AFM_OK;
}

/* A byte range of the file that no other may overlap. */
typedef struct region {
  char what[48];
  uint64_t begin, end;
} region;

static afm_status checkSection(const char *name, const afm_section *s,
                               uint64_t size, region *r) {
  const char *kind = kindName(s->kind);
  if (!afm_is_power_of_two(s->alignment))
    return afm_error(AFM_ERR_FORMAT,
                     "%s: section %u (%s) alignment %u is not a power of two",
                     name, s->index, kind, s->alignment);
  if (s->offset % s->alignment != 0)
    return afm_error(AFM_ERR_FORMAT,
                     "%s: section %u (%s) offset %llu is not a multiple of its "
                     "alignment %u",
                     name, s->index, kind, (ull)s->offset, s->alignment);
  if (s->kind == AFMB_SECTION_KIND_WEIGHTS &&
      s->offset % AFMB_WEIGHTS_ALIGNMENT != 0)
    return afm_error(AFM_ERR_FORMAT,
                     "%s: section %u (weights) offset %llu is not %d-byte "
                     "aligned",
                     name, s->index, (ull)s->offset, AFMB_WEIGHTS_ALIGNMENT);
  uint64_t end;
  if (!afm_checked_add(s->offset, s->size, &end))
    return afm_error(AFM_ERR_FORMAT,
                     "%s: section %u (%s) offset %llu + size %llu overflows",
                     name, s->index, kind, (ull)s->offset, (ull)s->size);
  if (end > size)
    return afm_error(AFM_ERR_FORMAT,
                     "%s: section %u (%s) ends at %llu past the file size %llu",
                     name, s->index, kind, (ull)end, (ull)size);
  snprintf(r->what, sizeof(r->what), "section %u (%s)", s->index, kind);
  r->begin = s->offset;
  r->end = end;
  return AFM_OK;
}

static afm_status checkNoOverlap(const char *name, const region *regions,
                                 uint32_t count) {
  for (uint32_t i = 0; i < count; ++i) {
    const region *a = &regions[i];
    if (a->begin == a->end)
      continue;
    for (uint32_t j = 0; j < i; ++j) {
      const region *b = &regions[j];
      if (b->begin < a->end && a->begin < b->end)
        return afm_error(AFM_ERR_FORMAT,
                         "%s: %s [%llu, %llu) overlaps %s [%llu, %llu)", name,
                         a->what, (ull)a->begin, (ull)a->end, b->what,
                         (ull)b->begin, (ull)b->end);
    }
  }
  return AFM_OK;
}

static afm_status checkChecksum(const char *name, const uint8_t *data,
                                const afm_section *s) {
  uint64_t actual =
      afmb_fnv1a64_update(AFMB_FNV1A64_INIT, data + s->offset, (size_t)s->size);
  if (actual != s->checksum)
    return afm_error(AFM_ERR_FORMAT,
                     "%s: section %u (%s) checksum mismatch: the table says "
                     "0x%016llx, its bytes hash to 0x%016llx",
                     name, s->index, kindName(s->kind), (ull)s->checksum,
                     (ull)actual);
  return AFM_OK;
}

afm_status afm_layout_parse(const char *name, const uint8_t *data,
                            uint64_t size, bool verify_weights,
                            afm_layout *out) {
  memset(out, 0, sizeof(*out));
  afm_status status = checkHeader(name, data, size, out);
  if (status != AFM_OK)
    return status;

  uint64_t tableOffset = readLE(data + AFMB_HEADER_TABLE_OFFSET, 8);
  uint32_t count = (uint32_t)readLE(data + AFMB_HEADER_SECTION_COUNT, 4);
  if (count < 1 || count > AFMB_MAX_SECTIONS)
    return afm_error(AFM_ERR_FORMAT,
                     "%s: section_count is %u, expected 1 to %d", name, count,
                     AFMB_MAX_SECTIONS);
  if (tableOffset % AFMB_TABLE_ALIGNMENT != 0)
    return afm_error(AFM_ERR_FORMAT,
                     "%s: section table offset %llu is not a multiple of %d",
                     name, (ull)tableOffset, AFMB_TABLE_ALIGNMENT);
  uint64_t tableEnd;
  if (!afm_checked_add(tableOffset, (uint64_t)count * AFMB_SECTION_ENTRY_SIZE,
                       &tableEnd) ||
      tableEnd > size)
    return afm_error(AFM_ERR_FORMAT,
                     "%s: the section table (%u entries at offset %llu) ends "
                     "past the file size %llu",
                     name, count, (ull)tableOffset, (ull)size);

  /* The header and the table are regions no section may overlap. */
  region regions[AFMB_MAX_SECTIONS + 2] = {
      {"the header", 0, AFMB_HEADER_SIZE},
      {"the section table", tableOffset, tableEnd}};
  afm_section *byKind[5] = {NULL, &out->manifest, &out->weights, &out->code,
                            &out->tokenizer};
  bool seen[5] = {false, false, false, false, false};
  for (uint32_t i = 0; i < count; ++i) {
    afm_section s = readSection(data, tableOffset, i);
    if (s.kind < AFMB_SECTION_KIND_MANIFEST ||
        s.kind > AFMB_SECTION_KIND_TOKENIZER)
      return afm_error(AFM_ERR_FORMAT,
                       "%s: section %u has unknown kind %u (expected 1 "
                       "manifest, 2 weights, 3 code or 4 tokenizer)",
                       name, i, s.kind);
    if (seen[s.kind])
      return afm_error(AFM_ERR_FORMAT,
                       "%s: sections %u and %u are both of kind %u (%s)", name,
                       byKind[s.kind]->index, i, s.kind, kindName(s.kind));
    status = checkSection(name, &s, size, &regions[i + 2]);
    if (status != AFM_OK)
      return status;
    seen[s.kind] = true;
    *byKind[s.kind] = s;
  }
  for (uint32_t kind = AFMB_SECTION_KIND_MANIFEST;
       kind <= AFMB_SECTION_KIND_CODE; ++kind)
    if (!seen[kind])
      return afm_error(AFM_ERR_FORMAT, "%s: no %s section (kind %u)", name,
                       kindName(kind), kind);
  status = checkNoOverlap(name, regions, count + 2);
  if (status != AFM_OK)
    return status;

  out->has_tokenizer = seen[AFMB_SECTION_KIND_TOKENIZER];
  status = checkChecksum(name, data, &out->manifest);
  if (status == AFM_OK)
    status = checkChecksum(name, data, &out->code);
  if (status == AFM_OK && out->has_tokenizer)
    status = checkChecksum(name, data, &out->tokenizer);
  if (status == AFM_OK && verify_weights)
    status = checkChecksum(name, data, &out->weights);
  return status;
}
