#!/usr/bin/env bash
# A real-size model side by side with llama.cpp, in one run on this machine.
#
#   scripts/bench-real-size.sh [options]
#     --preset NAME      afm-gen-example preset (default afm-on-device-3b)
#     --work DIR         models, binaries and GGUF (default /tmp/afm-real-size;
#                        kept between runs: the 3B takes 12 GB of F32 weights,
#                        an .afmb of 1 GB and a GGUF of 1 GB)
#     --build DIR        afm build directory (default build)
#     --threads "1 2"    thread counts
#     --prompts "128 1024"   prefill lengths
#     --contexts "128 2048"  decode start positions
#     --decode N         decode steps per measurement (default 32)
#     --runs N           alternating runs of each engine (default 2; the best is kept)
#     --retries N        measure a decode row again, up to N more times (default
#                        2), while a read limit measured right before or after it
#                        is below 90% of the run's best for its thread count:
#                        a neighbour took the memory then (both engines are
#                        measured again; each attempt is listed)
#     --prefill-chunk N  afm-compile --prefill-chunk (default 128: a 128-token
#                        prompt is one chunk; 1024 tokens are 8, as fast per
#                        token as 4 of 256 on the 3B)
#     --gguf-type T      llama.cpp linear weights (default tq2_0; q2_k also fits)
#     --kv-cache T       the KV caches of both engines: preset (default: the
#                        preset's own, the 3B's int8, against llama.cpp's
#                        Q8_0) or f16 (kv_cache_dtype "f16" against F16)
#     --no-profile       skip the last section (afm-run --profile at each
#                        thread count and context: a few minutes on the 3B)
#
# Steps: writes the model (afm-gen-example), compiles it (afm-compile:
# wall time and peak RSS), converts it for llama.cpp (gguf-from-afm.mjs:
# the same weights as TQ2_0 linear layers, a Q4_0 tied embedding; llama.cpp
# runs it with a Q8_0 KV cache, or F16 with --kv-cache f16), measures this
# machine's read bandwidth (afm-bench --limits-only, the same run, again
# around each decode row:
# over a fresh buffer, and over the pages of the .afmb and of the GGUF as
# the engines map them), then for each thread count
# alternates the two engines on the same prompts and prints one table with
# tokens/s, the ratio afm / llama.cpp and, for decode, the fraction of the
# roofline: the weight and KV bytes a step reads over the bandwidth of the
# pages its weights are in (and over a fresh buffer's). On a VM a file's
# page cache stays where it was first read and can read 30% slower than a
# fresh buffer, or faster (docs/bench/weight-pages-granite-rapids.txt).
# Last, where a decode step's time goes: afm-run --profile at each thread
# count and context, CPU ms per step for each afm op (their parallel
# tasks), the serial code between them and the runtime's thread pool.
# A benchmark, not a test: it asserts nothing. Don't run it beside a build.
set -euo pipefail
cd "$(dirname "$0")/.."

