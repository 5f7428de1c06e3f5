#!/usr/bin/env bash
# Rewrites tests/golden/expected/ with the outputs of the current code, and docs/report-screenshot.png
# with the main job's report as headless Chromium renders it, then says what changed.
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

# The README's screenshot of the main job's report (tests/report/test_report_chromium.cpp), when
# Chromium is there to render it.
if cmake --build "$build" --target test_report_chromium --parallel "$(nproc)" >/dev/null 2>&1; then
  ZEROSIM_UPDATE_SCREENSHOT=1 "$build/tests/test_report_chromium" \
    -tc="the main job's report renders; its top is docs/report-screenshot.png" >/dev/null ||
    echo "docs/report-screenshot.png not regenerated (test_report_chromium failed or was skipped)"
fi

git diff --stat -- tests/golden/expected docs/report-screenshot.png
git status --short -- tests/golden/expected docs/report-screenshot.png
