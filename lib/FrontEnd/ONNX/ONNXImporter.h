//===- ONNXImporter.h - pieces of the ONNX importer -------------*- C++ -*-===//
//
// Shared by the files of lib/FrontEnd/ONNX: reading the protobuf, converting
// tensors, and the per-node view that the TOSA lowerings work on.
//
//===----------------------------------------------------------------------===//

#ifndef AFM_LIB_ONNXIMPORT_ONNXIMPORTER_H
#define AFM_LIB_ONNXIMPORT_ONNXIMPORTER_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Error.h"

#include <onnx/onnx_pb.h>

#include <optional>

namespace mlir::afm::onnx_import {

//===- ONNXModelReader.cpp ------------------------------------------------===//

/// Opset versions of the default ONNX domain this importer understands.
/// From 7 on, element-wise ops broadcast like numpy without attributes;
/// older models import as long as no node uses an attribute whose meaning
/// opset 7 dropped (`broadcast`, `consumed_inputs`, `is_test`, `spatial`).
constexpr int64_t kMinOpset = 1;
constexpr int64_t kMaxOpset = 21;

/// Parses `bytes` into `model` and checks that it is a model with a graph
/// and a supported default-domain opset, whose version it returns.
llvm::Expected<int64_t> readModel(llvm::StringRef bytes,
                                  llvm::StringRef modelPath,
                                  onnx::ModelProto &model);

//===- ONNXTensor.cpp -----------------------------------------------------===//

/// The MLIR element type of an ONNX TensorProto::DataType, or null for
/// types the importer does not handle.
Type getElementType(MLIRContext *context, int32_t dataType);

/// Whether `dataType` is one of ONNX's unsigned integer types (or BOOL, a
/// byte holding 0 or 1), which getElementType maps onto signless integers
/// of the same width.
bool isUnsignedDataType(int32_t dataType);

/// A STRING tensor of shape S is an i8 tensor of shape [S..., 16]: each
/// element's UTF-8 bytes, NUL-padded, so at most 15 of them. Only Cast,
/// CastLike and Identity take strings (the importer tracks which values
/// are strings); numbers are parsed and printed by the routines of
/// lib/CodeGen/StringRoutines.cpp.
constexpr int64_t kStringBytes = 16;

/// Bytes per element in ONNX raw data and in the compiled code's buffers.
int64_t getStorageBytes(Type elementType);

/// The number of elements of `shape`, or nullopt when it overflows
/// int64_t (a fuzzed or corrupt model can declare any dimensions).
std::optional<int64_t> getElementCount(llvm::ArrayRef<int64_t> shape);

/// The ONNX spelling of `dataType` (FLOAT, INT64, ...), for errors.
std::string getDataTypeName(int32_t dataType);

/// The contents of `tensor` (raw_data, the typed fields, or external
/// data relative to `modelDir`).
llvm::Expected<DenseElementsAttr> convertTensor(MLIRContext *context,
                                                const onnx::TensorProto &tensor,
                                                llvm::StringRef modelDir);

/// The static ranked tensor type of a graph input or output; a symbolic
/// dimension (dim_param) takes its size from `boundDims`, and is an error
/// when it has none there.
llvm::Expected<RankedTensorType>
convertValueType(MLIRContext *context, const onnx::ValueInfoProto &,
                 const llvm::StringMap<int64_t> &boundDims = {});

//===- ONNXGraphImport.cpp ------------------------------------------------===//

/// The values of the graph imported so far, by ONNX name. Constants
/// (initializers, Constant nodes) are kept as attributes and become
/// `arith.constant` only where a node uses them as a tensor, so a shape
/// that only feeds Reshape leaves no dead op behind.
class ValueTable {
public:
  /// A subgraph's table sees the names of its enclosing graph's (`parent`).
  explicit ValueTable(OpBuilder &builder, ValueTable *parent = nullptr)
      : builder(builder), parent(parent) {}

  void define(llvm::StringRef name, Value value, bool isUnsigned = false) {
    values[name] = value;
    if (isUnsigned)
      unsignedNames.insert(name);
  }
  void defineConstant(llvm::StringRef name, DenseElementsAttr value,
                      Location loc, bool isUnsigned = false) {
    values.erase(name);
    constants[name] = {value, loc};
    if (isUnsigned)
      unsignedNames.insert(name);
  }
  /// Marks `name` as a STRING tensor (see kStringBytes).
  void markString(llvm::StringRef name) { stringNames.insert(name); }
  bool isString(llvm::StringRef name) const {
    return stringNames.contains(name) ||
           (!values.count(name) && !constants.count(name) && parent &&
            parent->isString(name));
  }
  /// Whether the ONNX type of `name` is an unsigned integer type.
  bool isUnsigned(llvm::StringRef name) const {
    return unsignedNames.contains(name) ||
           (!values.count(name) && !constants.count(name) && parent &&
            parent->isUnsigned(name));
  }
  bool contains(llvm::StringRef name) const {
    return values.count(name) || constants.count(name) ||
           (parent && parent->contains(name));
  }
  /// The value named `name`, materializing a constant at the builder's
  /// insertion point on first use; null when undefined.
  Value lookup(llvm::StringRef name);
  /// The constant named `name`, or null.
  DenseElementsAttr lookupConstant(llvm::StringRef name) const;

