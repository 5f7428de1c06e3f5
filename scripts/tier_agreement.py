#!/usr/bin/env python3
"""Analytic tier against the flow tier (the reference) on a grid of step scenarios.

Runs each sweep of the grid twice, `--tier flow` and `--tier analytic`, and compares every
scenario's step time: prints the number of scenarios, the worst and mean relative difference
|analytic - flow| / flow, and the worst cases. `--check PCT` exits 1 when the worst exceeds PCT.

Grids: `full` (>= 500 scenarios: dgx2-v100, dgx-a100, dgx-h100; 1, 2, 4, 8 NICs per node; ZeRO-3,
each ZeRO++ technique alone, ZeRO++, FSDP; DeepSpeed's default prefetch and the ZeRO++ paper's
configs; 1K-8K tokens per GPU; 2-512 nodes; the two cases of issue 47), `quick` (a few dozen with
the two cases of issue 47, for CTest). Usage: tier_agreement.py ZEROSIM [--grid full|quick] [--check PCT] [--jobs N]
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile

STRATEGIES = "zero3,zero3+qwz,zero3+hpz,zero3+qgz,zeropp,fsdp"
PAPER = ["zero3", "zero3-hpz", "zero3-qgz", "zero3-qwz", "zeropp"]


def full_grid():
    g = []
    for cluster in ["dgx2-v100", "dgx-a100", "dgx-h100"]:
        for nodes in ["2,16", "64,512"]:
            g.append(["--cluster", cluster, "--nodes", nodes, "--model", "gpt-18b",
                      "--nics-per-node", "1,2,4,8", "--nic-gbps", "100",
                      "--strategy", STRATEGIES, "--tokens-per-gpu", "1024,8192"])
    for cfg in PAPER:  # the paper's configs, its 384 GPUs and IB: 1 / IB: 4
        g.append(["--cluster", "dgx2-v100", "--nodes", "24", "--model", "gpt-18b",
                  "--nics-per-node", "1,4", "--nic-gbps", "100", "--tokens-per-gpu", "1024,4096",
                  "--deepspeed", f"workloads/deepspeed/zeropp-paper-{cfg}.json"])
    g += issue_cases()
    return g


def issue_cases():
    return [["--cluster", "dgx-h100", "--nodes", "16", "--nics-per-node", "1", "--nic-gbps", "100",
             "--model", "llama-3-70b", "--strategy", "zero3", "--tokens-per-gpu", "8192",
             "--seq-len", "8192"],
            ["--cluster", "dgx2-v100", "--nodes", "24", "--nics-per-node", "1", "--nic-gbps",
             "100", "--model", "gpt-18b", "--strategy", "zero3", "--tokens-per-gpu", "1024"]]


def quick_grid():
    g = []
    for cluster in ["dgx2-v100", "dgx-h100"]:
        g.append(["--cluster", cluster, "--nodes", "2,8", "--model", "gpt-18b",
                  "--nics-per-node", "1,4", "--nic-gbps", "100",
                  "--strategy", "zero3,zero3+hpz,zero3+qgz,zeropp,fsdp", "--tokens-per-gpu", "2048"])
    g.append(["--cluster", "dgx2-v100", "--nodes", "4", "--model", "gpt-18b", "--nics-per-node",
              "1", "--nic-gbps", "100", "--tokens-per-gpu", "1024",
              "--deepspeed", "workloads/deepspeed/zeropp-paper-zeropp.json"])
    return g + issue_cases()


def step_times(zerosim, args, tier):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "s.json")
        cmd = [zerosim, "sweep", *args, "--tier", tier, "--threads", "1", "--out", out]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if not os.path.exists(out):
            sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr}")
        with open(out) as f:
            doc = json.load(f)
    rows = []
    for r in doc["results"]:
        s = r["scenario"]
        key = (s["cluster"], s["nodes"], s["nics_per_node"], s["strategy"]["name"],
               s["tokens_per_gpu"], s["model"]["name"], s["strategy"].get("source", ""))
        rows.append((key, r["step_time_s"]))
    return rows


def compare(zerosim, args):
    flow = step_times(zerosim, args, "flow")
    analytic = step_times(zerosim, args, "analytic")
    if [k for k, _ in flow] != [k for k, _ in analytic]:
        sys.exit(f"the tiers' sweeps differ in their scenarios: {' '.join(args)}")
    return [(k, f, a, abs(a - f) / f) for (k, f), (_, a) in zip(flow, analytic)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("zerosim")
    ap.add_argument("--grid", choices=["full", "quick"], default="full")
    ap.add_argument("--check", type=float, help="exit 1 if the worst difference exceeds PCT")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--show", type=int, default=10, help="worst cases listed")
    o = ap.parse_args()
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    grid = full_grid() if o.grid == "full" else quick_grid()
    with concurrent.futures.ThreadPoolExecutor(o.jobs) as pool:
        parts = list(pool.map(lambda a: compare(o.zerosim, a), grid))
    rows = [r for part in parts for r in part]
    worst = max(rows, key=lambda r: r[3])
    mean = sum(r[3] for r in rows) / len(rows)
    print(f"scenarios {len(rows)}  worst {100 * worst[3]:.2f}%  mean {100 * mean:.2f}%")
    by = {}
    for k, _, _, d in rows:
        by.setdefault(k[3], []).append(d)
    for name, ds in sorted(by.items()):
        print(f"  {name}: {len(ds)} scenarios, worst {100 * max(ds):.2f}%")
    for k, f, a, d in sorted(rows, key=lambda r: -r[3])[:o.show]:
        print(f"  {100 * d:6.2f}%  flow {f:.4f} s  analytic {a:.4f} s  {k}")
    if o.check is not None and 100 * worst[3] > o.check:
        print(f"worst difference {100 * worst[3]:.2f}% exceeds {o.check}%")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
