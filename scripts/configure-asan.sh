#!/usr/bin/env bash
# Configures the one ASan + UBSan build that scripts/ci-sanitize.sh (library, CLI and every test)
# and scripts/ci-fuzz.sh (the libFuzzer targets) share, so CI compiles the instrumented library
# once: clang at -O1 -g1, the library with libFuzzer's coverage instrumentation (fuzzer-no-link),
# whose hooks the sanitizer runtime answers as no-ops in the tests. Warnings.cmake names GCC-only
# warnings (-Wno-unknown-warning-option); GCC gates warnings (scripts/test.sh), so clang's own
# extra warnings are printed here but are not errors (ZEROSIM_WERROR=OFF).
# Usage: scripts/configure-asan.sh BUILD_DIR. Env: CXX (default clang++, or clang++-14).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: scripts/configure-asan.sh BUILD_DIR}
cxx=${CXX:-$(command -v clang++ || command -v clang++-14)}
case "$cxx" in *clang*) ;; *) echo "configure-asan: needs clang (got CXX=$cxx)"; exit 1 ;; esac
cmake -S . -B "$build" -DCMAKE_CXX_COMPILER="$cxx" -DZEROSIM_SANITIZE=ON -DZEROSIM_FUZZ=ON -DZEROSIM_WERROR=OFF \
  -DZEROSIM_CUDA=OFF -DZEROSIM_BENCHMARKS=OFF -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_FLAGS="-Wno-unknown-warning-option" -DCMAKE_CXX_FLAGS_RELEASE="-O1 -g1 -DNDEBUG" \
  >/dev/null
