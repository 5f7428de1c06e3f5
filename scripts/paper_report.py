#!/usr/bin/env python3
"""Writes reports/paper-reproduction.{md,html}: the ZeRO++ paper's two 384-GPU tables against zerosim.

Runs the `zerosim` CLI (flow tier, shipped dgx2-v100 profile) on every published cell of both tables
(tests/paper/zeropp_published_384.json: IB: 4 and IB: 1), reports per-cell errors, the mean and
worst, the step breakdown behind each speedup, the fitted parameters with their ranges, the
cross-validation and sensitivity of the fit (from reports/paper-fit.json, written by
scripts/paper_fit.py), a run with DeepSpeed's default prefetch, and the hpZ memory cost. The
predictions of unpublished points live in reports/paper-predictions.md (their own commit).

Usage: scripts/paper_report.py [path/to/zerosim] [--jobs N]
"""
import argparse
import concurrent.futures as cf
import datetime
import html
import json
import os
import subprocess
import tempfile

from zerosim_cli import simulate_json

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TABLE = os.path.join(ROOT, "tests/paper/zeropp_published_384.json")


def ds_config(tmp, strategy, prefetch=None):
    """The paper's DeepSpeed config for a strategy string (zero3, zeropp or zero3+<technique>)."""
    base = json.load(open(os.path.join(ROOT, "workloads/deepspeed/zeropp-paper-zero3.json")))
    z = base["zero_optimization"]
    techniques = {"qwz", "hpz", "qgz"} if strategy == "zeropp" else set(strategy.split("+")[1:])
    if "qwz" in techniques:
        z["zero_quantized_weights"] = True
    if "hpz" in techniques:
        z["zero_hpz_partition_size"] = 16
    if "qgz" in techniques:
        z["zero_quantized_gradients"] = True
    if prefetch is not None:
        z["stage3_prefetch_bucket_size"] = prefetch
    path = os.path.join(tmp, f"ds-{strategy}-{prefetch}.json")
    with open(path, "w") as f:
        json.dump(base, f, indent=2)
    return path


def simulate(zerosim, ds, model, tokens, nodes, nics):
    cmd = [zerosim, "simulate", "--cluster", "dgx2-v100", "--nodes", str(nodes),
           "--nics-per-node", str(nics), "--nic-gbps", "100", "--model", model,
           "--deepspeed", ds, "--tokens-per-gpu", str(tokens), "--deepspeed-version",
           json.load(open(TABLE))["deepspeed_version"], "--json"]
    return simulate_json(cmd)


def pct(x):
    return f"{100 * x:+.1f}%"


def run_all(zerosim, jobs, specs):
    with cf.ThreadPoolExecutor(jobs) as ex:
        return list(ex.map(lambda s: simulate(zerosim, *s), specs))


def all_cells(table):
    return [dict(c, ib=ib) for ib, key in ((4, "cells"), (1, "cells_ib1")) for c in table[key]]


def reproduction(zerosim, jobs, tmp, table, prefetch=None):
    specs, keys = [], []
    for c in all_cells(table):
        for s in ("zero3", "zeropp"):
            specs.append((ds_config(tmp, s, prefetch), c["model"], c["tokens_per_gpu"], 24, c["ib"]))
            keys.append((c["ib"], c["model"], c["tokens_per_gpu"], s))
    res = dict(zip(keys, run_all(zerosim, jobs, specs)))
    rows = []
    for c in all_cells(table):
        a = res[(c["ib"], c["model"], c["tokens_per_gpu"], "zero3")]
        b = res[(c["ib"], c["model"], c["tokens_per_gpu"], "zeropp")]
        s3, sp = a["tflops_per_gpu"], b["tflops_per_gpu"]
        p3, pp = c["zero3_tflops"], c["zeropp_tflops"]
        rows.append(dict(cell=c, z3=a, zp=b, s3=s3, sp=sp, p3=p3, pp=pp, e3=s3 / p3 - 1,
                         ep=sp / pp - 1, es=(sp / s3) / (pp / p3) - 1))
    cells = [(abs(r[k]), r, name) for r in rows for k, name in (("e3", "ZeRO-3"), ("ep", "ZeRO++"))]
    errs = [c[0] for c in cells]
    worst = max(cells, key=lambda c: c[0])
    sp_errs = [abs(r["es"]) for r in rows]
    return rows, sum(errs) / len(errs), worst, sum(sp_errs) / len(sp_errs), max(sp_errs)


