//===- ReferenceOps.cpp - the model math, one token at a time -------------===//
//
// Clarity over speed: plain loops, double accumulation, f32 results.
//
//===----------------------------------------------------------------------===//

#include "afm/Reference/ReferenceOps.h"

#include <algorithm>
#include <cassert>
#include <cmath>

using namespace mlir::afm::reference;
using llvm::ArrayRef;

/// The dot product of `a` and `b` (same size), accumulated in double.
static double dot(const float *a, const float *b, int64_t size) {
  double sum = 0.0;
  for (int64_t i = 0; i < size; ++i)
    sum += static_cast<double>(a[i]) * static_cast<double>(b[i]);
  return sum;
}

std::vector<float> mlir::afm::reference::rmsNorm(ArrayRef<float> x,
                                                 ArrayRef<float> g,
                                                 double eps) {
  assert(g.size() == x.size() && "one gain per element");
  double meanSquare = dot(x.data(), x.data(), x.size()) / x.size();
  double inverseRms = 1.0 / std::sqrt(meanSquare + eps);
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    y[i] = static_cast<float>(x[i] * inverseRms * g[i]);
  return y;
}

std::vector<float> mlir::afm::reference::linear(ArrayRef<float> x,
                                                ArrayRef<float> weight) {
  assert(!x.empty() && weight.size() % x.size() == 0 && "weight is [out, in]");
  size_t out = weight.size() / x.size();
  std::vector<float> y(out);
  for (size_t row = 0; row < out; ++row)
    y[row] = static_cast<float>(
        dot(weight.data() + row * x.size(), x.data(), x.size()));
  return y;
}

std::vector<float>
mlir::afm::reference::roundToInt8Activations(ArrayRef<float> x) {
  float amax = 0.0f;
  for (float v : x)
    amax = std::max(amax, std::fabs(v));
  // The same f32 operations as the compiled kernel (Q2Int8Matmul.cpp).
  float inverse = amax > 0.0f ? 127.0f / amax : 0.0f;
  float step = amax / 127.0f;
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    y[i] = static_cast<float>(std::nearbyint(x[i] * inverse)) * step;
  return y;
}

std::vector<float> mlir::afm::reference::project(ArrayRef<float> x,
                                                 ArrayRef<float> weight,
                                                 bool int8Inputs) {
  return int8Inputs ? linear(roundToInt8Activations(x), weight)
                    : linear(x, weight);
}

void mlir::afm::reference::applyRope(llvm::MutableArrayRef<float> head,
                                     int64_t position, double theta) {
  std::vector<double> invFreq(head.size() / 2);
  for (size_t i = 0; i < invFreq.size(); ++i)
    invFreq[i] = std::pow(theta, -2.0 * i / static_cast<double>(head.size()));
  applyRope(head, position, invFreq);
}

void mlir::afm::reference::applyRope(llvm::MutableArrayRef<float> head,
                                     int64_t position,
                                     ArrayRef<double> invFreq) {
  assert(invFreq.size() * 2 == head.size() && "one frequency per pair");
  int64_t half = head.size() / 2;
  for (int64_t i = 0; i < half; ++i) {
    double angle = static_cast<double>(position) * invFreq[i];
    double c = std::cos(angle), s = std::sin(angle);
    double a = head[i], b = head[i + half];
    head[i] = static_cast<float>(a * c - b * s);
    head[i + half] = static_cast<float>(a * s + b * c);
  }
}

std::vector<float> mlir::afm::reference::swiglu(ArrayRef<float> gate,
                                                ArrayRef<float> up) {
  assert(gate.size() == up.size() && "gate and up have the FFN width");
  std::vector<float> y(gate.size());
  for (size_t i = 0; i < gate.size(); ++i) {
    double g = gate[i];
    double silu = g / (1.0 + std::exp(-g));
    y[i] = static_cast<float>(silu * up[i]);
  }
  return y;
}

std::vector<float> mlir::afm::reference::geglu(ArrayRef<float> gate,
                                               ArrayRef<float> up) {
  assert(gate.size() == up.size() && "gate and up have the FFN width");
  const double k = std::sqrt(2.0 / M_PI);
  std::vector<float> y(gate.size());
  for (size_t i = 0; i < gate.size(); ++i) {
    double g = gate[i];
    double gelu = 0.5 * g * (1.0 + std::tanh(k * (g + 0.044715 * g * g * g)));
    y[i] = static_cast<float>(gelu * up[i]);
  }
  return y;
}

int64_t mlir::afm::reference::kvHeadOf(int64_t head, int64_t numHeads,
                                       int64_t numKVHeads) {
  return head / (numHeads / numKVHeads);
}

