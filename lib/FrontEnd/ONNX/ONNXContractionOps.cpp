//===- ONNXContractionOps.cpp - ONNX matrix products -----------------------===//
//
// MatMul and Gemm as TOSA matmuls; Einsum (and MatMulInteger, which is
// one) as a linalg.generic whose loops are the equation's letters; and
// DequantizeLinear, which feeds them integer weights, and its inverse
// QuantizeLinear.
//
//===----------------------------------------------------------------------===//

#include "ONNXBuilders.h"
#include "TOSABuilder.h"

#include "dialects/afm/IR/AFMOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"

#include <numeric>

using namespace mlir;
using namespace mlir::afm::onnx_import;

/// numpy matmul over operands of rank >= 2 as one 3-D tosa.matmul: equal
/// batch dimensions are flattened into its batch; a 2-D right operand
/// (x @ W) folds the left batch into its rows instead.
/// x @ W for one token and a constant 2-D f32 W, raised to afm.linear:
/// x as [1, K], W stored output-major ([N, K], transposed at import), so
/// afm's decode GEMV kernel (split-K partial sums) applies. Products over
/// more tokens stay tosa.matmul: afm.linear's reduction-innermost GEMM
/// measured 3x slower than the TOSA path on the 32-token example decoder
/// (docs/onnx-import.md). Null when the node is not of that form.
static Value raiseLinear(ONNXNode &node, TypedValue<RankedTensorType> x,
                         DenseElementsAttr weight) {
  RankedTensorType xType = x.getType();
  auto wType = weight.getType();
  if (!weight.getElementType().isF32() || !xType.getElementType().isF32() ||
      wType.getRank() != 2 || xType.getRank() < 2 ||
      xType.getShape().back() != wType.getDimSize(0) ||
      xType.getNumElements() != wType.getDimSize(0))
    return nullptr;
  int64_t k = wType.getDimSize(0), n = wType.getDimSize(1);
  llvm::SmallVector<float> values(weight.getValues<float>());
  llvm::SmallVector<float> transposed(values.size());
  for (int64_t row = 0; row < k; ++row)
    for (int64_t col = 0; col < n; ++col)
      transposed[col * k + row] = values[row * n + col];
  auto outputMajor = RankedTensorType::get({n, k}, node.builder.getF32Type());
  Value w = arith::ConstantOp::create(
      node.builder, node.loc,
      DenseElementsAttr::get(outputMajor, llvm::ArrayRef(transposed)));
  llvm::SmallVector<int64_t> shape(xType.getShape());
  int64_t tokens = xType.getNumElements() / k;
  Value rows = reshape(node, x, {tokens, k});
  Value y = afm::LinearOp::create(node.builder, node.loc,
                                  xType.clone({tokens, n}), rows, w);
  shape.back() = n;
  return reshape(node, y, shape);
}

