/*===- profile.h - where a decode step's time goes ----------------*- C -*-===*
 *
 * A sampling profiler for afm-run --profile and --profile-prefill. While
 * it runs, a SIGPROF timer
 * records the interrupted instruction of whichever thread used the CPU.
 * The report resolves each sample against the symbol tables of the loaded
 * objects and groups the compiled model's samples by the afm op its
 * parallel tasks were lowered from: afm-outline-parallel-loops names a task
 * `<entry>_task<N>_<op>` (for instance afm_decode_task12_linear).
 *
 *===----------------------------------------------------------------------===*/

#ifndef AFM_RUN_PROFILE_H
#define AFM_RUN_PROFILE_H

#include <stdbool.h>
#include <stdio.h>

/* Whether this build can sample (Linux on x86-64 or AArch64). */
bool afm_profile_supported(void);

/* Starts sampling CPU time every `interval_us` microseconds. False, with
 * the reason in `error` (size `error_size`), when it cannot. */
bool afm_profile_start(long interval_us, char *error, size_t error_size);

/* Stops sampling. */
void afm_profile_stop(void);

/* Prints the samples taken between start and stop, grouped by op, as CPU
 * milliseconds per run over `runs` runs of what was sampled (a decode
 * step, a prefill: `run` names one, for the column's title) and as shares
 * of all samples. `span` says what the samples covered, for the header:
 * "40 decode steps of 12.34 ms wall each". */
void afm_profile_report(FILE *out, const char *span, long runs,
                        const char *run);

#endif /* AFM_RUN_PROFILE_H */
