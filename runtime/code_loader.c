/*===- code_loader.c - the code section as a shared library ----------------===*
 *
 * glibc's dlopen returns an already loaded library when the path string is
 * the same, and "/proc/self/fd/N" repeats whenever a descriptor number is
 * reused. Two defenses: the memfd stays open while its library is loaded (no
 * live model shares its number), and a name that is still known to the
 * loader (a library dlclose could not unload) sends the load to the
 * temporary-file path, whose names are unique.
 *
 *===----------------------------------------------------------------------===*/

#include "code_loader.h"

#include "code_image.h"

#include "error.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct afm_code {
  void *handle;
  int fd; /* the memfd behind `handle`, or -1 */
};

static bool writeAll(int fd, const uint8_t *data, size_t size) {
  while (size > 0) {
    ssize_t written = write(fd, data, size);
    if (written < 0) {
      if (errno == EINTR)
        continue;
      return false;
    }
    data += written;
    size -= (size_t)written;
  }
  return true;
}

static afm_status dlopenError(const char *name) {
  const char *reason = dlerror();
  return afm_error(AFM_ERR_CODE, "%s: cannot load the code section: %s", name,
                   reason ? reason : "unknown dlopen error");
}

#if defined(__linux__)
/* The memfd path; AFM_ERR_IO when it is unavailable here (no memfd, no
 * /proc, or a stale library under the same name) so the caller falls back. */
static afm_status loadFromMemfd(const char *name, const uint8_t *image,
                                size_t size, afm_code *code) {
  int fd = memfd_create("afm-code", MFD_CLOEXEC);
  if (fd < 0)
    return AFM_ERR_IO;
  char path[64];
  snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
  struct stat st;
  void *stale = NULL;
  if (!writeAll(fd, image, size) || stat(path, &st) != 0 ||
      (stale = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD)) != NULL) {
    if (stale)
      dlclose(stale);
    close(fd);
    return AFM_ERR_IO;
  }
  code->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!code->handle) {
    close(fd);
    return dlopenError(name);
  }
  code->fd = fd;
  return AFM_OK;
}
#endif

static afm_status loadFromTempFile(const char *name, const uint8_t *image,
                                   size_t size, afm_code *code) {
  const char *dir = getenv("TMPDIR");
  if (!dir || dir[0] == '\0')
    dir = "/tmp";
  char path[4096];
  if (snprintf(path, sizeof(path), "%s/afm-code-XXXXXX", dir) >=
      (int)sizeof(path))
    return afm_error(AFM_ERR_IO, "%s: TMPDIR '%s' is too long", name, dir);
  int fd = mkstemp(path);
  if (fd < 0)
    return afm_error(AFM_ERR_IO,
                     "%s: cannot create a temporary file for the code in "
                     "'%s': %s",
                     name, dir, strerror(errno));
  bool written = writeAll(fd, image, size);
  int writeErrno = errno;
  close(fd);
  if (!written) {
    unlink(path);
    return afm_error(AFM_ERR_IO, "%s: cannot write the code to '%s': %s", name,
                     path, strerror(writeErrno));
  }
  code->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  afm_status status = code->handle ? AFM_OK : dlopenError(name);
  unlink(path);
  return status;
}

afm_status afm_code_load(const char *name, const uint8_t *image, size_t size,
                         afm_code **out) {
  *out = NULL;
  afm_status checked = afm_code_check_image(name, image, size);
  if (checked != AFM_OK)
    return checked;
  afm_code *code = calloc(1, sizeof(*code));
  if (!code)
    return afm_error(AFM_ERR_MEMORY, "%s: out of memory loading the code",
                     name);
  code->fd = -1;
  afm_status status = AFM_ERR_IO;
#if defined(__linux__)
  status = loadFromMemfd(name, image, size, code);
#endif
  if (status == AFM_ERR_IO)
    status = loadFromTempFile(name, image, size, code);
  if (status != AFM_OK) {
    free(code);
    return status;
  }
  *out = code;
  return AFM_OK;
}

afm_status afm_code_entry(afm_code *code, const char *name, const char *symbol,
                          const char *role, afm_entry_fn *out) {
  dlerror(); /* clear any stale error */
  void *address = dlsym(code->handle, symbol);
  if (!address) {
    const char *reason = dlerror();
    char shown[2][256];
    return afm_error(AFM_ERR_CODE,
                     "%s: the code has no symbol '%s' (the %s entry point): %s",
                     name, afm_printable(symbol, shown[0], sizeof(shown[0])),
                     role,
                     afm_printable(reason ? reason : "symbol is null", shown[1],
                                   sizeof(shown[1])));
  }
  /* POSIX guarantees data and function pointers convert for dlsym. */
  memcpy(out, &address, sizeof(*out));
  return AFM_OK;
}

afm_status afm_code_facts(afm_code *code, const char *name,
                          afm_model_facts *out) {
  dlerror();
  const void *address = dlsym(code->handle, AFM_MODEL_FACTS_SYMBOL);
  if (!address)
    return afm_error(AFM_ERR_CODE,
                     "%s: the code exports no '%s': it cannot say what it "
                     "was compiled for (recompile it with this afm-compile)",
                     name, AFM_MODEL_FACTS_SYMBOL);
  memcpy(out, address, sizeof(*out));
  if (out->abi_version != AFM_KERNEL_ABI_VERSION)
    return afm_error(AFM_ERR_CODE,
                     "%s: the code's %s is for kernel ABI version %llu; this "
                     "runtime implements version %d",
                     name, AFM_MODEL_FACTS_SYMBOL,
                     (unsigned long long)out->abi_version,
                     AFM_KERNEL_ABI_VERSION);
  return AFM_OK;
}

const uint64_t *afm_code_adapter_slots(afm_code *code) {
  dlerror();
  return (const uint64_t *)dlsym(code->handle, AFM_ADAPTER_SLOTS_SYMBOL);
}

const uint64_t *afm_code_track_count(afm_code *code) {
  dlerror();
  return (const uint64_t *)dlsym(code->handle, AFM_TRACK_COUNT_SYMBOL);
}

void afm_code_free(afm_code *code) {
  if (!code)
    return;
  if (code->handle)
    dlclose(code->handle);
  if (code->fd >= 0)
    close(code->fd);
  free(code);
}
