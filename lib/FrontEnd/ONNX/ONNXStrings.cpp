//===- ONNXStrings.cpp - Cast between STRING and numbers ------------------===//
//
// A STRING tensor of shape S is an i8 tensor [S..., kStringBytes]: each
// element NUL-padded (ONNXImporter.h). Casting parses or prints every
// element with a routine the code generator links into the model
// (lib/CodeGen/StringRoutines.cpp): strings to FLOAT, FLOAT16, BFLOAT16
// or DOUBLE (strtof/strtod, so "NaN", "INF" and "-INF" parse); FLOAT to
// strings with the fewest digits that read back as the same float.
//
//===----------------------------------------------------------------------===//

#include "ONNXBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::afm::onnx_import;

/// The private declaration of routine `name` in the module being built.
static func::FuncOp getRoutine(ONNXNode &node, llvm::StringRef name,
                               FunctionType type) {
  Operation *scope = node.builder.getInsertionBlock()->getParentOp();
  auto module = dyn_cast<ModuleOp>(scope);
  if (!module)
    module = scope->getParentOfType<ModuleOp>();
  if (auto routine = module.lookupSymbol<func::FuncOp>(name))
    return routine;
  OpBuilder b(module.getBodyRegion());
  auto routine = func::FuncOp::create(b, module.getLoc(), name, type);
  routine.setPrivate();
  return routine;
}

/// FLOAT to STRING: byte j of element i is routine(x[i], j).
static Results printFloats(ONNXNode &node, TypedValue<RankedTensorType> input) {
  RankedTensorType type = input.getType();
  if (!type.getElementType().isF32())
    return node.emitError() << "casting " << type.getElementType()
                            << " to STRING is not supported: only FLOAT "
                               "(f32) prints as a string";
  OpBuilder &b = node.builder;
  func::FuncOp routine =
      getRoutine(node, "afm_rt_f32_to_string_byte",
                 b.getFunctionType({b.getF32Type(), b.getI64Type()},
                                   b.getI8Type()));
  llvm::SmallVector<int64_t> shape(type.getShape());
  shape.push_back(kStringBytes);
  return llvm::SmallVector<Value>{generateTensor(
      node, RankedTensorType::get(shape, b.getI8Type()),
      [&](OpBuilder &nb, Location loc, ValueRange indices) -> Value {
        Value x = tensor::ExtractOp::create(nb, loc, input,
                                            indices.drop_back());
        Value j = arith::IndexCastOp::create(nb, loc, nb.getI64Type(),
                                             indices.back());
        return func::CallOp::create(nb, loc, routine, ValueRange{x, j})
            .getResult(0);
      })};
}

/// STRING to a float type: element i is routine(bytes of element i).
static Results parseFloats(ONNXNode &node, TypedValue<RankedTensorType> input,
                           Type elementType) {
  auto floatType = dyn_cast<FloatType>(elementType);
  if (!floatType)
    return node.emitError() << "casting STRING to " << elementType
                            << " is not supported: strings parse as floats";
  OpBuilder &b = node.builder;
  // Doubles parse as doubles; the narrower floats round from a float.
  Type parsed = floatType.isF64() ? b.getF64Type() : b.getF32Type();
  func::FuncOp routine = getRoutine(
      node, floatType.isF64() ? "afm_rt_string_to_f64" : "afm_rt_string_to_f32",
      b.getFunctionType(
          llvm::SmallVector<Type>(kStringBytes, b.getI8Type()), parsed));
  RankedTensorType type = input.getType();
  return llvm::SmallVector<Value>{generateTensor(
      node, RankedTensorType::get(type.getShape().drop_back(), elementType),
      [&](OpBuilder &nb, Location loc, ValueRange indices) -> Value {
        llvm::SmallVector<Value> at(indices), bytes;
        at.push_back(Value());
        for (int64_t j = 0; j < kStringBytes; ++j) {
          at.back() = arith::ConstantIndexOp::create(nb, loc, j);
          bytes.push_back(tensor::ExtractOp::create(nb, loc, input, at));
        }
        Value value =
            func::CallOp::create(nb, loc, routine, bytes).getResult(0);
        return castScalar(nb, loc, value, elementType, false);
      })};
}

Results mlir::afm::onnx_import::castStrings(ONNXNode &node,
                                 TypedValue<RankedTensorType> input,
                                 bool fromString, bool toString,
                                 Type elementType) {
  if (toString && node.hasOutput(0))
    node.table.markString(node.proto.output(0));
  if (fromString && toString)
    return llvm::SmallVector<Value>{input};
  if (toString)
    return printFloats(node, input);
  return parseFloats(node, input, elementType);
}
