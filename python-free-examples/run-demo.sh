#!/usr/bin/env bash
# The README's first command ends here: run the afm tools on the bundled
# example model. Usage: run-demo.sh <directory with afm-opt and afm-translate>
set -euo pipefail
bin=${1:?usage: run-demo.sh BIN_DIR}
here=$(cd "$(dirname "$0")" && pwd)
model="$here/tiny-decoder/model.mlir"

echo "== afm-opt: verify and canonicalize $model"
"$bin/afm-opt" "$model" -canonicalize -cse -o /dev/null
echo "ok: the model verifies"
echo
echo "== afm-translate --afm-to-weight-table"
"$bin/afm-translate" --afm-to-weight-table "$model"