static Results lowerMatMul(ONNXNode &node) {
  auto lhs = node.getFloatInput(0);
  auto rhs = node.getFloatInput(1);
  if (failed(lhs) || failed(rhs))
    return failure();
  if (node.raiseToAFM)
    if (DenseElementsAttr weight = node.getConstantInput(1))
      if (Value y = raiseLinear(node, *lhs, weight))
        return llvm::SmallVector<Value>{y};
  RankedTensorType lhsType = lhs->getType(), rhsType = rhs->getType();
  if (lhsType.getElementType() != rhsType.getElementType())
    return node.emitError() << "operand element types differ";
  if (lhsType.getRank() < 2 || rhsType.getRank() < 2)
    return node.emitError() << "1-D operands are not supported";
  llvm::ArrayRef<int64_t> lhsShape = lhsType.getShape(),
                          rhsShape = rhsType.getShape();
  int64_t m = lhsShape[lhsShape.size() - 2], k = lhsShape.back();
  int64_t n = rhsShape.back();
  if (rhsShape[rhsShape.size() - 2] != k)
    return node.emitError() << "contraction dimensions of " << lhsType
                            << " and " << rhsType << " differ";
  llvm::ArrayRef<int64_t> lhsBatch = lhsShape.drop_back(2),
                          rhsBatch = rhsShape.drop_back(2);
  auto product = [](llvm::ArrayRef<int64_t> dims) {
    return std::accumulate(dims.begin(), dims.end(), int64_t{1},
                           std::multiplies<int64_t>());
  };
  int64_t batch, rows;
  if (rhsBatch.empty()) {
    batch = 1;
    rows = product(lhsBatch) * m;
  } else if (lhsBatch == rhsBatch) {
    batch = product(lhsBatch);
    rows = m;
  } else {
    return node.emitError() << "broadcasting batch dimensions of " << lhsType
                            << " and " << rhsType << " is not supported";
  }
  Type elementType = lhsType.getElementType();
  Value a = reshape(node, *lhs, {batch, rows, k});
  Value b = reshape(node, *rhs, {batch, k, n});
  Value zero = splat(node, elementType, 0.0, 1);
  Value product3d = tosa::MatMulOp::create(
      node.builder, node.loc,
      RankedTensorType::get({batch, rows, n}, elementType), a, b, zero, zero);
  llvm::SmallVector<int64_t> shape(lhsBatch);
  shape.append({m, n});
  return llvm::SmallVector<Value>{reshape(node, product3d, shape)};
}


static Value transpose2D(ONNXNode &node, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  return tosa::TransposeOp::create(
      node.builder, node.loc,
      type.clone({type.getDimSize(1), type.getDimSize(0)}), value,
      node.builder.getDenseI32ArrayAttr({1, 0}));
}

/// Gemm: alpha * op(A) @ op(B) + beta * C, op transposing on request and
/// C broadcasting to the [M, N] result.
static Results lowerGemm(ONNXNode &node) {
  auto lhs = node.getFloatInput(0);
  auto rhs = node.getFloatInput(1);
  if (failed(lhs) || failed(rhs))
    return failure();
  if (lhs->getType().getRank() != 2 || rhs->getType().getRank() != 2)
    return node.emitError() << "A and B must be matrices";
  if (lhs->getType().getElementType() != rhs->getType().getElementType())
    return node.emitError() << "operand element types differ: A is "
                            << lhs->getType() << ", B is " << rhs->getType();
  Value a = node.getIntAttribute("transA", 0) ? transpose2D(node, *lhs) : *lhs;
  Value b = node.getIntAttribute("transB", 0) ? transpose2D(node, *rhs) : *rhs;
  auto aType = cast<RankedTensorType>(a.getType());
  auto bType = cast<RankedTensorType>(b.getType());
  int64_t m = aType.getDimSize(0), k = aType.getDimSize(1),
          n = bType.getDimSize(1);
  if (bType.getDimSize(0) != k)
    return node.emitError() << "op(A) " << aType << " and op(B) " << bType
                            << " do not multiply";
  Type elementType = aType.getElementType();
  auto resultType = RankedTensorType::get({m, n}, elementType);
  Value zero = splat(node, elementType, 0.0, 1);
  Value product = tosa::MatMulOp::create(
      node.builder, node.loc, RankedTensorType::get({1, m, n}, elementType),
      reshape(node, a, {1, m, k}), reshape(node, b, {1, k, n}), zero, zero);
  Value result = reshape(node, product, {m, n});
  auto scaled = [&](Value value, const char *name) {
    const onnx::AttributeProto *attr = node.getAttribute(name);
    if (!attr || attr->f() == 1.0f)
      return value;
    auto type = cast<RankedTensorType>(value.getType());
    return multiply(node, type, value,
                    splat(node, elementType, attr->f(), type.getRank()));
  };
  result = scaled(result, "alpha");
  if (!node.hasInput(2))
    return llvm::SmallVector<Value>{result};
  auto bias = node.getFloatInput(2);
  if (failed(bias))
    return failure();
  auto biasType = bias->getType();
  if (biasType.getRank() > 2)
    return node.emitError() << "C must have rank <= 2";
  if (biasType.getElementType() != elementType)
    return node.emitError() << "operand element types differ: A is " << aType
                            << ", C is " << biasType;
  llvm::SmallVector<int64_t> shape(2 - biasType.getRank(), 1);
  llvm::append_range(shape, biasType.getShape());
  if ((shape[0] != 1 && shape[0] != m) || (shape[1] != 1 && shape[1] != n))
    return node.emitError() << "C " << biasType << " does not broadcast to "
                            << resultType;
  Value c = scaled(reshape(node, *bias, shape), "beta");
  return llvm::SmallVector<Value>{
      tosa::AddOp::create(node.builder, node.loc, resultType, result, c)};
}

