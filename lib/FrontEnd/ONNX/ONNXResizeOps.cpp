//===- ONNXResizeOps.cpp - ONNX Resize ------------------------------------===//
//
// Resize (and Upsample, its older form) in the nearest, linear and cubic
// modes: each output element maps its position back to an input
// coordinate per dimension (coordinate_transformation_mode), then reads
// the nearest element (nearest_mode) or interpolates between the 2
// (linear) or 4 (cubic, Keys' kernel with cubic_coeff_a, exclude_outside)
// neighbours of every dimension that changes. One index-computing
// linalg.generic; the coordinates are computed in f64, as the ONNX
// reference does. The output shape comes from the constant `sizes` or
// `scales` input.
//
//===----------------------------------------------------------------------===//

#include "ONNXElementwiseSupport.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::afm::onnx_import;

namespace {
/// What a Resize node asks for, its string attributes checked.
enum class Interpolation { Nearest, Linear, Cubic };

struct ResizeSpec {
  Interpolation interpolation;
  /// cubic_coeff_a, and whether exclude_outside drops (and renormalizes
  /// away) the cubic taps outside the input.
  double cubicA;
  bool excludeOutside;
  std::string coordinateMode, nearestMode;
  llvm::SmallVector<int64_t> resultShape;
  llvm::SmallVector<double> scales;
  /// tf_crop_and_resize's region, start and end per dimension as
  /// fractions of the input.
  llvm::SmallVector<double> roiStart, roiEnd;
  double extrapolation;
};
} // namespace

static std::string stringAttribute(ONNXNode &node, llvm::StringRef name,
                                   llvm::StringRef fallback) {
  const onnx::AttributeProto *attr = node.getAttribute(name);
  return attr ? attr->s() : fallback.str();
}

/// The float values of constant input `index` (roi, scales), or none
/// when the input is absent or empty.
static FailureOr<llvm::SmallVector<double>>
getConstantFloats(ONNXNode &node, unsigned index, llvm::StringRef what) {
  if (!node.hasInput(index))
    return llvm::SmallVector<double>();
  DenseElementsAttr attr = node.getConstantInput(index);
  if (!attr || !isa<FloatType>(attr.getElementType()))
    return node.emitError() << "the " << what
                            << " operand must be a constant float tensor "
                               "(shapes are static; bind the input to "
                               "specialize the model)";
  llvm::SmallVector<double> values;
  for (const APFloat &value : attr.getValues<APFloat>())
    values.push_back(value.convertToDouble());
  return values;
}

/// Upsample and Resize before opset 11 scale only, by input 1 (Upsample
/// before opset 9: its `scales` attribute), with asymmetric coordinates
/// and nearest meaning floor.
static FailureOr<ResizeSpec> getLegacyResizeSpec(ONNXNode &node,
                                                 RankedTensorType type) {
  ResizeSpec spec;
  std::string mode = stringAttribute(node, "mode", "nearest");
  if (mode != "nearest" && mode != "linear")
    return node.emitError() << "mode '" << mode << "' is not one of "
                            << "nearest, linear";
  spec.interpolation =
      mode == "nearest" ? Interpolation::Nearest : Interpolation::Linear;
  spec.cubicA = -0.75;
  spec.excludeOutside = false;
  spec.coordinateMode = "asymmetric";
  spec.nearestMode = "floor";
  spec.extrapolation = 0;
  FailureOr<llvm::SmallVector<double>> scales;
  if (node.opset < 9) {
    const onnx::AttributeProto *attr = node.getAttribute("scales");
    if (!attr)
      return node.emitError() << "missing attribute 'scales'";
    scales = llvm::SmallVector<double>(attr->floats().begin(),
                                       attr->floats().end());
  } else {
    scales = getConstantFloats(node, 1, "scales");
  }
  if (failed(scales))
    return failure();
  if (static_cast<int64_t>(scales->size()) != type.getRank())
    return node.emitError() << "scales has " << scales->size()
                            << " values for rank " << type.getRank();
  for (auto [dim, scale] : llvm::enumerate(*scales)) {
    if (!(scale > 0))
      return node.emitError() << "scale " << scale << " is not positive";
    spec.resultShape.push_back(
        static_cast<int64_t>(std::floor(type.getDimSize(dim) * scale)));
  }
  spec.scales = *scales;
  return spec;
}

