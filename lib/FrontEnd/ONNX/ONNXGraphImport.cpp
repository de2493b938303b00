//===- ONNXGraphImport.cpp - ONNX graph -> func.func @main ----------------===//

#include "ONNXImporter.h"

#include "afm/FrontEnd/ONNX/ONNXImport.h"
#include "dialects/afm/IR/AFMDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <set>

using namespace mlir;
using namespace mlir::afm;
using namespace mlir::afm::onnx_import;

Value ValueTable::lookup(llvm::StringRef name) {
  if (Value value = values.lookup(name))
    return value;
  auto it = constants.find(name);
  if (it != constants.end()) {
    auto [attr, loc] = it->second;
    Value value = arith::ConstantOp::create(builder, Location(loc), attr);
    values[name] = value;
    return value;
  }
  if (!parent)
    return nullptr;
  // An enclosing graph's constant is materialized here, in this scope, so
  // the enclosing scope never sees a value defined inside a region.
  if (DenseElementsAttr attr = parent->lookupConstant(name)) {
    Value value = arith::ConstantOp::create(builder, builder.getUnknownLoc(),
                                            attr);
    values[name] = value;
    return value;
  }
  return parent->lookup(name);
}

DenseElementsAttr ValueTable::lookupConstant(llvm::StringRef name) const {
  // A materialized constant is in both maps; a value defined here shadows
  // an enclosing graph's constant of the same name.
  auto it = constants.find(name);
  if (it != constants.end())
    return it->second.first;
  if (values.count(name) || !parent)
    return nullptr;
  return parent->lookupConstant(name);
}

InFlightDiagnostic ONNXNode::emitError() const {
  return mlir::emitError(loc)
         << "ONNX node '" << name << "' (" << proto.op_type() << "): ";
}

FailureOr<TypedValue<RankedTensorType>> ONNXNode::getInput(unsigned index) {
  if (!hasInput(index))
    return emitError() << "missing input " << index;
  Value value = table.lookup(proto.input(index));
  if (!isa<RankedTensorType>(value.getType()))
    return emitError() << "input '" << proto.input(index) << "' has type "
                       << value.getType() << "; expected a ranked tensor";
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
  if (!hasInput(index))
    return nullptr;
  DenseElementsAttr attr = table.lookupConstant(proto.input(index));
  if (!attr)
    table.noteConstantWanted(proto.input(index));
  return attr;
}

