#!/usr/bin/env bash
# Runs one golden scenario (a line of scenarios.txt) and compares its output byte for byte with
# expected/NAME. --update writes expected/NAME instead: only scripts/update-golden.sh passes it.
# An argument @EXIT=N@ is not passed on: it says the command must exit with N (default 0).
# Usage: golden.sh [--update] ZEROSIM NAME ARGS...
set -euo pipefail
update=0
if [[ ${1-} == --update ]]; then update=1; shift; fi
zerosim=$1 name=$2
shift 2
# From the repository root: scenario paths are relative to it and outputs quote them as given.
cd "$(dirname "$0")/../.."
expected=tests/golden/expected/$name
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

args=() out="" want_rc=0
for a in "$@"; do
  if [[ $a =~ ^@EXIT=([0-9]+)@$ ]]; then want_rc=${BASH_REMATCH[1]}; continue; fi
  if [[ $a == @OUT@ ]]; then out=$tmp/out.${name##*.}; a=$out; fi
  args+=("$a")
done
rc=0
"$zerosim" "${args[@]}" >"$tmp/stdout" 2>"$tmp/stderr" </dev/null || rc=$?
if ((rc != want_rc)); then
  echo "golden $name: zerosim exited $rc, expected $want_rc:"; cat "$tmp/stderr"
  echo "command: $zerosim $*"; exit 1
fi
actual=${out:-$tmp/stdout}
if ((update)); then cp "$actual" "$expected"; exit 0; fi
[[ -f $expected ]] && cmp -s "$expected" "$actual" && exit 0

echo "golden $name: output differs from $expected"
echo "command (from the repository root): $zerosim $*"
if [[ -f $expected ]]; then
  cmp "$expected" "$actual" || true
  diff "$expected" "$actual" | head -n 20 | cut -c1-240 || true
  # A trace is one long line: show the bytes around the first change instead.
  byte=$(cmp "$expected" "$actual" 2>/dev/null | sed -n 's/.* byte \([0-9]*\),.*/\1/p' || true)
  if [[ -n $byte && $(wc -l <"$expected") -le 1 ]]; then
    from=$((byte > 100 ? byte - 100 : 1))
    echo "expected bytes $from..: $(tail -c +"$from" "$expected" | head -c 200)"
    echo "actual   bytes $from..: $(tail -c +"$from" "$actual" | head -c 200)"
  fi
else
  echo "(no expected file)"
fi
echo "If the change is intended: scripts/update-golden.sh ${GOLDEN_BUILD_DIR:-build}, and explain it in the commit message."
exit 1