preset=afm-on-device-3b
work=/tmp/afm-real-size
build=build
threads="1 2"
prompts="128 1024"
contexts="128 2048"
decode=32
runs=2
retries=2
chunk=128
ggufType=tq2_0
profile=1
kvCache=preset
while [ $# -gt 0 ]; do
  # Each option that takes a value names the variable it sets, so that the
  # check for a missing value below covers every one of them.
  case "$1" in
    --no-profile) profile=0; shift; continue ;;
    --preset) var=preset ;;
    --work) var=work ;;
    --build) var=build ;;
    --threads) var=threads ;;
    --prompts) var=prompts ;;
    --contexts) var=contexts ;;
    --decode) var=decode ;;
    --runs) var=runs ;;
    --retries) var=retries ;;
    --prefill-chunk) var=chunk ;;
    --gguf-type) var=ggufType ;;
    --kv-cache) var=kvCache ;;
    *) echo "bench-real-size: unknown option '$1' (see the header of $0)" >&2; exit 2 ;;
  esac
  [ $# -ge 2 ] || { echo "bench-real-size: $1 needs a value" >&2; exit 2; }
  printf -v "$var" '%s' "$2"
  shift 2
done
# Each count a whole number (a list of them for the lists), checked before
# minutes of model writing and compiling are spent.
wholeNumbers() { # option least values...
  local option=$1 least=$2; shift 2
  [ $# -gt 0 ] || { echo "bench-real-size: $option needs at least one number" >&2; exit 2; }
  for v in "$@"; do
    if ! [[ "$v" =~ ^[0-9]{1,9}$ ]] || [ "$v" -lt "$least" ]; then
      echo "bench-real-size: $option takes whole numbers of at least $least, not '$v'" >&2; exit 2
    fi
  done
}
case "$kvCache" in
  preset) llamaKV=q8_0 ;;
  f16) llamaKV=f16 ;;
  *) echo "bench-real-size: --kv-cache takes preset or f16, not '$kvCache'" >&2; exit 2 ;;
esac
# shellcheck disable=SC2086 # the lists split on spaces on purpose
{
  wholeNumbers --threads 1 $threads; wholeNumbers --prompts 1 $prompts
  wholeNumbers --contexts 1 $contexts; wholeNumbers --decode 1 "$decode"
  wholeNumbers --runs 1 "$runs"; wholeNumbers --retries 0 "$retries"
  wholeNumbers --prefill-chunk 1 "$chunk"
}
bin=$build/bin
model=$work/$preset
mkdir -p "$work"
log() { echo "bench-real-size: $*" >&2; }
. scripts/real-size-model.sh

writePresetIfMissing
# The preset's own config, or with --kv-cache f16 a copy with an f16 cache
# (and its own binary and compile time).
config=$model/config.json
afmb=$work/$preset-chunk$chunk.afmb
compileTime=$work/compile.time
if [ "$kvCache" = f16 ]; then
  config=$work/$preset-kv-f16.json
  sed -e 's/"kv_cache_dtype": "[a-z0-9]*"/"kv_cache_dtype": "f16"/' \
    "$model/config.json" > "$config"
  afmb=$work/$preset-chunk$chunk-kv-f16.afmb
  compileTime=$work/compile-kv-f16.time
fi
if [ ! -f "$afmb" ] || [ "$bin/afm-compile" -nt "$afmb" ]; then
  log "compiling $afmb"
  /usr/bin/time -f "%e %M" -o "$compileTime" \
    "$bin/afm-compile" --config "$config" \
    --weights "$model/model.safetensors" --prefill-chunk "$chunk" -o "$afmb"
fi
gguf=$work/$preset-$ggufType.gguf
if [ ! -f "$gguf" ]; then
  log "converting to $gguf"
  node scripts/gguf-from-afm.mjs "$model" -o "$gguf" --type "$ggufType" \
    --embedding-type q4_0 2> "$work/gguf.log"
fi

vocab=$(configField vocab_size)
# The same pseudo-random prompt for both engines is not needed (random
# weights, greedy decode): each engine reads the same number of tokens.
prompt() { awk -v n="$1" -v v="$vocab" 'BEGIN { s = 1; for (i = 0; i < n; i++) { s = (s * 1103515245 + 12345) % 2147483648; printf "%s%d", (i ? "," : ""), s % v } }'; }

# afm-run: prefill P tokens (ttft), then N decode steps from position P.
afm() { # threads prompt-length decode-steps -> "ttft_ms decode_tok_s"
  "$bin/afm-run" "$afmb" --threads "$1" --prompt "$(prompt "$2")" --decode "$3" |
    awk '/^ttft_ms:/ {t = $2} /^decode_tokens_per_s:/ {d = $2} END {print t, d}'
}
llama() { # threads prompt-length context decode-steps -> JSON lines
  node scripts/bench-llama-cpp.mjs "$gguf" --threads "$1" --prompt-tokens "$2" \
    --context "$3" --decode-tokens "$4" --context-size 4096 --kv-type "$llamaKV" \
    2> /dev/null
}
jsonField() { sed -n "s/.*\"$1\":\([0-9.e+-]*\).*/\1/p"; }
best() { sort -g | tail -1; }

