//===- KernelSources.h - the kernels afm-bench times, as graphs -*- C++ -*-===//
//
// Each kernel is a small `@main` over tensors in afm/TOSA ops, compiled by
// the real pipeline (afm-graph-codegen). Its weights (or KV cache) are
// arguments, so a run can rotate through copies larger than the caches.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_TOOLS_AFM_BENCH_KERNELSOURCES_H
#define AFM_TOOLS_AFM_BENCH_KERNELSOURCES_H

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace afm_bench {

enum class KernelFormat {
  F32,         // afm.linear, W [N, K] f32
  F32Matmul,   // tosa.matmul, W [K, N] f32
  Q2,          // afm.linear over !afm.q2, per-tensor scale
  ASTC,        // afm.linear over !afm.astc (CPU transcode)
  Q4,          // afm.lm_head over !afm.q4, group 32 (a tied 4-bit head)
  Q4Embedding, // afm.embedding over !afm.q4, group 32
  I8Attention,  // afm.attention over an i8 KV cache (with its scales)
  F16Attention, // afm.attention over an f16 KV cache
  F32Attention, // afm.attention over an f32 KV cache
};

/// One kernel at one shape. Linear kernels: y[M, N] = x[M, K] @ W^T. The
/// embedding gathers M tokens' rows of an [N, K] table. Attention: M query
/// tokens against a cache of N positions, head dimension K, `heads` query
/// and `kvHeads` KV heads.
struct KernelSpec {
  std::string name; // "f32 GEMV", "2-bit GEMM", ...
  KernelFormat format;
  int64_t m, n, k;
  int64_t heads = 0, kvHeads = 0;
  /// Compiled with int8-quantized activations (integer dot products).
  bool int8Activations = false;
  /// A 2-bit or ASTC weight multiplied as an untied LM head (`afm.lm_head`,
  /// lm_head_format) instead of a linear layer.
  bool lmHead = false;
};

/// The kernels issue 7 names, at the shapes it names.
std::vector<KernelSpec> defaultKernels();

/// The shape for people: "1x4096x4096", "512 of 32768x4096",
/// "ctx 4096, 32/8x128".
std::string shapeLabel(const KernelSpec &spec);

/// How a call picks an argument's buffer.
enum class Rotation {
  None,    // one buffer (activations)
  Weights, // one per weight copy: the footprint rotation
  Indices, // one per index set, one more sets than weight copies, so the
           // (copy, indices) pairs do not repeat before copies^2 calls
};

/// One pointer argument of `@main`, after the host API and before the
/// output.
struct KernelArgument {
  size_t bytes;
  Rotation rotation;
  std::function<void(uint8_t *, size_t, std::mt19937 &)> fill;
};

struct KernelSource {
  std::string mlir;
  std::vector<KernelArgument> arguments;
  size_t outputBytes = 0;
  /// Arithmetic per call (2 per multiply-add; 0: none worth counting) and
  /// bytes of weights or KV cache read per call.
  double flops = 0, bytesRead = 0;
  /// The part of `flops` done by f32 multiply-adds, which the FMA peak
  /// bounds; the rest are integer dot products (vpdpbusd, sdot), which
  /// it does not.
  double fmaFlops = 0;
};

KernelSource buildKernelSource(const KernelSpec &spec);

} // namespace afm_bench

#endif // AFM_TOOLS_AFM_BENCH_KERNELSOURCES_H
