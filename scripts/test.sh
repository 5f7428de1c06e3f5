#!/usr/bin/env bash
# Checks the formatting (scripts/check-format.sh), builds everything (CUDA parts when nvcc is
# present), runs all tests with ctest, then checks the installed tree (scripts/test-install.sh:
# installed CLI, a find_package(zerosim) consumer and the Python module).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/check-format.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
ctest --test-dir build --output-on-failure -j"$(nproc)"
bash scripts/test-install.sh build
