#!/usr/bin/env python3
"""Predictions of the ZeRO++ evaluation's unpublished-here points, written before any comparison.

With the shipped dgx2-v100 profile (flow tier), for ZeRO-3, ZeRO++ and each ZeRO++ technique alone:
  1. 384 GPUs (24 DGX-2 nodes), 2K tokens per GPU, gpt-18b and gpt-138b, 2 and 8 x 100 Gbps per node,
     with the paper configs of workloads/deepspeed/ (the runs of the published tables);
  2. the DeepSpeed ZeRO++ tutorial's run: gpt-18b on 4 nodes x 16 V100, seq 512, micro-batch 1
     (512 tokens per GPU), its zero_optimization block as quoted in shared/paper/zeropp-published.md
     (workloads/deepspeed/zeropp-tutorial-*.json: DeepSpeed's default prefetch), 1, 2, 4, 8 x 100 Gbps;
     and the same run as the paper's published runs behaved (no gather/compute overlap: the config
     with stage3_prefetch_bucket_size 0), the variant the fit supports (reports/paper-reproduction.md).
Writes reports/paper-predictions.json and .md (atomically), each naming the commit it ran at.

Usage: scripts/paper_predictions.py [path/to/zerosim]
"""
import json
import os
import subprocess
import sys
import tempfile

from zerosim_cli import simulate_json

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Strategy -> the suffix of its config in workloads/deepspeed/ (each technique alone = ZeRO-3's config
# plus that technique's key).
TECHNIQUES = {"zero3": "zero3", "zeropp": "zeropp", "zero3+qwz": "zero3-qwz", "zero3+hpz": "zero3-hpz",
              "zero3+qgz": "zero3-qgz"}


def configs(prefix):
    return {s: os.path.join(ROOT, f"workloads/deepspeed/{prefix}-{suffix}.json") for s, suffix in TECHNIQUES.items()}


def run(zerosim, args):
    r = simulate_json([zerosim, "simulate", "--json", *args])
    return {"step_time_ms": r["step_time_s"] * 1e3, "tflops_per_gpu": r["tflops_per_gpu"]}


def write(path, text):
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path))
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def main():
    zerosim = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build/sim/zerosim")
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    res = {"commit": commit, "profile": "calibrate/profiles/dgx2-v100.json", "tier": "flow",
           "paper_384": [], "tutorial": [], "tutorial_no_overlap": []}
    paper, tut = configs("zeropp-paper"), configs("zeropp-tutorial")
    for model in ("gpt-18b", "gpt-138b"):
        for ib in (2, 8):
            for strat, cfg in paper.items():
                r = run(zerosim, ["--cluster", "dgx2-v100", "--nodes", "24", "--nics-per-node", str(ib),
                                  "--nic-gbps", "100", "--model", model, "--tokens-per-gpu", "2048",
                                  "--deepspeed", cfg])
                res["paper_384"].append({"model": model, "ib": ib, "strategy": strat, **r})
    with tempfile.TemporaryDirectory() as tmp:
        for prefetch in ("default", "0"):
            for ib in (1, 2, 4, 8):
                for strat, cfg in tut.items():
                    if prefetch == "0":
                        c = json.load(open(cfg))
                        c["zero_optimization"]["stage3_prefetch_bucket_size"] = 0
                        cfg = os.path.join(tmp, f"{strat}-p0.json")
                        json.dump(c, open(cfg, "w"))
                    r = run(zerosim, ["--cluster", "dgx2-v100", "--nodes", "4", "--nics-per-node", str(ib),
                                      "--nic-gbps", "100", "--model", "gpt-18b", "--deepspeed", cfg])
                    res["tutorial" if prefetch == "default" else "tutorial_no_overlap"].append(
                        {"ib": ib, "strategy": strat, **r})
    write(os.path.join(ROOT, "reports/paper-predictions.json"), json.dumps(res, indent=1) + "\n")

    md = ["# ZeRO++ evaluation: predictions before comparison", "",
          f"Generated at commit `{commit}` by `scripts/paper_predictions.py` with `{res['profile']}` "
          "(flow tier). No value below was compared with a published one when it was written.", "",
          "## 384 GPUs (24 DGX-2 nodes), 2K tokens per GPU, the paper configs", "",
          "| model | strategy | 2 x 100 Gbps: TFLOPs/GPU | step ms | 8 x 100 Gbps: TFLOPs/GPU | step ms |",
          "|---|---|---|---|---|---|"]
    for model in ("gpt-18b", "gpt-138b"):
        for strat in TECHNIQUES:
            a, b = (next(r for r in res["paper_384"] if r["model"] == model and r["ib"] == ib
                         and r["strategy"] == strat) for ib in (2, 8))
            md.append(f"| {model} | {strat} | {a['tflops_per_gpu']:.1f} | {a['step_time_ms']:.0f} | "
                      f"{b['tflops_per_gpu']:.1f} | {b['step_time_ms']:.0f} |")
    for key, title in (("tutorial", "its config (DeepSpeed's default prefetch, gathers overlapping compute)"),
                       ("tutorial_no_overlap", "as the paper's published runs behaved (no gather/compute overlap; "
                        "the variant the fit supports)")):
        md += ["", f"## The ZeRO++ tutorial's run: gpt-18b, 4 nodes x 16 V100, seq 512, micro-batch 1, {title}",
               "", "Step time in ms.", "",
               "| strategy | 1 x 100 Gbps | 2 x 100 Gbps | 4 x 100 Gbps | 8 x 100 Gbps |", "|---|---|---|---|---|"]
        for strat in TECHNIQUES:
            row = [next(r for r in res[key] if r["ib"] == ib and r["strategy"] == strat)["step_time_ms"]
                   for ib in (1, 2, 4, 8)]
            md.append(f"| {strat} | " + " | ".join(f"{v:.0f}" for v in row) + " |")
    write(os.path.join(ROOT, "reports/paper-predictions.md"), "\n".join(md) + "\n")
    print("wrote reports/paper-predictions.{json,md}")


if __name__ == "__main__":
    main()
