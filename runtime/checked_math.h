/*===- checked_math.h - overflow-checked unsigned arithmetic -------*- C -*-===*
 *
 * Offsets and sizes in an .afmb come from the file, so every sum and product
 * of them is checked before it is compared or used.
 *
 *===----------------------------------------------------------------------===*/

#ifndef AFM_RUNTIME_CHECKED_MATH_H
#define AFM_RUNTIME_CHECKED_MATH_H

#include <stdbool.h>
#include <stdint.h>

/* *sum = a + b; false if it does not fit in 64 bits. */
static inline bool afm_checked_add(uint64_t a, uint64_t b, uint64_t *sum) {
  if (a > UINT64_MAX - b)
    return false;
  *sum = a + b;
  return true;
}

/* *product = a * b; false if it does not fit in 64 bits. */
static inline bool afm_checked_mul(uint64_t a, uint64_t b, uint64_t *product) {
  if (a != 0 && b > UINT64_MAX / a)
    return false;
  *product = a * b;
  return true;
}

/* *out = value rounded up to a multiple of `alignment` (a power of two);
 * false on overflow. */
static inline bool afm_checked_align(uint64_t value, uint64_t alignment,
                                     uint64_t *out) {
  uint64_t bumped;
  if (!afm_checked_add(value, alignment - 1, &bumped))
    return false;
  *out = bumped & ~(alignment - 1);
  return true;
}

static inline bool afm_is_power_of_two(uint64_t value) {
  return value != 0 && (value & (value - 1)) == 0;
}

#endif /* AFM_RUNTIME_CHECKED_MATH_H */
