//===- KVQuant.cpp - int8 KV-cache vectors --------------------------------===//

#include "afm/Compress/KVQuant.h"

#include <algorithm>
#include <cmath>

using namespace mlir::afm;

float mlir::afm::quantizeKV(const float *v, size_t hd, int8_t *codes) {
  float absMax = 0.0f;
  for (size_t i = 0; i < hd; ++i)
    absMax = std::max(absMax, std::fabs(v[i]));
  float scale = absMax / 127.0f;
  for (size_t i = 0; i < hd; ++i) {
    float q = scale == 0.0f ? 0.0f : std::round(v[i] / scale);
    codes[i] = static_cast<int8_t>(std::clamp(q, -127.0f, 127.0f));
  }
  return scale;
}

void mlir::afm::dequantizeKV(const int8_t *codes, float scale, size_t hd,
                             float *out) {
  for (size_t i = 0; i < hd; ++i)
    out[i] = scale * static_cast<float>(codes[i]);
}
