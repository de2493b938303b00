//===- afm-compile.cpp - compile a model into an .afmb --------------------===//

#include "afm/Compiler/Driver.h"

int main(int argc, char **argv) {
  return mlir::afm::runCompileDriver(argc, argv);
}
