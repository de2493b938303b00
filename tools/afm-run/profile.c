/*===- profile.c - where a decode step's time goes -------------------------===*
 *
 * Sampling with ITIMER_PROF: the kernel sends SIGPROF after each interval
 * of CPU time the process uses, to a thread that was using it, so samples
 * fall where CPU time is spent, on every thread. The handler only stores
 * the interrupted program counter. Symbolizing happens afterwards from the
 * files of the loaded objects (dl_iterate_phdr, then their ELF .symtab and
 * .dynsym), so the handler stays async-signal-safe.
 *
 *===----------------------------------------------------------------------===*/

#define _GNU_SOURCE

#include "profile.h"
#include "read_file.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))
#define AFM_PROFILE_SUPPORTED 1
#include <elf.h>
#include <link.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/time.h>
#include <time.h>
#include <ucontext.h>
#endif

#if AFM_PROFILE_SUPPORTED

enum { kMaxSamples = 1 << 20 };
static uintptr_t samples[kMaxSamples];
static atomic_long sampleCount;
/* The process's CPU time between start and stop: the kernel rounds the
 * timer to its tick, so samples are counted against this, not the
 * requested interval. */
static double cpuSecondsAtStart, cpuSeconds;

static double processCPUSeconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void onSample(int signal, siginfo_t *info, void *context) {
  (void)signal;
  (void)info;
  const ucontext_t *uc = (const ucontext_t *)context;
#if defined(__x86_64__)
  uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#else
  uintptr_t pc = (uintptr_t)uc->uc_mcontext.pc;
#endif
  long index = atomic_fetch_add_explicit(&sampleCount, 1, memory_order_relaxed);
  if (index < kMaxSamples)
    samples[index] = pc;
}

bool afm_profile_supported(void) { return true; }

bool afm_profile_start(long interval_us, char *error, size_t error_size) {
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  action.sa_sigaction = onSample;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  struct itimerval timer = {{0, interval_us}, {0, interval_us}};
  atomic_store(&sampleCount, 0);
  cpuSecondsAtStart = processCPUSeconds();
  cpuSeconds = 0;
  if (sigaction(SIGPROF, &action, NULL) != 0 ||
      setitimer(ITIMER_PROF, &timer, NULL) != 0) {
    snprintf(error, error_size, "cannot start the SIGPROF timer");
    return false;
  }
  return true;
}

void afm_profile_stop(void) {
  struct itimerval off;
  memset(&off, 0, sizeof(off));
  setitimer(ITIMER_PROF, &off, NULL);
  signal(SIGPROF, SIG_IGN); /* a signal still pending is dropped */
  cpuSeconds = processCPUSeconds() - cpuSecondsAtStart;
}

/*--- symbols of the loaded objects ----------------------------------------*/

typedef struct symbol {
  uintptr_t begin, end; /* end == begin when the size is unknown */
  const char *name;     /* into the object's string table copy */
  int object;           /* index into `objects` */
} symbol;

typedef struct object_file {
  char *image; /* the whole file; string tables point into it */
  bool model;  /* exports an afm entry point: the compiled model */
  bool main;   /* the afm-run executable, with the runtime in it */
} object_file;

typedef struct symbol_table {
  symbol *symbols;
  size_t size, capacity;
  object_file objects[64];
  int numObjects;
} symbol_table;

static bool inBounds(size_t offset, size_t length, size_t size) {
  return offset <= size && length <= size - offset;
}

static void addSymbol(symbol_table *table, symbol s) {
  if (table->size == table->capacity) {
    size_t capacity = table->capacity ? table->capacity * 2 : 4096;
    symbol *grown = realloc(table->symbols, capacity * sizeof(symbol));
    if (!grown)
      return;
    table->symbols = grown;
    table->capacity = capacity;
  }
  table->symbols[table->size++] = s;
}

