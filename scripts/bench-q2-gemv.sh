#!/usr/bin/env bash
# On-the-fly 2-bit GEMV: a 4096x4096 weight of packed 2-bit codes (4 MiB,
# plus one f32 scale) multiplied by one activation row per decode step. The
# kernel reads the packed codes only: no unpacked or float copy of the
# weight exists (see test/conversion/afm-lower-to-linalg.mlir, @linear_q2).
# Each decode call of the model below is exactly one such GEMV (plus
# writing 4096 logits), so weight bytes / time per call is the GEMV's
# weight bandwidth. The 4 MiB of codes stay in the last-level cache here;
# issue 7's afm-bench streams weights from DRAM.
# A benchmark, not a test: it prints numbers and asserts nothing.
# Usage: scripts/bench-q2-gemv.sh [BUILD_DIR] [RUNS]
set -euo pipefail
default_runs=5
source "$(dirname "$0")/bench-common.sh"

n=4096
k=4096
bytes=$((n * k / 4))
entry() {
  cat <<MLIR
  func.func @$1(%tokens: tensor<$2xi32>, %count: index, %pos: index) -> tensor<1x$n xf32>
      attributes {afm.entry = "$1"} {
    %w = afm.weight "w" : !afm.q2<${n}x$k, per_tensor> = #afm.quantized<codes = dense_resource<codes> : tensor<${bytes}xi8>, scales = dense<0.01> : tensor<1xf32>>
    %x = arith.constant dense<0.01> : tensor<1x${k}xf32>
    %y = afm.linear %x, %w : tensor<1x${k}xf32>, !afm.q2<${n}x$k, per_tensor> -> tensor<1x${n}xf32>
    return %y : tensor<1x${n}xf32>
  }
MLIR
}
{
  echo "module attributes {afm.model = {name = \"q2-gemv-${n}x$k\", architecture = \"afm-dense\", vocab_size = $n : i64, hidden_size = $k : i64, num_layers = 0 : i64, context_length = 4096 : i64, prefill_chunk = 1 : i64}} {"
  entry prefill 1 | sed 's/1x\$n x/1x'$n'x/; s/ xf32>/xf32>/'
  entry decode 1 | sed 's/ xf32>/xf32>/'
  echo "}"
  echo "{-# dialect_resources: { builtin: { codes: \"0x04000000$(head -c $bytes /dev/urandom | od -An -tx1 -v | tr -d ' \n')\" } } #-}"
} > "$work/gemv.mlir"
sed -i "s/tensor<1x$n xf32>/tensor<1x${n}xf32>/" "$work/gemv.mlir"
time "$bin/afm-compile" "$work/gemv.mlir" -o "$work/gemv.afmb"

steps=2000
echo "2-bit GEMV ${n}x$k (weight $bytes bytes of codes), $steps decode calls, median of $runs runs"
for threads in 1 2; do
  for _ in $(seq "$runs"); do
    "$bin/afm-run" "$work/gemv.afmb" --prompt 1 --decode $steps --threads $threads \
      | awk '/^decode_tokens_per_s:/ {print $2}'
  done | median > "$work/tps"
  awk -v t="$threads" -v b="$bytes" -v n="$n" -v k="$k" '{
    printf "threads %d: %8.1f GEMV/s  %6.2f GB/s of weight bytes  %6.2f GFLOP/s\n",
           t, $1, $1 * b / 1e9, $1 * 2 * n * k / 1e9 }' "$work/tps"
done
