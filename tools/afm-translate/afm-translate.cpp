//===- afm-translate.cpp - afm import/export driver -----------------------===//
//
// Imports models into afm IR and exports afm IR to other forms. Each
// translation is registered by the library that implements it.
//
//===----------------------------------------------------------------------===//

#include "afm/Translate/Translations.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  mlir::afm::registerTranslations();
  return mlir::failed(mlir::mlirTranslateMain(
      argc, argv, "afm-translate: import models into and export from afm IR\n"));
}