FailureOr<llvm::SmallVector<int64_t>>
ONNXNode::getConstantInts(unsigned index, llvm::StringRef what) const {
  DenseElementsAttr attr = getConstantInput(index);
  if (!attr || !isa<IntegerType>(attr.getElementType()))
    return emitError() << "the " << what
                       << " operand must be a constant integer tensor (shapes "
                          "are static; bind the input to specialize the model)";
  llvm::SmallVector<int64_t> values;
  for (const APInt &value : attr.getValues<APInt>())
    values.push_back(value.getSExtValue());
  return values;
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

/// A Constant's value_float, value_floats, value_int or value_ints as a
/// FLOAT or INT64 tensor (a scalar or a list), or null for other forms.
static DenseElementsAttr getConstantNumbers(const ONNXNode &node) {
  if (node.proto.output_size() != 1)
    return nullptr;
  MLIRContext *context = node.builder.getContext();
  auto f32 = Float32Type::get(context);
  auto i64 = IntegerType::get(context, 64);
  if (const onnx::AttributeProto *attr = node.getAttribute("value_float"))
    return DenseElementsAttr::get(RankedTensorType::get({}, f32), attr->f());
  if (const onnx::AttributeProto *attr = node.getAttribute("value_int"))
    return DenseElementsAttr::get(RankedTensorType::get({}, i64),
                                  static_cast<int64_t>(attr->i()));
  if (const onnx::AttributeProto *attr = node.getAttribute("value_floats")) {
    llvm::SmallVector<float> values(attr->floats().begin(),
                                    attr->floats().end());
    return DenseElementsAttr::get(
        RankedTensorType::get({static_cast<int64_t>(values.size())}, f32),
        llvm::ArrayRef(values));
  }
  if (const onnx::AttributeProto *attr = node.getAttribute("value_ints")) {
    llvm::SmallVector<int64_t> values(attr->ints().begin(),
                                      attr->ints().end());
    return DenseElementsAttr::get(
        RankedTensorType::get({static_cast<int64_t>(values.size())}, i64),
        llvm::ArrayRef(values));
  }
  return nullptr;
}

/// The type an empty tensor has at the entry point: compiled entry points
/// take bare pointers to static buffers, which the LLVM lowering does not
/// build for zero-sized memrefs, so an empty input or output is passed as
/// one element that is never read or written.
static RankedTensorType asEntryType(RankedTensorType type) {
  if (type.getNumElements() != 0)
    return type;
  return RankedTensorType::get({1}, type.getElementType());
}

namespace {
/// Builds `func.func @main` from one ONNX graph.
class GraphImporter : public SubgraphImporter {
public:
  GraphImporter(MLIRContext *context, llvm::StringRef modelPath, int64_t opset,
                const ONNXImportOptions &options)
      : context(context), modelPath(modelPath), opset(opset),
        options(options), builder(context), table(builder) {}

  OwningOpRef<ModuleOp> import(const onnx::GraphProto &graph);

private:
  /// Every op of a node (or an initializer, input or output) points at
  /// it by name inside the model file, which has no lines to point at.
  Location getLoc(llvm::StringRef name) {
    return NameLoc::get(StringAttr::get(context, name),
                        FileLineColLoc::get(context, modelPath, 0, 0));
  }
  LogicalResult importNode(const onnx::NodeProto &node, unsigned index,
                           ValueTable &table);
  FailureOr<llvm::SmallVector<Value>>
  importSubgraph(const onnx::GraphProto &graph, Block &block,
                 ValueTable &enclosing) override;
  FailureOr<llvm::SmallVector<Value>>
  importInline(const onnx::GraphProto &graph, llvm::ArrayRef<Binding> inputs,
               ValueTable &enclosing) override;
  /// Imports a subgraph's initializers and nodes into `scope` (whose
  /// inputs are defined) at the builder's insertion point; returns its
  /// outputs.
  FailureOr<llvm::SmallVector<Value>>
  importGraphBody(const onnx::GraphProto &graph, ValueTable &scope);
  /// Every bound symbolic dimension must be one of the graph's inputs' or
  /// outputs' (a misspelt name would otherwise change nothing).
  LogicalResult checkBoundDims(const onnx::GraphProto &graph);

  MLIRContext *context;
  std::string modelPath;
  int64_t opset;
  const ONNXImportOptions &options;
  OpBuilder builder;
  ValueTable table;
};
} // namespace

LogicalResult GraphImporter::checkBoundDims(const onnx::GraphProto &graph) {
  std::set<std::string> names;
  for (const auto *values : {&graph.input(), &graph.output()})
    for (const onnx::ValueInfoProto &value : *values)
      if (value.type().has_tensor_type() &&
          value.type().tensor_type().has_shape())
        for (const auto &dim : value.type().tensor_type().shape().dim())
          if (dim.has_dim_param())
            names.insert(dim.dim_param());
  for (const auto &bound : options.boundDims) {
    if (names.count(bound.getKey().str()))
      continue;
    std::string known;
    for (const std::string &name : names)
      known += (known.empty() ? "'" : ", '") + name + "'";
    return emitError(getLoc(graph.name()))
           << "--bind-dim " << bound.getKey()
           << ": the graph's inputs and outputs have no symbolic dimension of "
              "that name ("
           << (known.empty() ? std::string("they have none") : "they have " + known)
           << ")";
  }
  return success();
}

LogicalResult GraphImporter::importNode(const onnx::NodeProto &node,
                                        unsigned index, ValueTable &table) {
  std::string name = node.name().empty()
                         ? llvm::formatv("{0}_{1}", node.op_type(), index).str()
                         : node.name();
  ONNXNode view(node, name, opset, table, builder, getLoc(name), *this);
  view.raiseToAFM = options.raiseToAFM;
  const llvm::StringMap<NodeLowering> *lowerings = nullptr;
  if (node.domain().empty() || node.domain() == "ai.onnx")
    lowerings = &getONNXToTOSALowerings();
  else if (node.domain() == "com.microsoft")
    lowerings = &getMicrosoftLowerings();
  else if (node.domain() == "afm")
    lowerings = &getAFMDomainLowerings();
  else
    return view.emitError()
           << "operator domain '" << node.domain() << "' is not supported";
  // Before opset 7, attributes changed what some ops compute (explicit
  // broadcasting, in-place hints, training switches): refuse a node that
  // uses one rather than guess.
  if (opset < 7 && lowerings == &getONNXToTOSALowerings())
    for (const onnx::AttributeProto &attribute : node.attribute())
      if (llvm::is_contained({"broadcast", "consumed_inputs", "is_test",
                              "spatial"},
                             attribute.name()))
        return view.emitError()
               << "attribute '" << attribute.name() << "' of opset " << opset
               << " is not supported (opset 7 and later say the same "
                  "without it)";
  for (const std::string &input : node.input())
    if (!input.empty() && !table.contains(input))
      return view.emitError() << "input '" << input << "' is not defined";
  // STRING tensors are bytes (kStringBytes per element) that only these
  // ops read as strings; any other op would compute on the bytes.
  bool readsStrings = lowerings == &getONNXToTOSALowerings() &&
                      llvm::is_contained({"Cast", "CastLike", "Identity"},
                                         node.op_type());
  for (const std::string &input : node.input())
    if (!input.empty() && table.isString(input) && !readsStrings)
      return view.emitError()
             << "input '" << input << "' is a STRING tensor; only Cast, "
             << "CastLike and Identity take strings here";
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
    if (DenseElementsAttr number = getConstantNumbers(view)) {
      table.defineConstant(node.output(0), number, view.loc);
      return success();
    }
    const onnx::AttributeProto *value = view.getAttribute("value");
    if (!value || !value->has_t() || node.output_size() != 1)
      return view.emitError()
             << "only the 'value' tensor attribute and its number forms "
                "(value_float(s), value_int(s)) are supported";
    auto attr = convertTensor(context, value->t(),
                              llvm::sys::path::parent_path(modelPath));
    if (!attr)
      return view.emitError() << llvm::toString(attr.takeError());
    table.defineConstant(node.output(0), *attr, view.loc,
                         isUnsignedDataType(value->t().data_type()));
    if (value->t().data_type() == onnx::TensorProto::STRING)
      table.markString(node.output(0));
    return success();
  }

  auto it = lowerings->find(node.op_type());
  if (it == lowerings->end() && lowerings == &getONNXToTOSALowerings()) {
    lowerings = &getOnnxRuntimeDefaultDomainLowerings();
    it = lowerings->find(node.op_type());
  }
  if (it == lowerings->end())
    return view.emitError() << "operator not supported";
  Block::iterator next = builder.getInsertionPoint();
  Block *block = builder.getInsertionBlock();
  Operation *last = next == block->begin() ? nullptr : &*std::prev(next);
  FailureOr<llvm::SmallVector<Value>> results = it->second(view);
  if (failed(results))
    return failure();
  // TOSA tensors have no 0 dimensions. Lowerings that support empty
  // tensors avoid TOSA (an empty result is a tensor.empty); the others
  // would build ops that fail to verify.
  for (Operation &op : llvm::make_range(
           last ? std::next(last->getIterator()) : block->begin(), next)) {
    if (!isa<tosa::TosaDialect>(op.getDialect()))
      continue;
    for (Type type : llvm::concat<const Type>(op.getOperandTypes(),
                                               op.getResultTypes()))
      if (auto tensor = dyn_cast<RankedTensorType>(type);
          tensor && llvm::is_contained(tensor.getShape(), 0))
        return view.emitError()
               << "empty tensors are not supported here ('"
               << op.getName() << "' over " << tensor << ")";
  }
  // A lowering may stop at the last output the graph uses.
  int requested = node.output_size();
  while (requested > 0 && node.output(requested - 1).empty())
    --requested;
  if (results->size() < static_cast<size_t>(requested))
    return view.emitError() << "computes " << results->size()
                            << " of its " << requested << " outputs";
  // Shapes follow from the model's, which may be absurd (broadcasting
  // 2^40 by 2^40); later passes count elements in int64_t.
  // (A lowering leaves results the graph does not request null.)
  for (Value result : *results)
    if (auto type = result ? dyn_cast<ShapedType>(result.getType())
                           : ShapedType();
        type && !getElementCount(type.getShape()))
      return view.emitError() << "its result " << type
                              << " has more elements than fit in 64 bits";
  // Lowerings that produce unsigned results say so by defining them. A
  // result that folded to a constant joins the constants, so later shape
  // operands (Reshape's, Slice's, ...) can read it.
  // A folded result's op goes once nothing uses it, unless the table
  // still holds it: a lowering may return a value it was given (a
  // Reshape to the same shape returns its input), and erasing that left
  // the input's name dangling (found by the ONNX import fuzzer).
  llvm::SmallSetVector<Operation *, 4> folded;
  llvm::SmallVector<std::string> inputs(node.input().begin(),
                                        node.input().end());
  for (auto [output, value] : llvm::zip(node.output(), *results)) {
    if (output.empty())
      continue;
    bool isUnsigned = table.isUnsigned(output);
    if (node.op_type() == "Identity" && node.input_size() == 1 &&
        table.isString(node.input(0)))
      table.markString(output);
    DenseElementsAttr constant;
    if (matchPattern(value, m_Constant(&constant))) {
      table.defineConstant(output, constant, view.loc, isUnsigned);
      folded.insert(value.getDefiningOp());
    } else {
      if (!table.definesLocally(output))
        table.define(output, value);
      // A node wanting this value as a constant wants these inputs bound.
      table.noteComputedFrom(output, inputs);
    }
  }
  for (Operation *op : folded)
    if (op->use_empty() && !llvm::any_of(op->getResults(), [&](Value v) {
          return table.holds(v);
        }))
      op->erase();
  return success();
}

