//===- ONNXGraphImport.cpp - ONNX graph -> func.func @main ----------------===//

#include "ONNXImporter.h"

#include "afm/Import/ONNXImport.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mlir::afm;
using namespace mlir::afm::onnx_import;

Value ValueTable::lookup(llvm::StringRef name) {
  if (Value value = values.lookup(name))
    return value;
  auto it = constants.find(name);
  if (it == constants.end())
    return nullptr;
  auto [attr, loc] = it->second;
  Value value = arith::ConstantOp::create(builder, Location(loc), attr);
  values[name] = value;
  return value;
}

DenseElementsAttr ValueTable::lookupConstant(llvm::StringRef name) const {
  auto it = constants.find(name);
  return it == constants.end() ? nullptr : it->second.first;
}

InFlightDiagnostic ONNXNode::emitError() const {
  return mlir::emitError(loc)
         << "ONNX node '" << name << "' (" << proto.op_type() << "): ";
}

FailureOr<TypedValue<RankedTensorType>> ONNXNode::getInput(unsigned index) {
  if (!hasInput(index))
    return emitError() << "missing input " << index;
  Value value = table.lookup(proto.input(index));
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return emitError() << "input '" << proto.input(index) << "' has type "
                       << value.getType() << "; expected a ranked tensor";
  // ONNX allows empty tensors; TOSA operands have no 0 dimensions.
  if (llvm::is_contained(type.getShape(), 0))
    return emitError() << "input '" << proto.input(index) << "' of type "
                       << type << " is empty; empty tensors are not "
                       << "supported";
  return cast<TypedValue<RankedTensorType>>(value);
}

FailureOr<TypedValue<RankedTensorType>>
ONNXNode::getFloatInput(unsigned index) {
  auto value = getInput(index);
  if (failed(value))
    return failure();
  if (!isa<FloatType>(value->getType().getElementType()))
    return emitError() << "input '" << proto.input(index) << "' has type "
                       << value->getType() << "; only float tensors are "
                       << "supported";
  return value;
}

DenseElementsAttr ONNXNode::getConstantInput(unsigned index) const {
  if (index >= static_cast<unsigned>(proto.input_size()))
    return nullptr;
  return table.lookupConstant(proto.input(index));
}

const onnx::AttributeProto *
ONNXNode::getAttribute(llvm::StringRef attrName) const {
  for (const onnx::AttributeProto &attr : proto.attribute())
    if (attr.name() == attrName)
      return &attr;
  return nullptr;
}

int64_t ONNXNode::getIntAttribute(llvm::StringRef attrName,
                                  int64_t defaultValue) const {
  const onnx::AttributeProto *attr = getAttribute(attrName);
  return attr ? attr->i() : defaultValue;
}

std::optional<llvm::SmallVector<int64_t>>
ONNXNode::getIntsAttribute(llvm::StringRef attrName) const {
  const onnx::AttributeProto *attr = getAttribute(attrName);
  if (!attr)
    return std::nullopt;
  return llvm::SmallVector<int64_t>(attr->ints().begin(), attr->ints().end());
}

namespace {
/// Builds `func.func @main` from one ONNX graph.
class GraphImporter {
public:
  GraphImporter(MLIRContext *context, llvm::StringRef modelPath, int64_t opset)
      : context(context), modelPath(modelPath), opset(opset), builder(context),
        table(builder) {}

  OwningOpRef<ModuleOp> import(const onnx::GraphProto &graph);

private:
  /// Every op of a node (or an initializer, input or output) points at
  /// it by name inside the model file, which has no lines to point at.
  Location getLoc(llvm::StringRef name) {
    return NameLoc::get(StringAttr::get(context, name),
                        FileLineColLoc::get(context, modelPath, 0, 0));
  }
  LogicalResult importNode(const onnx::NodeProto &node, unsigned index);

  MLIRContext *context;
  std::string modelPath;
  int64_t opset;
  OpBuilder builder;
  ValueTable table;
};
} // namespace

