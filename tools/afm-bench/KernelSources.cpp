//===- KernelSources.cpp - the kernels afm-bench times, as graphs ---------===//

#include "KernelSources.h"

#include "dialects/afm/IR/AFMDialect.h"

#include "llvm/Support/FormatVariadic.h"

#include <cstring>

using namespace afm_bench;

std::vector<KernelSpec> afm_bench::defaultKernels() {
  using F = KernelFormat;
  std::vector<KernelSpec> kernels;
  for (auto [n, k] : {std::pair<int64_t, int64_t>{4096, 4096}, {2048, 8192}}) {
    kernels.push_back({"f32 GEMV", F::F32, 1, n, k});
    kernels.push_back({"2-bit GEMV", F::Q2, 1, n, k});
    kernels.push_back({"2-bit GEMV (int8 activations)", F::Q2, 1, n, k, 0, 0,
                       /*int8Activations=*/true});
    kernels.push_back({"ASTC GEMV (CPU transcode)", F::ASTC, 1, n, k});
    kernels.push_back({"ASTC GEMV (int8 activations)", F::ASTC, 1, n, k, 0,
                       0, /*int8Activations=*/true});
  }
  kernels.push_back({"f32 GEMM (tosa.matmul)", F::F32Matmul, 512, 4096, 4096});
  kernels.push_back({"f32 GEMM (afm.linear)", F::F32, 512, 4096, 4096});
  kernels.push_back({"2-bit GEMM", F::Q2, 512, 4096, 4096});
  kernels.push_back({"2-bit GEMM (int8 activations)", F::Q2, 512, 4096, 4096,
                     0, 0, /*int8Activations=*/true});
  kernels.push_back({"ASTC GEMM (CPU transcode)", F::ASTC, 512, 4096, 4096});
  // The paper's tied 4-bit LM head (150K x 3072) over one decode row.
  kernels.push_back({"4-bit LM head", F::Q4, 1, 150000, 3072});
  kernels.push_back({"4-bit LM head (int8 activations)", F::Q4, 1, 150000,
                     3072, 0, 0, /*int8Activations=*/true});
  // A tied head whose width is not a multiple of 16 groups of 32 (Qwen2
  // 0.5B's 151936 x 896; Gemma 3 1B's 1152 is another) keeps its codes in
  // plain order and runs the split-K 4-bit GEMV, not the interleaved one.
  kernels.push_back({"4-bit LM head (plain order)", F::Q4, 1, 151936, 896});
  // An untied head of the same shape in the linear layers' formats
  // (lm_head_format "q2" and "astc").
  for (bool int8 : {false, true}) {
    kernels.push_back({int8 ? "2-bit LM head (int8 activations)"
                            : "2-bit LM head",
                       F::Q2, 1, 150000, 3072, 0, 0, int8, /*lmHead=*/true});
    kernels.push_back({int8 ? "ASTC LM head (int8 activations)"
                            : "ASTC LM head",
                       F::ASTC, 1, 150000, 3072, 0, 0, int8, /*lmHead=*/true});
  }
  // A decode step's row, and a prefill chunk's rows, of a 32K x 4096 table.
  for (int64_t tokens : {1, 512})
    kernels.push_back(
        {"4-bit embedding gather", F::Q4Embedding, tokens, 32768, 4096});
  kernels.push_back({"int8-KV attention decode", F::I8Attention, 1, 4096, 128,
                     /*heads=*/32, /*kvHeads=*/8});
  // The same with the query rounded to int8 (int8_query: what a model
  // with int8 activations and an int8 cache compiles to).
  kernels.push_back({"int8-KV attention decode (int8 query)", F::I8Attention,
                     1, 4096, 128, /*heads=*/32, /*kvHeads=*/8,
                     /*int8Activations=*/true});
  // The 3B preset's heads (afm-on-device-3b: 24 query and 8 KV heads):
  // three query heads share each KV head, a quarter fewer multiply-adds
  // per cache byte than above.
  kernels.push_back({"int8-KV attention decode (int8 query)", F::I8Attention,
                     1, 4096, 128, /*heads=*/24, /*kvHeads=*/8,
                     /*int8Activations=*/true});
  // An f16 cache (kv_cache_dtype "f16") with the 3B preset's heads: twice
  // the bytes per position of int8, the same arithmetic in f32.
  kernels.push_back({"f16-KV attention decode", F::F16Attention, 1, 4096, 128,
                     /*heads=*/24, /*kvHeads=*/8});
  // An f32 cache (kv_cache_dtype "f32") with the same heads: four times
  // int8's bytes per position.
  kernels.push_back({"f32-KV attention decode", F::F32Attention, 1, 4096, 128,
                     /*heads=*/24, /*kvHeads=*/8});
  // A prefill chunk of 128 rows at the end of a 1024-token prompt, with
  // the 3B preset's heads (afm-on-device-3b: 24 query and 8 KV heads).
  kernels.push_back({"int8-KV attention prefill (int8 query)",
                     F::I8Attention, 128, 1024, 128, /*heads=*/24,
                     /*kvHeads=*/8, /*int8Activations=*/true});
  return kernels;
}

