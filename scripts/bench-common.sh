# Sourced by the bench-*.sh scripts after they set default_runs: BUILD_DIR
# and RUNS from their arguments, the tools' directory, a work directory
# removed on exit (KEEP=1 keeps it and prints where it is), and `median`
# (of the numbers on standard input, one per line).
build=${1:-build}
runs=${2:-$default_runs}
bin=$build/bin
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -n "${KEEP:-}" ]; then
  trap - EXIT
  echo "work dir: $work"
fi
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
