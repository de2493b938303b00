#!/usr/bin/env bash
# Time to first token of the bundled on-device example for a 512-token
# prompt, with prefill bypass (Block 2 only for the last prompt row) on and
# off. A benchmark, not a test: it prints numbers and asserts nothing.
# Usage: scripts/bench-prefill-bypass.sh [BUILD_DIR] [RUNS]
set -euo pipefail
default_runs=7
source "$(dirname "$0")/bench-common.sh"

"$bin/afm-gen-example" --preset tiny-on-device --out-dir "$work" > /dev/null
prompt=$(seq -s, 1 512 | awk -F, '{for (i = 1; i <= NF; i++) printf "%s%d", (i > 1 ? "," : ""), ($i * 37) % 256}')
for mode in on off; do
  flag=true; [ "$mode" = off ] && flag=false
  "$bin/afm-compile" --config "$work/config.json" --weights "$work/model.safetensors" \
    --prefill-bypass=$flag -o "$work/$mode.afmb"
done

echo "on-device example (tiny-on-device: 8 layers, Block 2 = layers 5-7), prompt 512 tokens, $runs runs, 1 thread"
for mode in on off; do
  for _ in $(seq "$runs"); do
    "$bin/afm-run" "$work/$mode.afmb" --prompt "$prompt" --decode 0 --threads 1 | awk '/^ttft_ms/ {print $2}'
  done | median > "$work/$mode.ttft"
  printf 'prefill bypass %-3s  median TTFT %8.2f ms\n' "$mode" "$(cat "$work/$mode.ttft")"
done
awk -v on="$(cat "$work/on.ttft")" -v off="$(cat "$work/off.ttft")" \
  'BEGIN {printf "TTFT reduction with bypass: %.1f%%\n", 100 * (off - on) / off}'
