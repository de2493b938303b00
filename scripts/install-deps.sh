#!/usr/bin/env bash
# Installs every Debian package afm-compiler needs to build and test.
# Idempotent: a machine that already has everything costs one dpkg query.
set -euo pipefail

PACKAGES=(
  # Toolchain: Debian's LLVM/MLIR 22 (never built from source).
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools clang-22 lld-22
  # clang's sanitizer and libFuzzer runtimes (tools/afm-onnx-import-fuzzer).
  libclang-rt-22-dev
  cmake ninja-build ccache
  # Front ends and formats. The runtime reads its manifest with protobuf-c,
  # also for arm64 so that it cross-builds for the qemu tests.
  libonnx-dev libprotobuf-dev protobuf-compiler libastcenc-dev
  libprotobuf-c-dev protobuf-c-compiler libprotobuf-c-dev:arm64
  # Tests.
  googletest libgtest-dev libonnx-testdata
  # Cross-target execution of AArch64 code. The cross gcc only recommends
  # its C library headers and start files, and recommends are not installed.
  qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
# arm64 libraries (multiarch) for the cross-built runtime.
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  $SUDO dpkg --add-architecture arm64
fi
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
