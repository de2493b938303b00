//===- afm-onnx-conformance.cpp - run ONNX backend node tests -------------===//
//
// For each ONNX backend node test directory (model.onnx and
// test_data_set_*/{input,output}_*.pb): import the model, compile it for
// the host with the afm-graph-codegen pipeline into a shared library, run
// it on the inputs and compare with the reference outputs. This checks
// the importer and the TOSA -> linalg -> LLVM path numerically against
// the ONNX reference, not against our own expectations.
//
//===----------------------------------------------------------------------===//

#include "afm/CodeGen/ObjectEmitter.h"
#include "afm/Compiler/HostLibrary.h"
#include "afm/Compiler/Compile.h"
#include "afm/FrontEnd/ONNX/ONNXImport.h"
#include "afm/Compiler/InitAll.h"
#include "afm/Target/TargetDescription.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <utility>
#include <variant>

using namespace mlir;

static llvm::cl::OptionCategory category("afm-onnx-conformance options");

static llvm::cl::list<std::string>
    testDirs(llvm::cl::Positional, llvm::cl::desc("<ONNX node test dir>..."),
             llvm::cl::OneOrMore, llvm::cl::cat(category));

// The defaults of the ONNX backend tests (onnx/backend/test/runner).
static llvm::cl::opt<double>
    relTol("rtol",
           llvm::cl::desc("Relative tolerance: an output element "
                          "passes iff |a-b| <= atol + rtol*|b|"),
           llvm::cl::init(1e-3), llvm::cl::cat(category));
static llvm::cl::opt<double> absTol("atol",
                                    llvm::cl::desc("Absolute tolerance"),
                                    llvm::cl::init(1e-5),
                                    llvm::cl::cat(category));