FailureOr<llvm::SmallVector<Value>>
GraphImporter::importSubgraph(const onnx::GraphProto &graph, Block &block,
                              ValueTable &enclosing) {
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(&block);
  ValueTable scope(builder, &enclosing);
  if (static_cast<unsigned>(graph.input_size()) != block.getNumArguments())
    return emitError(getLoc(graph.name()))
           << "ONNX subgraph '" << graph.name() << "' has "
           << graph.input_size() << " inputs; expected "
           << block.getNumArguments();
  for (auto [input, arg] : llvm::zip(graph.input(), block.getArguments()))
    scope.define(input.name(), arg);
  return importGraphBody(graph, scope);
}

FailureOr<llvm::SmallVector<Value>>
GraphImporter::importInline(const onnx::GraphProto &graph,
                            llvm::ArrayRef<Binding> inputs,
                            ValueTable &enclosing) {
  ValueTable scope(builder, &enclosing);
  if (static_cast<size_t>(graph.input_size()) != inputs.size())
    return emitError(getLoc(graph.name()))
           << "ONNX subgraph '" << graph.name() << "' has "
           << graph.input_size() << " inputs; expected " << inputs.size();
  for (auto [input, binding] : llvm::zip(graph.input(), inputs)) {
    if (binding.constant)
      scope.defineConstant(input.name(), binding.constant,
                           getLoc(input.name()), binding.isUnsigned);
    else
      scope.define(input.name(), binding.value, binding.isUnsigned);
  }
  return importGraphBody(graph, scope);
}

