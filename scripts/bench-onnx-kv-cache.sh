#!/usr/bin/env bash
# Decode cost of an exporter-style ONNX decoder at contexts 256, 512 and
# 1024: compiled with its KV cache (afm-compile --onnx --context C; a step
# runs one token over the C cache slots) against the stateless form of the
# same weights (afm-gen-onnx-decoder --seq-len C; a step runs the whole
# C-token window). Runs interleaved; medians of decode ms per token over a
# 16-token prompt and 64 steps, 1 thread (graphs run on the calling thread).
# A benchmark, not a test: it prints numbers and asserts nothing.
# Usage: scripts/bench-onnx-kv-cache.sh [BUILD_DIR] [RUNS] (FAMILY=llama)
set -euo pipefail
default_runs=3
source "$(dirname "$0")/bench-common.sh" "${1:-build}" "${2:-}"
family=${FAMILY:-llama}
prompt=$(seq -s, 11 26)

"$bin/afm-gen-example" --hf-family "$family" --out-dir "$work/model" > /dev/null
"$bin/afm-gen-onnx-decoder" --model "$work/model" --kv-cache -o "$work/kv.onnx"
ms_per_token() {
  "$bin/afm-run" "$1" --prompt "$prompt" --decode 64 |
    awk '/^decode_tokens_per_s/ {printf "%.4f\n", 1000 / $2}'
}
echo "$family test folder as ONNX, prompt 16 tokens, 64 decode steps, $runs runs (interleaved)"
printf '%-8s %16s %16s %8s\n' context "KV cache ms/tok" "stateless ms/tok" ratio
for context in 256 512 1024; do
  "$bin/afm-compile" --onnx "$work/kv.onnx" --context "$context" -o "$work/kv-$context.afmb"
  "$bin/afm-gen-onnx-decoder" --model "$work/model" --seq-len "$context" -o "$work/window-$context.onnx"
  "$bin/afm-compile" --onnx "$work/window-$context.onnx" -o "$work/window-$context.afmb"
  : > "$work/kv" ; : > "$work/window"
  for _ in $(seq "$runs"); do
    ms_per_token "$work/kv-$context.afmb" >> "$work/kv"
    ms_per_token "$work/window-$context.afmb" >> "$work/window"
  done
  kv=$(median < "$work/kv")
  window=$(median < "$work/window")
  printf '%-8s %16s %16s %7.1fx\n' "$context" "$kv" "$window" \
    "$(echo "$window / $kv" | bc -l)"
done
