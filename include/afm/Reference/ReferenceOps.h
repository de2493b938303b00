//===- ReferenceOps.h - the model math, one token at a time -----*- C++ -*-===//
//
// The operations of docs/semantics.md sections 2-4, written directly and obviously so
// that they can serve as the test oracle: dot products, norms and softmax
// accumulate in double, RoPE angles and their sine and cosine are computed
// in double, and every result is stored as f32.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_REFERENCE_REFERENCEOPS_H
#define AFM_REFERENCE_REFERENCEOPS_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <vector>

namespace mlir::afm::reference {

/// RMSNorm: y = x / sqrt(mean(x^2) + eps) * g. `g` has x.size() elements.
std::vector<float> rmsNorm(llvm::ArrayRef<float> x, llvm::ArrayRef<float> g,
                           double eps);

/// y = x W^T for a row-major `weight` of shape [out, x.size()].
std::vector<float> linear(llvm::ArrayRef<float> x,
                          llvm::ArrayRef<float> weight);

/// `x` as an int8-activation kernel multiplies it (`linear_activations:
/// "int8"`): codes round-half-even(x * (127 / max|x|)) (all 0 for a zero
/// row), scaled back by max|x| / 127.
std::vector<float> roundToInt8Activations(llvm::ArrayRef<float> x);

/// `linear(x, weight)`, of `x` rounded by `roundToInt8Activations` first
/// when `int8Inputs`: a compressed projection on int8 activations.
std::vector<float> project(llvm::ArrayRef<float> x,
                           llvm::ArrayRef<float> weight, bool int8Inputs);

/// RoPE ("rotate half") of one head vector at `position`: each pair
/// (i, i + hd/2), i < hd/2, rotates by the angle p * theta^(-2i/hd).
void applyRope(llvm::MutableArrayRef<float> head, int64_t position,
               double theta);

/// RoPE with the angle p * invFreq[i] for pair (i, i + hd/2): scaled RoPE
/// (rope_scaling); `invFreq` has hd/2 entries.
void applyRope(llvm::MutableArrayRef<float> head, int64_t position,
               llvm::ArrayRef<double> invFreq);

/// SwiGLU's gating: silu(gate) * up, element-wise (silu(x) = x sigmoid(x)).
std::vector<float> swiglu(llvm::ArrayRef<float> gate,
                          llvm::ArrayRef<float> up);

/// GeGLU's gating: gelu(gate) * up, element-wise, with PyTorch's tanh
/// GELU: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
std::vector<float> geglu(llvm::ArrayRef<float> gate,
                         llvm::ArrayRef<float> up);

/// The KV head that query head `head` reads under GQA: head / (H / G).
int64_t kvHeadOf(int64_t head, int64_t numHeads, int64_t numKVHeads);

/// The first position that a query at `position` attends to: 0 for a
/// global layer (`window` == 0), max(0, position - window + 1) for a local
/// layer with window `window`.
int64_t firstVisiblePosition(int64_t position, int64_t window);

/// Head counts and size of an attention layer.
struct AttentionShape {
  int64_t numHeads;
  int64_t numKVHeads;
  int64_t headDim;
};

/// Causal GQA attention of the query (H * hd values) at position p over
/// the keys and values of positions 0..p (one row of G * hd values per
/// position, p + 1 rows): each head h attends with scale `scale` (0:
/// 1/sqrt(hd)) to positions `firstVisible`..p of KV head kvHeadOf(h).
/// Returns H * hd values.
std::vector<float> attention(llvm::ArrayRef<float> query,
                             llvm::ArrayRef<float> keys,
                             llvm::ArrayRef<float> values,
                             const AttentionShape &shape,
                             int64_t firstVisible, double scale = 0.0);

/// x += y, element-wise (the residual connection).
void addInPlace(llvm::MutableArrayRef<float> x, llvm::ArrayRef<float> y);

/// The indices of the `k` largest `scores`, largest first; of equal scores
/// the lower index comes first (is selected first). k <= scores.size().
std::vector<int64_t> topK(llvm::ArrayRef<float> scores, int64_t k);

/// softmax(x) in double: exp(x_i - max x) / sum_j exp(x_j - max x).
std::vector<double> softmax(llvm::ArrayRef<float> x);

/// The weights of an MoE layer with `numExperts` experts of width F over
/// inputs of width d, row-major: router [E, d], gateProj and upProj
/// [E, F, d], downProj [E, d, F].
struct MoEWeights {
  llvm::ArrayRef<float> router, gateProj, upProj, downProj;
  int64_t numExperts;
  /// Whether the expert projections multiply their inputs rounded to int8
  /// (`roundToInt8Activations`), as int8 activations over compressed
  /// experts do. The router always multiplies f32.
  bool int8Inputs = false;
};

/// An MoE FFN (docs/semantics.md sections 2-4): router logits r = x W_r^T, the `k`
/// largest selected (`topK`), gates g = softmax of the selected logits, and
/// the output sum_j g_j * down_e(silu(gate_e(x)) * up_e(x)) over the
/// selected experts e = e_j, accumulated in double. The selected experts,
/// in the order of `topK`, go to `selected` when it is not null.
std::vector<float> mixtureOfExperts(llvm::ArrayRef<float> x,
                                    const MoEWeights &weights, int64_t k,
                                    std::vector<int64_t> *selected = nullptr);

} // namespace mlir::afm::reference

#endif // AFM_REFERENCE_REFERENCEOPS_H
