#!/usr/bin/env bash
# Long fuzzing campaigns: runs each afm libFuzzer target for a number of
# executions from a copy of its checked-in corpus, one after the other, and
# prints one summary line per target. A crash stops that target and leaves
# its input under the work directory (reproduce: the fuzzer binary with the
# file as its only argument).
#
#   scripts/fuzz.sh [--bin DIR] [--runs N] [--work DIR] [TARGET...]
#
# TARGET is afmb-loader, config, mlir or onnx-import (default: all four).
# --runs defaults to 1000000 per target; --bin to build/bin.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/build/bin
runs=1000000
work=$(mktemp -d /tmp/afm-fuzz.XXXXXX)
targets=()
while [ $# -gt 0 ]; do
  case $1 in
    --bin) bin=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz.sh: unknown option '$1'" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=(afmb-loader config mlir onnx-import)

fuzz="$root/test/fuzz"
status=0
for target in "${targets[@]}"; do
  dir=$work/$target
  mkdir -p "$dir/corpus"
  case $target in
    afmb-loader)
      exe=afm-afmb-fuzzer; cp "$fuzz"/afmb-loader-corpus/* "$dir/corpus"
      fake=$(dirname "$bin")/test/runtime/libafm_fake_model.so
      [ -f "$fake" ] && "$bin/afm-pack-test-binary" --code "$fake" -o "$dir/corpus/fresh.afmb"
      args=(-max_len=65536) ;;
    config)
      exe=afm-config-fuzzer; cp "$fuzz"/config-corpus/* "$dir/corpus"
      args=(-dict="$fuzz/config.dict" -max_len=65536) ;;
    mlir)
      exe=afm-mlir-fuzzer; cp "$fuzz"/mlir-corpus/* "$dir/corpus"
      args=(-dict="$fuzz/mlir.dict" -max_len=16384) ;;
    onnx-import)
      exe=afm-onnx-import-fuzzer; cp "$fuzz"/onnx-import-corpus/*.onnx "$dir/corpus"
      args=(-dict="$fuzz/onnx-import.dict" -max_len=65536) ;;
    *) echo "fuzz.sh: unknown target '$target'" >&2; exit 2 ;;
  esac
  start=$(date +%s)
  if "$bin/$exe" "$dir/corpus" "${args[@]}" -runs="$runs" -timeout=20 \
       -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$dir/" \
       > "$dir/log" 2>&1; then
    result=ok
  else
    result="FAILED (see $dir/log and $dir/crash-* or $dir/timeout-*)"
    status=1
  fi
  executed=$(grep -o 'number_of_executed_units: *[0-9]*' "$dir/log" | grep -o '[0-9]*$' || echo 0)
  rss=$(grep -o 'peak_rss_mb: *[0-9]*' "$dir/log" | grep -o '[0-9]*$' || echo ?)
  printf '%-12s %s: %s executions in %s s, corpus %s inputs, peak RSS %s MB\n' \
    "$target" "$result" "${executed:-0}" "$(( $(date +%s) - start ))" \
    "$(ls "$dir/corpus" | wc -l)" "$rss"
done
exit $status
