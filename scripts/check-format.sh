#!/usr/bin/env bash
# Fails when a tracked C++/CUDA file differs from what clang-format makes of it (.clang-format:
# Google style, 100 columns). scripts/test.sh runs it first; `clang-format -i FILE` fixes a file.
# tests/layers/ holds fixtures with planted violations of another kind and is skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "check-format: clang-format is not installed"; exit 1; }
bad=()
while IFS= read -r f; do
  clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done < <(git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh' | grep -v '^tests/layers/')
if [ ${#bad[@]} -gt 0 ]; then
  echo "check-format: ${#bad[@]} file(s) are not clang-formatted (fix: clang-format -i FILE):"
  printf '  %s\n' "${bad[@]}"
  exit 1
fi
echo "check-format: every C++ file is clang-formatted ($(clang-format --version | head -1))"
