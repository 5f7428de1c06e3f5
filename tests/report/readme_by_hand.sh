#!/usr/bin/env bash
# The README's "same pieces by hand" reproduce the main job's files: the block's commands (every
# `zerosim sweep` / `zerosim report` line not elided with "...", and the shell lines before them)
# run in one scratch folder, the main job's (scripts/main.sh from `mkdir -p out` to its last line)
# in another, each with the repository's workloads/ at its root; out/report.html, the sweep's
# JSON and CSV must be byte for byte the same, and each command must succeed.
# Usage: readme_by_hand.sh ZEROSIM SOURCE_DIR
set -euo pipefail
zerosim_bin=$(realpath "$1")
src=$(realpath "$2")
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# The README's block after "The same pieces by hand", continuations joined, comments dropped.
readme_cmds() {
  awk '/The same pieces by hand/ {found = 1} found && /^```/ {if (inside) exit; inside = 1; next}
       inside {print}' "$src/README.md" |
    sed -e ':a' -e '/\\$/N; s/\\\n//; ta' | sed -e 's/[[:space:]]\{2,\}#.*$//' |
    grep -E '^(mkdir |[A-Z]+=|zerosim (sweep|report) )' | grep -v -F '...'
}
# The main job's commands after the build, without its definition of zerosim.
main_cmds() {
  sed -n '/^mkdir -p out$/,$p' "$src/scripts/main.sh" | grep -v -E '^(zerosim\(\)|echo )'
}

run_in() {  # folder, commands on stdin
  mkdir -p "$1"
  ln -s "$src/workloads" "$1/workloads"
  (cd "$1" && zerosim() { "$zerosim_bin" "$@"; } && set -x && source /dev/stdin) >"$1.log" 2>&1 || {
    echo "FAIL: commands in $1 failed:"; cat "$1.log"; exit 1; }
}

readme_cmds >"$scratch/readme.sh"
main_cmds >"$scratch/main.sh"
grep -q '^zerosim sweep ' "$scratch/readme.sh" || { echo "FAIL: no sweep in the README's block"; exit 1; }
grep -q '^zerosim report .*--format html' "$scratch/readme.sh" ||
  { echo "FAIL: no HTML report in the README's block"; exit 1; }
run_in "$scratch/readme" <"$scratch/readme.sh"
run_in "$scratch/main" <"$scratch/main.sh"
status=0
for f in out/report.html out/sweep-dgx2-gpt18b.json out/sweep-dgx2-gpt18b.csv; do
  if ! cmp -s "$scratch/readme/$f" "$scratch/main/$f"; then
    echo "FAIL: $f of the README's commands differs from the main job's"
    diff <(head -c 200000 "$scratch/readme/$f") <(head -c 200000 "$scratch/main/$f") | head -20 || true
    status=1
  fi
done
[ "$status" = 0 ] && echo "README's by-hand commands reproduce the main job's report, JSON and CSV byte for byte"
exit "$status"
