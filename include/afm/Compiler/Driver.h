//===- Driver.h - the afm-compile command line ------------------*- C++ -*-===//

#ifndef AFM_COMPILER_DRIVER_H
#define AFM_COMPILER_DRIVER_H

namespace mlir::afm {

/// Runs afm-compile; returns the process exit code.
int runCompileDriver(int argc, char **argv);

} // namespace mlir::afm

#endif // AFM_COMPILER_DRIVER_H
