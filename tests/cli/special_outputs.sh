#!/usr/bin/env bash
# Every output flag of every subcommand pointed at a node that is not a regular file: a FIFO, a
# socket, a folder, and (mode "devices", where mknod is permitted) a character and a block device.
# Each run must exit 2 within a second, name the path and the rule, and leave the node as it was
# (stat before == stat after: type, device numbers, inode, size, mtime). Mode "files" also checks
# a sparse input past the 1 GiB limit, standard output on /dev/full (exit 1) and a sweep whose
# partial file fills up (exit 1, whole lines kept, --resume finishes it).
# Usage: special_outputs.sh ZEROSIM SOURCE_DIR files|devices. Exit 77: skipped (no mknod).
set -u
zerosim=$1
src=$2
mode=$3
cd "$src" || exit 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/zerosim-special.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failures=0

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# Inputs the commands need (made once; analytic tier, a second at most).
sim=(--cluster dgx-h100 --nodes 2 --model gpt-18b --tier analytic)
"$zerosim" simulate "${sim[@]}" --out "$tmp/result.json" >/dev/null || exit 1
"$zerosim" calibrate import-nccl-tests tests/calibrate/data/dgx-a100-all_reduce_perf-8gpu.txt \
  --out "$tmp/meas.jsonl" >/dev/null 2>&1 || exit 1

# Each subcommand with OUT where its output goes.
commands=(
  "simulate ${sim[*]} --out OUT"
  "simulate ${sim[*]} --trace OUT"
  "topology --cluster dgx-h100 --nodes 1 --dot OUT"
  "collective --cluster dgx-h100 --nodes 1 --op all_gather --bytes 1MiB --out OUT"
  "plan --cluster dgx-h100 --nodes 2 --model gpt-18b --confirm 0 --out OUT"
  "plan --cluster dgx-h100 --nodes 2 --model gpt-18b --confirm 0 --emit-deepspeed OUT"
  "sweep ${sim[*]} --out OUT"
  "sweep ${sim[*]} --csv OUT"
  "report $tmp/result.json --out OUT"
  "compare $tmp/result.json $tmp/result.json --out OUT"
  "calibrate fit $tmp/meas.jsonl --base dgx-a100 --out OUT"
  "calibrate import-nccl-tests tests/calibrate/data/dgx-a100-all_reduce_perf-8gpu.txt --out OUT"
)

# type, device numbers, inode, size, mtime of a path (following links: what an output replaces).
identity() { stat -L -c '%F %t:%T %i %s %Y' "$1"; }