static FailureOr<ResizeSpec> getResizeSpec(ONNXNode &node,
                                           RankedTensorType type) {
  if (node.proto.op_type() == "Upsample" || node.opset < 11)
    return getLegacyResizeSpec(node, type);
  if (node.getIntAttribute("antialias", 0) != 0)
    return node.emitError() << "antialias is not supported";
  if (node.getAttribute("axes"))
    return node.emitError() << "the 'axes' attribute is not supported";
  if (stringAttribute(node, "keep_aspect_ratio_policy", "stretch") !=
      "stretch")
    return node.emitError() << "keep_aspect_ratio_policy other than "
                               "'stretch' is not supported";
  ResizeSpec spec;
  std::string mode = stringAttribute(node, "mode", "nearest");
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    return node.emitError() << "mode '" << mode << "' is not one of "
                            << "nearest, linear, cubic";
  spec.interpolation = mode == "nearest"  ? Interpolation::Nearest
                       : mode == "linear" ? Interpolation::Linear
                                          : Interpolation::Cubic;
  const onnx::AttributeProto *cubicA = node.getAttribute("cubic_coeff_a");
  spec.cubicA = cubicA ? cubicA->f() : -0.75;
  spec.excludeOutside = node.getIntAttribute("exclude_outside", 0) != 0;
  spec.coordinateMode =
      stringAttribute(node, "coordinate_transformation_mode", "half_pixel");
  if (!llvm::is_contained({"half_pixel", "pytorch_half_pixel",
                           "align_corners", "asymmetric",
                           "tf_half_pixel_for_nn", "tf_crop_and_resize"},
                          spec.coordinateMode))
    return node.emitError() << "coordinate_transformation_mode '"
                            << spec.coordinateMode << "' is not supported";
  spec.nearestMode =
      stringAttribute(node, "nearest_mode", "round_prefer_floor");
  if (!llvm::is_contained(
          {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"},
          spec.nearestMode))
    return node.emitError() << "nearest_mode '" << spec.nearestMode
                            << "' is not supported";
  const onnx::AttributeProto *extrapolation =
      node.getAttribute("extrapolation_value");
  spec.extrapolation = extrapolation ? extrapolation->f() : 0.0;

  int64_t rank = type.getRank();
  auto scales = getConstantFloats(node, 2, "scales");
  if (failed(scales))
    return failure();
  if (!scales->empty()) {
    if (node.hasInput(3))
      return node.emitError() << "only one of scales and sizes may be given";
    if (static_cast<int64_t>(scales->size()) != rank)
      return node.emitError() << "scales has " << scales->size()
                              << " values for rank " << rank;
    for (auto [dim, scale] : llvm::enumerate(*scales)) {
      if (!(scale > 0))
        return node.emitError() << "scale " << scale << " is not positive";
      spec.resultShape.push_back(static_cast<int64_t>(
          std::floor(type.getDimSize(dim) * scale)));
    }
    spec.scales = *scales;
  } else {
    if (!node.hasInput(3))
      return node.emitError() << "neither scales nor sizes is given";
    auto sizes = node.getConstantInts(3, "sizes");
    if (failed(sizes))
      return failure();
    if (static_cast<int64_t>(sizes->size()) != rank)
      return node.emitError() << "sizes has " << sizes->size()
                              << " values for rank " << rank;
    for (auto [dim, size] : llvm::enumerate(*sizes)) {
      if (size < 0)
        return node.emitError() << "size " << size << " is negative";
      spec.scales.push_back(static_cast<double>(size) /
                            static_cast<double>(type.getDimSize(dim)));
    }
    spec.resultShape = *sizes;
  }
  if (spec.coordinateMode == "tf_crop_and_resize") {
    auto roi = getConstantFloats(node, 1, "roi");
    if (failed(roi))
      return failure();
    if (static_cast<int64_t>(roi->size()) != 2 * rank)
      return node.emitError() << "roi has " << roi->size()
                              << " values, expected " << 2 * rank;
    spec.roiStart.assign(roi->begin(), roi->begin() + rank);
    spec.roiEnd.assign(roi->begin() + rank, roi->end());
  }
  return spec;
}

namespace {
/// f64 scalar arithmetic inside the Resize body.
struct Coordinates : Scalar {
  Value constant(double value) {
    return Scalar::constant(b.getF64Type(), value);
  }
  Value floor(Value x) { return math::FloorOp::create(b, loc, x); }
  Value ceil(Value x) { return math::CeilOp::create(b, loc, x); }
  Value clamp(Value x, double low, double high) {
    return min(max(x, constant(low)), constant(high));
  }
  Value toIndex(Value x) {
    Value integer = arith::FPToSIOp::create(b, loc, b.getI64Type(), x);
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), integer);
  }
};
} // namespace

