//===- WeightTable.cpp - afm IR -> table of the model's weights -----------===//
//
// A human-readable inventory of the weights a model refers to: what each
// costs in storage and where its data lives. Weights referenced twice under
// one name (tied embeddings) are listed once.
//
//===----------------------------------------------------------------------===//

#include "afm/Translate/Translations.h"

#include "dialects/afm/IR/AFMOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace {
struct WeightInfo {
  std::string format;
  std::string shape;
  int64_t elements = 0;
  int64_t bytes = 0;
  bool isInline = false;
  Type type;
};
} // namespace

static WeightInfo describe(afm::WeightOp op) {
  WeightInfo info;
  info.type = op.getType();
  info.isInline = static_cast<bool>(op.getValueAttr());
  llvm::TypeSwitch<Type>(op.getType())
      .Case([&](RankedTensorType t) {
        llvm::raw_string_ostream fmt(info.format), shape(info.shape);
        fmt << t.getElementType();
        llvm::interleave(t.getShape(), shape, "x");
        info.elements = t.getNumElements();
        info.bytes = info.elements *
                     ((t.getElementTypeBitWidth() + 7) / 8);
      })
      .Case([&](afm::Q2WeightType t) {
        info.format = "q2";
        info.elements = t.getRows() * t.getCols();
        info.bytes = t.getCodeBytes() + 4 * t.getNumScales();
      })
      .Case([&](afm::Q4WeightType t) {
        info.format = "q4";
        info.elements = t.getRows() * t.getCols();
        info.bytes = t.getCodeBytes() + 4 * t.getNumScales();
      })
      .Case([&](afm::ASTCWeightType t) {
        info.format = "astc";
        info.elements = t.getRows() * t.getCols();
        // One 128-bit block plus one f16 offset per block.
        info.bytes = t.getNumBlocks() * (16 + 2);
      });
  if (info.shape.empty()) {
    auto [rows, cols] = *afm::getWeightMatrixShape(op.getType());
    info.shape = llvm::formatv("{0}x{1}", rows, cols).str();
  }
  return info;
}

LogicalResult afm::writeWeightTable(ModuleOp module, llvm::raw_ostream &os) {
  llvm::MapVector<StringRef, WeightInfo> weights;
  WalkResult walk = module.walk([&](afm::WeightOp op) {
    WeightInfo info = describe(op);
    auto [it, inserted] = weights.try_emplace(op.getName(), info);
    if (!inserted && it->second.type != info.type) {
      op.emitError() << "weight '" << op.getName() << "' has type "
                     << info.type << " here but " << it->second.type
                     << " elsewhere";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();

  size_t nameWidth = 4;
  for (auto &entry : weights)
    nameWidth = std::max(nameWidth, entry.first.size());
  os << llvm::left_justify("name", nameWidth) << "  format  "
     << llvm::left_justify("shape", 12) << "  bits/weight  "
     << llvm::right_justify("bytes", 12) << "  storage\n";
  int64_t totalBytes = 0, totalElements = 0;
  for (auto &[name, info] : weights) {
    os << llvm::left_justify(name, nameWidth) << "  "
       << llvm::left_justify(info.format, 6) << "  "
       << llvm::left_justify(info.shape, 12) << "  "
       << llvm::format("%11.3f", 8.0 * info.bytes / info.elements) << "  "
       << llvm::format_decimal(info.bytes, 12) << "  "
       << (info.isInline ? "inline" : "external") << "\n";
    totalBytes += info.bytes;
    totalElements += info.elements;
  }
  os << "total: " << weights.size() << " weights, " << totalElements
     << " parameters, " << totalBytes << " bytes";
  if (totalElements)
    os << llvm::format(" (%.3f bits/weight)", 8.0 * totalBytes / totalElements);
  os << "\n";
  return success();
}

void afm::registerWeightTableTranslation() {
  registerExportFromAFMIR(
      "afm-to-weight-table",
      "list the weights of an afm model: format, shape, bits per weight, "
      "bytes, inline or external",
      [](Operation *op, llvm::raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("expected a builtin.module");
        return writeWeightTable(module, os);
      },
      [](DialectRegistry &registry) {
        registry.insert<afm::AFMDialect, arith::ArithDialect,
                        func::FuncDialect, tensor::TensorDialect>();
      });
}