std::string afm_bench::shapeLabel(const KernelSpec &s) {
  switch (s.format) {
  case KernelFormat::Q4Embedding:
    return llvm::formatv("{0} of {1}x{2}", s.m, s.n, s.k);
  case KernelFormat::I8Attention:
  case KernelFormat::F16Attention:
  case KernelFormat::F32Attention:
    if (s.m > 1)
      return llvm::formatv("{0} rows to {1}, {2}/{3}x{4}", s.m, s.n, s.heads,
                           s.kvHeads, s.k);
    return llvm::formatv("ctx {0}, {1}/{2}x{3}", s.n, s.heads, s.kvHeads,
                         s.k);
  default:
    return llvm::formatv("{0}x{1}x{2}", s.m, s.n, s.k);
  }
}

//===----------------------------------------------------------------------===//
// Argument contents
//===----------------------------------------------------------------------===//

using Fill = std::function<void(uint8_t *, size_t, std::mt19937 &)>;

/// Uniform floats in [-scale, scale].
static Fill floats(float scale) {
  return [scale](uint8_t *bytes, size_t size, std::mt19937 &random) {
    std::uniform_real_distribution<float> uniform(-scale, scale);
    for (size_t i = 0; i < size / 4; ++i)
      reinterpret_cast<float *>(bytes)[i] = uniform(random);
  };
}

/// Any code bytes.
static Fill randomBytes() {
  return [](uint8_t *bytes, size_t size, std::mt19937 &random) {
    for (size_t i = 0; i < size; ++i)
      bytes[i] = static_cast<uint8_t>(random());
  };
}

/// Random finite f16 values in (-2, 2): random bits with the exponent's
/// top bit cleared (no infinities or NaNs).
static Fill randomHalves() {
  return [](uint8_t *bytes, size_t size, std::mt19937 &random) {
    for (size_t i = 0; i + 1 < size; i += 2) {
      uint16_t bits = static_cast<uint16_t>(random()) & 0xBFFF;
      std::memcpy(bytes + i, &bits, 2);
    }
  };
}

/// Every element `value` (f32 or i64 scales and positions, f16 bits).
template <typename T> static Fill constant(T value) {
  return [value](uint8_t *bytes, size_t size, std::mt19937 &) {
    for (size_t i = 0; i < size / sizeof(T); ++i)
      std::memcpy(bytes + i * sizeof(T), &value, sizeof(T));
  };
}

/// i32 token ids spread over a table of `rows` rows.
static Fill tokenIds(int64_t rows) {
  return [rows](uint8_t *bytes, size_t size, std::mt19937 &random) {
    std::uniform_int_distribution<int32_t> id(0, rows - 1);
    for (size_t i = 0; i < size / 4; ++i)
      reinterpret_cast<int32_t *>(bytes)[i] = id(random);
  };
}

static size_t bytes(int64_t count, int64_t elementBytes) {
  return static_cast<size_t>(count * elementBytes);
}

//===----------------------------------------------------------------------===//
// Sources
//===----------------------------------------------------------------------===//

