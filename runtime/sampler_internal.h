/*===- sampler_internal.h - the sampler's distributions --------*- C -*-===*
 *
 * Speculative decoding (speculative.c) needs what afm_sampler_sample draws
 * from, not only one draw: the target's and the draft's distributions
 * after the same warpers, to accept a drafted token with probability
 * min(1, p/q) and to draw a correction from max(0, p - q). Not public API.
 *
 *===----------------------------------------------------------------------===*/

#ifndef AFM_RUNTIME_SAMPLER_INTERNAL_H
#define AFM_RUNTIME_SAMPLER_INTERNAL_H

#include "afm/generate.h"

/* The distribution afm_sampler_sample draws from, normalized, into
 * probs[0..id_limit): zero outside the candidates; greedy is one-hot on the
 * largest logit (lowest id on ties). */
afm_status afm_sampler_distribution(afm_sampler *sampler, const float *logits,
                                    double *probs);

/* Uniform in [0, 1) from the sampler's generator. */
double afm_sampler_uniform(afm_sampler *sampler);

/* One draw from weights[0..id_limit) (nonnegative, `total` their sum > 0). */
int32_t afm_sampler_draw(afm_sampler *sampler, const double *weights,
                         double total);

int32_t afm_sampler_id_limit(const afm_sampler *sampler);

#endif /* AFM_RUNTIME_SAMPLER_INTERNAL_H */