/* Adds the function symbols of one ELF64 file loaded at `base`. */
static void readELFSymbols(symbol_table *table, const char *path,
                           uintptr_t base, bool main) {
  if (table->numObjects == (int)(sizeof(table->objects) /
                                 sizeof(table->objects[0])))
    return;
  size_t size = 0;
  char *image = afm_run_read_file(path, &size);
  if (!image)
    return;
  const Elf64_Ehdr *header = (const Elf64_Ehdr *)image;
  if (size < sizeof(*header) || memcmp(header->e_ident, ELFMAG, SELFMAG) != 0 ||
      header->e_ident[EI_CLASS] != ELFCLASS64 ||
      header->e_shentsize != sizeof(Elf64_Shdr) ||
      !inBounds(header->e_shoff, (size_t)header->e_shnum * sizeof(Elf64_Shdr),
                size)) {
    free(image);
    return;
  }
  int index = table->numObjects++;
  object_file *object = &table->objects[index];
  object->image = image;
  object->main = main;
  object->model = false;
  const Elf64_Shdr *sections = (const Elf64_Shdr *)(image + header->e_shoff);
  for (unsigned i = 0; i < header->e_shnum; ++i) {
    const Elf64_Shdr *section = &sections[i];
    if ((section->sh_type != SHT_SYMTAB && section->sh_type != SHT_DYNSYM) ||
        section->sh_link >= header->e_shnum ||
        !inBounds(section->sh_offset, section->sh_size, size))
      continue;
    const Elf64_Shdr *strings = &sections[section->sh_link];
    if (!inBounds(strings->sh_offset, strings->sh_size, size) ||
        strings->sh_size == 0 || image[strings->sh_offset + strings->sh_size -
                                       1] != '\0')
      continue;
    const Elf64_Sym *symbols = (const Elf64_Sym *)(image + section->sh_offset);
    size_t count = section->sh_size / sizeof(Elf64_Sym);
    for (size_t k = 0; k < count; ++k) {
      const Elf64_Sym *s = &symbols[k];
      if (ELF64_ST_TYPE(s->st_info) != STT_FUNC || s->st_shndx == SHN_UNDEF ||
          s->st_value == 0 || s->st_name >= strings->sh_size)
        continue;
      const char *name = image + strings->sh_offset + s->st_name;
      if (strcmp(name, "afm_decode") == 0 || strcmp(name, "afm_prefill") == 0)
        object->model = true;
      uintptr_t begin = base + (uintptr_t)s->st_value;
      addSymbol(table, (symbol){begin, begin + (uintptr_t)s->st_size, name,
                                index});
    }
  }
}

static int visitObject(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  symbol_table *table = (symbol_table *)data;
  bool main = info->dlpi_name == NULL || info->dlpi_name[0] == '\0';
  const char *path = main ? "/proc/self/exe" : info->dlpi_name;
  if (!main && strncmp(path, "linux-vdso", 10) == 0)
    return 0;
  readELFSymbols(table, path, (uintptr_t)info->dlpi_addr, main);
  return 0;
}

static int byBegin(const void *a, const void *b) {
  uintptr_t x = ((const symbol *)a)->begin, y = ((const symbol *)b)->begin;
  return x < y ? -1 : x > y;
}

/* The symbol `pc` falls in, or NULL. */
static const symbol *lookup(const symbol_table *table, uintptr_t pc) {
  size_t lo = 0, hi = table->size;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (table->symbols[mid].begin <= pc)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0)
    return NULL;
  const symbol *s = &table->symbols[lo - 1];
  return pc < s->end || s->end == s->begin ? s : NULL;
}

/*--- grouping -------------------------------------------------------------*/

typedef struct group {
  char name[96];
  long samples;
} group;

/* In `name`, the first `marker` and the digits right after it ("_task"
 * in "main_task12_linear_trampoline"): returns what follows the digits
 * ("_linear_trampoline"), or NULL when `marker` is not in `name`;
 * `*digits` says whether at least one digit followed it. */
static const char *afterNumberedMarker(const char *name, const char *marker,
                                       int *digits) {
  const char *at = strstr(name, marker);
  if (!at)
    return NULL;
  const char *first = at + strlen(marker), *p = first;
  while (*p >= '0' && *p <= '9')
    ++p;
  *digits = p != first;
  return p;
}

/* The op after "_loop<N>_" in `name`, the name afm-outline-parallel-loops
 * gives a loop it outlines ("<parent>_loop<N>_<op>"), or NULL. */
static const char *outlinedLoopOp(const char *name) {
  int digits = 0;
  const char *p = afterNumberedMarker(name, "_loop", &digits);
  return p && digits && *p == '_' && p[1] ? p + 1 : NULL;
}

