#!/usr/bin/env bash
# Decode speed of a PT-MoE model with 2 tracks on 1 and 2 runtime threads:
# the tracks of each track block run as parallel tasks. The model is larger
# than the bundled example so that a track's work outweighs a dispatch.
# A benchmark, not a test: it prints numbers and asserts nothing.
# Usage: scripts/bench-tracks.sh [BUILD_DIR] [RUNS]
set -euo pipefail
default_runs=5
source "$(dirname "$0")/bench-common.sh"

cat > "$work/bench.json" <<'JSON'
{
  "architecture": "afm-pt-moe",
  "vocab_size": 1024,
  "hidden_size": 512,
  "intermediate_size": 1024,
  "moe_intermediate_size": 512,
  "num_hidden_layers": 4,
  "num_attention_heads": 8,
  "num_key_value_heads": 4,
  "head_dim": 64,
  "num_tracks": 2,
  "track_block_depth": 2,
  "num_experts": 8,
  "num_experts_per_tok": 2,
  "sliding_window": 64,
  "max_position_embeddings": 256,
  "tie_word_embeddings": true
}
JSON
"$bin/afm-gen-example" --config "$work/bench.json" --out-dir "$work" > /dev/null
"$bin/afm-compile" --config "$work/config.json" --weights "$work/model.safetensors" -o "$work/model.afmb"

echo "PT-MoE, 2 tracks x 4 layers (d=512, 8 experts top-2), prompt 32 tokens, 128 decode steps, $runs runs"
for threads in 1 2; do
  for _ in $(seq "$runs"); do
    "$bin/afm-run" "$work/model.afmb" --prompt "$(seq -s, 1 32)" --decode 128 \
      --threads "$threads" | awk '/^decode_tokens_per_s/ {print $2}'
  done | median > "$work/t$threads"
  printf '%d thread(s): median decode %8.1f tokens/s\n' "$threads" "$(cat "$work/t$threads")"
done
awk -v a="$(cat "$work/t1")" -v b="$(cat "$work/t2")" 'BEGIN {printf "speed-up with 2 threads: %.2fx\n", b / a}'
