/*===- argmax.h - the largest of a row of logits ------------------*- C -*-===*
 *
 * The one scan both greedy paths make over a decode step's logits: the
 * sampler's greedy draw and afm_session_argmax. A scalar loop that
 * compares each logit with the best so far is a chain of dependent
 * compares; kept over kArgmaxLanes independent lanes it is a loop the
 * compiler vectorizes, and the first id holding the maximum is found
 * after. At a vocabulary of 150000 the sampler's greedy draw takes 11-19
 * us this way on the Granite Rapids VM, against 494 us through its
 * general loop (each logit converted, stored and counted), time in which
 * the step's other threads wait.
 *
 *===----------------------------------------------------------------------===*/

#ifndef AFM_RUNTIME_ARGMAX_H
#define AFM_RUNTIME_ARGMAX_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

enum { kArgmaxLanes = 16 };

/* One logit into a lane's maximum and NaN flag: a NaN is noted and never
 * becomes the maximum (a compare with a NaN is false). */
static inline void afm_argmax_lane(float *max, bool *sawNan, float logit) {
  *sawNan |= logit != logit;
  *max = logit > *max ? logit : *max;
}

/* The lowest id in [0, count) of the largest logit that is not NaN; 0 when
 * every logit is NaN (or count is 0). *sawNan says whether any was NaN, for
 * callers to whom a NaN is an error. */
static inline int32_t afm_argmax(const float *logits, int32_t count,
                                 bool *sawNan) {
  float lane[kArgmaxLanes];
  bool nan[kArgmaxLanes];
  for (int j = 0; j < kArgmaxLanes; ++j) {
    lane[j] = -INFINITY;
    nan[j] = false;
  }
  int32_t id = 0;
  for (; id + kArgmaxLanes <= count; id += kArgmaxLanes)
    for (int j = 0; j < kArgmaxLanes; ++j)
      afm_argmax_lane(&lane[j], &nan[j], logits[id + j]);
  for (int j = 0; id + j < count; ++j)
    afm_argmax_lane(&lane[j], &nan[j], logits[id + j]);

  float top = -INFINITY;
  *sawNan = false;
  for (int j = 0; j < kArgmaxLanes; ++j) {
    *sawNan |= nan[j];
    top = lane[j] > top ? lane[j] : top;
  }
  /* Only when every logit is NaN does no id hold `top` (-inf then). */
  for (id = 0; id < count; ++id)
    if (logits[id] == top)
      return id;
  return 0;
}

#endif /* AFM_RUNTIME_ARGMAX_H */
