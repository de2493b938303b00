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
  # Tests. Node.js runs ONNX Runtime (npm's onnxruntime-node, see below),
  # the reference for ONNX models.
  googletest libgtest-dev libonnx-testdata nodejs
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

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
else
  # arm64 libraries (multiarch) for the cross-built runtime.
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    $SUDO dpkg --add-architecture arm64
  fi
  echo "install-deps: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# ONNX Runtime for the tests, pinned by package.json and package-lock.json,
# into the repository's git-ignored node_modules/ (the CPU library ships in
# the package: no install scripts run). Builds and tests never touch the
# network; test/lit.cfg.py enables the `onnxruntime` feature when it is here.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ORT_VERSION="$(sed -n 's/.*"onnxruntime-node": "\(.*\)".*/\1/p' "$ROOT/package.json")"
installed="$(sed -n 's/^  "version": "\(.*\)",$/\1/p' \
  "$ROOT/node_modules/onnxruntime-node/package.json" 2>/dev/null || true)"
if [ "$installed" = "$ORT_VERSION" ]; then
  echo "install-deps: onnxruntime-node $ORT_VERSION present"
else
  if ! command -v npm >/dev/null; then
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends npm
  fi
  echo "install-deps: installing onnxruntime-node $ORT_VERSION into $ROOT/node_modules"
  npm ci --prefix "$ROOT" --ignore-scripts --no-audit --no-fund
fi