FailureOr<llvm::SmallVector<Value>>
GraphImporter::importGraphBody(const onnx::GraphProto &graph,
                               ValueTable &scope) {
  llvm::StringRef modelDir = llvm::sys::path::parent_path(modelPath);
  for (const onnx::TensorProto &tensor : graph.initializer()) {
    auto attr = convertTensor(context, tensor, modelDir);
    if (!attr)
      return emitError(getLoc(tensor.name()))
             << "ONNX initializer: " << llvm::toString(attr.takeError());
    scope.defineConstant(tensor.name(), *attr, getLoc(tensor.name()),
                         isUnsignedDataType(tensor.data_type()));
    if (tensor.data_type() == onnx::TensorProto::STRING)
      scope.markString(tensor.name());
  }
  for (const auto &[index, node] : llvm::enumerate(graph.node()))
    if (failed(importNode(node, index, scope)))
      return failure();
  llvm::SmallVector<Value> results;
  for (const onnx::ValueInfoProto &output : graph.output()) {
    Value value = scope.lookup(output.name());
    if (!value)
      return emitError(getLoc(output.name()))
             << "ONNX subgraph output '" << output.name()
             << "' is not computed";
    results.push_back(value);
  }
  return results;
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
    if (tensor.data_type() == onnx::TensorProto::STRING)
      table.markString(tensor.name());
  }

  // Before IR 4 initializers were listed among the inputs too; those are
  // constants, not arguments.
  llvm::SmallVector<Type> argTypes;
  llvm::SmallVector<const onnx::ValueInfoProto *> args;
  if (failed(checkBoundDims(graph)))
    return nullptr;
  llvm::StringSet<> inputNames;
  for (const onnx::ValueInfoProto &input : graph.input()) {
    // A second declaration would silently retype the first (its users,
    // and what the importer knows of it: unsigned, STRING).
    if (!inputNames.insert(input.name()).second) {
      emitError(getLoc(input.name()))
          << "ONNX graph input '" << input.name() << "' is declared twice";
      return nullptr;
    }
    if (table.lookupConstant(input.name()))
      continue;
    auto type = convertValueType(context, input, options.boundDims);
    if (!type) {
      emitError(getLoc(input.name()))
          << "ONNX graph input " << llvm::toString(type.takeError());
      return nullptr;
    }
    bool isUnsigned =
        isUnsignedDataType(input.type().tensor_type().elem_type());
    if (input.type().tensor_type().elem_type() == onnx::TensorProto::STRING)
      table.markString(input.name());
    if (DenseElementsAttr bound = options.boundInputs.lookup(input.name())) {
      if (bound.getType() != *type) {
        emitError(getLoc(input.name()))
            << "ONNX graph input '" << input.name() << "' is " << *type
            << " but is bound to a value of type " << bound.getType();
        return nullptr;
      }
      table.defineConstant(input.name(), bound, getLoc(input.name()),
                           isUnsigned);
      continue;
    }
    argTypes.push_back(*type);
    args.push_back(&input);
  }

  auto func = func::FuncOp::create(builder, getLoc(graph.name()), "main",
                                   builder.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  builder.setInsertionPointToEnd(entry);
  for (auto [arg, input, type] :
       llvm::zip(entry->getArguments(), args, argTypes)) {
    arg.setLoc(getLoc(input->name()));
    Value value = arg;
    // An empty tensor has no data; it is passed as a one-element
    // placeholder (see asEntryType) and rebuilt inside.
    auto tensorType = cast<RankedTensorType>(type);
    if (tensorType.getNumElements() == 0) {
      arg.setType(asEntryType(tensorType));
      value = tensor::EmptyOp::create(builder, arg.getLoc(),
                                      tensorType.getShape(),
                                      tensorType.getElementType());
    }
    table.defineGraphInput(
        input->name(), value,
        isUnsignedDataType(input->type().tensor_type().elem_type()));
  }

  auto reportWanted = llvm::make_scope_exit([&] {
    if (options.inputsNeededAsConstants)
      for (const onnx::ValueInfoProto *input : args)
        if (table.isConstantWanted(input->name()))
          options.inputsNeededAsConstants->push_back(input->name());
  });
  for (const auto &[index, node] : llvm::enumerate(graph.node()))
    if (failed(importNode(node, index, table)))
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
      auto declared = convertValueType(context, output, options.boundDims);
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
    auto type = cast<RankedTensorType>(value.getType());
    if (type.getNumElements() == 0)
      value = tensor::EmptyOp::create(builder, getLoc(output.name()),
                                      asEntryType(type).getShape(),
                                      type.getElementType());
    results.push_back(value);
  }
  func::ReturnOp::create(builder, getLoc(graph.name()), results);
  func.setFunctionType(builder.getFunctionType(
      entry->getArgumentTypes(), ValueRange(results).getTypes()));
  return module;
}

