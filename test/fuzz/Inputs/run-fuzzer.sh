#!/bin/sh
# run-fuzzer.sh LOG FUZZER ARGS... runs a libFuzzer target with its whole
# transcript in LOG. When the run ends cleanly it prints the transcript
# (the fuzz tests FileCheck its final statistics). When the fuzzer finds
# something it prints only the report and the input that caused it, in
# base64: a CI log keeps only the start and end of a long failure, and a
# finding that cannot be reproduced cannot be fixed.
log=$1
shift
"$@" > "$log" 2>&1
status=$?
if [ $status -eq 0 ]; then
  cat "$log"
  exit 0
fi
echo "error: $(basename "$1") exited with status $status; its report:"
sed -n '/^==[0-9]*==\|ERROR: libFuzzer\|^SUMMARY/,$p' "$log" |
  grep -v '^#[0-9]\|NEW_FUNC' | head -n 60
unit=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
if [ -n "$unit" ] && [ -f "$unit" ]; then
  echo "the input ($(wc -c < "$unit") bytes), to reproduce with" \
       "'base64 -d > input && $(basename "$1") input':"
  base64 "$unit" | head -c 24000
  echo
fi
exit 1