int64_t mlir::afm::reference::firstVisiblePosition(int64_t position,
                                                   int64_t window) {
  if (window == 0)
    return 0;
  return std::max<int64_t>(0, position - window + 1);
}

std::vector<float> mlir::afm::reference::attention(
    ArrayRef<float> query, ArrayRef<float> keys, ArrayRef<float> values,
    const AttentionShape &shape, int64_t firstVisible, double scale) {
  int64_t hd = shape.headDim;
  int64_t rowSize = shape.numKVHeads * hd;
  assert(keys.size() == values.size() && keys.size() % rowSize == 0);
  int64_t last = keys.size() / rowSize - 1; // The query's own position.
  if (scale == 0.0)
    scale = 1.0 / std::sqrt(static_cast<double>(hd));
  std::vector<float> out(shape.numHeads * hd);
  std::vector<double> scores(last + 1);
  for (int64_t h = 0; h < shape.numHeads; ++h) {
    const float *q = query.data() + h * hd;
    int64_t kvOffset = kvHeadOf(h, shape.numHeads, shape.numKVHeads) * hd;
    // Softmax over the visible positions, shifted by the maximum.
    double maxScore = -INFINITY;
    for (int64_t p = firstVisible; p <= last; ++p) {
      scores[p] = dot(q, keys.data() + p * rowSize + kvOffset, hd) * scale;
      maxScore = std::max(maxScore, scores[p]);
    }
    double total = 0.0;
    for (int64_t p = firstVisible; p <= last; ++p)
      total += (scores[p] = std::exp(scores[p] - maxScore));
    for (int64_t i = 0; i < hd; ++i) {
      double sum = 0.0;
      for (int64_t p = firstVisible; p <= last; ++p)
        sum += scores[p] * values[p * rowSize + kvOffset + i];
      out[h * hd + i] = static_cast<float>(sum / total);
    }
  }
  return out;
}

void mlir::afm::reference::addInPlace(llvm::MutableArrayRef<float> x,
                                      ArrayRef<float> y) {
  assert(x.size() == y.size() && "residual and update have the same size");
  for (size_t i = 0; i < x.size(); ++i)
    x[i] += y[i];
}

std::vector<int64_t> mlir::afm::reference::topK(ArrayRef<float> scores,
                                                int64_t k) {
  assert(k >= 0 && static_cast<size_t>(k) <= scores.size());
  // k rounds of "the first largest score not taken yet": a strict > keeps
  // the lowest index among equal scores.
  std::vector<bool> taken(scores.size(), false);
  std::vector<int64_t> chosen;
  for (int64_t round = 0; round < k; ++round) {
    int64_t best = -1;
    for (size_t i = 0; i < scores.size(); ++i)
      if (!taken[i] && (best < 0 || scores[i] > scores[best]))
        best = i;
    taken[best] = true;
    chosen.push_back(best);
  }
  return chosen;
}

std::vector<double> mlir::afm::reference::softmax(ArrayRef<float> x) {
  double maxValue = -INFINITY;
  for (float value : x)
    maxValue = std::max(maxValue, static_cast<double>(value));
  std::vector<double> y(x.size());
  double total = 0.0;
  for (size_t i = 0; i < x.size(); ++i)
    total += (y[i] = std::exp(x[i] - maxValue));
  for (double &value : y)
    value /= total;
  return y;
}

std::vector<float> mlir::afm::reference::mixtureOfExperts(
    ArrayRef<float> x, const MoEWeights &weights, int64_t k,
    std::vector<int64_t> *selected) {
  int64_t numExperts = weights.numExperts;
  assert(weights.router.size() == numExperts * x.size() &&
         "the router is [E, d]");
  std::vector<float> logits = linear(x, weights.router);
  std::vector<int64_t> experts = topK(logits, k);
  std::vector<float> chosenLogits;
  for (int64_t e : experts)
    chosenLogits.push_back(logits[e]);
  std::vector<double> gates = softmax(chosenLogits);
  // Expert e's block of a stacked [E, ...] tensor.
  auto expert = [&](ArrayRef<float> stacked, int64_t e) {
    size_t size = stacked.size() / numExperts;
    return stacked.slice(e * size, size);
  };
  bool int8 = weights.int8Inputs;
  std::vector<double> sum(x.size(), 0.0);
  for (size_t j = 0; j < experts.size(); ++j) {
    int64_t e = experts[j];
    std::vector<float> y =
        project(swiglu(project(x, expert(weights.gateProj, e), int8),
                       project(x, expert(weights.upProj, e), int8)),
                expert(weights.downProj, e), int8);
    for (size_t i = 0; i < sum.size(); ++i)
      sum[i] += gates[j] * y[i];
  }
  if (selected)
    *selected = experts;
  return std::vector<float>(sum.begin(), sum.end());
}