/// The letters of one Einsum term with "..." expanded to `ellipsisDims`
/// '.'-dimensions (right-aligned across operands, numpy style), or
/// failure when the term does not fit `rank`.
static FailureOr<std::string> expandTerm(ONNXNode &node, llvm::StringRef term,
                                         int64_t rank, int64_t &ellipsisDims,
                                         bool isOutput) {
  size_t ellipsis = term.find("...");
  std::string letters = term.str();
  if (ellipsis != llvm::StringRef::npos) {
    letters.erase(ellipsis, 3);
    if (!isOutput)
      ellipsisDims = std::max<int64_t>(ellipsisDims, rank - letters.size());
    int64_t count = isOutput ? ellipsisDims : rank - letters.size();
    if (count < 0)
      return node.emitError() << "term '" << term << "' has more letters "
                              << "than its operand has dimensions";
    letters.insert(ellipsis, std::string(count, '.'));
  }
  for (char c : letters)
    if (c != '.' && !llvm::isAlpha(c))
      return node.emitError() << "equation term '" << term
                              << "' has the character '" << c << "'";
  if (!isOutput && static_cast<int64_t>(letters.size()) != rank)
    return node.emitError() << "term '" << term << "' names "
                            << letters.size() << " dimensions of an operand "
                            << "of rank " << rank;
  return letters;
}