OwningOpRef<ModuleOp>
mlir::afm::importONNXModel(MLIRContext *context, llvm::StringRef bytes,
                           llvm::StringRef modelPath,
                           const ONNXImportOptions &options) {
  context->loadDialect<AFMDialect, arith::ArithDialect, func::FuncDialect,
                       linalg::LinalgDialect, math::MathDialect,
                       tensor::TensorDialect, tosa::TosaDialect>();
  onnx::ModelProto model;
  llvm::Expected<int64_t> opset =
      onnx_import::readModel(bytes, modelPath, model);
  if (!opset) {
    emitError(FileLineColLoc::get(context, modelPath, 0, 0))
        << llvm::toString(opset.takeError());
    return nullptr;
  }
  return GraphImporter(context, modelPath, *opset, options)
      .import(model.graph());
}

llvm::Expected<DenseElementsAttr>
mlir::afm::readONNXTensor(MLIRContext *context, llvm::StringRef bytes,
                          llvm::StringRef name, bool *isUnsigned) {
  onnx::TensorProto tensor;
  if (bytes.size() > INT_MAX ||
      !tensor.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return llvm::createStringError(
        llvm::formatv("'{0}' is not a serialized ONNX tensor", name));
  if (isUnsigned)
    *isUnsigned = isUnsignedDataType(tensor.data_type());
  return convertTensor(context, tensor, llvm::sys::path::parent_path(name));
}

llvm::Expected<std::vector<std::string>>
mlir::afm::getONNXGraphInputNames(llvm::StringRef modelBytes,
                                  llvm::StringRef modelPath) {
  auto signature = getONNXGraphSignature(modelBytes, modelPath);
  if (!signature)
    return signature.takeError();
  std::vector<std::string> names;
  for (const ONNXValueSignature &input : signature->inputs)
    names.push_back(input.name);
  return names;
}

static ONNXValueSignature describeValue(const onnx::ValueInfoProto &value) {
  ONNXValueSignature signature;
  signature.name = value.name();
  if (!value.type().has_tensor_type())
    return signature;
  const onnx::TypeProto::Tensor &tensor = value.type().tensor_type();
  signature.elementType = onnx_import::getDataTypeName(tensor.elem_type());
  signature.hasShape = tensor.has_shape();
  for (const auto &dim : tensor.shape().dim()) {
    ONNXValueSignature::Dim d;
    if (dim.has_dim_value())
      d.size = dim.dim_value();
    else if (dim.has_dim_param())
      d.param = dim.dim_param();
    signature.dims.push_back(d);
  }
  return signature;
}

llvm::Expected<ONNXGraphSignature>
mlir::afm::getONNXGraphSignature(llvm::StringRef modelBytes,
                                 llvm::StringRef modelPath) {
  onnx::ModelProto model;
  llvm::Expected<int64_t> opset =
      onnx_import::readModel(modelBytes, modelPath, model);
  if (!opset)
    return opset.takeError();
  llvm::StringSet<> initializers;
  for (const onnx::TensorProto &tensor : model.graph().initializer())
    initializers.insert(tensor.name());
  ONNXGraphSignature signature;
  for (const onnx::ValueInfoProto &input : model.graph().input())
    if (!initializers.contains(input.name()))
      signature.inputs.push_back(describeValue(input));
  for (const onnx::ValueInfoProto &output : model.graph().output())
    signature.outputs.push_back(describeValue(output));
  std::set<std::string> opTypes;
  llvm::StringMap<int64_t> initializerRows;
  for (const onnx::TensorProto &tensor : model.graph().initializer())
    if (tensor.dims_size() == 2)
      initializerRows[tensor.name()] = tensor.dims(0);
  for (const onnx::NodeProto &node : model.graph().node()) {
    opTypes.insert(node.op_type());
    if (node.op_type() != "RotaryEmbedding" || node.input_size() < 3)
      continue;
    auto rows = initializerRows.find(node.input(2));
    if (rows != initializerRows.end() &&
        (signature.rotaryTablePositions < 0 ||
         rows->second < signature.rotaryTablePositions))
      signature.rotaryTablePositions = rows->second;
  }
  signature.opTypes.assign(opTypes.begin(), opTypes.end());
  return signature;
}
