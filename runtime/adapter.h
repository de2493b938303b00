/*===- adapter.h - what sessions need of an adapter ----------------*- C -*-===*/

#ifndef AFM_RUNTIME_ADAPTER_H
#define AFM_RUNTIME_ADAPTER_H

#include "afm/runtime.h"

#include <stdint.h>

void afm_adapter_retain(afm_adapter *adapter);
const afm_model *afm_adapter_model(const afm_adapter *adapter);

/* Writes every adapter slot of `model` in `arena`: the adapter's factors,
 * zeros where it has none (and everywhere for a NULL adapter). */
void afm_adapter_write_slots(const afm_model *model,
                             const afm_adapter *adapter, uint8_t *arena);

#endif /* AFM_RUNTIME_ADAPTER_H */