namespace {

using afm::HostBuffer;

/// A test's outcome, printed as one line.
struct Outcome {
  enum Kind { Pass, Fail, Unsupported } kind;
  std::string detail;
};

Outcome fail(const llvm::Twine &detail) {
  return {Outcome::Fail, detail.str()};
}

/// Bytes per element in ONNX data and in the compiled code's buffers
/// (a bool is a byte in both).
size_t storageBytes(Type elementType) {
  return std::max<size_t>(1, elementType.getIntOrFloatBitWidth() / 8);
}

/// The serialized TensorProto in `path`, which must have type `type`.
llvm::Expected<DenseElementsAttr>
readTensor(MLIRContext *context, llvm::StringRef path, RankedTensorType type) {
  auto file = llvm::MemoryBuffer::getFile(path);
  if (!file)
    return llvm::createStringError(llvm::sys::path::filename(path) +
                                   ": cannot read: " +
                                   file.getError().message());
  auto attr = afm::readONNXTensor(context, (*file)->getBuffer(), path);
  if (!attr)
    return attr.takeError();
  // Backend tests store bf16 data as its uint16 bit patterns (numpy has
  // no bf16).
  if (type && attr->getType() != type &&
      attr->getType() == type.clone(IntegerType::get(context, 16)) &&
      type.getElementType().isBF16())
    *attr = attr->bitcast(type.getElementType());
  // An empty tensor is passed as a one-element placeholder.
  if (type && attr->getNumElements() == 0 && type.getNumElements() == 1 &&
      attr->getElementType() == type.getElementType())
    return *attr;
  if (type && attr->getType() != type) {
    std::string message;
    llvm::raw_string_ostream os(message);
    os << llvm::sys::path::filename(path) << ": type " << attr->getType()
       << " does not match the model's " << type;
    return llvm::createStringError(message);
  }
  return *attr;
}

/// `attr`'s elements laid out as the compiled code reads them.
llvm::Expected<HostBuffer> toBuffer(DenseElementsAttr attr) {
  Type elementType = attr.getElementType();
  size_t elementBytes = storageBytes(elementType);
  auto allocated = HostBuffer::allocate(attr.getNumElements() * elementBytes);
  if (!allocated)
    return allocated.takeError();
  HostBuffer &buffer = *allocated;
  char *bytes = buffer.data<char>();
  if (elementType.isInteger(1)) {
    for (auto [index, bit] : llvm::enumerate(attr.getValues<bool>()))
      bytes[index] = bit;
  } else if (attr.isSplat()) {
    llvm::ArrayRef<char> raw = attr.getRawData();
    for (int64_t i = 0; i < attr.getNumElements(); ++i)
      std::memcpy(bytes + i * elementBytes, raw.data(), elementBytes);
  } else if (buffer.size() != 0) { // (an empty tensor has no data pointer)
    std::memcpy(bytes, attr.getRawData().data(), buffer.size());
  }
  return allocated;
}

/// The largest |a - b| over elements that are not close, 0 when all are:
/// floats within atol + rtol * |b| (NaN matching NaN), integers equal.
llvm::Expected<double> mismatch(const HostBuffer &actual,
                                DenseElementsAttr expected) {
  Type elementType = expected.getElementType();
  auto expectedBuffer = toBuffer(expected);
  if (!expectedBuffer)
    return expectedBuffer.takeError();
  const HostBuffer &wanted = *expectedBuffer;
  int64_t count = expected.getNumElements();
  double worst = 0;
  auto check = [&](double a, double b) {
    double error = std::fabs(a - b);
    bool close = error <= absTol + relTol * std::fabs(b) ||
                 (std::isnan(a) && std::isnan(b)) || a == b;
    if (!close)
      worst = std::isnan(error) ? error : std::max(worst, error);
  };
  auto elementAt = [&](const HostBuffer &buffer, int64_t i) -> double {
    const char *at = buffer.data<char>() + i * storageBytes(elementType);
    if (elementType.isF32())
      return *reinterpret_cast<const float *>(at);
    if (elementType.isF64())
      return *reinterpret_cast<const double *>(at);
    if (isa<FloatType>(elementType)) {
      // f16/bf16: through APFloat.
      uint16_t bits;
      std::memcpy(&bits, at, 2);
      return APFloat(cast<FloatType>(elementType).getFloatSemantics(),
                     APInt(16, bits))
          .convertToDouble();
    }
    return NAN;
  };
  if (isa<FloatType>(elementType)) {
    for (int64_t i = 0; i < count; ++i)
      check(elementAt(actual, i), elementAt(wanted, i));
    return worst;
  }
  // Integers and bools: bit-exact (signedness does not matter).
  size_t elementBytes = storageBytes(elementType);
  for (int64_t i = 0; i < count; ++i)
    if (std::memcmp(actual.data<char>() + i * elementBytes,
                    wanted.data<char>() + i * elementBytes, elementBytes) != 0)
      worst = std::max(worst, 1.0);
  return worst;
}

/// The `test_data_set_*` directories of a test, in order.
std::vector<std::string> dataSets(llvm::StringRef testDir) {
  std::vector<std::string> sets;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(testDir, ec), end; it != end && !ec;
       it.increment(ec))
    if (llvm::sys::path::filename(it->path()).starts_with("test_data_set_"))
      sets.push_back(it->path());
  llvm::sort(sets);
  return sets;
}

/// A model compiled for one binding of its inputs.
struct CompiledTest {
  afm::HostLibrary library;
  void *function = nullptr;
  /// The graph input index of each argument, then the result types.
  SmallVector<size_t> argumentInputs;
  SmallVector<RankedTensorType> argumentTypes, resultTypes;
};

/// Imports (binding `bound` inputs), compiles and loads the model; on
/// failure returns the outcome to report.
std::variant<Outcome, std::unique_ptr<CompiledTest>>
compileTest(llvm::StringRef modelPath, llvm::StringRef modelBytes,
            llvm::ArrayRef<std::string> inputNames,
            const llvm::StringMap<DenseElementsAttr> &bound,
            std::vector<std::string> *wanted, MLIRContext &context,
            const std::string &firstError,
            const afm::TargetDescription &target) {
  afm::ONNXImportOptions options;
  options.boundInputs = bound;
  options.inputsNeededAsConstants = wanted;
  OwningOpRef<ModuleOp> module =
      afm::importONNXModel(&context, modelBytes, modelPath, options);
  if (!module)
    return Outcome{Outcome::Unsupported,
                   llvm::StringRef(firstError).split('\n').first.str()};
  auto main = module->lookupSymbol<func::FuncOp>("main");
  if (!main)
    return fail("the imported module has no @main");
  auto compiled = std::make_unique<CompiledTest>();
  for (auto [index, name] : llvm::enumerate(inputNames))
    if (!bound.count(name))
      compiled->argumentInputs.push_back(index);
  for (Type type : main.getArgumentTypes())
    compiled->argumentTypes.push_back(cast<RankedTensorType>(type));
  for (Type type : main.getResultTypes())
    compiled->resultTypes.push_back(cast<RankedTensorType>(type));
  if (compiled->argumentTypes.size() != compiled->argumentInputs.size())
    return fail("@main has " + llvm::Twine(compiled->argumentTypes.size()) +
                " arguments for " +
                llvm::Twine(compiled->argumentInputs.size()) + " inputs");
  if (compiled->argumentTypes.size() + compiled->resultTypes.size() >
      afm::kMaxGraphArguments)
    return fail("more than " + llvm::Twine(afm::kMaxGraphArguments) +
                " inputs and outputs");

  if (llvm::Error error = compiled->library.compileAndLoad(*module, target)) {
    std::string why = firstError.empty() ? llvm::toString(std::move(error))
                                         : (llvm::consumeError(std::move(error)),
                                            firstError);
    return fail("compile: " + llvm::StringRef(why).split('\n').first);
  }
  compiled->function = compiled->library.lookup("main");
  if (!compiled->function)
    return fail("the library has no main");
  return std::move(compiled);
}