  /// Graph inputs (function arguments), and those a node wanted as a
  /// constant (see ONNXImportOptions).
  void defineGraphInput(llvm::StringRef name, Value value, bool isUnsigned) {
    define(name, value, isUnsigned);
    graphInputs.insert(name);
  }
  /// Notes that a node wanted `name` as a constant: the graph inputs it
  /// is computed from (through the nodes recorded by `noteComputedFrom`)
  /// would make it one once bound.
  void noteConstantWanted(llvm::StringRef name) {
    if (graphInputs.contains(name)) {
      constantsWanted.insert(name);
    } else if (auto it = producers.find(name); it != producers.end()) {
      if (wantedComputations.insert(name).second)
        for (const std::string &input : it->getValue())
          noteConstantWanted(input);
    } else if (parent && !definesLocally(name)) {
      parent->noteConstantWanted(name);
    }
  }
  /// Records that the value `name` is computed from `inputs`.
  void noteComputedFrom(llvm::StringRef name,
                        llvm::ArrayRef<std::string> inputs) {
    producers[name].assign(inputs.begin(), inputs.end());
  }
  /// Whether some name (here or in an enclosing scope) has `value`.
  bool holds(Value value) const {
    return llvm::any_of(values,
                        [&](const auto &entry) {
                          return entry.getValue() == value;
                        }) ||
           (parent && parent->holds(value));
  }
  /// Whether `name` is defined in this scope (not an enclosing one).
  bool definesLocally(llvm::StringRef name) const {
    return values.count(name) || constants.count(name);
  }
  bool isConstantWanted(llvm::StringRef name) const {
    return constantsWanted.contains(name);
  }

private:
  OpBuilder &builder;
  ValueTable *parent;
  llvm::StringMap<Value> values;
  llvm::StringMap<std::pair<DenseElementsAttr, LocationAttr>> constants;
  llvm::StringSet<> unsignedNames;
  llvm::StringSet<> stringNames;
  llvm::StringSet<> graphInputs;
  llvm::StringSet<> constantsWanted;
  llvm::StringMap<std::vector<std::string>> producers;
  llvm::StringSet<> wantedComputations;
};

/// Imports a subgraph attribute (ParallelTracks' tracks, ...) into a
/// block: the block's arguments are the subgraph's inputs, the names of
/// the enclosing graphs stay visible; returns the subgraph's outputs.
class SubgraphImporter {
public:
  virtual ~SubgraphImporter() = default;
  virtual FailureOr<llvm::SmallVector<Value>>
  importSubgraph(const onnx::GraphProto &graph, Block &block,
                 ValueTable &enclosing) = 0;

  /// One input of an inlined subgraph: a value, or a constant (so that
  /// the subgraph's computations on it fold at import).
  struct Binding {
    Value value;
    DenseElementsAttr constant;
    bool isUnsigned = false;
  };
  /// Imports `graph`'s nodes at the builder's insertion point with its
  /// inputs bound to `inputs` (a Loop's unrolled iteration); returns its
  /// outputs.
  virtual FailureOr<llvm::SmallVector<Value>>
  importInline(const onnx::GraphProto &graph, llvm::ArrayRef<Binding> inputs,
               ValueTable &enclosing) = 0;
};

/// One node as its lowering sees it: operands, attributes, a builder at
/// the node's position and the node's location.
class ONNXNode {
public:
  ONNXNode(const onnx::NodeProto &proto, llvm::StringRef name, int64_t opset,
           ValueTable &table, OpBuilder &builder, Location loc,
           SubgraphImporter &subgraphs)
      : proto(proto), name(name), opset(opset), table(table), builder(builder),
        loc(loc), subgraphs(subgraphs) {}

  const onnx::NodeProto &proto;
  /// The node's name, or "<op_type>_<index>" when it has none.
  std::string name;
  int64_t opset;
  ValueTable &table;
  OpBuilder &builder;
  Location loc;
  SubgraphImporter &subgraphs;
  /// ONNXImportOptions::raiseToAFM.
  bool raiseToAFM = false;

  /// Whether output `index` is requested (present and named).
  bool hasOutput(unsigned index) const {
    return index < static_cast<unsigned>(proto.output_size()) &&
           !proto.output(index).empty();
  }

  /// Emits "ONNX node '<name>' (<op>): " at the node; callers add why.
  InFlightDiagnostic emitError() const;

