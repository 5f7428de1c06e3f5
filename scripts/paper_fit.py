#!/usr/bin/env python3
"""The grid search that fitted calibrate/profiles/dgx2-v100.json to the ZeRO++ paper's table (issue 7).

Three scale factors are searched on the profile as shipped before the fit (network efficiency 0.9,
quantization kernels at 0.60-0.75 of HBM, the GEMM efficiency curve): g scales the GEMM and attention
efficiencies, n sets the network efficiency, k scales the quantization kernels' throughput. Each grid
point runs the 16 published cells (flow tier, the paper's DeepSpeed configs) and prints the mean and
worst |error| of TFLOPs/GPU and the worst speedup error. Prints one line per point, best last.

Usage: scripts/paper_fit.py [path/to/zerosim] [--jobs N]
"""
import argparse
import concurrent.futures as cf
import itertools
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QUANT = {"quantize_int8": 675.0, "dequantize_int8": 675.0, "quantize_int4": 675.0,
         "dequantize_int4": 675.0, "dequant_reduce_int4": 630.0, "swizzle_quantize_int4": 540.0,
         "dequant_reduce_quant_int4": 540.0}  # derived rates before the fit (0.75/0.70/0.60 x 900 GB/s)


def profile(g, n, k):
    p = json.load(open(os.path.join(ROOT, "calibrate/profiles/dgx2-v100.json")))
    for pt in p["gemm_efficiency"]:
        pt["efficiency"] *= g
    p["attention_efficiency"] *= g
    p["link_classes"]["network"]["efficiency"] = n
    for name, rate in QUANT.items():
        p["kernels"][name]["throughput_GBps"] = rate * k
    return p


def tflops(zerosim, prof, strategy, model, tokens):
    cmd = [zerosim, "simulate", "--cluster", "dgx2-v100", "--nodes", "24", "--nics-per-node", "4",
           "--nic-gbps", "100", "--model", model, "--deepspeed",
           os.path.join(ROOT, f"workloads/deepspeed/zeropp-paper-{strategy}.json"),
           "--tokens-per-gpu", str(tokens), "--profile", prof, "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode:
        sys.exit(out.stderr)
    return json.loads(out.stdout)["tflops_per_gpu"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("zerosim", nargs="?", default=os.path.join(ROOT, "build/sim/zerosim"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    table = json.load(open(os.path.join(ROOT, "tests/paper/zeropp_published_384.json")))
    results = []
    with tempfile.TemporaryDirectory() as tmp, cf.ThreadPoolExecutor(args.jobs) as ex:
        for g, n, k in itertools.product((0.8, 0.9, 1.0, 1.1), (0.45, 0.5, 0.55), (0.11, 0.13, 0.15)):
            path = os.path.join(tmp, f"p-{g}-{n}-{k}.json")
            json.dump(profile(g, n, k), open(path, "w"))
            jobs = [(s, c["model"], c["tokens_per_gpu"]) for c in table["cells"]
                    for s in ("zero3", "zeropp")]
            sim = dict(zip(jobs, ex.map(lambda j: tflops(args.zerosim, path, *j), jobs)))
            errs, sp = [], []
            for c in table["cells"]:
                a = sim[("zero3", c["model"], c["tokens_per_gpu"])]
                b = sim[("zeropp", c["model"], c["tokens_per_gpu"])]
                errs += [abs(a / c["zero3_tflops"] - 1), abs(b / c["zeropp_tflops"] - 1)]
                sp.append(abs((b / a) / (c["zeropp_tflops"] / c["zero3_tflops"]) - 1))
            results.append((sum(errs) / len(errs), max(errs), max(sp), g, n, k))
            print(f"g={g} n={n} k={k}: mean {100 * results[-1][0]:.1f}% worst "
                  f"{100 * results[-1][1]:.1f}% worst speedup {100 * results[-1][2]:.1f}%", flush=True)
    ok = [r for r in results if r[1] <= 0.10 and r[2] <= 0.10] or results
    best = min(ok, key=lambda r: r[0])
    print(f"best: g={best[3]} n={best[4]} k={best[5]} mean {100 * best[0]:.1f}% "
          f"worst {100 * best[1]:.1f}% worst speedup {100 * best[2]:.1f}%")


if __name__ == "__main__":
    main()