/// out[output letters] = sum over the other letters of the product of
/// the operands (linalg.generic; a repeated letter in one term reads a
/// diagonal, size-1 dimensions broadcast).
static FailureOr<Value> contract(ONNXNode &node, ValueRange operands,
                                 llvm::StringRef equation) {
  std::string compact;
  for (char c : equation)
    if (!llvm::isSpace(c))
      compact.push_back(c);
  llvm::StringRef text(compact);
  auto [inputsText, outputText] = text.split("->");
  bool explicitOutput = text.contains("->");
  llvm::SmallVector<llvm::StringRef> inputTerms;
  inputsText.split(inputTerms, ',');
  if (inputTerms.size() != operands.size())
    return node.emitError() << "the equation has " << inputTerms.size()
                            << " operand terms for " << operands.size()
                            << " inputs";

  // Each ellipsis dimension i is loop label ('.', i) from the right.
  int64_t ellipsisDims = 0;
  llvm::SmallVector<std::string> inputLetters;
  for (auto [term, operand] : llvm::zip(inputTerms, operands)) {
    auto letters = expandTerm(node, term,
                              cast<RankedTensorType>(operand.getType())
                                  .getRank(),
                              ellipsisDims, false);
    if (failed(letters))
      return failure();
    inputLetters.push_back(*letters);
  }
  std::string outputLetters;
  if (explicitOutput) {
    int64_t dims = ellipsisDims;
    auto letters = expandTerm(node, outputText, 0, dims, true);
    if (failed(letters))
      return failure();
    outputLetters = *letters;
  } else {
    // Implicit output: the ellipsis, then letters used once, sorted.
    outputLetters = std::string(ellipsisDims, '.');
    llvm::SmallVector<char> once;
    for (char c = 'A'; c <= 'z'; ++c) {
      int count = 0;
      for (const std::string &letters : inputLetters)
        count += llvm::count(letters, c);
      if (count == 1)
        once.push_back(c);
    }
    outputLetters.append(once.begin(), once.end());
  }

  // Loops: ellipsis dimensions first, then letters by first appearance.
  // A '.' at position p of an operand with e ellipsis dims is loop
  // (ellipsisDims - e + its index among the operand's '.').
  llvm::SmallVector<char> loopLetters;
  for (const std::string &letters : inputLetters)
    for (char c : letters)
      if (c != '.' && !llvm::is_contained(loopLetters, c))
        loopLetters.push_back(c);
  for (char c : outputLetters)
    if (c != '.' && !llvm::is_contained(loopLetters, c))
      return node.emitError() << "output letter '" << c
                              << "' appears in no input";
  int64_t loops = ellipsisDims + loopLetters.size();
  llvm::SmallVector<int64_t> loopSizes(loops, 1);
  MLIRContext *context = node.builder.getContext();
  auto loopOf = [&](llvm::StringRef letters, size_t position) -> int64_t {
    if (letters[position] != '.')
      return ellipsisDims + llvm::find(loopLetters, letters[position]) -
             loopLetters.begin();
    int64_t dots = llvm::count(letters, '.');
    int64_t before = llvm::count(letters.take_front(position), '.');
    return ellipsisDims - dots + before;
  };
  for (auto [letters, operand] : llvm::zip(inputLetters, operands)) {
    auto type = cast<RankedTensorType>(operand.getType());
    for (size_t p = 0; p < letters.size(); ++p) {
      int64_t loop = loopOf(letters, p), size = type.getDimSize(p);
      if (size == 1)
        continue;
      if (loopSizes[loop] != 1 && loopSizes[loop] != size)
        return node.emitError()
               << "dimension '" << letters[p] << "' has sizes "
               << loopSizes[loop] << " and " << size;
      loopSizes[loop] = size;
    }
  }
  llvm::SmallVector<AffineMap> maps;
  for (auto [letters, operand] : llvm::zip(inputLetters, operands)) {
    auto type = cast<RankedTensorType>(operand.getType());
    llvm::SmallVector<AffineExpr> exprs;
    for (size_t p = 0; p < letters.size(); ++p) {
      int64_t loop = loopOf(letters, p);
      exprs.push_back(type.getDimSize(p) == 1 && loopSizes[loop] != 1
                          ? getAffineConstantExpr(0, context)
                          : getAffineDimExpr(loop, context));
    }
    maps.push_back(AffineMap::get(loops, 0, exprs, context));
  }
  llvm::SmallVector<AffineExpr> outputExprs;
  llvm::SmallVector<int64_t> outputShape;
  llvm::SmallVector<bool> isOutputLoop(loops, false);
  for (size_t p = 0; p < outputLetters.size(); ++p) {
    int64_t loop = loopOf(outputLetters, p);
    if (isOutputLoop[loop])
      return node.emitError() << "output letter '" << outputLetters[p]
                              << "' is repeated";
    isOutputLoop[loop] = true;
    outputExprs.push_back(getAffineDimExpr(loop, context));
    outputShape.push_back(loopSizes[loop]);
  }
  maps.push_back(AffineMap::get(loops, 0, outputExprs, context));
  llvm::SmallVector<utils::IteratorType> iterators;
  for (bool parallel : isOutputLoop)
    iterators.push_back(parallel ? utils::IteratorType::parallel
                                 : utils::IteratorType::reduction);

  Type elementType =
      cast<RankedTensorType>(operands[0].getType()).getElementType();
  auto resultType = RankedTensorType::get(outputShape, elementType);
  Value zero = arith::ConstantOp::create(
      node.builder, node.loc, scalarAttr(node.builder, elementType, 0));
  Value empty = tensor::EmptyOp::create(node.builder, node.loc, outputShape,
                                        elementType);
  Value init = linalg::FillOp::create(node.builder, node.loc, ValueRange{zero},
                                      ValueRange{empty})
                   .getResult(0);
  bool isFloat = isa<FloatType>(elementType);
  auto generic = linalg::GenericOp::create(
      node.builder, node.loc, resultType, operands, init, maps, iterators,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        Value product = args[0];
        for (Value arg : args.drop_front().drop_back())
          product = isFloat ? arith::MulFOp::create(b, loc, product, arg)
                                  .getResult()
                            : arith::MulIOp::create(b, loc, product, arg)
                                  .getResult();
        Value sum =
            isFloat
                ? arith::AddFOp::create(b, loc, args.back(), product).getResult()
                : arith::AddIOp::create(b, loc, args.back(), product)
                      .getResult();
        linalg::YieldOp::create(b, loc, sum);
      });
  return generic.getResult(0);
}