LogicalResult GraphImporter::importNode(const onnx::NodeProto &node,
                                        unsigned index) {
  std::string name = node.name().empty()
                         ? llvm::formatv("{0}_{1}", node.op_type(), index).str()
                         : node.name();
  ONNXNode view(node, name, opset, table, builder, getLoc(name));
  const llvm::StringMap<NodeLowering> *lowerings = nullptr;
  if (node.domain().empty() || node.domain() == "ai.onnx")
    lowerings = &getONNXToTOSALowerings();
  else if (node.domain() == "com.microsoft")
    lowerings = &getMicrosoftLowerings();
  else
    return view.emitError()
           << "operator domain '" << node.domain() << "' is not supported";
  for (const std::string &input : node.input())
    if (!input.empty() && !table.contains(input))
      return view.emitError() << "input '" << input << "' is not defined";
  // ONNX graphs are in SSA form: a second definition of a name would be
  // silently ignored, and its users would read the first.
  llvm::StringSet<> outputs;
  for (const std::string &output : node.output())
    if (!output.empty() &&
        (table.contains(output) || !outputs.insert(output).second))
      return view.emitError() << "output '" << output
                              << "' is already defined";

  // A Constant is data, not computation: it joins the initializers.
  if (node.op_type() == "Constant") {
    const onnx::AttributeProto *value = view.getAttribute("value");
    if (!value || !value->has_t() || node.output_size() != 1)
      return view.emitError()
             << "only the 'value' tensor attribute is supported";
    auto attr = convertTensor(context, value->t(),
                              llvm::sys::path::parent_path(modelPath));
    if (!attr)
      return view.emitError() << llvm::toString(attr.takeError());
    table.defineConstant(node.output(0), *attr, view.loc,
                         isUnsignedDataType(value->t().data_type()));
    return success();
  }

  auto it = lowerings->find(node.op_type());
  if (it == lowerings->end())
    return view.emitError() << "operator not supported";
  FailureOr<llvm::SmallVector<Value>> results = it->second(view);
  if (failed(results))
    return failure();
  if (results->size() < static_cast<size_t>(node.output_size()))
    return view.emitError() << "computes " << results->size()
                            << " of its " << node.output_size() << " outputs";
  // Shapes follow from the model's, which may be absurd (broadcasting
  // 2^40 by 2^40); later passes count elements in int64_t.
  for (Value result : *results)
    if (auto type = dyn_cast<ShapedType>(result.getType());
        type && !getElementCount(type.getShape()))
      return view.emitError() << "its result " << type
                              << " has more elements than fit in 64 bits";
  // Lowerings that produce unsigned results say so by defining them.
  for (auto [output, value] : llvm::zip(node.output(), *results))
    if (!output.empty() && !table.contains(output))
      table.define(output, value);
  return success();
}

OwningOpRef<ModuleOp> GraphImporter::import(const onnx::GraphProto &graph) {
  OwningOpRef<ModuleOp> module =
      ModuleOp::create(FileLineColLoc::get(context, modelPath, 0, 0));
  builder.setInsertionPointToEnd(module->getBody());

  llvm::StringRef modelDir = llvm::sys::path::parent_path(modelPath);
  for (const onnx::TensorProto &tensor : graph.initializer()) {
    auto attr = convertTensor(context, tensor, modelDir);
    if (!attr) {
      emitError(getLoc(tensor.name()))
          << "ONNX initializer: " << llvm::toString(attr.takeError());
      return nullptr;
    }
    table.defineConstant(tensor.name(), *attr, getLoc(tensor.name()),
                         isUnsignedDataType(tensor.data_type()));
  }

  // Before IR 4 initializers were listed among the inputs too; those are
  // constants, not arguments.
  llvm::SmallVector<Type> argTypes;
  llvm::SmallVector<const onnx::ValueInfoProto *> args;
  for (const onnx::ValueInfoProto &input : graph.input()) {
    if (table.lookupConstant(input.name()))
      continue;
    auto type = convertValueType(context, input);
    if (!type) {
      emitError(getLoc(input.name()))
          << "ONNX graph input " << llvm::toString(type.takeError());
      return nullptr;
    }
    argTypes.push_back(*type);
    args.push_back(&input);
  }

  auto func = func::FuncOp::create(builder, getLoc(graph.name()), "main",
                                   builder.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  for (auto [arg, input] : llvm::zip(entry->getArguments(), args)) {
    arg.setLoc(getLoc(input->name()));
    table.define(input->name(), arg,
                 isUnsignedDataType(input->type().tensor_type().elem_type()));
  }
  builder.setInsertionPointToEnd(entry);

  for (const auto &[index, node] : llvm::enumerate(graph.node()))
    if (failed(importNode(node, index)))
      return nullptr;

  llvm::SmallVector<Value> results;
  for (const onnx::ValueInfoProto &output : graph.output()) {
    Value value = table.lookup(output.name());
    if (!value) {
      emitError(getLoc(output.name()))
          << "ONNX graph output '" << output.name() << "' is not computed";
      return nullptr;
    }
    // The declared type is a promise about the graph; a mismatch means
    // the importer computed something else.
    if (output.type().has_tensor_type() &&
        output.type().tensor_type().has_shape()) {
      auto declared = convertValueType(context, output);
      if (!declared) {
        emitError(getLoc(output.name()))
            << "ONNX graph output " << llvm::toString(declared.takeError());
        return nullptr;
      }
      if (*declared != value.getType()) {
        emitError(getLoc(output.name()))
            << "ONNX graph output '" << output.name() << "' is declared "
            << *declared << " but computes " << value.getType();
        return nullptr;
      }
    }
    results.push_back(value);
  }
  func::ReturnOp::create(builder, getLoc(graph.name()), results);
  func.setFunctionType(
      builder.getFunctionType(argTypes, ValueRange(results).getTypes()));
  return module;
}

OwningOpRef<ModuleOp> mlir::afm::importONNXModel(MLIRContext *context,
                                                 llvm::StringRef bytes,
                                                 llvm::StringRef modelPath) {
  context->loadDialect<arith::ArithDialect, func::FuncDialect,
                       tosa::TosaDialect>();
  onnx::ModelProto model;
  llvm::Expected<int64_t> opset =
      onnx_import::readModel(bytes, modelPath, model);
  if (!opset) {
    emitError(FileLineColLoc::get(context, modelPath, 0, 0))
        << llvm::toString(opset.takeError());
    return nullptr;
  }
  return GraphImporter(context, modelPath, *opset).import(model.graph());
}