/* The group of a sample in `s` (NULL: no symbol), written to `out`. */
static void classify(const symbol_table *table, const symbol *s, char *out,
                     size_t size) {
  if (!s) {
    snprintf(out, size, "(unknown: no symbol)");
    return;
  }
  const object_file *object = &table->objects[s->object];
  if (object->model) {
    /* <entry>_task<N>[_<op>]_trampoline */
    int digits = 0;
    const char *p = afterNumberedMarker(s->name, "_task", &digits);
    if (p) {
      size_t length = strlen(p);
      const char *suffix = "_trampoline";
      size_t suffixLength = strlen(suffix);
      if (*p == '_' && length > suffixLength &&
          strcmp(p + length - suffixLength, suffix) == 0) {
        int opLength = (int)(length - suffixLength - 1);
        snprintf(out, size, "%.*s", opLength, p + 1);
        return;
      }
      /* <entry>_task<N>_<kind>_loop<M>_<op>: a loop outlined from a task
       * (a PT track's layers), run on the task's thread like its op. */
      const char *op = outlinedLoopOp(p);
      if (op) {
        snprintf(out, size, "%s", op);
        return;
      }
      if (digits) {
        snprintf(out, size, "(tasks without an op name)");
        return;
      }
    }
    /* <entry>_loop<N>_<op>: a serial loop outlined from an entry point
     * (afm-outline-parallel-loops), named after its op like a task. */
    const char *op = outlinedLoopOp(s->name);
    if (op) {
      snprintf(out, size, "(serial code: %s)", op);
      return;
    }
    snprintf(out, size, "(serial code: entry points, between loops)");
    return;
  }
  if (object->main) {
    snprintf(out, size, "(runtime: %s)",
             strncmp(s->name, "afm_thread_pool", 15) == 0 ||
                     strstr(s->name, "worker") || strstr(s->name, "Worker")
                 ? "thread pool"
                 : s->name);
    return;
  }
  snprintf(out, size, "(library: %s)", s->name);
}

static int bySamples(const void *a, const void *b) {
  long x = ((const group *)a)->samples, y = ((const group *)b)->samples;
  return x > y ? -1 : x < y;
}

void afm_profile_report(FILE *out, const char *span, long runs,
                        const char *run) {
  long taken = atomic_load(&sampleCount);
  long count = taken < kMaxSamples ? taken : kMaxSamples;
  symbol_table table;
  memset(&table, 0, sizeof(table));
  dl_iterate_phdr(visitObject, &table);
  if (table.size)
    qsort(table.symbols, table.size, sizeof(symbol), byBegin);

  group *groups = calloc(64, sizeof(group));
  int numGroups = 0;
  for (long i = 0; groups && i < count; ++i) {
    char name[96];
    classify(&table, lookup(&table, samples[i]), name, sizeof(name));
    int g = 0;
    while (g < numGroups && strcmp(groups[g].name, name) != 0)
      ++g;
    if (g == numGroups) {
      if (numGroups >= 63)
        snprintf(name, sizeof(name), "(everything else)");
      g = 0;
      while (g < numGroups && strcmp(groups[g].name, name) != 0)
        ++g;
      if (g == numGroups) {
        snprintf(groups[g].name, sizeof(groups[g].name), "%s", name);
        ++numGroups;
      }
    }
    ++groups[g].samples;
  }
  if (groups)
    qsort(groups, (size_t)numGroups, sizeof(group), bySamples);

  double perSample = count ? cpuSeconds * 1e3 / (double)count : 0.0;
  double perRun = runs > 0 ? 1.0 / (double)runs : 0.0;
  fprintf(out,
          "profile: %ld samples over %.1f ms of CPU time (all threads), %s\n",
          count, cpuSeconds * 1e3, span);
  char column[32];
  snprintf(column, sizeof(column), "cpu_ms/%s", run);
  fprintf(out, "  %-46s %14s %7s\n", "where (afm op, or code outside ops)",
          column, "share");
  for (int g = 0; g < numGroups; ++g)
    fprintf(out, "  %-46s %14.3f %6.1f%%\n", groups[g].name,
            (double)groups[g].samples * perSample * perRun,
            count ? 100.0 * (double)groups[g].samples / (double)count : 0.0);
  if (taken > kMaxSamples)
    fprintf(out, "  (%ld samples past the first %d were dropped)\n",
            taken - kMaxSamples, kMaxSamples);
  free(groups);
  for (int i = 0; i < table.numObjects; ++i)
    free(table.objects[i].image);
  free(table.symbols);
}

#else /* not supported */

bool afm_profile_supported(void) { return false; }

bool afm_profile_start(long interval_us, char *error, size_t error_size) {
  (void)interval_us;
  snprintf(error, error_size,
           "--profile needs Linux on x86-64 or AArch64 (SIGPROF sampling)");
  return false;
}

void afm_profile_stop(void) {}

void afm_profile_report(FILE *out, const char *span, long runs,
                        const char *run) {
  (void)out;
  (void)span;
  (void)runs;
  (void)run;
}

#endif