static Results lowerEinsum(ONNXNode &node) {
  const onnx::AttributeProto *equation = node.getAttribute("equation");
  if (!equation)
    return node.emitError() << "missing attribute 'equation'";
  llvm::SmallVector<Value> operands;
  for (int index = 0; index < node.proto.input_size(); ++index) {
    auto operand = node.getInput(index);
    if (failed(operand))
      return failure();
    if (index > 0 && operand->getType().getElementType() !=
                         cast<RankedTensorType>(operands[0].getType())
                             .getElementType())
      return node.emitError() << "operand element types differ";
    operands.push_back(*operand);
  }
  if (operands.empty())
    return node.emitError() << "needs at least one input";
  auto result = contract(node, operands, equation->s());
  if (failed(result))
    return failure();
  return llvm::SmallVector<Value>{*result};
}

/// `value` - `zeroPoint` widened to i32 (by the inputs' signedness), with
/// a per-row zero point of A reshaped to broadcast along rows.
static FailureOr<Value> widenedMinusZeroPoint(ONNXNode &node, unsigned index,
                                              bool perRowZeroPoint) {
  auto value = node.getInput(index);
  if (failed(value))
    return failure();
  bool isUnsigned = node.isUnsignedInput(index);
  Type i32 = node.builder.getI32Type();
  if (!node.hasInput(index + 2))
    return castTensor(node, *value, i32, isUnsigned);
  auto zeroPoint = node.getInput(index + 2);
  if (failed(zeroPoint))
    return failure();
  Value zp = *zeroPoint;
  auto zpType = cast<RankedTensorType>(zp.getType());
  if (perRowZeroPoint && zpType.getRank() == 1 && zpType.getNumElements() > 1)
    zp = reshape(node, zp, {zpType.getNumElements(), 1});
  bool zpUnsigned = node.isUnsignedInput(index + 2);
  return broadcastElementwise(
      node, {*value, zp}, i32,
      [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
        return arith::SubIOp::create(
            b, loc, castScalar(b, loc, args[0], i32, isUnsigned),
            castScalar(b, loc, args[1], i32, zpUnsigned));
      });
}

/// MatMulInteger: (A - a_zero_point) @ (B - b_zero_point) in int32.
static Results lowerMatMulInteger(ONNXNode &node) {
  auto a = widenedMinusZeroPoint(node, 0, /*perRowZeroPoint=*/true);
  auto b = widenedMinusZeroPoint(node, 1, /*perRowZeroPoint=*/false);
  if (failed(a) || failed(b))
    return failure();
  int64_t bRank = cast<RankedTensorType>(b->getType()).getRank();
  auto result = contract(node, {*a, *b},
                         bRank == 2 ? "...mk,kn->...mn" : "...mk,...kn->...mn");
  if (failed(result))
    return failure();
  return llvm::SmallVector<Value>{*result};
}