/// The input coordinate output position `x` of dimension `dim` maps to.
static Value inputCoordinate(Coordinates &c, const ResizeSpec &spec,
                             int64_t dim, int64_t in, Value position) {
  // The resized length as the formulas use it: in * scale, which with
  // scales need not be the (floored) output size.
  double length = static_cast<double>(in) * spec.scales[dim];
  Value x = arith::UIToFPOp::create(
      c.b, c.loc, c.b.getF64Type(),
      arith::IndexCastUIOp::create(c.b, c.loc, c.b.getI64Type(), position));
  Value scale = c.constant(spec.scales[dim]);
  const std::string &mode = spec.coordinateMode;
  if (mode == "half_pixel" || (mode == "pytorch_half_pixel" && length > 1))
    return c.sub(c.div(c.add(x, c.constant(0.5)), scale), c.constant(0.5));
  if (mode == "pytorch_half_pixel")
    return c.constant(0);
  if (mode == "align_corners")
    return length == 1 ? c.constant(0)
                       : c.mul(x, c.constant(static_cast<double>(in - 1) /
                                             (length - 1)));
  if (mode == "asymmetric")
    return c.div(x, scale);
  if (mode == "tf_half_pixel_for_nn")
    return c.div(c.add(x, c.constant(0.5)), scale);
  // tf_crop_and_resize
  double start = spec.roiStart[dim], end = spec.roiEnd[dim];
  if (length <= 1)
    return c.constant(0.5 * (start + end) * static_cast<double>(in - 1));
  return c.add(c.constant(start * static_cast<double>(in - 1)),
               c.mul(x, c.constant((end - start) * static_cast<double>(in - 1) /
                                   (length - 1))));
}

/// `coordinate` rounded as nearest_mode says.
static Value roundNearest(Coordinates &c, const std::string &mode,
                          Value coordinate) {
  if (mode == "floor")
    return c.floor(coordinate);
  if (mode == "ceil")
    return c.ceil(coordinate);
  if (mode == "round_prefer_ceil")
    return c.floor(c.add(coordinate, c.constant(0.5)));
  return c.ceil(c.sub(coordinate, c.constant(0.5)));
}

using Taps = llvm::SmallVector<std::pair<Value, Value>, 4>;

/// The 4 input indices around `coordinate` (clamped: past the edges the
/// edge element repeats) and their weights in Keys' cubic convolution
/// with parameter A.
static Taps cubicTaps(Coordinates &c, const ResizeSpec &spec, int64_t in,
                      Value coordinate) {
  Value low = c.floor(coordinate);
  Value t = c.sub(coordinate, low);
  Value a = c.constant(spec.cubicA);
  Value one = c.constant(1);
  // |x| <= 1: (A + 2)|x|^3 - (A + 3)|x|^2 + 1;
  // 1 < |x| < 2: A|x|^3 - 5A|x|^2 + 8A|x| - 4A.
  auto near = [&](Value x) {
    Value cubic = c.sub(c.mul(c.add(a, c.constant(2)), x),
                        c.add(a, c.constant(3)));
    return c.add(c.mul(c.mul(cubic, x), x), one);
  };
  auto far = [&](Value x) {
    Value inner = c.add(c.mul(c.sub(c.mul(a, x), c.mul(c.constant(5), a)), x),
                        c.mul(c.constant(8), a));
    return c.sub(c.mul(inner, x), c.mul(c.constant(4), a));
  };
  Value oneMinusT = c.sub(one, t);
  Value weights[4] = {far(c.add(t, one)), near(t), near(oneMinusT),
                      far(c.add(oneMinusT, one))};
  Taps taps;
  Value total = c.constant(0);
  for (int offset = 0; offset < 4; ++offset) {
    Value position = c.add(low, c.constant(offset - 1));
    Value weight = weights[offset];
    if (spec.excludeOutside) {
      Value inside = arith::AndIOp::create(
          c.b, c.loc, c.cmp(arith::CmpFPredicate::OGE, position, c.constant(0)),
          c.cmp(arith::CmpFPredicate::OLE, position,
                c.constant(static_cast<double>(in - 1))));
      weight = c.select(inside, weight, c.constant(0));
      total = c.add(total, weight);
    }
    taps.push_back({c.toIndex(c.clamp(position, 0, in - 1)), weight});
  }
  if (spec.excludeOutside)
    for (auto &tap : taps)
      tap.second = c.div(tap.second, total);
  return taps;
}

