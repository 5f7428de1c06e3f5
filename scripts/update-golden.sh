#!/usr/bin/env bash
# Rewrites tests/golden/expected/ with the outputs of the current code, then says what changed.
# Only when a change of numbers is intended, and explained in the commit message (tests/golden/README.md).
# Usage: scripts/update-golden.sh [build-dir]   (default build; configured with cmake)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
cmake --build "$build" --target zerosim --parallel "$(nproc)" >/dev/null
zerosim=$(cat "$build/tests/golden/zerosim-path")

declare -A listed=()
set -f  # arguments are split at whitespace, never globbed (as in tests/golden/CMakeLists.txt)
while read -r name args; do
  [[ -z $name || $name == \#* ]] && continue
  listed[$name]=1
  # shellcheck disable=SC2086
  bash tests/golden/golden.sh --update "$zerosim" "$name" $args </dev/null
done <tests/golden/scenarios.txt
set +f
for f in tests/golden/expected/*; do
  [[ -n ${listed[$(basename "$f")]-} ]] || { echo "removed (not in scenarios.txt): $f"; rm -- "$f"; }
done

git diff --stat -- tests/golden/expected
git status --short -- tests/golden/expected