/// y = x @ W^T through tosa.matmul on W stored [K, N] (the ONNX importer's
/// form of a MatMul).
static KernelSource matmulSource(const KernelSpec &s, const std::string &x,
                                 const std::string &y) {
  int64_t m = s.m, n = s.n, k = s.k;
  std::string mlir = llvm::formatv(
      "func.func @main(%x: {0}, %w: tensor<{2}x{3}xf32>) -> {1} {{\n"
      "  %sa = tosa.const_shape {{values = dense<[1, {4}, {2}]> : "
      "tensor<3xindex>} : () -> !tosa.shape<3>\n"
      "  %sb = tosa.const_shape {{values = dense<[1, {2}, {3}]> : "
      "tensor<3xindex>} : () -> !tosa.shape<3>\n"
      "  %sy = tosa.const_shape {{values = dense<[{4}, {3}]> : "
      "tensor<2xindex>} : () -> !tosa.shape<2>\n"
      "  %a = tosa.reshape %x, %sa : ({0}, !tosa.shape<3>) -> "
      "tensor<1x{4}x{2}xf32>\n"
      "  %b = tosa.reshape %w, %sb : (tensor<{2}x{3}xf32>, "
      "!tosa.shape<3>) -> tensor<1x{2}x{3}xf32>\n"
      "  %z = \"tosa.const\"() <{{values = dense<0.0> : "
      "tensor<1xf32>}> : () -> tensor<1xf32>\n"
      "  %c = tosa.matmul %a, %b, %z, %z : (tensor<1x{4}x{2}xf32>, "
      "tensor<1x{2}x{3}xf32>, tensor<1xf32>, tensor<1xf32>) -> "
      "tensor<1x{4}x{3}xf32>\n"
      "  %y = tosa.reshape %c, %sy : (tensor<1x{4}x{3}xf32>, "
      "!tosa.shape<2>) -> {1}\n"
      "  return %y : {1}\n}\n",
      x, y, k, n, m);
  KernelSource source;
  source.mlir = std::move(mlir);
  source.arguments = {{bytes(k * n, 4), Rotation::Weights, floats(0.01f)}};
  return source;
}

/// y = x @ W^T through afm.linear on a plain or compressed W.
static KernelSource linearSource(const KernelSpec &s) {
  int64_t m = s.m, n = s.n, k = s.k;
  const char *op = s.lmHead ? "afm.lm_head" : "afm.linear";
  std::string x = llvm::formatv("tensor<{0}x{1}xf32>", m, k);
  std::string y = llvm::formatv("tensor<{0}x{1}xf32>", m, n);
  KernelSource source;
  if (s.format == KernelFormat::F32Matmul) {
    source = matmulSource(s, x, y);
  } else if (s.format == KernelFormat::F32) {
    source.mlir = llvm::formatv(
        "func.func @main(%x: {0}, %w: tensor<{2}x{3}xf32>) -> {1} {{\n"
        "  %y = afm.linear %x, %w : {0}, tensor<{2}x{3}xf32> -> {1}\n"
        "  return %y : {1}\n}\n",
        x, y, n, k);
    source.arguments = {{bytes(n * k, 4), Rotation::Weights, floats(0.01f)}};
  } else if (s.format == KernelFormat::Q2) {
    int64_t row = (k + 3) / 4;
    source.mlir = llvm::formatv(
        "func.func @main(%x: {0}, %codes: tensor<{2}x{4}xi8>, "
        "%scales: tensor<1xf32>) -> {1} {{\n"
        "  %w = afm.bound_weight %codes, %scales : tensor<{2}x{4}xi8>, "
        "tensor<1xf32> -> !afm.q2<{2}x{3}, per_tensor>\n"
        "  %y = {5} %x, %w : {0}, !afm.q2<{2}x{3}, per_tensor> "
        "-> {1}\n  return %y : {1}\n}\n",
        x, y, n, k, row, op);
    source.arguments = {{bytes(n * row, 1), Rotation::Weights, randomBytes()},
                        {4, Rotation::Weights, constant(0.01f)}};
  } else if (s.format == KernelFormat::Q4) {
    int64_t row = k / 2, groups = k / 32;
    source.mlir = llvm::formatv(
        "func.func @main(%x: {0}, %codes: tensor<{2}x{4}xi8>, "
        "%scales: tensor<{2}x{5}xf32>) -> {1} {{\n"
        "  %w = afm.bound_weight %codes, %scales : tensor<{2}x{4}xi8>, "
        "tensor<{2}x{5}xf32> -> !afm.q4<{2}x{3}, group = 32>\n"
        "  %y = afm.lm_head %x, %w : {0}, !afm.q4<{2}x{3}, group = 32> "
        "-> {1}\n  return %y : {1}\n}\n",
        x, y, n, k, row, groups);
    source.arguments = {{bytes(n * row, 1), Rotation::Weights, randomBytes()},
                        {bytes(n * groups, 4), Rotation::Weights,
                         constant(0.01f)}};
  } else {
    int64_t nb = (n + 5) / 6,
            kb = mlir::afm::astcStoredBlockColumns(k);
    source.mlir = llvm::formatv(
        "func.func @main(%x: {0}, %codes: tensor<{4}x3x{5}xi32>, "
        "%tail: tensor<{4}x3x{5}xi16>, %scales: tensor<{4}x{5}xf16>, "
        "%biases: tensor<{4}x{5}xf16>) -> {1} {{\n"
        "  %w = afm.bound_weight %codes, %tail, %scales, %biases : "
        "tensor<{4}x3x{5}xi32>, tensor<{4}x3x{5}xi16>, tensor<{4}x{5}xf16>, "
        "tensor<{4}x{5}xf16> -> !afm.astc<{2}x{3}, block = 6x6, offset "
        "= linear_segment>\n"
        "  %y = {6} %x, %w : {0}, !afm.astc<{2}x{3}, block = "
        "6x6, offset = linear_segment> -> {1}\n"
        "  return %y : {1}\n}\n",
        x, y, n, k, nb, kb, op);
    uint16_t half = 0x2000; // f16 2^-7
    source.arguments = {
        {bytes(nb * 3 * kb, 4), Rotation::Weights, randomBytes()},
        {bytes(nb * 3 * kb, 2), Rotation::Weights, randomBytes()},
        {bytes(nb * kb, 2), Rotation::Weights, constant(half)},
        {bytes(nb * kb, 2), Rotation::Weights, constant(half)}};
  }
  source.arguments.insert(source.arguments.begin(),
                          {bytes(m * k, 4), Rotation::None, floats(1.0f)});
  source.outputBytes = bytes(m * n, 4);
  source.flops = 2.0 * m * n * k;
  // int8 activations: every product is an integer dot product.
  source.fmaFlops = s.int8Activations ? 0 : source.flops;
  source.bytesRead = 0;
  for (const KernelArgument &argument : source.arguments)
    if (argument.rotation == Rotation::Weights)
      source.bytesRead += argument.bytes;
  return source;
}

