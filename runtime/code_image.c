/*===- code_image.c - a code section's headers, checked before dlopen ------===*/

#include "code_image.h"

#include "checked_math.h"
#include "error.h"

#include <string.h>

#if defined(__ELF__)
#include <elf.h>

#if defined(__x86_64__)
#define AFM_ELF_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define AFM_ELF_MACHINE EM_AARCH64
#endif

/* Whether [offset, offset + count * entry) lies inside `size` bytes. */
static bool tableInside(uint64_t offset, uint64_t count, uint64_t entry,
                        size_t size) {
  uint64_t bytes, end;
  return afm_checked_mul(count, entry, &bytes) &&
         afm_checked_add(offset, bytes, &end) && end <= size;
}

afm_status afm_code_check_image(const char *name, const uint8_t *image,
                                size_t size) {
  Elf64_Ehdr header;
  if (size < SELFMAG || memcmp(image, ELFMAG, SELFMAG) != 0)
    return afm_error(AFM_ERR_CODE,
                     "%s: the code section is not an ELF shared library (no "
                     "ELF magic); was it compiled for another OS?",
                     name);
  if (size < sizeof(header))
    return afm_error(AFM_ERR_CODE,
                     "%s: the code section (%zu bytes) is shorter than an "
                     "ELF header",
                     name, size);
  memcpy(&header, image, sizeof(header));
  if (header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_ident[EI_DATA] != ELFDATA2LSB)
    return afm_error(AFM_ERR_CODE,
                     "%s: the code is not 64-bit little-endian ELF", name);
  if (header.e_type != ET_DYN)
    return afm_error(AFM_ERR_CODE,
                     "%s: the code is ELF type %u, not a shared library (%u)",
                     name, (unsigned)header.e_type, (unsigned)ET_DYN);
#if defined(AFM_ELF_MACHINE)
  if (header.e_machine != AFM_ELF_MACHINE)
    return afm_error(AFM_ERR_CODE,
                     "%s: the code is for ELF machine %u, this machine runs "
                     "%u; compile the model for this target",
                     name, (unsigned)header.e_machine,
                     (unsigned)AFM_ELF_MACHINE);
#endif
  if (header.e_phentsize != sizeof(Elf64_Phdr) || header.e_phnum == 0 ||
      !tableInside(header.e_phoff, header.e_phnum, sizeof(Elf64_Phdr), size))
    return afm_error(AFM_ERR_CODE,
                     "%s: the code's program headers (%u at offset %llu) do "
                     "not fit in its %zu bytes",
                     name, (unsigned)header.e_phnum,
                     (unsigned long long)header.e_phoff, size);
  if (header.e_shnum != 0 &&
      (header.e_shentsize != sizeof(Elf64_Shdr) ||
       !tableInside(header.e_shoff, header.e_shnum, sizeof(Elf64_Shdr), size)))
    return afm_error(AFM_ERR_CODE,
                     "%s: the code's section headers (%u at offset %llu) do "
                     "not fit in its %zu bytes",
                     name, (unsigned)header.e_shnum,
                     (unsigned long long)header.e_shoff, size);
  for (unsigned i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr segment;
    memcpy(&segment, image + header.e_phoff + (uint64_t)i * sizeof(segment),
           sizeof(segment));
    if (segment.p_type != PT_LOAD && segment.p_type != PT_DYNAMIC)
      continue;
    uint64_t end;
    if (!afm_checked_add(segment.p_offset, segment.p_filesz, &end) ||
        end > size || segment.p_filesz > segment.p_memsz)
      return afm_error(AFM_ERR_CODE,
                       "%s: the code's segment %u (bytes %llu to %llu of "
                       "the file, %llu in memory) does not fit in its %zu "
                       "bytes; the code section is truncated or corrupt",
                       name, i, (unsigned long long)segment.p_offset,
                       (unsigned long long)segment.p_offset +
                           (unsigned long long)segment.p_filesz,
                       (unsigned long long)segment.p_memsz, size);
  }
  return AFM_OK;
}

#else /* Mach-O and others: dlopen checks the file's extent itself. */

afm_status afm_code_check_image(const char *name, const uint8_t *image,
                                size_t size) {
  (void)image;
  if (size < 32)
    return afm_error(AFM_ERR_CODE,
                     "%s: the code section (%zu bytes) is too short for a "
                     "shared library",
                     name, size);
  return AFM_OK;
}

#endif
