/*===- code_image.h - a code section's headers, checked before dlopen -*- C -*-===*
 *
 * dlopen trusts the file it maps: a shared library whose program headers
 * reach past the end of the file is mapped anyway, and the first access to
 * the missing pages is a SIGBUS. The code section's checksum cannot catch
 * that (anyone can recompute it), so its headers are checked against its
 * size first: every offset and extent the loader will use must lie inside
 * the section, and the library must be for this machine.
 *
 *===----------------------------------------------------------------------===*/

#ifndef AFM_RUNTIME_CODE_IMAGE_H
#define AFM_RUNTIME_CODE_IMAGE_H

#include "afm/runtime.h"

#include <stddef.h>
#include <stdint.h>

/* AFM_OK when `image` (`size` bytes) is a well-formed shared library for
 * this machine's format and architecture; else AFM_ERR_CODE saying which
 * header is wrong. `name` starts error messages. */
afm_status afm_code_check_image(const char *name, const uint8_t *image,
                                size_t size);

#endif /* AFM_RUNTIME_CODE_IMAGE_H */
