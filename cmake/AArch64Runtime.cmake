# The runtime, afm-run and the runtime tests' fake model cross-built for
# AArch64 Linux from runtime/ as a standalone project, into
# build/aarch64/{bin,lib,test/runtime}. The lit suite runs them under
# qemu-aarch64 (feature `qemu-aarch64`).
find_program(AFM_AARCH64_CC aarch64-linux-gnu-gcc)
if(AFM_AARCH64_CC)
  set(afm_aarch64_default ON)
else()
  set(afm_aarch64_default OFF)
endif()
option(AFM_BUILD_AARCH64_RUNTIME
       "Cross-build the runtime and afm-run for AArch64 (build/aarch64)"
       ${afm_aarch64_default})

find_program(AFM_QEMU_AARCH64 qemu-aarch64)
if(NOT AFM_QEMU_AARCH64)
  set(AFM_QEMU_AARCH64 "")
endif()
# Run with: qemu-aarch64 -L P -E LD_LIBRARY_PATH=P/lib (see test/lit.cfg.py).
set(AFM_QEMU_AARCH64_PREFIX /usr/aarch64-linux-gnu CACHE PATH
    "AArch64 C library root for qemu-aarch64 -L")

set(AFM_AARCH64_BINARY_DIR "")
if(AFM_BUILD_AARCH64_RUNTIME)
  include(ExternalProject)
  set(AFM_AARCH64_BINARY_DIR ${CMAKE_BINARY_DIR}/aarch64)
  set(afm_aarch64_launcher "")
  if(CCACHE_PROGRAM)
    set(afm_aarch64_launcher -DCMAKE_C_COMPILER_LAUNCHER=${CCACHE_PROGRAM})
  endif()
  ExternalProject_Add(afm-runtime-aarch64
    SOURCE_DIR ${PROJECT_SOURCE_DIR}/runtime
    BINARY_DIR ${AFM_AARCH64_BINARY_DIR}
    CMAKE_ARGS
      -DCMAKE_TOOLCHAIN_FILE=${PROJECT_SOURCE_DIR}/cmake/aarch64-linux-gnu.cmake
      -DCMAKE_BUILD_TYPE=Release
      -DAFM_RUNTIME_BUILD_TEST_MODEL=ON
      ${afm_aarch64_launcher}
    INSTALL_COMMAND ""
    # Sources live outside the external project's view of time stamps:
    # always let its own build decide what is out of date.
    BUILD_ALWAYS ON
    BUILD_BYPRODUCTS
      ${AFM_AARCH64_BINARY_DIR}/bin/afm-run
      ${AFM_AARCH64_BINARY_DIR}/test/runtime/afm-tokenizer-check
      ${AFM_AARCH64_BINARY_DIR}/test/runtime/afm-thread-pool-stress
      ${AFM_AARCH64_BINARY_DIR}/lib/libafm_runtime.a
      ${AFM_AARCH64_BINARY_DIR}/lib/libafm_runtime.so
    USES_TERMINAL_BUILD ON)
endif()