# The read limit of this run. On a shared VM one measurement can come out
# far low (the 2-thread one at 42-44 GB/s beside 70 GB/s minutes apart on
# the Zen 5 VM, and below what a decode step then sustained), so it is
# measured again before and after each decode row and the roofline uses
# the best seen so far in the run, for each thread count: the most
# demanding denominator, never one that the model beats by a dip.
# Besides the fresh buffer's limit, the same read patterns over the pages
# of the .afmb and of the GGUF, mapped as the engines map them: what the
# weights can be read at where they are.
limitLog=$work/limits.log
: > "$limitLog"
measureLimits() { # appends "limit1 limitN roundTripNs afmb1 afmbN gguf1 ggufN" to $limitLog
  "$bin/afm-bench" --limits-only --json --read-file "$afmb" --read-file "$gguf" | awk '
    /"read_gbytes_per_second_1_thread"/ {gsub(/[^0-9.]/, "", $2); one = $2}
    /"read_gbytes_per_second_all_threads"/ {gsub(/[^0-9.]/, "", $2); all = $2}
    /"core_round_trip_ns_highest"/ {gsub(/[^0-9.]/, "", $2); rt = $2}
    /"file_read_gbytes_per_second_1_thread"/ {gsub(/[^0-9.]/, "", $2); f1[++n1] = $2}
    /"file_read_gbytes_per_second_all_threads"/ {gsub(/[^0-9.]/, "", $2); fN[++nN] = $2}
    END {print one, all, rt + 0, f1[1], fN[1], f1[2], fN[2]}' >> "$limitLog"
}
# Columns of $limitLog: 1 and 2 a fresh buffer's (1 thread, all), 4 and 5
# the .afmb's pages', 6 and 7 the GGUF's.
limitColumn() { # threads source(buffer|afmb|gguf) -> column
  local base; case "$2" in buffer) base=1 ;; afmb) base=4 ;; gguf) base=6 ;; esac
  if [ "$1" = 1 ]; then echo "$base"; else echo $((base + 1)); fi
}
bestLimit() { # threads [source] -> the best read limit measured so far
  awk -v c="$(limitColumn "$1" "${2:-buffer}")" '{if ($c > best) best = $c} END {print best}' "$limitLog"
}
lastLimit() { # threads [source] -> the read limit measured last
  awk -v c="$(limitColumn "$1" "${2:-buffer}")" 'END {print $c}' "$limitLog"
}
# A cache line's round trip between 2 threads at the last measurement:
# on a VM, where the vCPUs sat (afm-bench --help).
lastRoundTrip() { awk 'END {printf "%.0f", $3}' "$limitLog"; }
log "measuring the read bandwidth"
measureLimits
# What a decode step reads: every weight once (the embedding table counts
# whole, an upper bound for the tied LM head), plus, in every layer (the
# KV-sharing layers read their owner's cache), the K and V rows of the
# positions it attends to: min(context, window), each row head_dim codes
# and one f32 scale per KV head for an int8 cache, head_dim halves for an
# f16 one.
sizes=$("$bin/afm-run" "$afmb" --prompt 1 --decode 0)
weightBytes=$(echo "$sizes" | awk '/^weight_bytes:/ {print $2}')
layers=$(configField num_hidden_layers)
kvHeads=$(configField num_key_value_heads)
headDim=$(configField head_dim)
window=$(configField sliding_window)
kvType=$(configField kv_cache_dtype)
[ "$kvCache" = f16 ] && kvType=f16
rowBytes=$(awk -v d="$headDim" -v t="$kvType" 'BEGIN {print (t == "int8") ? d + 4 : (t == "f16") ? 2 * d : 4 * d}')
kvBytesAt() { # context -> KV bytes a decode step reads
  awk -v c="$1" -v w="${window:-0}" -v l="$layers" -v g="$kvHeads" -v r="$rowBytes" \
    'BEGIN {p = (w > 0 && c > w) ? w : c; print l * 2 * g * r * p}'
}

