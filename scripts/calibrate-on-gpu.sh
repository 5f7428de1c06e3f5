#!/usr/bin/env bash
# The GPU session in one run (< 10 minutes on the lent H200): the GPU kernel tests, the kernel
# benchmark and the calibration harness (GEMMs, D2D copy, quantization kernels; collectives need
# two GPUs and run only where there are). The lent machine has CUDA, CMake and NCCL but none of
# the Debian libraries, so the binaries are built here and carried with the non-CUDA shared
# libraries they need; the CUDA libraries are the machine's own.
#
#   bash scripts/calibrate-on-gpu.sh pack   # here: build with CUDA, fill gpu-carry/ (git-ignored)
#   device run: command "bash scripts/calibrate-on-gpu.sh run", carry ["gpu-carry"], timeout 580
#   then here:  copy <files_at>/* to calibrate/profiles/raw/<profile>-<date>/, and
#               zerosim calibrate fit calibrate/profiles/raw/<profile>-<date>/meas.jsonl \
#                 --base dgx-h200 --cluster dgx-h200 --out calibrate/profiles/dgx-h200-measured.json
#               (commit both; calibrate/profiles/README.md, "Measured", has the 2026-12-04 run)
#
# If the carried binaries cannot load (another CUDA major version there), `run` rebuilds the GPU
# kernel test with the machine's nvcc from the sources (it needs only CUDA and the carried doctest
# header) so the kernels are still checked.
set -euo pipefail
cd "$(dirname "$0")/.."
CARRY=gpu-carry

pack() {
  bash scripts/setup.sh
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DZEROSIM_CUDA=ON >/dev/null
  cmake --build build -j"$(nproc)" --target zerosim-calibrate test_kernels_gpu bench_kernels_gpu
  rm -rf "$CARRY"
  mkdir -p "$CARRY/bin" "$CARRY/lib" "$CARRY/include"
  cp build/calibrate/harness/zerosim-calibrate build/kernels/test_kernels_gpu \
    build/kernels/bench_kernels_gpu "$CARRY/bin/"
  # Shared libraries the binaries need beyond glibc and CUDA's (the machine has its own CUDA).
  for b in "$CARRY"/bin/*; do
    ldd "$b" | awk '$3 ~ /^\// {print $3}'
  done | sort -u | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | ld-linux*) ;;
      libcuda.so.* | libcudart.so.* | libcublas*.so.* | libnccl.so.*) ;;
      *) cp -L "$lib" "$CARRY/lib/" ;;
    esac
  done
  cp -r /usr/include/doctest "$CARRY/include/"
  du -sh "$CARRY"
}

run() {
  : "${OUT:?run on the device machine, where OUT is set}"
  local log="$OUT/gpu-run.log"
  exec > >(tee "$log") 2>&1
  nvidia-smi || true
  # The machine's CUDA and NCCL (NCCL from Python's nvidia-nccl package).
  # The wheels' libraries live under the `nvidia` namespace package (nvidia/nccl/lib,
  # nvidia/cu13/lib, ... depending on the wheel's layout): every folder there holding libnccl or
  # libcublas goes on the search path.
  local wheel_libs
  wheel_libs=$(python3 - <<'PY' 2>/dev/null || true
import glob, os
try:
    import nvidia
    roots = list(nvidia.__path__)
except ImportError:
    roots = []
dirs = set()
for r in roots:
    for pat in ("**/libnccl.so*", "**/libcublas*.so*"):
        dirs.update(os.path.dirname(p) for p in glob.glob(os.path.join(r, pat), recursive=True))
print(":".join(sorted(dirs)))
PY
  )
  echo "wheel library folders: ${wheel_libs:-none}"
  export LD_LIBRARY_PATH="$PWD/$CARRY/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib:${wheel_libs}:${LD_LIBRARY_PATH:-}"
  for b in "$CARRY"/bin/*; do
    echo "== ldd $(basename "$b")"
    ldd "$b" | grep "not found" || echo "all libraries found"
  done

  echo "== GPU kernel tests"
  if ! timeout 120 "$CARRY/bin/test_kernels_gpu"; then
    echo "carried test_kernels_gpu failed to run; building it with this machine's nvcc"
    timeout 240 nvcc -std=c++20 -O2 -arch=sm_90 -I. -I"$CARRY/include" \
      tests/gpu/test_kernels_gpu.cpp kernels/cuda/quantize_cuda.cu \
      kernels/ref/*.cpp -o /tmp/test_kernels_gpu_local && timeout 120 /tmp/test_kernels_gpu_local
  fi

  echo "== GPU kernel benchmark"
  timeout 120 "$CARRY/bin/bench_kernels_gpu" --benchmark_min_time=0.2 \
    --benchmark_out="$OUT/bench_kernels_gpu.json" --benchmark_out_format=json || true

  echo "== calibration harness"
  local what="gemm copy kernels"
  local gpus
  gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
  [ "$gpus" -ge 2 ] && what="collectives gemm copy kernels"
  # shellcheck disable=SC2086
  timeout 300 "$CARRY/bin/zerosim-calibrate" --out "$OUT/meas.jsonl" --what $what \
    --timeout 60 || echo "harness exit $?"
  ls -l "$OUT"
}

case "${1:-}" in
  pack) pack ;;
  run) run ;;
  *)
    echo "usage: $0 pack|run" >&2
    exit 2
    ;;
esac
