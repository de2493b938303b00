//===- afm-opt.cpp - afm optimizer driver ---------------------------------===//
//
// Runs afm and upstream passes over MLIR files, like mlir-opt, with only the
// dialects and passes of the afm pipeline registered.
//
//===----------------------------------------------------------------------===//

#include "afm/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::afm::registerDialects(registry);
  mlir::afm::registerPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "afm-opt: afm dialect optimizer and pass driver\n",
      registry));
}
