#!/usr/bin/env bash
# Decode speed of the afm-pt-moe-2t preset (2 tracks of 12 layers, 8
# experts top-2 in every other layer; 2-bit projections and experts on
# int8 activations, a 4-bit tied head, an int8 KV cache) on 1 and 2
# runtime threads, alternating the thread counts run by run; then where a
# step's time goes at each count (afm-run --profile: the track tasks, the
# LM head, the rest).
# A benchmark, not a test: it prints numbers and asserts nothing. Don't run
# it beside a build.
#
#   scripts/bench-pt-moe-preset.sh [BUILD_DIR] [RUNS]
#   WORK=DIR  where the model is written and compiled, kept between runs
#             (default /tmp/afm-pt-moe-2t: 6.7 GB of F32 weights and a
#             0.55 GB .afmb; writing and compiling take about 7 minutes)
set -euo pipefail
default_runs=7
source "$(dirname "$0")/bench-common.sh"
model=${WORK:-/tmp/afm-pt-moe-2t}
mkdir -p "$model"
if [ ! -f "$model/model.safetensors" ]; then
  echo "writing afm-pt-moe-2t to $model" >&2
  "$bin/afm-gen-example" --preset afm-pt-moe-2t --out-dir "$model" > /dev/null
fi
if [ ! -f "$model/model.afmb" ] || [ "$model/model.afmb" -ot "$bin/afm-compile" ]; then
  echo "compiling $model/model.afmb" >&2
  "$bin/afm-compile" --config "$model/config.json" \
    --weights "$model/model.safetensors" -o "$model/model.afmb"
fi

prompt=$(seq -s, 1 32)
echo "afm-pt-moe-2t: prompt 32 tokens, 64 decode steps, $runs alternating runs per thread count"
for _ in $(seq "$runs"); do
  for threads in 1 2; do
    "$bin/afm-run" "$model/model.afmb" --prompt "$prompt" --decode 64 \
      --threads "$threads" | awk '/^decode_tokens_per_s/ {print $2}' >> "$work/t$threads"
  done
done
for threads in 1 2; do
  printf '%d thread(s): decode tokens/s median %6.1f  (runs: %s)\n' "$threads" \
    "$(median < "$work/t$threads")" "$(tr '\n' ' ' < "$work/t$threads")"
done
awk -v a="$(median < "$work/t1")" -v b="$(median < "$work/t2")" \
  'BEGIN {printf "speed-up with 2 threads (medians): %.2fx\n", b / a}'
for threads in 1 2; do
  echo "== where a decode step goes, $threads thread(s)"
  "$bin/afm-run" "$model/model.afmb" --prompt "$prompt" --decode 64 \
    --threads "$threads" --profile | sed -n '/^profile:/,$p'
done
