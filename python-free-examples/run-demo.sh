#!/usr/bin/env bash
# The README's first command ends here: compile the bundled example for this
# machine, run it with the runtime, and check it against the reference
# evaluator. Usage: run-demo.sh BIN_DIR [WORK_DIR]
set -euo pipefail
bin=${1:?usage: run-demo.sh BIN_DIR [WORK_DIR]}
here=$(cd "$(dirname "$0")" && pwd)
work=${2:-$(dirname "$bin")/examples/tiny-dense}
prompt=5,17,42,99,3,250,128,64,7,1,200,33,77,12,180,90,45,222,9,150
mkdir -p "$work"

echo "== weights: afm-gen-example (deterministic) -> $work/model.safetensors"
"$bin/afm-gen-example" --config "$here/tiny-dense/config.json" --out-dir "$work"
echo
echo "== afm-compile --target host -> $work/model.afmb"
"$bin/afm-compile" --config "$work/config.json" --weights "$work/model.safetensors" \
  --target host -o "$work/model.afmb"
ls -l "$work/model.afmb"
echo
echo "== afm-run: prefill 20 tokens, greedy-decode 16"
"$bin/afm-run" "$work/model.afmb" --prompt "$prompt" --decode 16 \
  --logits-out "$work/run.logits"
echo
echo "== afm-reference: the same with the plain C++ reference evaluator"
"$bin/afm-reference" --config "$work/config.json" --weights "$work/model.safetensors" \
  --prompt "$prompt" --decode 16 --logits-out "$work/ref.logits"
echo
echo "== afm-compare: compiled vs reference logits, tolerance 1e-4"
"$bin/afm-compare" --vocab 256 --tolerance 1e-4 "$work/ref.logits" "$work/run.logits"
