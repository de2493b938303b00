#!/usr/bin/env bash
# Speculative decoding against plain decoding of the same target, runs
# interleaved: decode tokens/s, the speed-up, the draft's acceptance, and
# what a step costs (a verify step of k+1 rows next to a decode step).
# The target needs afm-compile --verify-tokens >= K+1 and the draft
# --verify-tokens >= K (e.g. an early-exit draft: --draft-layers N).
# A benchmark, not a test: it prints numbers and asserts nothing.
# Usage: scripts/bench-speculative.sh TARGET.afmb DRAFT.afmb [RUNS] [TOKENS]
#        (BUILD=dir for another build directory; K=4 tokens a step)
set -euo pipefail
target=$1
draft=$2
default_runs=3
source "$(dirname "$0")/bench-common.sh" "${BUILD:-build}" "${3:-}"
tokens=${4:-128}
k=${K:-4}
prompt=$(seq -s, 11 42)

# One run: prints "tokens/s acceptance tokens_per_step verify_ms draft_ms".
run() {
  "$bin/afm-run" "$target" --prompt "$prompt" --decode "$tokens" "$@" |
    awk '/^decode_tokens_per_s/ {tps = $2} /^verify_steps/ {steps = $2}
         /^acceptance_rate/ {acc = $2} /^tokens_per_step/ {per = $2}
         /^draft_ms/ {draft = $2}
         END {printf "%s %s %s %s %s\n", tps, acc == "" ? "-" : acc,
              per == "" ? "-" : per, steps, draft == "" ? 0 : draft}'
}

echo "target $(basename "$target"), draft $(basename "$draft"), prompt 32 tokens, $tokens tokens, k = $k, $runs runs (interleaved)"
printf '%-8s %-10s %12s %8s %10s %12s %14s\n' threads sampling "tokens/s" ratio acceptance tokens/step "draft share"
for threads in 1 2; do
  for mode in greedy "temperature 1"; do
    sampling=()
    [ "$mode" = greedy ] || sampling=(--temperature 1 --seed 3)
    : > "$work/plain" ; : > "$work/spec"
    for _ in $(seq "$runs"); do
      run --threads "$threads" "${sampling[@]}" >> "$work/plain"
      run --threads "$threads" "${sampling[@]}" --draft "$draft" --draft-tokens "$k" >> "$work/spec"
    done
    plain=$(awk '{print $1}' "$work/plain" | median)
    spec=$(awk '{print $1}' "$work/spec" | median)
    line=$(sort -n "$work/spec" | awk -v m="$spec" '$1 == m {print; exit}')
    read -r _ acc per steps draftms <<< "$line"
    # The draft's share of the decode time: draft ms over (tokens / tokens/s).
    share=$(awk -v d="$draftms" -v n="$tokens" -v t="$spec" 'BEGIN {printf "%.0f%%", 100 * d / (1000 * n / t)}')
    printf '%-8s %-10s %12s %8s %10s %12s %14s\n' "$threads" "${mode%% *}" "$plain plain" "" "" "" ""
    printf '%-8s %-10s %12s %7.2fx %10s %12s %14s\n' "$threads" "${mode%% *}" "$spec spec" \
      "$(awk -v a="$spec" -v b="$plain" 'BEGIN {print a / b}')" "$acc" "$per" "$share"
  done
done
