#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, clang, ASan + UBSan) and runs each for FUZZ_SECONDS (default 30).
# Every target first replays its regression inputs (fuzz/regressions/<target>/), then fuzzes from a seed
# corpus: its hand-written seeds (fuzz/seeds/<target>/), the shipped presets it parses and the input files
# of the bad-input corpus (tests/corpus/cases). A crash, sanitizer report, uncaught non-InputError
# exception, leak, timeout (-timeout) or out-of-memory (-rss_limit_mb) fails the script; the input that
# did it is copied into fuzz/regressions/<target>/ so it becomes a regression case once committed.
# The build is scripts/configure-asan.sh's, shared with scripts/ci-sanitize.sh: after that step only
# the fuzz targets' links (if anything) are left to do.
# Env: BUILD_DIR (default build-asan), FUZZ_SECONDS, JOBS, CXX (clang, see configure-asan.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=${BUILD_DIR:-build-asan}
seconds=${FUZZ_SECONDS:-30}
jobs=${JOBS:-$(nproc)}

start=$(date +%s)
bash scripts/configure-asan.sh "$build"
cmake --build "$build" -j"$jobs" --target fuzzers
built=$(date +%s)
echo "ci-fuzz: build $((built - start)) s"

export LSAN_OPTIONS="suppressions=$root/scripts/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export TMPDIR=${TMPDIR:-/tmp}

# Seed files per target: presets and bad-input corpus files (globs that match nothing are dropped).
seed_files() {
  shopt -s nullglob
  local c=tests/corpus/cases
  case "$1" in
    topology) echo topologies/*.json $c/topo-*/topo.json ;;
    model) echo workloads/*.json $c/wl-*/model.json $c/hf-*/model.json ;;
    deepspeed) echo $c/ds-*/ds.json $c/cli-sweep-deepspeed-*/ds.json ;;
    fsdp_config) echo workloads/fsdp/*.yaml $c/fsdp-*/fsdp.yaml ;;
    cost_profile) echo calibrate/profiles/*.json $c/prof-*/profile.json ;;
    results) echo $c/res-*/results.json $c/res-*/a.json $c/res-*/b.json ;;
    sweep_partial) echo $c/res-partial-*/*.partial ;;
    nccl_tests) echo $c/nccl-*/log.txt ;;
    measurements) echo $c/meas-*/meas.jsonl ;;
  esac
  shopt -u nullglob
}

failed=()
summary=()
for bin in "$build"/fuzz/fuzz_*; do
  [ -x "$bin" ] || continue
  t=$(basename "$bin"); t=${t#fuzz_}
  work="$build/fuzz-work/$t"
  art="$build/fuzz-artifacts/$t"
  rm -rf "$art"; mkdir -p "$work" "$art"
  # shellcheck disable=SC2046
  for f in fuzz/seeds/"$t"/* $(seed_files "$t"); do
    [ -f "$f" ] && cp "$f" "$work/seed-$(echo "$f" | tr '/' '_')"
  done
  dict=()
  case "$t" in strategy|flags) ;; cli) dict=(-dict=fuzz/cli.dict) ;; *) dict=(-dict=fuzz/json.dict) ;; esac
  status=0
  if compgen -G "fuzz/regressions/$t/*" >/dev/null; then
    "$bin" -timeout=20 -rss_limit_mb=2048 fuzz/regressions/"$t"/* >"$art/replay.log" 2>&1 || status=$?
    if [ $status -ne 0 ]; then
      echo "ci-fuzz: $t: a regression input fails again:"; tail -n 40 "$art/replay.log"
      failed+=("$t (regression)"); continue
    fi
  fi
  t0=$(date +%s)
  "$bin" "${dict[@]}" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$art/" "$work" >"$art/fuzz.log" 2>&1 || status=$?
  t1=$(date +%s)
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$art/fuzz.log" | grep -o '[0-9]*$' || echo "?")
  summary+=("$t: $((t1 - t0)) s, $runs inputs, exit $status")
  if [ $status -ne 0 ]; then
    echo "ci-fuzz: $t FAILED (exit $status):"; tail -n 60 "$art/fuzz.log"
    mkdir -p "fuzz/regressions/$t"
    for f in "$art"/crash-* "$art"/leak-* "$art"/timeout-* "$art"/oom-* "$art"/slow-unit-*; do
      [ -f "$f" ] && cp "$f" "fuzz/regressions/$t/" && echo "ci-fuzz: saved $f as fuzz/regressions/$t/$(basename "$f")"
    done
    failed+=("$t")
  fi
done
printf 'ci-fuzz: %s\n' "${summary[@]}"
end=$(date +%s)
echo "ci-fuzz: total $((end - start)) s"
if [ ${#failed[@]} -gt 0 ]; then
  echo "ci-fuzz: FAILED: ${failed[*]}"
  exit 1
fi