echo "# $preset: afm vs llama.cpp, KV cache $kvType against $llamaKV ($(lscpu | sed -n 's/^Model name: *//p'), $(date -u +%F))"
if [ -f "$compileTime" ]; then
  read -r secs kb < "$compileTime"
  echo "compile: ${secs} s wall, peak RSS $((kb / 1024)) MB"
fi
echo
attempts=()
echo "| threads | measurement | afm tok/s | llama.cpp tok/s | afm / llama.cpp | afm roofline: its pages | afm roofline: a fresh buffer |"
echo "|---|---|---|---|---|---|---|"
for t in $threads; do
  for p in $prompts; do
    a=(); l=()
    for _ in $(seq "$runs"); do
      ttft=$(afm "$t" "$p" 0 | awk '{print $1}')
      a+=("$(awk -v p="$p" -v ms="$ttft" 'BEGIN {print p / (ms / 1000)}')")
      l+=("$(llama "$t" "$p" 0 1 | head -1 | jsonField prefill_tokens_per_s)")
    done
    A=$(printf '%s\n' "${a[@]}" | best); L=$(printf '%s\n' "${l[@]}" | best)
    awk -v t="$t" -v p="$p" -v a="$A" -v l="$L" 'BEGIN {printf "| %d | prefill %d tokens | %.1f | %.1f | %.2fx | | |\n", t, p, a, l, a / l}'
  done
  for c in $contexts; do
    a=(); l=(); attempt=0
    measureLimits
    while :; do
      attempt=$((attempt + 1))
      before=$(lastLimit "$t") # measured before the first attempt, or after the last
      rtBefore=$(lastRoundTrip)
      pagesBefore=$(lastLimit "$t" afmb)
      for _ in $(seq "$runs"); do
        a+=("$(afm "$t" "$c" "$decode" | awk '{print $2}')")
        l+=("$(llama "$t" 1 "$c" "$decode" | head -1 | jsonField decode_tokens_per_s)")
      done
      measureLimits
      after=$(lastLimit "$t")
      rtAfter=$(lastRoundTrip)
      bw=$(bestLimit "$t")
      pages=$(bestLimit "$t" afmb)
      # Also against the better of the two limits around this attempt: on a
      # VM whose read rate moves within seconds, the run's best limit can
      # come from a state the attempt never ran in.
      attempts+=("$(awk -v t="$t" -v c="$c" -v n="$attempt" -v x="$before" -v y="$after" -v best="$bw" \
        -v px="$pagesBefore" -v py="$(lastLimit "$t" afmb)" -v gguf="$(lastLimit "$t" gguf)" \
        -v rx="$rtBefore" -v ry="$rtAfter" \
        -v afm="${a[*]: -$runs}" -v lcpp="${l[*]: -$runs}" \
        -v bytes="$((weightBytes + $(kvBytesAt "$c")))" 'BEGIN {
          printf "%d thread(s), decode at %d, attempt %d: limits %.1f GB/s before, %.1f after (best so far %.1f; cores %s/%s ns apart), over the .afmb pages %.1f and %.1f, the GGUF pages %.1f after; afm", t, c, n, x, y, best, rx, ry, px, py, gguf
          k = split(afm, v, " "); top = 0
          for (i = 1; i <= k; i++) {printf " %.2f", v[i]; if (v[i] > top) top = v[i]}
          adjacent = (x > y) ? x : y
          adjacentPages = (px > py) ? px : py
          printf " tokens/s (%.0f%% of the better adjacent limit of its pages, %.0f%% of a fresh buffer), llama.cpp", 100 * top * bytes / (adjacentPages * 1e9), 100 * top * bytes / (adjacent * 1e9)
          k = split(lcpp, v, " "); for (i = 1; i <= k; i++) printf " %.2f", v[i]
        }')")
      quiet=$(awk -v x="$before" -v y="$after" -v best="$bw" 'BEGIN {print (x >= 0.9 * best && y >= 0.9 * best)}')
      [ "$quiet" = 1 ] || [ "$attempt" -gt "$retries" ] && break
      log "decode at $c on $t threads: a limit around it fell below 90% of $(printf '%.1f' "$bw") GB/s; measuring again"
    done
    A=$(printf '%s\n' "${a[@]}" | best); L=$(printf '%s\n' "${l[@]}" | best)
    awk -v t="$t" -v c="$c" -v a="$A" -v l="$L" -v w="$weightBytes" -v kv="$(kvBytesAt "$c")" -v bw="$bw" -v pages="$pages" \
      'BEGIN {b = w + kv; printf "| %d | decode at %d | %.2f | %.2f | %.2fx | %.0f%% (%.0f MB/token at %.1f GB/s) | %.0f%% (at %.1f GB/s) |\n", t, c, a, l, a / l, 100 * a * b / (pages * 1e9), b / 1e6, pages, 100 * a * b / (bw * 1e9), bw}'
  done
