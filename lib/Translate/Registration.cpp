//===- Registration.cpp - every afm-translate translation ------------------===//

#include "afm/Translate/Translations.h"

void mlir::afm::registerTranslations() {
  registerConfigImportTranslation();
  registerONNXImportTranslation();
  registerWeightTableTranslation();
  registerLLVMIRExportTranslation();
  registerAFMBExportTranslation();
}
