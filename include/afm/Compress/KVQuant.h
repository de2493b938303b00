//===- KVQuant.h - int8 KV-cache vectors -------------------------*- C++ -*-===//
//
// The KV cache at 8 bits per value (docs/semantics.md section 5): each head vector of
// `hd` floats becomes int8 codes and one f32 scale = absmax / 127.
//
// Rounding is half away from zero (std::round), clamped to [-127, 127],
// because the compiled kernels compute exactly clamp(round(v / scale)) with
// llvm.round, whose ties go away from zero; the reference must match them
// bit for bit. A zero vector has scale 0, codes 0, and dequantizes to 0.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_COMPRESS_KVQUANT_H
#define AFM_COMPRESS_KVQUANT_H

#include <cstddef>
#include <cstdint>

namespace mlir::afm {

/// Writes `hd` codes for `v` and returns the scale (f32 division v / scale).
float quantizeKV(const float *v, size_t hd, int8_t *codes);

/// out[i] = scale * codes[i].
void dequantizeKV(const int8_t *codes, float scale, size_t hd, float *out);

} // namespace mlir::afm

#endif // AFM_COMPRESS_KVQUANT_H