done

echo
awk '{if (NR == 1 || $1 < lo1) lo1 = $1; if ($1 > hi1) hi1 = $1
      if (NR == 1 || $2 < loN) loN = $2; if ($2 > hiN) hiN = $2
      for (c = 4; c <= 7; c++) {if (NR == 1 || $c < lo[c]) lo[c] = $c; if ($c > hi[c]) hi[c] = $c}}
     END {printf "Read limits measured in this run (%d times, afm-bench --limits-only): " \
          "a fresh buffer 1 thread %.1f-%.1f GB/s, all threads %.1f-%.1f GB/s; the pages " \
          "of the .afmb %.1f-%.1f and %.1f-%.1f; of the GGUF %.1f-%.1f and %.1f-%.1f. " \
          "Each roofline uses the best measured up to the end of its row.\n", NR, lo1, hi1, loN, hiN,
          lo[4], hi[4], lo[5], hi[5], lo[6], hi[6], lo[7], hi[7]}' "$limitLog"
echo
echo "Decode rows, each attempt (a row keeps the best of all its attempts; it is"
echo "measured again while a limit around it is below 90% of the run's best):"
printf -- '- %s\n' "${attempts[@]}"
[ "$profile" = 1 ] || exit 0
echo
echo "Where a decode step's time goes (afm-run --profile: CPU ms per step, all"
echo "threads, from SIGPROF samples; share of the samples in parentheses):"
echo
declare -A cell=(); rows=(); cols=()
for t in $threads; do
  for c in $contexts; do
    col="${t}t @ $c"; cols+=("$col")
    while IFS=$'\t' read -r row ms share; do
      [[ " ${rows[*]} " == *" $row "* ]] || rows+=("$row")
      cell["$row|$col"]="$ms ($share)"
    done < <("$bin/afm-run" "$afmb" --threads "$t" --prompt "$(prompt "$c")" \
               --decode "$((decode * 4))" --quiet --profile |
             awk '/^  [^ ]/ && !/^  where/ {share = $NF; ms = $(NF-1); $NF = ""; $(NF-1) = ""; sub(/^ +/, ""); sub(/ +$/, ""); gsub(/ /, "~"); print $0 "\t" ms "\t" share}')
  done
done
header="| where |"; rule="|---|"
for col in "${cols[@]}"; do header+=" $col |"; rule+="---|"; done
echo "$header"; echo "$rule"
for row in "${rows[@]}"; do
  line="| ${row//\~/ } |"
  for col in "${cols[@]}"; do line+=" ${cell["$row|$col"]:-} |"; done
  echo "$line"
done