# Runs every command against the node at $1 (described as $2) and checks it is refused untouched.
check_node() {
  local node=$1 what=$2 before after out rc start elapsed
  before=$(identity "$node")
  for c in "${commands[@]}"; do
    start=$(date +%s%N)
    # shellcheck disable=SC2086  # the command is a list of words without spaces in them
    out=$(timeout 10 "$zerosim" ${c//OUT/$node} 2>&1 </dev/null)
    rc=$?
    elapsed=$((($(date +%s%N) - start) / 1000000))
    after=$(identity "$node")
    [ "$rc" = 2 ] || fail "$what: '$c' exited $rc, not 2: $out"
    [ "$before" = "$after" ] || fail "$what: '$c' changed it: $before -> $after"
    [[ "$out" == *"$node"* && "$out" == *"output path is a "*", not a "*"file"* ]] ||
      fail "$what: '$c' did not name the path and the rule: $out"
    [ "$elapsed" -lt 1000 ] || fail "$what: '$c' took $elapsed ms to refuse"
  done
  # The sweep's partial file (OUT.partial) is an output too.
  if [[ "$node" == *.partial ]]; then
    out=$(timeout 10 "$zerosim" sweep "${sim[@]}" --out "${node%.partial}" 2>&1 </dev/null)
    rc=$?
    [ "$rc" = 2 ] || fail "$what as OUT.partial: exited $rc, not 2: $out"
    [ "$(identity "$node")" = "$before" ] || fail "$what as OUT.partial: changed"
  fi
  echo "ok: $what ($before) refused by ${#commands[@]} outputs"
}

if [ "$mode" = devices ]; then
  if ! mknod "$tmp/null" c 1 3 2>/dev/null; then
    echo "SKIP: mknod is not permitted here (needs root and CAP_MKNOD)"
    exit 77
  fi
  check_node "$tmp/null" "character device 1:3"
  mknod "$tmp/zero.partial" c 1 5 && check_node "$tmp/zero.partial" "character device as OUT.partial"
  if mknod "$tmp/block" b 7 0 2>/dev/null; then
    check_node "$tmp/block" "block device 7:0"
  else
    echo "note: block devices cannot be made here; character devices checked"
  fi
  ln -s "$tmp/null" "$tmp/link-to-device"
  check_node "$tmp/link-to-device" "symbolic link to a character device"
  if [ -w /dev/full ]; then check_node /dev/full "/dev/full"; fi
else
  mkfifo "$tmp/fifo" && check_node "$tmp/fifo" "FIFO"
  mkfifo "$tmp/f.partial" && check_node "$tmp/f.partial" "FIFO as OUT.partial"
  mkdir "$tmp/folder" && check_node "$tmp/folder" "folder"
  if python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' \
    "$tmp/sock" 2>/dev/null; then
    check_node "$tmp/sock" "socket"
  else
    echo "note: no python3 to bind a UNIX socket; sockets not checked"
  fi

  # A sparse input past the 1 GiB input limit: refused at once, never read.
  truncate -s 2G "$tmp/sparse.json"
  before=$(identity "$tmp/sparse.json")
  start=$(date +%s%N)
  out=$(timeout 10 "$zerosim" simulate --cluster dgx-h100 --nodes 1 --model "$tmp/sparse.json" 2>&1)
  rc=$?
  elapsed=$((($(date +%s%N) - start) / 1000000))
  [ "$rc" = 2 ] || fail "sparse 2 GiB input: exited $rc: $out"
  [ "$elapsed" -lt 1000 ] || fail "sparse 2 GiB input: took $elapsed ms"
  [ "$(identity "$tmp/sparse.json")" = "$before" ] || fail "sparse input changed"
  echo "ok: sparse 2 GiB input refused in $elapsed ms"

  # Standard output on a full device: exit 1 naming standard output and the OS error.
  if [ -w /dev/full ]; then
    out=$("$zerosim" topology --cluster dgx-h100 --nodes 1 2>&1 >/dev/full)
    rc=$?
    [[ "$rc" = 1 && "$out" == *"standard output"*"No space left on device"* ]] ||
      fail "stdout on /dev/full: exited $rc: $out"
    echo "ok: standard output on /dev/full: exit 1"
  fi

  # A partial file that fills up (a file size limit fails a write as a full disk does): exit 1
  # with the path and the OS error, the file left with whole lines only, and --resume finishes it
  # to the same document as an uninterrupted run.
  sweep=(sweep --cluster dgx-h100 --nodes 2 --model gpt-18b --tier analytic
    --strategy zero3,zeropp,zero2,zero1 --grad-accum 1,2)
  "$zerosim" "${sweep[@]}" --out "$tmp/whole.json" >/dev/null 2>&1 || fail "sweep without a limit"
  out=$( (ulimit -f 24 && "$zerosim" "${sweep[@]}" --threads 1 --out "$tmp/cut.json") 2>&1)
  rc=$?
  [[ "$rc" = 1 && "$out" == *"cut.json.partial"*"File too large"* ]] ||
    fail "partial file past the size limit: exited $rc: $out"
  python3 - "$tmp/cut.json.partial" <<'EOF' || fail "partial file holds a cut line"
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
assert lines[-1] == "", "the last line is not whole"
for line in lines[:-1]:
    json.loads(line)
print(f"ok: the partial file keeps {len(lines) - 2} whole results")
EOF
  "$zerosim" "${sweep[@]}" --out "$tmp/cut.json" --resume >/dev/null 2>&1 || fail "--resume"
  cmp -s "$tmp/whole.json" "$tmp/cut.json" || fail "the resumed sweep differs from a whole run"
  echo "ok: a partial file that filled up resumes to the same document"
fi

[ "$failures" = 0 ] || {
  echo "$failures failure(s)"
  exit 1
}
echo "all special outputs refused untouched"
