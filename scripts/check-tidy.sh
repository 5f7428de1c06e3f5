#!/usr/bin/env bash
# Runs clang-tidy (.clang-tidy: bugprone-*, performance-* and readability-function-size, no function
# over 80 lines; warnings are errors) on every library, CLI and Python-module source. The compile
# commands come from a configure of its own (nothing is built) with the CLI's unity file off, so
# that each CLI file has its own command. CI runs it as its own step.
# Usage: scripts/check-tidy.sh [BUILD_DIR] (default build-tidy)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-tidy}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DZEROSIM_UNITY_CLI=OFF >/dev/null
mapfile -t files < <(git ls-files 'sim/*.cpp' 'calibrate/fit/*.cpp' 'python/*.cpp')
# The build's GCC-only warning options and pybind11's LTO flags mean nothing to clang.
run-clang-tidy -quiet -p "$build" -j "$(nproc)" \
  -extra-arg=-Wno-unknown-warning-option -extra-arg=-Wno-ignored-optimization-argument \
  "${files[@]/#/$PWD/}" >"$build/clang-tidy.log" 2>&1 || true
if grep -E "(warning|error): " "$build/clang-tidy.log" | grep -v "^Error while processing"; then
  echo "check-tidy: FAILED (full log: $build/clang-tidy.log)"
  exit 1
fi
echo "check-tidy: ${#files[@]} files, no finding"