/// M token rows of a 4-bit [N, K] table, group 32: reads each row's codes
/// and scales, no arithmetic worth counting.
static KernelSource embeddingSource(const KernelSpec &s) {
  int64_t tokens = s.m, rows = s.n, cols = s.k, group = 32;
  KernelSource source;
  source.mlir = llvm::formatv(
      "func.func @main(%tokens: tensor<{0}xi32>, %codes: tensor<{1}x{3}xi8>, "
      "%scales: tensor<{1}x{4}xf32>) -> tensor<{0}x{2}xf32> {{\n"
      "  %w = afm.bound_weight %codes, %scales : tensor<{1}x{3}xi8>, "
      "tensor<{1}x{4}xf32> -> !afm.q4<{1}x{2}, group = {5}>\n"
      "  %y = afm.embedding %w[%tokens] : !afm.q4<{1}x{2}, group = {5}>, "
      "tensor<{0}xi32> -> tensor<{0}x{2}xf32>\n"
      "  return %y : tensor<{0}x{2}xf32>\n}\n",
      tokens, rows, cols, cols / 2, cols / group, group);
  source.arguments = {
      {bytes(tokens, 4), Rotation::Indices, tokenIds(rows)},
      {bytes(rows * cols / 2, 1), Rotation::Weights, randomBytes()},
      {bytes(rows * cols / group, 4), Rotation::Weights, constant(0.01f)}};
  source.outputBytes = bytes(tokens * cols, 4);
  source.flops = 0;
  source.bytesRead = tokens * (cols / 2.0 + cols / group * 4.0);
  return source;
}

/// The element of a decode attention kernel's KV cache.
struct CacheElement {
  const char *type; // the cache memref's element type
  int64_t bytes;    // bytes of one element
  Fill fill;        // the cache's contents
  bool scaled;      // an i8 cache takes one f32 scale a position and head
};