  /// Input `index` as a ranked tensor of a float type; emits an error
  /// and returns failure otherwise.
  FailureOr<TypedValue<RankedTensorType>> getFloatInput(unsigned index);
  /// Input `index` as a ranked tensor of any element type; emits an
  /// error and returns failure when it is missing.
  FailureOr<TypedValue<RankedTensorType>> getInput(unsigned index);
  /// Whether input `index` exists (ONNX marks omitted optional inputs
  /// with an empty name).
  bool hasInput(unsigned index) const {
    return index < static_cast<unsigned>(proto.input_size()) &&
           !proto.input(index).empty();
  }
  /// Whether input `index` has an unsigned ONNX integer type.
  bool isUnsignedInput(unsigned index) const {
    return hasInput(index) && table.isUnsigned(proto.input(index));
  }
  /// Input `index` when it is a constant, else null (and, when it is a
  /// graph input, notes that binding it would help).
  DenseElementsAttr getConstantInput(unsigned index) const;
  /// The integers of constant input `index` (`what` names it in the
  /// error when it is not a constant integer tensor).
  FailureOr<llvm::SmallVector<int64_t>>
  getConstantInts(unsigned index, llvm::StringRef what) const;

  const onnx::AttributeProto *getAttribute(llvm::StringRef name) const;
  int64_t getIntAttribute(llvm::StringRef name, int64_t defaultValue) const;
  std::optional<llvm::SmallVector<int64_t>>
  getIntsAttribute(llvm::StringRef name) const;
};

//===- ONNXToTOSA.cpp -----------------------------------------------------===//

/// Lowers one node; returns its results (one per ONNX output) or fails
/// after emitting an error at the node.
using NodeLowering = FailureOr<llvm::SmallVector<Value>> (*)(ONNXNode &node);

/// The lowering of each supported default-domain op type.
const llvm::StringMap<NodeLowering> &getONNXToTOSALowerings();

/// The op families in their own files add their lowerings to that table.
void registerShapeLowerings(llvm::StringMap<NodeLowering> &lowerings);
void registerReductionLowerings(llvm::StringMap<NodeLowering> &lowerings);
void registerContractionLowerings(llvm::StringMap<NodeLowering> &lowerings);
void registerControlFlowLowerings(llvm::StringMap<NodeLowering> &lowerings);
void registerElementwiseMathLowerings(
    llvm::StringMap<NodeLowering> &lowerings);
void registerActivationLowerings(llvm::StringMap<NodeLowering> &lowerings);
void registerIndexLowerings(llvm::StringMap<NodeLowering> &lowerings);
void registerScatterLowerings(llvm::StringMap<NodeLowering> &lowerings);
void registerPoolingLowerings(llvm::StringMap<NodeLowering> &lowerings);
void registerLossLowerings(llvm::StringMap<NodeLowering> &lowerings);
void registerResizeLowerings(llvm::StringMap<NodeLowering> &lowerings);
void registerLayoutLowerings(llvm::StringMap<NodeLowering> &lowerings);
void registerNormalizationLowerings(llvm::StringMap<NodeLowering> &lowerings);

//===- ONNXMicrosoftOps.cpp -----------------------------------------------===//

/// The lowering of each supported op of the `com.microsoft` domain (the
/// contrib ops ONNX Runtime's LLM exporters emit).
const llvm::StringMap<NodeLowering> &getMicrosoftLowerings();

/// The com.microsoft op families in their own files add their lowerings
/// to that table: the Gelu variants (ONNXMicrosoftActivationOps.cpp) and
/// MultiHeadAttention and Attention (ONNXMicrosoftAttentionOps.cpp).
void registerMicrosoftActivationLowerings(
    llvm::StringMap<NodeLowering> &lowerings);
void registerMicrosoftAttentionLowerings(
    llvm::StringMap<NodeLowering> &lowerings);

/// Fails at the node, naming input `index` as `what`, when it is given.
LogicalResult rejectInput(ONNXNode &node, unsigned index, llvm::StringRef what);
/// Fails at the node, naming output `index` as `what`, when it is
/// requested.
LogicalResult rejectOutput(ONNXNode &node, int index, llvm::StringRef what);

//===- ONNXAFMDomainOps.cpp -----------------------------------------------===//

/// The lowering of each op of the `afm` domain (what ONNX cannot say:
/// parallel tracks, MoE, shared-KV attention, compressed weights).
const llvm::StringMap<NodeLowering> &getAFMDomainLowerings();

/// The contrib ops ONNX Runtime defines in the default domain
/// (SimplifiedLayerNormalization), for default-domain op types the ONNX
/// table does not have.
const llvm::StringMap<NodeLowering> &getOnnxRuntimeDefaultDomainLowerings();

} // namespace mlir::afm::onnx_import

#endif // AFM_LIB_ONNXIMPORT_ONNXIMPORTER_H
