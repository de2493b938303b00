//===- Roofline.cpp - an SVG roofline of the measured kernels -------------===//

#include "Roofline.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

using namespace afm_bench;

/// Maps intensity (FLOP per byte) and GFLOP/s to the plot, log10 axes
/// over 0.1..10^4 each.
namespace {
struct Axes {
  static constexpr double width = 760, height = 500, left = 70, right = 20,
                          top = 50, bottom = 50;
  static constexpr int min = -1, max = 4;
  double x(double intensity) const {
    return left + (std::log10(intensity) - min) / (max - min) *
                      (width - left - right);
  }
  double y(double gflops) const {
    return height - bottom -
           (std::log10(std::max(gflops, 0.1)) - min) / (max - min) *
               (height - top - bottom);
  }
};
} // namespace

static void writeGrid(llvm::raw_ostream &os, const Axes &a) {
  for (int e = a.min; e <= a.max; ++e) {
    double x = a.x(std::pow(10.0, e)), y = a.y(std::pow(10.0, e));
    os << llvm::formatv("<line x1='{0}' y1='{1}' x2='{0}' y2='{2}' "
                        "stroke='#ddd'/><text x='{0}' y='{3}' "
                        "text-anchor='middle'>1e{4}</text>\n",
                        x, a.top, a.height - a.bottom,
                        a.height - a.bottom + 15, e);
    os << llvm::formatv("<line x1='{0}' y1='{1}' x2='{2}' y2='{1}' "
                        "stroke='#ddd'/><text x='{3}' y='{4}' "
                        "text-anchor='end'>1e{5}</text>\n",
                        a.left, y, a.width - a.right, a.left - 5, y + 4, e);
  }
  os << llvm::formatv("<text x='{0}' y='{1}' text-anchor='middle'>FLOP per "
                      "byte read (weights, KV cache)</text>\n",
                      (a.left + a.width - a.right) / 2, a.height - 12);
  os << llvm::formatv("<text x='15' y='{0}' transform='rotate(-90 15 {0})' "
                      "text-anchor='middle'>GFLOP/s</text>\n",
                      (a.top + a.height - a.bottom) / 2);
}

/// Bandwidth * intensity up to the ridge, then the peak.
static void writeRoof(llvm::raw_ostream &os, const Axes &a, double gbytes,
                      double gflops, llvm::StringRef style) {
  double low = std::pow(10.0, a.min), high = std::pow(10.0, a.max);
  os << llvm::formatv("<polyline fill='none' stroke='#c33' stroke-width='2' "
                      "{0} points='{1},{2} {3},{4} {5},{4}'/>\n",
                      style, a.x(low), a.y(gbytes * low), a.x(gflops / gbytes),
                      a.y(gflops), a.x(high));
}

void afm_bench::writeRooflineSVG(llvm::raw_ostream &os,
                                 const MachineLimits &limits,
                                 llvm::ArrayRef<KernelResult> kernels) {
  Axes a;
  constexpr const char *oneColor = "#36c", *allColor = "#e80";
  constexpr const char *dashed = "stroke-dasharray='6,4'";
  bool all = limits.threads > 1;
  os << llvm::formatv("<svg xmlns='http://www.w3.org/2000/svg' width='{0}' "
                      "height='{1}' font-family='sans-serif' "
                      "font-size='11'>\n",
                      a.width, a.height);
  os << "<rect width='100%' height='100%' fill='white'/>\n";
  os << llvm::formatv(
      "<text x='{0}' y='18' font-size='13'>afm-bench roofline ({1}): 1 "
      "thread {2:f1} GB/s read, {3:f1} GFLOP/s FMA peak</text>\n",
      a.left, limits.fmaISA, limits.readBytesPerSecond1 / 1e9,
      limits.fmaFlopsPerSecond1 / 1e9);
  if (all)
    os << llvm::formatv("<text x='{0}' y='36' font-size='13'>{1} threads "
                        "{2:f1} GB/s read, {3:f1} GFLOP/s FMA peak "
                        "(dashed roof, orange points)</text>\n",
                        a.left, limits.threads,
                        limits.readBytesPerSecondN / 1e9,
                        limits.fmaFlopsPerSecondN / 1e9);
  writeGrid(os, a);
  writeRoof(os, a, limits.readBytesPerSecond1 / 1e9,
            limits.fmaFlopsPerSecond1 / 1e9, "");
  if (all)
    writeRoof(os, a, limits.readBytesPerSecondN / 1e9,
              limits.fmaFlopsPerSecondN / 1e9, dashed);

  // Each kernel: its 1-thread point, labelled, joined to its N-thread
  // point. Kernels without arithmetic (gathers) have no place here.
  auto point = [&](const KernelResult &k) {
    return std::make_pair(a.x(k.flops / k.bytesRead),
                          a.y(k.flops / k.secondsPerCall / 1e9));
  };
  std::vector<std::string> unplotted;
  for (const KernelResult &k : kernels) {
    if (k.flops > 0 || k.threads != 1)
      continue;
    unplotted.push_back(k.spec.name + " " + shapeLabel(k.spec));
  }
  for (const KernelResult &k : kernels)
    for (const KernelResult &one : kernels)
      if (k.flops > 0 && k.threads != 1 && one.threads == 1 &&
          one.spec.name == k.spec.name &&
          shapeLabel(one.spec) == shapeLabel(k.spec))
        os << llvm::formatv("<line x1='{0}' y1='{1}' x2='{0}' y2='{2}' "
                            "stroke='#999'/>\n",
                            point(k).first, point(one).second,
                            point(k).second);
  for (const KernelResult &k : kernels) {
    if (k.flops <= 0)
      continue;
    auto [x, y] = point(k);
    os << llvm::formatv("<circle cx='{0}' cy='{1}' r='4' fill='{2}'/>", x, y,
                        k.threads == 1 ? oneColor : allColor);
    // Labels right of the point, left of it on the right half.
    bool right = x < (a.left + a.width - a.right) / 2;
    if (k.threads == 1)
      os << llvm::formatv("<text x='{0}' y='{1}' text-anchor='{2}'>{3} "
                          "{4}</text>",
                          right ? x + 6 : x - 6, y - 4,
                          right ? "start" : "end", k.spec.name,
                          shapeLabel(k.spec));
    os << "\n";
  }
  if (!unplotted.empty())
    os << llvm::formatv("<text x='{0}' y='{1}'>Not shown (no arithmetic): "
                        "{2}</text>\n",
                        a.left + 5, a.height - a.bottom - 6,
                        llvm::join(unplotted, "; "));
  os << "</svg>\n";
}