/// A scale or zero point of a quantization of `type`, shaped to
/// broadcast: a single value stays; a 1-D one runs along `axis`.
static FailureOr<Value> alongAxis(ONNXNode &node, RankedTensorType type,
                                  Value value) {
  auto valueType = cast<RankedTensorType>(value.getType());
  if (valueType.getRank() == 0 || valueType.getNumElements() == 1)
    return value;
  auto axis =
      normalizeAxis(node, node.getIntAttribute("axis", 1), type.getRank());
  if (failed(axis))
    return failure();
  if (valueType.getRank() != 1 ||
      valueType.getDimSize(0) != type.getDimSize(*axis))
    return node.emitError() << "a per-axis scale or zero point must be 1-D "
                            << "with " << type.getDimSize(*axis)
                            << " elements";
  llvm::SmallVector<int64_t> shape(type.getRank(), 1);
  shape[*axis] = valueType.getDimSize(0);
  return reshape(node, value, shape);
}

/// The input, its scale and (when given) zero point, the latter two
/// shaped by alongAxis.
static FailureOr<llvm::SmallVector<Value>>
getQuantizationOperands(ONNXNode &node, bool floatInput) {
  auto input = floatInput ? node.getFloatInput(0) : node.getInput(0);
  auto scale = node.getFloatInput(1);
  if (failed(input) || failed(scale))
    return failure();
  llvm::SmallVector<Value> operands = {*input};
  llvm::SmallVector<Value> parameters = {*scale};
  if (node.hasInput(2)) {
    auto zp = node.getInput(2);
    if (failed(zp))
      return failure();
    parameters.push_back(*zp);
  }
  for (Value parameter : parameters) {
    auto shaped = alongAxis(node, input->getType(), parameter);
    if (failed(shaped))
      return failure();
    operands.push_back(*shaped);
  }
  return operands;
}

/// DequantizeLinear: (x - zero_point) * scale in float, per tensor or
/// per `axis` (a 1-D scale then runs along that dimension).
static Results lowerDequantizeLinear(ONNXNode &node) {
  auto operands = getQuantizationOperands(node, /*floatInput=*/false);
  if (failed(operands))
    return failure();
  Type floatType = getElementTypeOrSelf((*operands)[1].getType());
  bool isUnsigned = node.isUnsignedInput(0);
  auto result = broadcastElementwise(
      node, *operands, floatType,
      [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
        Value x = castScalar(b, loc, args[0], floatType, isUnsigned);
        if (args.size() == 3)
          x = arith::SubFOp::create(
              b, loc, x, castScalar(b, loc, args[2], floatType, isUnsigned));
        return arith::MulFOp::create(b, loc, x, args[1]);
      });
  if (failed(result))
    return failure();
  return llvm::SmallVector<Value>{*result};
}

/// QuantizeLinear: x / scale rounded half to even, plus the zero point,
/// saturated to the zero point's type (UINT8 without one), per tensor or
/// per `axis`.
/// `x` (float) quantized as QuantizeLinear does: round half to even,
/// plus the zero point, saturated to [low, high], as `type`.
static Value quantizeScalar(OpBuilder &b, Location loc, Value x, Value zero,
                            double low, double high, Type type) {
  Type floatType = x.getType();
  auto constant = [&](double value) -> Value {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(floatType, value));
  };
  x = arith::AddFOp::create(b, loc, math::RoundEvenOp::create(b, loc, x),
                            zero);
  x = arith::MinimumFOp::create(
      b, loc, arith::MaximumFOp::create(b, loc, x, constant(low)),
      constant(high));
  // In range now: through i32, so 255 does not overflow an i8 cast.
  Value wide = arith::FPToSIOp::create(b, loc, b.getI32Type(), x);
  return arith::TruncIOp::create(b, loc, type, wide);
}

