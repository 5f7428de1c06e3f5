#!/usr/bin/env bash
# ASan + UBSan build of everything (clang, scripts/configure-asan.sh: the build scripts/ci-fuzz.sh
# reuses for its libFuzzer targets, built here too) and the full ctest suite under it. Any sanitizer
# report aborts the test that triggered it (-fno-sanitize-recover, halt_on_error), so ctest fails.
# Benchmarks and CUDA stay off: the sanitizers check host code, and -O1 keeps the build short.
# Env: BUILD_DIR (default build-asan), JOBS (default nproc), CTEST_ARGS (extra ctest arguments).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build-asan}
jobs=${JOBS:-$(nproc)}
start=$(date +%s)
bash scripts/configure-asan.sh "$build"
cmake --build "$build" -j"$jobs"
built=$(date +%s)
# OpenMPI's runtime keeps some allocations until exit; those are not ours (scripts/lsan.supp).
export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp:print_suppressions=0"
export ASAN_OPTIONS="halt_on_error=1:detect_stack_use_after_return=1:strict_string_checks=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# MPI ranks (the determinism and sweep tests run zerosim under mpirun) record full malloc stacks:
# with the default fast unwinder a leak inside OpenMPI's plugins has no frames to match
# lsan.supp. mpirun passes mca_base_env_list to its ranks only, so other tests keep the fast one.
export OMPI_MCA_mca_base_env_list="ASAN_OPTIONS=$ASAN_OPTIONS:fast_unwind_on_malloc=0"
# shellcheck disable=SC2086
ctest --test-dir "$build" --output-on-failure -j"$jobs" --timeout 1500 ${CTEST_ARGS:-}
end=$(date +%s)
echo "ci-sanitize: build $((built - start)) s, ctest $((end - built)) s"
