#!/usr/bin/env bash
# Checks `cmake --install` of a build (default: build/), as a user of the installed tree sees it:
#   1. the layout: bin/zerosim, the package (lib/cmake/zerosim), public headers under include/ but
#      no private one, the data under share/zerosim; the prefix is then moved elsewhere, so the
#      data must be found relative to the binary, not where it was installed;
#   2. the installed zerosim, run from / with ZEROSIM_DATA_DIR unset and the source tree hidden,
#      prints the same JSON, byte for byte, as the build tree's zerosim for
#      `simulate --cluster dgx2-v100 --nodes 4 --model gpt-18b --strategy zeropp --json`;
#   3. a bad ZEROSIM_DATA_DIR is exit 2 naming the variable, a good one is obeyed;
#   4. a CMake project of its own (tests/install/consumer: find_package(zerosim), zerosim::zerosim,
#      simulate()) builds against the prefix and, source tree hidden too, prints the same JSON;
#   5. when built, the Python module imports from the prefix (source tree hidden) and its
#      r.to_json() is that JSON too;
#   6. when built, `pip install --no-build-isolation .` (offline, pyproject.toml) into a fresh venv
#      of $PYTHON (default python3), reusing this build (ZEROSIM_BUILD_DIR): with the source tree
#      hidden, the README's `import zerosim; print(zerosim.simulate(...))` runs, and the venv's
#      module and its bin/zerosim print that JSON too (the wheel's data found beside them).
# Hidden: a private mount namespace (unshare -m, or unshare -rm without root) with an empty tmpfs
# over the source tree, so nothing in it can be read; where namespaces are not allowed, strace
# records every file the run touches and any path in the source tree fails the check.
# Usage: scripts/test-install.sh [BUILD_DIR]. scripts/test.sh runs it after ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
build=$(cd "${1:-build}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
case "$work/" in "$src"/*) echo "test-install: the scratch folder $work is inside the source tree"; exit 1 ;; esac
fail() { echo "test-install: FAILED: $*"; exit 1; }
args=(simulate --cluster dgx2-v100 --nodes 4 --model gpt-18b --strategy zeropp --json)

# 1. Install, then move the prefix.
cmake --install "$build" --prefix "$work/installed" >/dev/null
mv "$work/installed" "$work/prefix"
prefix=$work/prefix
for f in bin/zerosim lib/cmake/zerosim/zerosimConfig.cmake lib/cmake/zerosim/zerosimTargets.cmake \
  lib/libzerosim_core.a include/sim/step/simulate.hpp include/calibrate/fit/fit.hpp \
  share/zerosim/topologies/dgx2-v100.json share/zerosim/workloads/gpt-18b.json \
  share/zerosim/workloads/deepspeed share/zerosim/calibrate/profiles/dgx2-v100.json; do
  [ -e "$prefix/$f" ] || fail "the install has no $f"
done
for f in include/sim/topology/topology_graph.hpp include/sim/collectives/lowering_detail.hpp; do
  [ ! -e "$prefix/$f" ] || fail "the install has the private header $f"
done

# Runs "$@" from / with ZEROSIM_DATA_DIR unset (unless given as DATA=...) and the source tree
# hidden; its stdout goes to the caller.
# TEST_INSTALL_HIDE="unshare -m" | "unshare -rm" | strace forces a way (default: the first that works).
hidden_mode=${TEST_INSTALL_HIDE:-}
if [ -n "$hidden_mode" ]; then :
elif unshare -m true 2>/dev/null; then hidden_mode="unshare -m"
elif unshare -rm true 2>/dev/null; then hidden_mode="unshare -rm"
elif command -v strace >/dev/null; then hidden_mode=strace
else fail "cannot hide the source tree: neither unshare (mount namespaces) nor strace works here"
fi
echo "test-install: source tree hidden by: $hidden_mode"
hidden() {
  local data=""
  case "$1" in DATA=*) data=${1#DATA=}; shift ;; esac
  if [ "$hidden_mode" = strace ]; then
    (cd / && env -u ZEROSIM_DATA_DIR ${data:+ZEROSIM_DATA_DIR="$data"} \
      strace -f -qq -e trace=%file -o "$work/strace.log" "$@")
    if grep -F "\"$src/" "$work/strace.log" | grep -v ENOENT >/dev/null; then
      grep -F "\"$src/" "$work/strace.log" | head -5
      fail "$1 read the source tree"
    fi
  else
    # shellcheck disable=SC2016
    $hidden_mode sh -c 'mount -t tmpfs zerosim-hidden "$1" || exit 99
      [ -z "$(ls -A "$1")" ] || { echo "the source tree is still visible" >&2; exit 99; }
      shift; cd / && exec "$@"' sh "$src" env -u ZEROSIM_DATA_DIR ${data:+ZEROSIM_DATA_DIR="$data"} "$@"
  fi
}

# 2. The installed CLI against the build tree's.
(cd "$work" && env -u ZEROSIM_DATA_DIR "$build/sim/zerosim" "${args[@]}") >"$work/expected.json"
hidden "$prefix/bin/zerosim" "${args[@]}" >"$work/installed.json" \
  || fail "the installed zerosim failed (exit $?)"
cmp "$work/expected.json" "$work/installed.json" \
  || fail "the installed zerosim's JSON differs from the build tree's"
echo "test-install: installed zerosim, source tree hidden: JSON identical ($(wc -c <"$work/expected.json") bytes)"

# 3. ZEROSIM_DATA_DIR: a bad one is exit 2 naming it; a good one is used.
for bad in "$work/no-such-folder" "$work"; do
  rc=0
  ZEROSIM_DATA_DIR=$bad "$prefix/bin/zerosim" "${args[@]}" >/dev/null 2>"$work/err.txt" || rc=$?
  [ $rc -eq 2 ] && grep -q ZEROSIM_DATA_DIR "$work/err.txt" \
    || fail "ZEROSIM_DATA_DIR=$bad: exit $rc (want 2 naming the variable): $(cat "$work/err.txt")"
done
echo "test-install: bad ZEROSIM_DATA_DIR: exit 2, $(cat "$work/err.txt")"
(cd "$work" && ZEROSIM_DATA_DIR=$prefix/share/zerosim "$build/sim/zerosim" "${args[@]}") >"$work/env.json"
cmp "$work/expected.json" "$work/env.json" || fail "ZEROSIM_DATA_DIR=<prefix>/share/zerosim: JSON differs"

# 4. A program of its own against the package.
cxx=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
cmake -S tests/install/consumer -B "$work/consumer" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" ${cxx:+-DCMAKE_CXX_COMPILER="$cxx"} >"$work/consumer.log" 2>&1 \
  || { cat "$work/consumer.log"; fail "the consumer project does not configure against the prefix"; }
cmake --build "$work/consumer" -j"${JOBS:-$(nproc)}" >>"$work/consumer.log" 2>&1 \
  || { cat "$work/consumer.log"; fail "the consumer project does not build against the prefix"; }
hidden DATA="$prefix/share/zerosim" "$work/consumer/consumer" dgx2-v100 4 gpt-18b zeropp \
  >"$work/consumer.json" || fail "the consumer failed (exit $?)"
cmp "$work/expected.json" "$work/consumer.json" || fail "the consumer's JSON differs from the CLI's"
echo "test-install: find_package(zerosim) consumer built and ran, source tree hidden: JSON identical"

# 5. The installed Python module (when the build has it), source tree hidden, data found beside it.
if [ -d "$build/python" ]; then
  pydir=$prefix/lib/python3/dist-packages
  ls "$pydir"/zerosim*.so >/dev/null 2>&1 || fail "the install has no Python module in $pydir"
  hidden env PYTHONPATH="$pydir" /usr/bin/python3 -c 'import sys, zerosim
r = zerosim.simulate(cluster="dgx2-v100", nodes=4, model="gpt-18b", strategy="zeropp")
sys.stdout.write(r.to_json() + "\n")' >"$work/python.json" || fail "import zerosim from the prefix failed"
  cmp "$work/expected.json" "$work/python.json" || fail "the installed Python module's JSON differs from the CLI's"
  echo "test-install: import zerosim from the prefix, source tree hidden: JSON identical"
fi
# 6. pip install . into a fresh venv, reusing this build; then, source tree hidden, the venv alone.
if [ -d "$build/python" ]; then
  py=${PYTHON:-python3}
  t0=$(date +%s)
  "$py" -m venv "$work/venv" || fail "$py -m venv failed (Debian: apt-get install python3-venv)"
  ZEROSIM_BUILD_DIR=$build "$work/venv/bin/pip" install --no-build-isolation --no-index \
    --disable-pip-version-check "$src" >"$work/pip.log" 2>&1 \
    || { cat "$work/pip.log"; fail "pip install --no-build-isolation . failed"; }
  echo "test-install: pip install --no-build-isolation . into a fresh venv ($("$py" --version)," \
    "ZEROSIM_BUILD_DIR=$build): $(( $(date +%s) - t0 )) s"
  hidden "$work/venv/bin/python" -c 'import zerosim
print(zerosim.simulate(cluster="dgx-h100", nodes=2, model="llama-3-8b"))' >"$work/readme.txt" \
    || fail "the venv's import zerosim; zerosim.simulate(...) failed"
  grep -q '^StepResult(dgx-h100 x2 (16 GPUs), llama-3-8b, ' "$work/readme.txt" \
    || fail "the venv's zerosim.simulate(...) printed: $(cat "$work/readme.txt")"
  echo "test-install: venv, source tree hidden: $(cat "$work/readme.txt")"
  hidden "$work/venv/bin/python" -c 'import sys, zerosim
r = zerosim.simulate(cluster="dgx2-v100", nodes=4, model="gpt-18b", strategy="zeropp")
sys.stdout.write(r.to_json() + "\n")' >"$work/venv-python.json" || fail "the venv's module failed"
  cmp "$work/expected.json" "$work/venv-python.json" || fail "the venv's module's JSON differs from the CLI's"
  hidden "$work/venv/bin/zerosim" "${args[@]}" >"$work/venv-cli.json" || fail "the venv's zerosim failed"
  cmp "$work/expected.json" "$work/venv-cli.json" || fail "the venv's zerosim's JSON differs"
  echo "test-install: pip-installed module and CLI, source tree hidden: JSON identical"
fi
echo "test-install: passed"