Outcome runTest(llvm::StringRef testDir, const afm::TargetDescription &target,
                DialectRegistry &registry) {
  MLIRContext context(registry);
  // The first error of a stage is what the test's line reports.
  std::string firstError;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error && firstError.empty())
      firstError = diag.str();
    return success();
  });

  llvm::SmallString<128> modelPath(testDir);
  llvm::sys::path::append(modelPath, "model.onnx");
  auto model = llvm::MemoryBuffer::getFile(modelPath);
  if (!model)
    return fail("cannot read " + modelPath + ": " + model.getError().message());
  llvm::StringRef modelBytes = (*model)->getBuffer();
  auto inputNames = afm::getONNXGraphInputNames(modelBytes, modelPath);
  if (!inputNames)
    return {Outcome::Unsupported, llvm::toString(inputNames.takeError())};
  std::vector<std::string> sets = dataSets(testDir);
  if (sets.empty())
    return fail("no test_data_set_* in " + testDir);
  auto tensorPath = [&](const std::string &set, const char *kind,
                        size_t index) {
    llvm::SmallString<128> path(set);
    llvm::sys::path::append(path, kind + std::to_string(index) + ".pb");
    return path;
  };

  // Shapes are static: inputs that decide a shape (Reshape's shape,
  // Slice's starts, ...) are bound to each data set's values, which
  // specializes the model to them, as an AOT compiler would.
  std::vector<std::string> wanted;
  auto first = compileTest(modelPath, modelBytes, *inputNames, {}, &wanted,
                           context, firstError, target);
  std::unique_ptr<CompiledTest> unbound;
  if (auto *compiled = std::get_if<std::unique_ptr<CompiledTest>>(&first))
    unbound = std::move(*compiled);
  else if (wanted.empty() ||
           std::get<Outcome>(first).kind != Outcome::Unsupported)
    return std::get<Outcome>(first);
  // A node may name its non-constant operands one at a time: bind the
  // first data set's values until the importer asks for nothing new.
  while (!unbound) {
    llvm::StringMap<DenseElementsAttr> bound;
    for (const std::string &name : wanted) {
      size_t index = llvm::find(*inputNames, name) - inputNames->begin();
      auto value =
          readTensor(&context, tensorPath(sets[0], "input_", index), nullptr);
      if (!value)
        return fail(llvm::toString(value.takeError()));
      bound[name] = *value;
    }
    std::vector<std::string> more;
    firstError.clear();
    auto probe = compileTest(modelPath, modelBytes, *inputNames, bound, &more,
                             context, firstError, target);
    if (std::holds_alternative<std::unique_ptr<CompiledTest>>(probe))
      break;
    if (more.empty() || std::get<Outcome>(probe).kind != Outcome::Unsupported)
      return std::get<Outcome>(probe);
    llvm::append_range(wanted, more);
  }

  for (const std::string &set : sets) {
    std::unique_ptr<CompiledTest> specialized;
    CompiledTest *test = unbound.get();
    if (!test) {
      llvm::StringMap<DenseElementsAttr> bound;
      for (const std::string &name : wanted) {
        size_t index = llvm::find(*inputNames, name) - inputNames->begin();
        auto value = readTensor(&context, tensorPath(set, "input_", index),
                                nullptr);
        if (!value)
          return fail(llvm::sys::path::filename(set) + "/" +
                      llvm::toString(value.takeError()));
        bound[name] = *value;
      }
      firstError.clear();
      auto result = compileTest(modelPath, modelBytes, *inputNames, bound,
                                nullptr, context, firstError, target);
      if (auto *outcome = std::get_if<Outcome>(&result))
        return *outcome;
      specialized =
          std::move(std::get<std::unique_ptr<CompiledTest>>(result));
      test = specialized.get();
    }

    std::vector<HostBuffer> buffers;
    for (auto [index, type] :
         llvm::zip(test->argumentInputs, test->argumentTypes)) {
      auto input = readTensor(&context, tensorPath(set, "input_", index), type);
      if (!input)
        return fail(llvm::sys::path::filename(set) + "/" +
                    llvm::toString(input.takeError()));
      auto buffer = toBuffer(*input);
      if (!buffer)
        return fail(llvm::toString(buffer.takeError()));
      buffers.push_back(std::move(*buffer));
    }
    for (RankedTensorType type : test->resultTypes) {
      // Saturated: a shape whose bytes overflow is refused as too big.
      auto buffer = HostBuffer::allocate(llvm::SaturatingMultiply<uint64_t>(
          type.getNumElements(), storageBytes(type.getElementType())));
      if (!buffer)
        return fail("result " + llvm::Twine(buffers.size() -
                                             test->argumentTypes.size()) +
                    ": " + llvm::toString(buffer.takeError()));
      buffers.push_back(std::move(*buffer));
    }
    SmallVector<void *> args;
    for (HostBuffer &buffer : buffers)
      args.push_back(buffer.data());
    if (llvm::Error error = afm::callGraph(test->function, args))
      return fail(llvm::toString(std::move(error)));

    for (auto [index, type] : llvm::enumerate(test->resultTypes)) {
      auto expected =
          readTensor(&context, tensorPath(set, "output_", index), type);
      if (!expected)
        return fail(llvm::sys::path::filename(set) + "/" +
                    llvm::toString(expected.takeError()));
      const HostBuffer &actual = buffers[test->argumentTypes.size() + index];
      auto mismatched = mismatch(actual, *expected);
      if (!mismatched)
        return fail(llvm::toString(mismatched.takeError()));
      double error = *mismatched;
      if (error != 0)
        return fail(llvm::formatv("max error {0:e} in output {1} of {2}",
                                  error, index,
                                  llvm::sys::path::filename(set))
                        .str());
    }
  }
  if (unbound)
    return {Outcome::Pass, ""};
  return {Outcome::Pass, "specialized to the data's " +
                             llvm::join(wanted, ", ")};
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::cl::HideUnrelatedOptions(category);
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "afm ONNX conformance runner\n\n"
      "Compiles each ONNX backend node test's model.onnx for the host, runs\n"
      "it on test_data_set_*/input_*.pb and compares with output_*.pb.\n"
      "An output passes iff max|a-b| <= atol + rtol*|b| elementwise (ONNX\n"
      "backend test defaults: rtol 1e-3, atol 1e-5). Prints PASS, FAIL or\n"
      "UNSUPPORTED (the importer rejects the model) per test, then\n"
      "'N passed, N failed, N unsupported'; exits 1 iff a test failed.\n");

  DialectRegistry registry;
  afm::registerDialects(registry);
  afm::registerLLVMIRTranslations(registry);
  afm::TargetDescription target = afm::getHostTarget();

  unsigned counts[3] = {0, 0, 0};
  for (const std::string &dir : testDirs) {
    llvm::StringRef name =
        llvm::sys::path::filename(llvm::StringRef(dir).rtrim('/'));
    Outcome outcome = runTest(dir, target, registry);
    ++counts[outcome.kind];
    static const char *const labels[] = {"PASS", "FAIL", "UNSUPPORTED"};
    llvm::outs() << labels[outcome.kind] << ' ' << name;
    if (!outcome.detail.empty())
      llvm::outs() << ": " << outcome.detail;
    llvm::outs() << '\n';
    llvm::outs().flush();
  }
  llvm::outs() << counts[Outcome::Pass] << " passed, " << counts[Outcome::Fail]
               << " failed, " << counts[Outcome::Unsupported]
               << " unsupported\n";
  return counts[Outcome::Fail] == 0 ? 0 : 1;
}
