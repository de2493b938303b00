//===- KernelBench.cpp - time afm kernels compiled for this machine -------===//

#include "KernelBench.h"

#include "afm/Compiler/HostLibrary.h"
#include "afm/Target/TargetDescription.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <chrono>
#include <cstring>
#include <random>

using namespace afm_bench;
using namespace mlir;

std::vector<KernelSpec> afm_bench::defaultKernels() {
  std::vector<KernelSpec> kernels;
  for (auto [n, k] : {std::pair<int64_t, int64_t>{4096, 4096}, {2048, 8192}}) {
    kernels.push_back({"f32 GEMV", "f32", 1, n, k});
    kernels.push_back({"2-bit GEMV", "q2", 1, n, k});
    kernels.push_back({"ASTC GEMV (CPU transcode)", "astc", 1, n, k});
  }
  kernels.push_back({"f32 GEMM (tosa.matmul)", "f32-kn", 512, 4096, 4096});
  kernels.push_back({"f32 GEMM (afm.linear)", "f32", 512, 4096, 4096});
  kernels.push_back({"2-bit GEMM", "q2", 512, 4096, 4096});
  kernels.push_back({"ASTC GEMM (CPU transcode)", "astc", 512, 4096, 4096});
  return kernels;
}

namespace {
/// A kernel's source and its weight arguments' sizes in bytes.
struct KernelSource {
  std::string mlir;
  std::vector<size_t> weightParts;
};
} // namespace

static KernelSource buildSource(const KernelSpec &s) {
  int64_t m = s.m, n = s.n, k = s.k;
  std::string x = llvm::formatv("tensor<{0}x{1}xf32>", m, k);
  std::string y = llvm::formatv("tensor<{0}x{1}xf32>", m, n);
  if (s.format == "f32-kn")
    return {llvm::formatv(
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
                x, y, k, n, m)
                .str(),
            {static_cast<size_t>(k * n * 4)}};
  if (s.format == "f32")
    return {llvm::formatv("func.func @main(%x: {0}, %w: tensor<{2}x{3}xf32>) "
                          "-> {1} {{\n"
                          "  %y = afm.linear %x, %w : {0}, tensor<{2}x{3}xf32> "
                          "-> {1}\n  return %y : {1}\n}\n",
                          x, y, n, k)
                .str(),
            {static_cast<size_t>(n * k * 4)}};
  if (s.format == "q2") {
    int64_t bytes = (k + 3) / 4;
    return {llvm::formatv(
                "func.func @main(%x: {0}, %codes: tensor<{2}x{4}xi8>, "
                "%scales: tensor<1xf32>) -> {1} {{\n"
                "  %w = afm.bound_weight %codes, %scales : tensor<{2}x{4}xi8>, "
                "tensor<1xf32> -> !afm.q2<{2}x{3}, per_tensor>\n"
                "  %y = afm.linear %x, %w : {0}, !afm.q2<{2}x{3}, per_tensor> "
                "-> {1}\n  return %y : {1}\n}\n",
                x, y, n, k, bytes)
                .str(),
            {static_cast<size_t>(n * bytes), 4}};
  }
  int64_t nb = (n + 5) / 6, kb = (k + 5) / 6;
  return {llvm::formatv(
              "func.func @main(%x: {0}, %codes: tensor<{4}x6x{5}x3xi8>, "
              "%scales: tensor<{4}x{5}xf16>, %biases: tensor<{4}x{5}xf16>) -> "
              "{1} {{\n"
              "  %w = afm.bound_weight %codes, %scales, %biases : "
              "tensor<{4}x6x{5}x3xi8>, tensor<{4}x{5}xf16>, "
              "tensor<{4}x{5}xf16> -> !afm.astc<{2}x{3}, block = 6x6, offset "
              "= linear_segment>\n"
              "  %y = afm.linear %x, %w : {0}, !afm.astc<{2}x{3}, block = "
              "6x6, offset = linear_segment> -> {1}\n"
              "  return %y : {1}\n}\n",
              x, y, n, k, nb, kb)
              .str(),
          {static_cast<size_t>(nb * 6 * kb * 3),
           static_cast<size_t>(nb * kb * 2), static_cast<size_t>(nb * kb * 2)}};
}

llvm::Expected<KernelResult> afm_bench::runKernel(MLIRContext &context,
                                                  const KernelSpec &spec,
                                                  size_t footprintBytes,
                                                  double minSeconds) {
  KernelSource source = buildSource(spec);
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(source.mlir, &context);
  if (!module)
    return llvm::createStringError("cannot parse the " + spec.name +
                                   " kernel");
  mlir::afm::HostLibrary library;
  if (llvm::Error error =
          library.compileAndLoad(*module, mlir::afm::getHostTarget()))
    return std::move(error);
  void *function = library.lookup("main");
  if (!function)
    return llvm::createStringError("the kernel library has no main");

  size_t weightBytes = 0;
  for (size_t part : source.weightParts)
    weightBytes += part;
  int copies = std::max<size_t>(1, (footprintBytes + weightBytes - 1) /
                                       weightBytes);
  std::mt19937 random(7);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  mlir::afm::HostBuffer x(spec.m * spec.k * 4), y(spec.m * spec.n * 4);
  for (int64_t i = 0; i < spec.m * spec.k; ++i)
    x.data<float>()[i] = uniform(random);
  // Weights: small floats; any code bytes; scales 0.01 or f16 2^-7.
  std::vector<std::vector<mlir::afm::HostBuffer>> weights(copies);
  for (auto &copy : weights)
    for (auto [index, part] : llvm::enumerate(source.weightParts)) {
      copy.emplace_back(part);
      auto *bytes = copy.back().data<uint8_t>();
      if (llvm::StringRef(spec.format).starts_with("f32")) {
        for (size_t i = 0; i < part / 4; ++i)
          reinterpret_cast<float *>(bytes)[i] = uniform(random) * 0.01f;
      } else if (index == 0) {
        for (size_t i = 0; i < part; ++i)
          bytes[i] = static_cast<uint8_t>(random());
      } else if (spec.format == "q2") {
        *reinterpret_cast<float *>(bytes) = 0.01f;
      } else {
        for (size_t i = 0; i < part / 2; ++i)
          reinterpret_cast<uint16_t *>(bytes)[i] = 0x2000; // f16 2^-7
      }
    }

  auto call = [&](int copy) -> llvm::Error {
    std::vector<void *> args = {x.data()};
    for (auto &part : weights[copy])
      args.push_back(part.data());
    args.push_back(y.data());
    return mlir::afm::callGraph(function, args);
  };
  if (llvm::Error error = call(0))
    return std::move(error);
  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  int calls = 0;
  double elapsed = 0;
  while (elapsed < minSeconds || calls < 3) {
    if (llvm::Error error = call(calls % copies))
      return std::move(error);
    ++calls;
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  }
  KernelResult result;
  result.spec = spec;
  result.secondsPerCall = elapsed / calls;
  result.flops = 2.0 * spec.m * spec.n * spec.k;
  result.weightBytes = weightBytes;
  result.copies = copies;
  return result;
}
