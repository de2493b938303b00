#!/usr/bin/env bash
# Checks that two builds of the compiler generate the same code: compiles the
# bundled presets and compressed variants (q2 and ASTC weights, f32 and int8
# activations, q4 embedding, int8 KV) for x86 and Apple targets with each
# build's afm-compile and compares the optimized LLVM IR byte for byte.
# For refactors that must not change behaviour.
#
#   scripts/compare-codegen.sh OLD_BIN_DIR [NEW_BIN_DIR]   (default: build/bin)
set -euo pipefail
if [[ $# -lt 1 || $1 == -h || $1 == --help ]]; then
  sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'
  exit $(( $# < 1 ? 2 : 0 ))
fi
old=$1 new=${2:-build/bin}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for preset in tiny-dense tiny-on-device tiny-pt-moe; do
  "$new/afm-gen-example" --preset "$preset" --out-dir "$work/$preset" >/dev/null
done
variants=(tiny-dense tiny-on-device tiny-pt-moe)
for format in q2 astc; do
  for activations in f32 int8; do
    dir=$work/$format-$activations
    mkdir -p "$dir"
    node -e 'const fs = require("fs");
      const c = JSON.parse(fs.readFileSync(process.argv[1]));
      Object.assign(c, {linear_weight_format: process.argv[2],
                        linear_activations: process.argv[3],
                        embedding_format: "q4", kv_cache_dtype: "int8"});
      fs.writeFileSync(process.argv[4], JSON.stringify(c, null, 2));' \
      "$work/tiny-dense/config.json" "$format" "$activations" "$dir/config.json"
    ln -s "$work/tiny-dense/model.safetensors" "$dir/model.safetensors"
    variants+=("$format-$activations")
  done
done
differ=0
for variant in "${variants[@]}"; do
  for target in x86-64-v3 x86-64-v4-vnni apple-m2 apple-m4; do
    for build in old new; do
      bin=${!build}
      "$bin/afm-compile" --config "$work/$variant/config.json" \
        --weights "$work/$variant/model.safetensors" --target "$target" \
        --emit llvm-ir -o "$work/$build.ll"
    done
    if cmp -s "$work/old.ll" "$work/new.ll"; then
      echo "same      $variant $target"
    else
      echo "DIFFERENT $variant $target"
      differ=1
    fi
  done
done
exit $differ
