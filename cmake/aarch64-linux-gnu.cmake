# Toolchain file: AArch64 Linux with Debian's cross gcc and multiarch arm64
# libraries (no sysroot: arm64 packages such as libprotobuf-c-dev:arm64
# install to /usr/lib/aarch64-linux-gnu, headers are shared in /usr/include).
#   cmake -S runtime -B build-aarch64 \
#         -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
# Run the results with: qemu-aarch64 -L /usr/aarch64-linux-gnu PROGRAM
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# find_library looks in <prefix>/lib/aarch64-linux-gnu, never in the host's
# x86_64 directories.
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

# Programs (protoc-c) run on the host; libraries and headers are the
# target's, found through the multiarch paths above.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
