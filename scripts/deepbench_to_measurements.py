#!/usr/bin/env python3
"""DeepBench's V100 GEMM results -> a zerosim measurement file that `zerosim calibrate fit` reads.

Input: ../shared/data/gemm/deepbench-v100-dgx1-fp16-mixed.csv (Baidu DeepBench, cuBLAS FP16 GEMMs with
FP32 accumulation on a DGX-1 V100). Kept: the GEMMs whose every dimension is at least 512, the shapes of
a transformer's projections at 1K+ tokens per GPU; the rows with N <= 128 are inference batch sizes
and would pull the curve's low end toward shapes zerosim never runs. Rows keep their CSV line in
`label`.

Usage: scripts/deepbench_to_measurements.py CSV OUT.jsonl
"""
import csv
import json
import os
import sys
import tempfile

MIN_DIM = 512


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    src, out = sys.argv[1], sys.argv[2]
    lines = open(src).read().splitlines()
    header = {"format": "zerosim-measurements", "version": 1, "provenance": {
        "source": "Baidu DeepBench results/train/DeepBench_NV_V100.xlsx, sheet 'Results - FP16 ip, Mixed "
                  "math' (commit 30c51150): NVIDIA DGX-1 V100 (SXM2), CUDA 10.1.243, driver 418.67",
        "converted_by": "scripts/deepbench_to_measurements.py", "filter": f"min(M, N, K) >= {MIN_DIM}"}}
    records = []
    body = [(no, l) for no, l in enumerate(lines, 1) if l and not l.startswith("#")]
    for (no, row) in zip((n for n, _ in body[1:]), csv.DictReader(l for _, l in body)):
        m, n, k = int(row["M"]), int(row["N"]), int(row["K"])
        if min(m, n, k) < MIN_DIM:
            continue
        records.append({"kind": "gemm", "m": m, "n": n, "k": k, "time_s": float(row["time_ms"]) / 1e3,
                        "dtype": "fp16", "label": f"{os.path.basename(src)}:{no} {row['workload']}"})
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(out)))
    with os.fdopen(fd, "w") as f:
        f.write(json.dumps(header) + "\n")
        for r in records:
            f.write(json.dumps(r) + "\n")
    os.replace(tmp, out)
    print(f"{len(records)} GEMMs -> {out}")


if __name__ == "__main__":
    main()
