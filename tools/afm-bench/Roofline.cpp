//===- Roofline.cpp - an SVG roofline of the measured kernels -------------===//

#include "Roofline.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

using namespace afm_bench;

void afm_bench::writeRooflineSVG(llvm::raw_ostream &os,
                                 const MachineLimits &limits,
                                 llvm::ArrayRef<KernelResult> kernels) {
  constexpr double width = 760, height = 480, left = 70, right = 20, top = 30,
                   bottom = 50;
  // Axes: intensity 0.1..10^4 FLOP/byte, 0.1..10^4 GFLOP/s (log10).
  constexpr double xMin = -1, xMax = 4, yMin = -1, yMax = 4;
  auto px = [&](double intensity) {
    return left + (std::log10(intensity) - xMin) / (xMax - xMin) *
                      (width - left - right);
  };
  auto py = [&](double gflops) {
    return height - bottom -
           (std::log10(gflops) - yMin) / (yMax - yMin) *
               (height - top - bottom);
  };
  double bandwidth = limits.readBytesPerSecond1 / 1e9;
  double peak = limits.fmaFlopsPerSecond1 / 1e9;
  os << llvm::formatv("<svg xmlns='http://www.w3.org/2000/svg' width='{0}' "
                      "height='{1}' font-family='sans-serif' font-size='11'>\n",
                      width, height);
  os << "<rect width='100%' height='100%' fill='white'/>\n";
  os << llvm::formatv("<text x='{0}' y='18' font-size='13'>afm-bench "
                      "roofline, one thread ({1}): {2:f1} GB/s read, {3:f1} "
                      "GFLOP/s FMA peak</text>\n",
                      left, limits.fmaISA, bandwidth, peak);
  for (int e = xMin; e <= xMax; ++e) {
    double x = px(std::pow(10.0, e));
    os << llvm::formatv("<line x1='{0}' y1='{1}' x2='{0}' y2='{2}' "
                        "stroke='#ddd'/><text x='{0}' y='{3}' "
                        "text-anchor='middle'>1e{4}</text>\n",
                        x, top, height - bottom, height - bottom + 15, e);
  }
  for (int e = yMin; e <= yMax; ++e) {
    double y = py(std::pow(10.0, e));
    os << llvm::formatv("<line x1='{0}' y1='{1}' x2='{2}' y2='{1}' "
                        "stroke='#ddd'/><text x='{3}' y='{4}' "
                        "text-anchor='end'>1e{5}</text>\n",
                        left, y, width - right, left - 5, y + 4, e);
  }
  os << llvm::formatv("<text x='{0}' y='{1}' text-anchor='middle'>FLOP per "
                      "weight byte</text>\n",
                      (left + width - right) / 2, height - 12);
  os << llvm::formatv("<text x='15' y='{0}' transform='rotate(-90 15 {0})' "
                      "text-anchor='middle'>GFLOP/s</text>\n",
                      (top + height - bottom) / 2);
  // The roofs: bandwidth * intensity up to the ridge, then the peak.
  double ridge = peak / bandwidth;
  os << llvm::formatv("<polyline fill='none' stroke='#c33' stroke-width='2' "
                      "points='{0},{1} {2},{3} {4},{3}'/>\n",
                      px(std::pow(10.0, xMin)),
                      py(bandwidth * std::pow(10.0, xMin)), px(ridge),
                      py(peak), px(std::pow(10.0, xMax)));
  for (const KernelResult &k : kernels) {
    double intensity = k.flops / k.weightBytes;
    double gflops = k.flops / k.secondsPerCall / 1e9;
    double x = px(intensity), y = py(std::max(gflops, 0.1));
    os << llvm::formatv("<circle cx='{0}' cy='{1}' r='4' fill='#36c'/>"
                        "<text x='{2}' y='{3}'>{4} {5}x{6}x{7}</text>\n",
                        x, y, x + 6, y - 4, k.spec.name, k.spec.m, k.spec.n,
                        k.spec.k);
  }
  os << "</svg>\n";
}
