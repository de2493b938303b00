//===- InitAll.cpp - register what afm tools understand -------------------===//

#include "afm/InitAll.h"

#include "dialects/afm/IR/AFMDialect.h"
#include "passes/Passes.h"
#include "afm/Translate/Translations.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void afm::registerDialects(DialectRegistry &registry) {
  registry.insert<mlir::afm::AFMDialect, mlir::arith::ArithDialect,
                  mlir::func::FuncDialect, mlir::linalg::LinalgDialect,
                  mlir::math::MathDialect, mlir::tensor::TensorDialect>();
}

void afm::registerPasses() {
  mlir::registerTransformsPasses();
  registerAFMPasses();
}

void afm::registerTranslations() { registerWeightTableTranslation(); }
