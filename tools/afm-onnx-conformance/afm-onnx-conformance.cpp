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
#include "afm/Import/ONNXImport.h"
#include "afm/InitAll.h"
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
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstring>
#include <utility>

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

/// A test's outcome, printed as one line.
struct Outcome {
  enum Kind { Pass, Fail, Unsupported } kind;
  std::string detail;
};

Outcome fail(const llvm::Twine &detail) {
  return {Outcome::Fail, detail.str()};
}

/// The elements of the serialized TensorProto in `path`, which must be a
/// FLOAT tensor of type `type`.
llvm::Expected<afm::HostBuffer> readTensor(llvm::StringRef path,
                                           RankedTensorType type) {
  auto error = [&](const llvm::Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   llvm::sys::path::filename(path) + ": " +
                                       message);
  };
  auto file = llvm::MemoryBuffer::getFile(path);
  if (!file)
    return error("cannot read: " + file.getError().message());
  onnx::TensorProto tensor;
  if (!tensor.ParseFromArray((*file)->getBufferStart(),
                             static_cast<int>((*file)->getBufferSize())))
    return error("not a serialized TensorProto");
  if (tensor.data_type() != onnx::TensorProto::FLOAT)
    return error("element type " + llvm::Twine(tensor.data_type()) +
                 " is not FLOAT");
  if (!llvm::equal(tensor.dims(), type.getShape())) {
    auto shape = [](auto dims) {
      return "[" +
             llvm::join(
                 llvm::map_range(
                     dims, [](int64_t dim) { return std::to_string(dim); }),
                 ",") +
             "]";
    };
    return error("shape " + shape(tensor.dims()) +
                 " does not match the model's " + shape(type.getShape()));
  }
  size_t count = type.getNumElements();
  afm::HostBuffer buffer(count * sizeof(float));
  if (tensor.has_raw_data()) {
    // ONNX stores raw data little-endian, as the hosts we run on.
    if (tensor.raw_data().size() != count * sizeof(float))
      return error("raw_data holds " + llvm::Twine(tensor.raw_data().size()) +
                   " bytes, expected " + llvm::Twine(count * sizeof(float)));
    std::memcpy(buffer.data(), tensor.raw_data().data(), count * sizeof(float));
  } else {
    if (static_cast<size_t>(tensor.float_data_size()) != count)
      return error("float_data holds " + llvm::Twine(tensor.float_data_size()) +
                   " elements, expected " + llvm::Twine(count));
    llvm::copy(tensor.float_data(), buffer.data<float>());
  }
  return std::move(buffer);
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
  OwningOpRef<ModuleOp> module =
      afm::importONNXModel(&context, (*model)->getBuffer(), modelPath);
  if (!module)
    return {Outcome::Unsupported,
            llvm::StringRef(firstError).split('\n').first.str()};

  auto main = module->lookupSymbol<func::FuncOp>("main");
  if (!main)
    return fail("the imported module has no @main");
  SmallVector<RankedTensorType> inputTypes, outputTypes;
  for (Type type : main.getArgumentTypes())
    inputTypes.push_back(cast<RankedTensorType>(type));
  for (Type type : main.getResultTypes())
    outputTypes.push_back(cast<RankedTensorType>(type));
  if (inputTypes.size() + outputTypes.size() > afm::kMaxGraphArguments)
    return fail("more than " + llvm::Twine(afm::kMaxGraphArguments) +
                " inputs and outputs");

  afm::HostLibrary loaded;
  if (llvm::Error error = loaded.compileAndLoad(*module, target)) {
    std::string message = llvm::toString(std::move(error));
    return fail("compile: " +
                (firstError.empty()
                     ? llvm::StringRef(message)
                     : llvm::StringRef(firstError).split('\n').first));
  }
  void *function = loaded.lookup("main");
  if (!function)
    return fail("the library has no main");

  std::vector<std::string> sets = dataSets(testDir);
  if (sets.empty())
    return fail("no test_data_set_* in " + testDir);
  double maxError = 0;
  for (const std::string &set : sets) {
    auto tensorPath = [&](const char *kind, size_t index) {
      llvm::SmallString<128> path(set);
      llvm::sys::path::append(path, kind + std::to_string(index) + ".pb");
      return path;
    };
    std::vector<afm::HostBuffer> buffers;
    for (auto [index, type] : llvm::enumerate(inputTypes)) {
      auto input = readTensor(tensorPath("input_", index), type);
      if (!input)
        return fail(llvm::sys::path::filename(set) + "/" +
                    llvm::toString(input.takeError()));
      buffers.push_back(std::move(*input));
    }
    for (RankedTensorType type : outputTypes)
      buffers.emplace_back(type.getNumElements() * sizeof(float));
    SmallVector<void *> args;
    for (afm::HostBuffer &buffer : buffers)
      args.push_back(buffer.data());
    if (llvm::Error error = afm::callGraph(function, args))
      return fail(llvm::toString(std::move(error)));

    for (auto [index, type] : llvm::enumerate(outputTypes)) {
      auto expected = readTensor(tensorPath("output_", index), type);
      if (!expected)
        return fail(llvm::sys::path::filename(set) + "/" +
                    llvm::toString(expected.takeError()));
      const afm::HostBuffer &actual = buffers[inputTypes.size() + index];
      const float *actualData = actual.data<float>();
      const float *expectedData = expected->data<float>();
      bool ok = true;
      for (size_t i = 0; i < actual.size() / sizeof(float); ++i) {
        double a = actualData[i], b = expectedData[i];
        double error = std::fabs(a - b);
        // NaN compares false: a NaN where a number is expected fails.
        bool close = error <= absTol + relTol * std::fabs(b) ||
                     (std::isnan(a) && std::isnan(b)) || a == b;
        if (!close) {
          ok = false;
          maxError = std::isnan(error) ? error : std::max(maxError, error);
        }
      }
      if (!ok)
        return fail(llvm::formatv("max error {0:e} in output {1} of {2}",
                                  maxError, index,
                                  llvm::sys::path::filename(set))
                        .str());
    }
  }
  return {Outcome::Pass, ""};
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