static Results lowerQuantizeLinear(ONNXNode &node) {
  auto operands = getQuantizationOperands(node, /*floatInput=*/true);
  if (failed(operands))
    return failure();
  Type floatType = getElementTypeOrSelf((*operands)[0].getType());
  bool hasZeroPoint = operands->size() == 3;
  Type resultType = hasZeroPoint
                        ? getElementTypeOrSelf((*operands)[2].getType())
                        : node.builder.getI8Type();
  bool isUnsigned = !hasZeroPoint || node.isUnsignedInput(2);
  if (!resultType.isInteger(8))
    return node.emitError() << "the zero point must be an 8-bit integer";
  double low = isUnsigned ? 0 : -128, high = isUnsigned ? 255 : 127;
  auto result = broadcastElementwise(
      node, *operands, resultType,
      [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
        auto constant = [&](double value) -> Value {
          return arith::ConstantOp::create(b, loc,
                                           b.getFloatAttr(floatType, value));
        };
        Value zero = hasZeroPoint
                         ? castScalar(b, loc, args[2], floatType, isUnsigned)
                         : constant(0);
        return quantizeScalar(
            b, loc, arith::DivFOp::create(b, loc, args[0], args[1]), zero,
            low, high, resultType);
      });
  if (failed(result))
    return failure();
  if (isUnsigned && node.hasOutput(0))
    node.table.define(node.proto.output(0), *result, /*isUnsigned=*/true);
  return llvm::SmallVector<Value>{*result};
}

/// QLinearMatMul: round((A - a_zp) @ (B - b_zp) * a_scale * b_scale /
/// y_scale) + y_zp, saturated to y_zp's 8-bit type; the product in int32,
/// the rescale in f32. Scales per tensor, b's also per column.
static Results lowerQLinearMatMul(ONNXNode &node) {
  auto a = widenedMinusZeroPoint(node, 0, /*perRowZeroPoint=*/true);
  auto b = widenedMinusZeroPoint(node, 3, /*perRowZeroPoint=*/false);
  auto aScale = node.getFloatInput(1);
  auto bScale = node.getFloatInput(4);
  auto yScale = node.getFloatInput(6);
  auto yZeroPoint = node.getInput(7);
  if (failed(a) || failed(b) || failed(aScale) || failed(bScale) ||
      failed(yScale) || failed(yZeroPoint))
    return failure();
  Type resultType = yZeroPoint->getType().getElementType();
  if (!resultType.isInteger(8))
    return node.emitError() << "y_zero_point must be an 8-bit integer";
  if (aScale->getType().getNumElements() != 1 ||
      yScale->getType().getNumElements() != 1 ||
      yZeroPoint->getType().getNumElements() != 1)
    return node.emitError()
           << "a_scale, y_scale and y_zero_point must be single values";
  int64_t bRank = cast<RankedTensorType>(b->getType()).getRank();
  auto product = contract(node, {*a, *b},
                          bRank == 2 ? "...mk,kn->...mn" : "...mk,...kn->...mn");
  if (failed(product))
    return failure();
  bool isUnsigned = node.isUnsignedInput(7);
  double low = isUnsigned ? 0 : -128, high = isUnsigned ? 255 : 127;
  Type f32 = node.builder.getF32Type();
  auto single = [&](Value value) { return reshape(node, value, {}); };
  auto result = broadcastElementwise(
      node,
      {*product, single(*aScale), *bScale, single(*yScale),
       single(*yZeroPoint)},
      resultType, [&](OpBuilder &nb, Location loc, ValueRange args) -> Value {
        Value acc = arith::SIToFPOp::create(nb, loc, f32, args[0]);
        Value scale = arith::DivFOp::create(
            nb, loc, arith::MulFOp::create(nb, loc, args[1], args[2]),
            args[3]);
        return quantizeScalar(
            nb, loc, arith::MulFOp::create(nb, loc, acc, scale),
            castScalar(nb, loc, args[4], f32, isUnsigned), low, high,
            resultType);
      });
  if (failed(result))
    return failure();
  if (isUnsigned && node.hasOutput(0))
    node.table.define(node.proto.output(0), *result, /*isUnsigned=*/true);
  return llvm::SmallVector<Value>{*result};
}

