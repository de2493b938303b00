#!/usr/bin/env bash
# Memory over a long decode: for each model family (afm-dense with f32 and
# with compressed weights, int8 KV and int8 activations; afm-on-device;
# afm-pt-moe), compiles the tiny preset with a context long enough, decodes
# STEPS tokens in one session after a warm-up, and prints what those steps
# cost the process: heap allocations, minor page faults, allocations not
# freed again, and the growth of the resident set. Flat means the last
# three are 0: a leak of even a few bytes a step shows after 20,000 steps.
#
#   scripts/check-rss-flat.sh [--bin DIR] [--steps N] [--threads T] [--work DIR]
#
# Defaults: build/bin, 20000 steps, 2 threads, a fresh temporary directory.
# Exits 1 when any family is not flat.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/build/bin
steps=20000
threads=2
work=$(mktemp -d /tmp/afm-rss.XXXXXX)
while [ $# -gt 0 ]; do
  case $1 in
    --bin) bin=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "check-rss-flat.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
warmup=100
# Positions: the 3-token prompt, the warm-up, one step after a pause, the
# measured steps.
context=$(( (3 + warmup + 1 + steps + 1023) / 1024 * 1024 ))

compile() { # NAME PRESET [sed edits of config.json...]
  local name=$1 preset=$2; shift 2
  "$bin/afm-gen-example" --preset "$preset" --out-dir "$work/$preset" > /dev/null
  sed -e "s/\"max_position_embeddings\": [0-9]*/\"max_position_embeddings\": $context/" \
      "$@" "$work/$preset/config.json" > "$work/$name.json"
  "$bin/afm-compile" --config "$work/$name.json" \
      --weights "$work/$preset/model.safetensors" -o "$work/$name.afmb"
}

status=0
check() { # NAME
  local out
  out=$("$bin/afm-steady-state" "$work/$1.afmb" --threads "$threads" \
        --warmup $warmup --steps "$steps")
  local allocs faults outstanding rss
  allocs=$(sed -n 's/^heap_allocations: //p' <<< "$out")
  faults=$(sed -n 's/^minor_page_faults: //p' <<< "$out")
  outstanding=$(sed -n 's/^heap_outstanding: //p' <<< "$out")
  rss=$(sed -n 's/^rss_growth_kb: //p' <<< "$out")
  local verdict=flat
  if [ "$faults" != 0 ] || [ "$outstanding" != 0 ] || [ "$rss" != 0 ]; then
    verdict=GROWS; status=1
  fi
  printf '%-16s %6s steps: %8s allocations, %4s page faults, %4s outstanding, RSS %+5s KiB: %s\n' \
    "$1" "$steps" "$allocs" "$faults" "$outstanding" "$rss" "$verdict"
}

compile dense tiny-dense
compile dense-compressed tiny-dense \
  -e 's/"linear_weight_format": "f32"/"linear_weight_format": "q2"/' \
  -e 's/"linear_activations": "f32"/"linear_activations": "int8"/' \
  -e 's/"embedding_format": "f32"/"embedding_format": "q4"/' \
  -e 's/"kv_cache_dtype": "f32"/"kv_cache_dtype": "int8"/'
compile on-device tiny-on-device
compile pt-moe tiny-pt-moe
echo "context $context, $threads threads, $warmup warm-up steps"
for name in dense dense-compressed on-device pt-moe; do check $name; done
exit $status
