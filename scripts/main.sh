#!/usr/bin/env bash
# The main job: install packages, build zerosim, run the default sweep (384 V100 GPUs = 24 DGX-2 nodes,
# gpt-18b, 1/2/4/8 x 100 Gbps per node, 1K/2K tokens per GPU, ZeRO-3, each ZeRO++ technique alone and
# ZeRO++) and render it as HTML, Markdown and CSV under out/. The DeepSpeed configs are those of the
# ZeRO++ paper's runs (workloads/deepspeed/zeropp-paper-*.json), so the 1 and 4 x 100 Gbps rows are the
# cells of its published tables (reports/paper-reproduction.md).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target zerosim
mkdir -p out
zerosim() { ./build/sim/zerosim "$@"; }
# These commands are the README's "same pieces by hand" (tests/report/readme_by_hand.sh runs both).
P=workloads/deepspeed/zeropp-paper
zerosim sweep --cluster dgx2-v100 --nodes 24 --model gpt-18b --nics-per-node 1,2,4,8 --nic-gbps 100 --tokens-per-gpu 1024,2048 \
  --deepspeed $P-zero3.json,$P-zero3-qwz.json,$P-zero3-hpz.json,$P-zero3-qgz.json,$P-zeropp.json \
  --out out/sweep-dgx2-gpt18b.json --csv out/sweep-dgx2-gpt18b.csv
zerosim report out/sweep-dgx2-gpt18b.json --format html --out out/report.html
zerosim report out/sweep-dgx2-gpt18b.json --format md --out out/report.md
echo "Open $(pwd)/out/report.html in a browser (Markdown: out/report.md, CSV: out/sweep-dgx2-gpt18b.csv)."