/// DynamicQuantizeLinear: uint8 with the scale and zero point that map
/// [min(0, min x), max(0, max x)] onto [0, 255]: scale = (max - min) /
/// 255, zero point = round(saturate(-min / scale)), y = saturate(round(x /
/// scale) + zero point); rounding half to even.
static Results lowerDynamicQuantizeLinear(ONNXNode &node) {
  auto input = node.getFloatInput(0);
  if (failed(input))
    return failure();
  RankedTensorType type = input->getType();
  if (!type.getElementType().isF32())
    return node.emitError() << "x must be float (f32), not "
                            << type.getElementType();
  if (type.getNumElements() == 0)
    return node.emitError() << "x has no elements: its range is undefined";
  TOSABuilder t(node);
  Value flat = t.reshape(*input, {type.getNumElements()});
  auto oneType = RankedTensorType::get({1}, type.getElementType());
  Value low = t.reshape(tosa::ReduceMinOp::create(t.b, t.loc, oneType, flat,
                                                  t.b.getI32IntegerAttr(0)),
                        {});
  Value high = t.reshape(tosa::ReduceMaxOp::create(t.b, t.loc, oneType, flat,
                                                   t.b.getI32IntegerAttr(0)),
                         {});
  Type u8 = node.builder.getI8Type(), f32 = node.builder.getF32Type();
  auto f32Constant = [](OpBuilder &b, Location loc, float value) -> Value {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
  };
  auto scale = broadcastElementwise(
      node, {low, high}, f32,
      [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
        Value zero = f32Constant(b, loc, 0);
        Value range = arith::SubFOp::create(
            b, loc, arith::MaximumFOp::create(b, loc, args[1], zero),
            arith::MinimumFOp::create(b, loc, args[0], zero));
        return arith::DivFOp::create(b, loc, range, f32Constant(b, loc, 255));
      });
  if (failed(scale))
    return failure();
  // The zero point as a float in [0, 255], rounded: y's offset.
  auto zeroPointFloat = broadcastElementwise(
      node, {low, *scale}, f32,
      [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
        Value zero = f32Constant(b, loc, 0);
        Value intermediate = arith::SubFOp::create(
            b, loc, zero,
            arith::DivFOp::create(
                b, loc, arith::MinimumFOp::create(b, loc, args[0], zero),
                args[1]));
        Value saturated = arith::MinimumFOp::create(
            b, loc, arith::MaximumFOp::create(b, loc, intermediate, zero),
            f32Constant(b, loc, 255));
        return math::RoundEvenOp::create(b, loc, saturated);
      });
  if (failed(zeroPointFloat))
    return failure();
  auto zeroPoint = broadcastElementwise(
      node, {*zeroPointFloat}, u8,
      [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
        return arith::TruncIOp::create(
            b, loc, u8,
            arith::FPToSIOp::create(b, loc, b.getI32Type(), args[0]));
      });
  auto y = broadcastElementwise(
      node, {*input, *scale, *zeroPointFloat}, u8,
      [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
        return quantizeScalar(b, loc,
                              arith::DivFOp::create(b, loc, args[0], args[1]),
                              args[2], 0, 255, u8);
      });
  if (failed(zeroPoint) || failed(y))
    return failure();
  if (node.hasOutput(0))
    node.table.define(node.proto.output(0), *y, /*isUnsigned=*/true);
  if (node.hasOutput(2))
    node.table.define(node.proto.output(2), *zeroPoint, /*isUnsigned=*/true);
  return llvm::SmallVector<Value>{*y, *scale, *zeroPoint};
}

void mlir::afm::onnx_import::registerContractionLowerings(
    llvm::StringMap<NodeLowering> &lowerings) {
  lowerings["MatMul"] = lowerMatMul;
  lowerings["Gemm"] = lowerGemm;
  lowerings["Einsum"] = lowerEinsum;
  lowerings["MatMulInteger"] = lowerMatMulInteger;
  lowerings["DequantizeLinear"] = lowerDequantizeLinear;
  lowerings["QuantizeLinear"] = lowerQuantizeLinear;
  lowerings["QLinearMatMul"] = lowerQLinearMatMul;
  lowerings["DynamicQuantizeLinear"] = lowerDynamicQuantizeLinear;
}
