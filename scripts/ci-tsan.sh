#!/usr/bin/env bash
# ThreadSanitizer build (GCC, -DZEROSIM_TSAN=ON) of the CLI and the tests that run scenarios on
# several threads: the sweep's thread pool (in-process and `zerosim sweep --threads 2`), the
# planner (`zerosim plan`, all cores), per-thread simulation contexts and the shared caches behind
# them. Any data race aborts the test (halt_on_error), so ctest fails. MPI runs stay out (OpenMPI's
# runtime is not instrumented); the ASan/UBSan step covers everything else.
# Env: BUILD_DIR (default build-tsan), JOBS (default nproc).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build-tsan}
jobs=${JOBS:-$(nproc)}
tests=(test_sweep_run test_sweep_cli test_plan_cli test_planner test_sim_context
  test_cluster_cache test_file_cache test_module_cache test_analytic_shortcuts test_determinism)
start=$(date +%s)
cmake -S . -B "$build" -DZEROSIM_TSAN=ON -DZEROSIM_CUDA=OFF -DZEROSIM_BENCHMARKS=OFF \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1 -g1 -DNDEBUG" >/dev/null
cmake --build "$build" -j"$jobs" --target zerosim "${tests[@]}"
built=$(date +%s)
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1"
regex=$(printf '/%s$|' "${tests[@]}")
ctest --test-dir "$build" --output-on-failure -j"$jobs" --timeout 1500 -R "${regex%|}" -E mpi
end=$(date +%s)
echo "ci-tsan: build $((built - start)) s, ctest $((end - built)) s"