static Results lowerResize(ONNXNode &node) {
  auto input = node.getFloatInput(0);
  if (failed(input))
    return failure();
  RankedTensorType type = input->getType();
  auto spec = getResizeSpec(node, type);
  if (failed(spec))
    return failure();
  int64_t rank = type.getRank();
  Type elementType = type.getElementType();
  bool crop = spec->coordinateMode == "tf_crop_and_resize";
  // A dimension whose size and coordinates do not change is read as is.
  auto unchanged = [&](int64_t dim) {
    return !crop && spec->scales[dim] == 1.0 &&
           spec->resultShape[dim] == type.getDimSize(dim);
  };
  Value data = *input;
  Value result = generateTensor(
      node, type.clone(spec->resultShape),
      [&](OpBuilder &b, Location loc, ValueRange at) -> Value {
        Coordinates c{{b, loc}};
        Value outside = arith::ConstantIntOp::create(b, loc, 0, 1);
        // Per dimension, the input indices read and their weights.
        llvm::SmallVector<Taps> taps;
        for (int64_t dim = 0; dim < rank; ++dim) {
          taps.emplace_back();
          if (unchanged(dim)) {
            taps.back().push_back({at[dim], c.constant(1)});
            continue;
          }
          int64_t in = type.getDimSize(dim);
          Value coordinate = inputCoordinate(c, *spec, dim, in, at[dim]);
          if (crop) {
            Value below = arith::CmpFOp::create(
                b, loc, arith::CmpFPredicate::OLT, coordinate, c.constant(0));
            Value above = arith::CmpFOp::create(
                b, loc, arith::CmpFPredicate::OGT, coordinate,
                c.constant(static_cast<double>(in - 1)));
            outside = arith::OrIOp::create(
                b, loc, outside, arith::OrIOp::create(b, loc, below, above));
          }
          if (spec->interpolation == Interpolation::Nearest) {
            Value nearest = c.clamp(
                roundNearest(c, spec->nearestMode, coordinate), 0, in - 1);
            taps.back().push_back({c.toIndex(nearest), c.constant(1)});
            continue;
          }
          if (spec->interpolation == Interpolation::Cubic) {
            taps.back() = cubicTaps(c, *spec, in, coordinate);
            continue;
          }
          // Past the edges the edge element repeats.
          Value clamped = c.clamp(coordinate, 0, in - 1);
          Value low = c.floor(clamped);
          Value high = c.clamp(c.add(low, c.constant(1)), 0, in - 1);
          Value fraction = c.sub(clamped, low);
          taps.back().push_back(
              {c.toIndex(low), c.sub(c.constant(1), fraction)});
          taps.back().push_back({c.toIndex(high), fraction});
        }
        // The weighted sum over every combination of taps.
        Value sum = c.constant(0);
        llvm::SmallVector<size_t> choice(rank, 0);
        while (true) {
          llvm::SmallVector<Value> position;
          Value weight = c.constant(1);
          for (int64_t dim = 0; dim < rank; ++dim) {
            position.push_back(taps[dim][choice[dim]].first);
            if (taps[dim].size() > 1)
              weight = c.mul(weight, taps[dim][choice[dim]].second);
          }
          Value x = tensor::ExtractOp::create(b, loc, data, position);
          Value wide = castScalar(b, loc, x, b.getF64Type(), false);
          sum = c.add(sum, c.mul(weight, wide));
          int64_t dim = rank - 1;
          while (dim >= 0 && ++choice[dim] == taps[dim].size())
            choice[dim--] = 0;
          if (dim < 0)
            break;
        }
        if (crop)
          sum = arith::SelectOp::create(b, loc, outside,
                                        c.constant(spec->extrapolation), sum);
        return castScalar(b, loc, sum, elementType, false);
      });
  return llvm::SmallVector<Value>{result};
}

void mlir::afm::onnx_import::registerResizeLowerings(
    llvm::StringMap<NodeLowering> &lowerings) {
  lowerings["Resize"] = lowerResize;
  lowerings["Upsample"] = lowerResize;
}
