#!/usr/bin/env bash
# The README's `simulate` example output is the output of the command it shows: runs the command
# (the README's line without its optional [..] flags) and compares stdout with the README's block.
# Usage: readme_example.sh ZEROSIM README
set -euo pipefail
zerosim=$1 readme=$2
cd "$(dirname "$readme")"
# The command: the README's line starting 'zerosim simulate --cluster dgx2-v100' and its
# continuation, bracketed options dropped.
cmd=$(awk '/^zerosim simulate --cluster dgx2-v100 /{on=1} on{print; if ($0 !~ /\\$/) exit}' "$readme" |
  sed -e 's/\\$//' -e 's/\[[^]]*\]//g' | tr -s ' \n' ' ')
[[ -n $cmd ]] || { echo "readme_example: no 'zerosim simulate --cluster dgx2-v100' line in $readme" >&2; exit 1; }
# The block: the fenced lines from the first one starting "zeropp on 24 x 16" to the fence.
expected=$(awk '/^```/{if (on) exit} /^zeropp on 24 x 16 /{on=1} on' "$readme")
[[ -n $expected ]] || { echo "readme_example: no example block in $readme" >&2; exit 1; }
# shellcheck disable=SC2086
actual=$("$zerosim" ${cmd#zerosim } 2>/dev/null)
if [[ $actual != "$expected" ]]; then
  echo "README example is stale: '$cmd' now prints" >&2
  diff <(echo "$expected") <(echo "$actual") >&2 || true
  exit 1
fi
echo "README example matches '$cmd'"