static CacheElement cacheElement(KernelFormat format) {
  switch (format) {
  case KernelFormat::F16Attention:
    return {"f16", 2, randomHalves(), false};
  case KernelFormat::F32Attention:
    return {"f32", 4, floats(1.0f), false};
  default:
    return {"i8", 1, randomBytes(), true};
  }
}

/// One decode step of global attention over an i8, f16 or f32 cache of N
/// positions (N - 1 cached, the new one appended at slot N - 1, the same on
/// every call): reads every element of the cache, and an i8 cache's scales.
static KernelSource attentionSource(const KernelSpec &s) {
  int64_t t = s.m, context = s.n, dim = s.k, heads = s.heads,
          kvHeads = s.kvHeads;
  CacheElement element = cacheElement(s.format);
  std::string q = llvm::formatv("tensor<{0}x{1}x{2}xf32>", t, heads, dim);
  std::string kv = llvm::formatv("tensor<{0}x{1}x{2}xf32>", t, kvHeads, dim);
  std::string cache = llvm::formatv("memref<2x{0}x{1}x{2}x{3}>", kvHeads,
                                    context, dim, element.type);
  // An i8 cache takes its scales as one more argument and operand.
  std::string scalesArgument, scalesOperand, scalesType;
  if (element.scaled) {
    std::string scales =
        llvm::formatv("memref<2x{0}x{1}xf32>", kvHeads, context).str();
    scalesArgument = ", %scales: " + scales;
    scalesOperand = " scales %scales";
    scalesType = ", " + scales;
  }
  KernelSource source;
  source.mlir = llvm::formatv(
      "func.func @main(%q: {0}, %k: {1}, %v: {1}, %pos: tensor<1xi64>, "
      "%cache: {2}{3}) -> {0} {{\n"
      "  %c0 = arith.constant 0 : index\n"
      "  %p64 = tensor.extract %pos[%c0] : tensor<1xi64>\n"
      "  %p = arith.index_cast %p64 : i64 to index\n"
      "  %o = afm.attention global %q, %k, %v into %cache{4} at %p {6}: "
      "{0}, {1}, {1}, {2}{5} -> {0}\n"
      "  return %o : {0}\n}\n",
      q, kv, cache, scalesArgument, scalesOperand, scalesType,
      s.int8Activations ? "{int8_query} " : "");
  size_t cacheBytes = bytes(2 * kvHeads * context * dim, element.bytes),
         scaleBytes = element.scaled ? bytes(2 * kvHeads * context, 4) : 0;
  source.arguments = {
      {bytes(t * heads * dim, 4), Rotation::None, floats(1.0f)},
      {bytes(t * kvHeads * dim, 4), Rotation::None, floats(1.0f)},
      {bytes(t * kvHeads * dim, 4), Rotation::None, floats(1.0f)},
      {8, Rotation::None, constant<int64_t>(context - t)},
      {cacheBytes, Rotation::Weights, element.fill}};
  if (element.scaled)
    source.arguments.push_back(
        {scaleBytes, Rotation::Weights, constant(0.01f)});
  source.outputBytes = bytes(t * heads * dim, 4);
  // Scores and weighted values: 2 multiply-adds per query head, visible
  // position and dimension. The cache holds context - t positions, which
  // every row sees; row i also sees the chunk's first i + 1 rows.
  double visible = double(t) * (context - t) + double(t) * (t + 1) / 2;
  source.flops = 4.0 * heads * dim * visible;
  // One query row with int8_query takes its scores (half the products)
  // as integer dot products over the tiled keys (DecodeAttention.cpp);
  // the weighted values, and every product of a prefill chunk, are f32.
  source.fmaFlops =
      t == 1 && s.int8Activations ? source.flops / 2 : source.flops;
  source.bytesRead = cacheBytes + scaleBytes;
  return source;
}

KernelSource afm_bench::buildKernelSource(const KernelSpec &spec) {
  switch (spec.format) {
  case KernelFormat::Q4Embedding:
    return embeddingSource(spec);
  case KernelFormat::I8Attention:
  case KernelFormat::F16Attention:
  case KernelFormat::F32Attention:
    return attentionSource(spec);
  default:
    return linearSource(spec);
  }
}