def breakdown_row(r):
    def parts(d):
        b = d["breakdown"]
        e = b["exposed_comm_s"]
        return (d["step_time_s"], b["compute_s"] + b["recompute_s"], b["param_fetch_s"], e["all_gather"],
                e["reduce_scatter"], e["all_to_all"], b["exposed_kernels_s"])
    return parts(r["z3"]), parts(r["zp"])


def memory_runs(zerosim, jobs, tmp, models):
    specs, keys = [], []
    for m in models:
        for t in (1024, 2048):
            for s in ("zero3", "zeropp"):
                specs.append((ds_config(tmp, s), m, t, 24, 4))
                keys.append((m, t, s))
    return dict(zip(keys, run_all(zerosim, jobs, specs)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("zerosim", nargs="?", default=os.path.join(ROOT, "build/sim/zerosim"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    table = json.load(open(TABLE))
    profile = json.load(open(os.path.join(ROOT, "calibrate/profiles/dgx2-v100.json")))
    fit = json.load(open(os.path.join(ROOT, "reports/paper-fit.json")))
    pred = json.load(open(os.path.join(ROOT, "reports/paper-predictions.json")))
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        rows, mean, worst, sp_mean, sp_worst = reproduction(args.zerosim, args.jobs, tmp, table)
        alt = reproduction(args.zerosim, args.jobs, tmp, table, prefetch=50_000_000)
        models = sorted({c["model"] for c in table["cells"]}, key=lambda m: int(m[4:-1]))
        mem = memory_runs(args.zerosim, args.jobs, tmp, models)

    md = []
    w = md.append
    w("# ZeRO++ paper reproduction\n")
    w(f"Generated {datetime.date.today().isoformat()} at commit `{commit}` by "
      "`scripts/paper_report.py build/sim/zerosim` (flow tier). Checked in CI by "
      "`tests/paper/test_paper_check.cpp`.\n")
    w(f"**Published values:** {table['citation']}.\n")
    w("**Setup simulated:** 24 DGX-2 nodes (`--cluster dgx2-v100 --nodes 24 --nics-per-node 4|1 "
      "--nic-gbps 100`), GPT models of `workloads/`, FP16, activation checkpointing, DeepSpeed "
      "configs `workloads/deepspeed/zeropp-paper-zero3.json` and `...-zeropp.json`: the ZeRO++ "
      "tutorial's settings (reduce_bucket_size 1e7, overlap_comm, contiguous gradients, hpZ "
      "partition 16) with `stage3_prefetch_bucket_size` 0, see *Assumptions*.\n")
    fv = fit["all"]["values"]
    w(f"**Profile:** `calibrate/profiles/dgx2-v100.json` (status `{profile['provenance']['status']}`). "
      "GEMM efficiency from DeepBench's public V100 GEMM timings; NCCL constants and link rates from "
      "NCCL's tuning model and datasheets; three parameters fitted by `scripts/paper_fit.py` (scipy "
      "bounded least squares, Cauchy loss) on all 32 published cells, each inside a documented range, nothing per "
      "model or per cell (see *The fit*).\n")
    w("## Published vs simulated TFLOPs/GPU\n")
    w("| IB | model | tokens/GPU | ZeRO-3 paper | ZeRO-3 sim | error | ZeRO++ paper | ZeRO++ sim | error "
      "| speedup paper | speedup sim | error |")
    w("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        c = r["cell"]
        w(f"| {c['ib']} | {c['model']} | {c['tokens_per_gpu']} | {r['p3']} | {r['s3']:.1f} | {pct(r['e3'])} | "
          f"{r['pp']} | {r['sp']:.1f} | {pct(r['ep'])} | {r['pp'] / r['p3']:.2f} | "
          f"{r['sp'] / r['s3']:.2f} | {pct(r['es'])} |")
    wc = worst[1]["cell"]
    tol = table["tolerance"]
    within = sum(abs(e) <= tol["tflops_rel"] for r in rows for e in (r["e3"], r["ep"]))
    w(f"\n**Mean absolute error over the 64 published throughputs: {100 * mean:.1f}%. Worst: IB: {wc['ib']} "
      f"{wc['model']} {wc['tokens_per_gpu']} tokens/GPU {worst[2]}, {100 * worst[0]:.1f}%.** "
      f"Speedup errors: mean {100 * sp_mean:.1f}%, worst {100 * sp_worst:.1f}%. {within} of the 64 "
      f"throughputs are within {100 * tol['tflops_rel']:.0f}%. Issue 45's targets, one tolerance for "
      f"every cell (mean {100 * tol['mean_tflops_rel']:.0f}%, worst {100 * tol['tflops_rel']:.0f}%, every "
      f"speedup {100 * tol['speedup_rel']:.0f}%), are **not met**: DeepSpeed's identified fetch "
      "mechanisms do not produce the cost the tables show, and no term without a mechanism is "
      "shipped (see *Assumptions*). The paper check reports every miss.\n")
    over = {(r["cell"]["model"], r["cell"]["tokens_per_gpu"], name): (r["cell"], name,
                                                                     d["memory"]["peak_bytes_per_gpu"])
            for r in rows for name, d in (("ZeRO-3", r["z3"]), ("ZeRO++", r["zp"])) if not d["memory"]["fits"]}
    for c, name, peak in over.values():
        w(f"**Memory:** the memory model puts {c['model']} at {c['tokens_per_gpu']} tokens/GPU with "
          f"{name} at {peak / 2**30:.2f} GiB per GPU, over the V100's 32 GiB, although the paper "
          "ran it (the paper check fails on it). The step is still simulated; the result carries "
          "the warning.\n")
    if not over:
        peak, c, name = max(((d["memory"]["peak_bytes_per_gpu"], r["cell"], name)
                             for r in rows for name, d in (("ZeRO-3", r["z3"]), ("ZeRO++", r["zp"]))),
                            key=lambda x: x[0])
        w("**Memory:** every published configuration fits in the V100's 32 GiB, as the runs did (the "
          f"paper check asserts it). The tightest, {c['model']} at {c['tokens_per_gpu']} tokens/GPU "
          f"with {name} at {peak / 2**30:.2f} GiB per GPU, includes the profile's memory reserve "
          "(`memory_reserved_bytes`, 1 GiB: the CUDA context, NCCL buffers and fragmentation at "
          "their documented sizes, not chosen from this run); see the hpZ memory table below.\n")
    w("## The fit\n")
    w("| parameter | fitted | range | at bound | meaning | evidence for the range |")
    w("|---|---|---|---|---|---|")
    for f, ab in zip(fit["free"], fit["all"]["at_bound"]):
        w(f"| `{f['name']}` | {fv[f['name']]:.4g} | {f['range'][0]:g}-{f['range'][1]:g} | "
          f"{'yes' if ab else 'no'} | {f['meaning']} | {f['evidence']} |")
    a = fit["all"]
    w(f"\nFit on all 32 cells ({a['evaluations']} evaluations): mean |error| {100 * a['mean_abs_error']:.1f}%, "
      f"worst {100 * a['worst_abs_error']:.1f}%; speedups mean {100 * a['mean_abs_speedup_error']:.1f}%, worst "
      f"{100 * a['worst_abs_speedup_error']:.1f}% (the shipped profile rounds the values; the table above is "
      "what it gives).\n")
    w("### Cross-validation\n")
    w("| fold | fitted values (network eff., quant. fraction, host us/op) | train mean | "
      "predicted mean | predicted worst | predicted worst speedup |")
    w("|---|---|---|---|---|---|")
    for cv in fit["cross_validation"]:
        vals = ", ".join(f"{v:.4g}" for v in cv["values"].values())
        w(f"| {cv['fold']} | {vals} | {100 * cv['train']['mean_abs_error']:.1f}% | "
          f"{100 * cv['test']['mean_abs_error']:.1f}% | {100 * cv['test']['worst_abs_error']:.1f}% | "
          f"{100 * cv['test']['worst_abs_speedup_error']:.1f}% |")
    w("\n### Sensitivity\n")
    w("Mean |error| over the 64 throughputs when one parameter moves by a tenth of its range from the "
      "all-cell fit (the others fixed).\n")
    w("| parameter | step | mean at -step | mean at +step |")
    w("|---|---|---|---|")
    for sv in fit["sensitivity"]:
        w(f"| `{sv['name']}` | {sv['step']:.3g} | {100 * sv['minus']['mean_abs_error']:.1f}% | "
          f"{100 * sv['plus']['mean_abs_error']:.1f}% |")
    if "correlation" in fit:
        names, m = fit["correlation"]["names"], fit["correlation"]["matrix"]
        w("\nCorrelation of the fitted parameters' estimates (from the 64 log-errors' Jacobian at the "
          "fit; a pair near +-1 would be determined only together by the cells):\n")
        w("| | " + " | ".join(f"`{n}`" for n in names) + " |")
        w("|---" * (len(names) + 1) + "|")
        for a, n in enumerate(names):
            w(f"| `{n}` | " + " | ".join(f"{m[a][b]:+.2f}" for b in range(len(names))) + " |")
    w("\n## Where each speedup comes from\n")
    w("Seconds per step. `compute` = forward + backward + recompute on the compute stream; `fetch` = "
      "time the compute stream waited on DeepSpeed's re-assembly of gathered parameters alone (its "
      "host dispatch, `host_op_us` per op, and the cat); the `exposed` columns are time "
      "the compute stream waited on that collective kind or on quantization kernels (DeepSpeed runs "
      "them on the gather and reduce streams).\n")
    w("| IB | model | tokens | strategy | step | compute | fetch | exposed all-gather | exposed reduce-scatter | "
      "exposed all-to-all | exposed kernels |")
    w("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        c = r["cell"]
        z3, zp = breakdown_row(r)
        for name, p in (("ZeRO-3", z3), ("ZeRO++", zp)):
            w(f"| {c['ib']} | {c['model']} | {c['tokens_per_gpu']} | {name} | " +
              " | ".join(f"{x:.2f}" for x in p) + " |")
    w("\nReading: ZeRO-3's step is compute, the exposed re-assembly, the weight all-gathers it "
      "waits for (no prefetch: the forward's, each checkpointed layer's recompute's, and the "
      "backward's of the submodules DeepSpeed's reuse distance released after their recompute) and "
      "the part of the reduce-scatter the backward cannot hide; ZeRO++ "
      "halves the all-gather bytes (qwZ), moves the backward hooks' "
      "gathers into the node (hpZ; the recomputes run the forward hooks and gather across nodes) "
      "and replaces the reduce-scatter by qgZ's all-to-alls. The speedup falls from 1K to 2K tokens "
      "because compute grows while the communication saved does not.\n")
    w("## Assumptions\n")
    w("- The paper does not publish its DeepSpeed configs. The tutorial's are used with weight "
      "prefetching off (`stage3_prefetch_bucket_size: 0`) because the published tables show no "
      "overlap of the weight gathers with compute: for gpt-49b to gpt-138b, ZeRO-3's step grows from "
      "IB: 4 to IB: 1 by the whole communication time of its three collectives at 0.92-0.98 of line "
      "rate, and from 1K to 2K tokens by the whole added compute.")
    am, aw = alt[1], alt[2]
    w(f"- With DeepSpeed's default prefetch (5e7 elements) and the same profile the simulator "
      f"overlaps the gathers and gives a mean error of {100 * am:.1f}% (worst {100 * aw[0]:.1f}%). "
      "Refitted with the default prefetch, the best plausible profile reaches a mean of 6.3% (worst "
      "25.9%, worst speedup 12.5%) with the network efficiency and the quantization fraction at their "
      "lower bounds (0.8, 0.3; `scripts/paper_fit.py --deepspeed` with the paper's configs less "
      "`stage3_prefetch_bucket_size`), so the fit depends on this assumption; it is stated here "
      "rather than hidden in a parameter.")
    # Configurations the default prefetch would not fit (memory does not depend on the bandwidth).
    over = {}
    for r in alt[0]:
        for name, z in (("ZeRO-3", r["z3"]), ("ZeRO++", r["zp"])):
            if not z["memory"]["fits"]:
                over[(r["cell"]["model"], r["cell"]["tokens_per_gpu"], name)] = z["memory"]
    gib = 2 ** 30
    for (model, tokens, name), m in sorted(over.items()):
        w(f"- The memory model agrees: with the default prefetch, {model} at {tokens} tokens/GPU "
          f"with {name} needs {m['peak_bytes_per_gpu'] / gib:.2f} GiB per GPU, "
          f"{(m['peak_bytes_per_gpu'] - m['components']['reserved']) / gib:.2f} GiB without any "
          f"memory reserve, more than the V100's {m['capacity_bytes'] / gib:.0f} GiB its published "
          "runs had (the weights prefetched in FP16 and INT8 add the largest module's).")
    def span(errs):  # "a-b%" over the magnitudes of relative errors
        m = sorted(abs(e) for e in errs)
        return f"{100 * m[0]:.0f}-{100 * m[-1]:.0f}%"

    def where(keep):  # the rows whose cell passes keep(cell)
        return [r for r in rows if keep(r["cell"])]

    w("- DeepSpeed's default `stage3_max_reuse_distance` (1e9) decides which submodules a "
      "checkpointed layer's backward gathers again after its recompute: none for gpt-18b "
      "(18 h^2 < 1e9), the QKV and attention output projections for the larger models (a third of "
      "each layer), and also the first MLP projection once 8 h^2 >= 1e9 (h >= 11181). "
      "`workloads/gpt-138b.json` takes the shape shared/paper assumes (76 layers, h = 12288: two "
      "thirds of each layer re-gathered), so its ZeRO-3 cells are slower than gpt-91b's, where the "
      "published ones are equal.")
    w("- hpZ as DeepSpeed runs it: stage 3's gather takes the secondary (intra-node) group only when "
      "called from a backward hook. A checkpointed layer's recompute runs the forward hooks, so it "
      "gathers from the primary partition across nodes (INT8 under qwZ), which shared/paper's "
      "description of hpZ (backward gathers inside the node) does not say. The tables agree: for "
      "the larger models ZeRO++'s cross-node volume is 1.3-1.6 M (reports/paper-decomposition.md), "
      "one INT8 forward gather, one INT8 recompute gather and the INT4 reduction (1.25 M), not "
      "0.75 M. Refitted with the recompute reading the secondary copy: mean 7.1%, worst 27.9%, "
      "worst speedup 24.8%.")
    w("- **Finding: IB: 4 behaves as 2.5 times IB: 1, not 4 times.** The worst cells are IB: 4's "
      "(ZeRO-3 of gpt-49b to gpt-138b 27-40% too fast) while the same models' IB: 1 cells sit within "
      "9%; the decomposition's token-independent time per billion parameters is 0.26 s (ZeRO-3) and "
      "0.13 s (ZeRO++) at IB: 4 against 0.68 and 0.32 s at IB: 1, a ratio of 2.4-2.6. With the IB: 4 "
      "cells at 62.5 Gb/s per NIC the refit (`scripts/paper_fit.py --ib4-nic-gbps 62.5`, a "
      "diagnostic never written to the profile) gives mean 6.0%, worst 32.1% (gpt-18b IB: 1), "
      "speedups mean 7.1%, worst 23.5%, no parameter on a bound (0.809, 0.307, 2.58 us); every "
      "throughput but gpt-18b's IB: 1 ones within 9.7% (mean 4.0%). No modelled mechanism caps a "
      "DGX-2 node's four NICs at about 25 GB/s; candidates (NCCL staging sends through host memory "
      "behind shared PCIe uplinks, fewer ring channels than NICs) are in docs/step-model.md, to be "
      "settled by nccl-tests on DGX-2 nodes with 1 and 4 HCAs.")
    w("- **The targets are missed; no term without a mechanism is shipped.** The tables show a "
      "cost independent of bandwidth and micro-batch, proportional to the model (0.12 s per billion "
      "parameters for ZeRO-3 and 0.08 for ZeRO++; 2.2 s for gpt-18b, 16.6 s for gpt-138b under "
      "ZeRO-3). DeepSpeed's fetch path costs, per gathered parameter, a host dispatch of 2 x ranks "
      "+ 2 eager ops (partition_parameters.py AllGatherCoalescedHandle.wait) and a copy of its bytes "
      "(the cat). The dispatch scales with tensors x ranks, not parameters (gpt-138b about 2.5 times "
      "gpt-18b's ops per step, where the tables need 7.7 times the time), and overlaps the gather "
      "in flight and the previous module's compute. Per gathered byte DeepSpeed 0.10.0's gather "
      "path (partition_parameters.py all_gather_coalesced, the handle's wait, free_param) makes one "
      "device copy, the cat: about 5 FP16 bytes gathered per parameter per step need 0.024 ns per "
      "byte (42 GB/s), a read and write at the V100 copy rate (765 GB/s) costs 0.0026 ns, nine "
      "times too little; a fall-back list all_gather's copy-out (deepspeed/comm, not among the "
      "reference files) would double it, still 4.6 times too little. Its "
      "ZeRO++ / ZeRO-3 ratio (hpZ's backward over 16 ranks: 0.68) matches the tables' 0.67. A cost "
      "of 0.035 ns per gathered byte serial with compute reaches mean 4.5% on these cells; it has "
      "no mechanism in DeepSpeed's code and is not modelled (docs/step-model.md, 'The V100 fit').")
    w("- The cells are simulated under DeepSpeed 0.10.0's rules (`--deepspeed-version 0.10.0`: hpZ's "
      "copy serves the backward hooks only). Refitted under 0.13.2's rules (the recompute and every "
      "later gather reading the copy; `scripts/paper_fit.py --deepspeed-version 0.13.2`, its "
      "all-cell fit): mean 22.6%, worst 54.5%, worst speedup 64.9%, the network "
      "efficiency and quantization fraction again on their lower bounds. gpt-18b's IB: 1 ZeRO++ "
      "cells need the recompute inside the node, the larger models' cells the recompute across "
      "nodes: no one release's rules reproduce both with this model.")
    small = [e for r in where(lambda c: c["model"] == "gpt-18b" and c["ib"] == 1)
             for e in (r["e3"], r["ep"])]
    w(f"- The gpt-18b cells at IB: 1 (ZeRO-3 and ZeRO++ {span(small)}). The "
      "published gpt-18b runs lost almost nothing from IB: 4 to IB: 1 with ZeRO++ (35 to 31 and 53 "
      "to 46 TFLOPs): at 1K tokens their cross-node bytes at 100 Gbps line rate (45 GB per node, "
      "3.6 s) plus the compute (1.6 s) exceed the published step (4.9 s). With the published "
      "values' rounding (+-0.5 TFLOPs), its 1K and 2K cells allow at most 0.66 s more "
      "token-independent time at IB: 1 than at IB: 4, at most 11 GB per node per step at line "
      "rate, less than one INT8 forward gather (17.7 GB into each node); and its step grows by "
      "1.56-1.86 s per added 1K tokens at IB: 1, no less than at IB: 4, so it did not hide "
      "communication under compute either (docs/step-model.md). Running gpt-18b with DeepSpeed's "
      "default prefetch and "
      "the larger models without (refitted) brings its IB: 1 cells within 9% but makes its IB: 4 "
      "cells 27-40% too fast. "
      "No configuration shared by gpt-18b's two bandwidths reproduces both.\n")
    w("## Predictions\n")
    w(f"Predictions of the evaluation's other points (384 GPUs at 2 and 8 x 100 Gbps, the tutorial's "
      f"4-node run at 1-8 x 100 Gbps, each technique alone) were committed before any comparison: "
      f"`reports/paper-predictions.md`, generated at commit `{pred['commit']}` (first written at "
      f"`ead9a17`; regenerated with the model as it is, still with no published value of those "
      f"points in this repository).\n")
    w("### hpZ memory cost (384 GPUs, k = 16)\n")
    w("| model | hpZ secondary partition per GPU | peak per GPU ZeRO-3 | peak per GPU ZeRO++ | "
      "fits in 32 GiB |")
    w("|---|---|---|---|---|")
    for m in models:
        for t in (1024, 2048):
            a = mem[(m, t, "zero3")]["memory"]
            b = mem[(m, t, "zeropp")]["memory"]
            w(f"| {m} ({t} tokens) | {b['components']['hpz_secondary'] / 2**30:.2f} GiB | "
              f"{a['peak_bytes_per_gpu'] / 2**30:.2f} GiB | {b['peak_bytes_per_gpu'] / 2**30:.2f} GiB"
              f" | {'yes' if b['fits'] else 'no'} |")
    text = "\n".join(md) + "\n"
    os.makedirs(os.path.join(ROOT, "reports"), exist_ok=True)
    write_atomic(os.path.join(ROOT, "reports/paper-reproduction.md"), text)
    write_atomic(os.path.join(ROOT, "reports/paper-reproduction.html"), to_html(text, rows))
    print(f"mean {100 * mean:.2f}% worst {100 * worst[0]:.2f}% speedup mean {100 * sp_mean:.2f}% "
          f"worst {100 * sp_worst:.2f}%")


def write_atomic(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def bar_chart(rows):
    """Grouped bars: published vs simulated TFLOPs per cell and strategy (inline SVG)."""
    bw, gap, h, top = 9, 14, 220, 10
    items = []
    for r in rows:
        c = r["cell"]
        items.append((f"IB{c['ib']} {c['model'][4:]} {c['tokens_per_gpu'] // 1024}K", r["p3"], r["s3"], r["pp"],
                      r["sp"]))
    width = len(items) * (4 * bw + gap) + 60
    vmax = max(max(i[1:]) for i in items) * 1.1
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{h + 50}" '
           'font-family="sans-serif" font-size="11">']
    colors = ["#9ecae1", "#3182bd", "#fdae6b", "#e6550d"]
    for i, (label, *vals) in enumerate(items):
        x0 = 50 + i * (4 * bw + gap)
        for j, v in enumerate(vals):
            bh = h * v / vmax
            out.append(f'<rect x="{x0 + j * bw}" y="{top + h - bh:.1f}" width="{bw - 1}" '
                       f'height="{bh:.1f}" fill="{colors[j]}"><title>{v:.1f}</title></rect>')
        out.append(f'<text x="{x0}" y="{top + h + 14}">{html.escape(label)}</text>')
    for v in range(0, int(vmax) + 1, 10):
        y = top + h - h * v / vmax
        out.append(f'<text x="20" y="{y + 4:.1f}">{v}</text>'
                   f'<line x1="45" x2="{width}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>')
    legend = ["ZeRO-3 paper", "ZeRO-3 sim", "ZeRO++ paper", "ZeRO++ sim"]
    for j, name in enumerate(legend):
        out.append(f'<rect x="{50 + j * 110}" y="{top + h + 26}" width="10" height="10" '
                   f'fill="{colors[j]}"/><text x="{64 + j * 110}" y="{top + h + 35}">{name}</text>')
    out.append("</svg>")
    return "\n".join(out)


def to_html(md_text, rows):
    """Minimal Markdown (headings, paragraphs, lists, pipe tables, bold, code) to HTML."""
    import re

    def inline(s):
        s = html.escape(s)
        s = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", s)
        s = re.sub(r"\*(.+?)\*", r"<em>\1</em>", s)
        return re.sub(r"`(.+?)`", r"<code>\1</code>", s)

    out = ['<!DOCTYPE html><html><head><meta charset="utf-8"><title>ZeRO++ paper reproduction'
           '</title><style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;'
           'line-height:1.4}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;'
           'padding:2px 6px;text-align:right}th{background:#f3f3f3}code{background:#f6f6f6}'
           '</style></head><body>']
    lines = md_text.split("\n")
    i = 0
    chart_done = False
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            out.append(f"<h{level}>{inline(line[level:].strip())}</h{level}>")
            if line.startswith("## Published") and not chart_done:
                out.append(bar_chart(rows))
                chart_done = True
        elif line.startswith("|"):
            rows_md = []
            while i < len(lines) and lines[i].startswith("|"):
                rows_md.append([c.strip() for c in lines[i].strip("|").split("|")])
                i += 1
            out.append("<table><tr>" + "".join(f"<th>{inline(c)}</th>" for c in rows_md[0]) + "</tr>")
            for r in rows_md[2:]:
                out.append("<tr>" + "".join(f"<td>{inline(c)}</td>" for c in r) + "</tr>")
            out.append("</table>")
            continue
        elif line.startswith("- "):
            out.append("<ul>")
            while i < len(lines) and lines[i].startswith("- "):
                out.append(f"<li>{inline(lines[i][2:])}</li>")
                i += 1
            out.append("</ul>")
            continue
        elif line.strip():
            out.append(f"<p>{inline(line)}</p>")
        i += 1
    out.append("</body></html>")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
