#!/usr/bin/env python3
"""The Python module against the CLI: a result's typed fields, its JSON equal byte for byte to
`zerosim simulate --json`; sweep(), plan(), collective() and report() equal to the CLI's sweep,
plan, collective and report output; a sweep that keeps going past a bad combination; signatures,
docstrings and __repr__; bad input raising ValueError / TypeError in Python's words; total and
active parameters against their closed forms. Usage: test_python_module.py ZEROSIM_CLI (PYTHONPATH
holds the built module). Exit 77 (CTest: skipped) without pandas."""
import inspect
import json
import pathlib
import subprocess
import sys
import tempfile

import zerosim

try:
    import pandas
except ImportError:
    print("python3-pandas is not installed: skipped")
    sys.exit(77)

cli = sys.argv[1]
root = pathlib.Path(__file__).resolve().parents[2]
scratch = pathlib.Path(tempfile.mkdtemp(prefix="zerosim-test-python-"))
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAILED:", what)


def run_cli(*args, ok=(0,)):
    p = subprocess.run([cli, *map(str, args)], capture_output=True, text=True)
    check(p.returncode in ok, f"zerosim {' '.join(map(str, args))}: exit {p.returncode} {p.stderr}")
    return p.stdout


def raises(exc, needle, fn, **kwargs):
    try:
        fn(**kwargs)
        check(False, f"{fn.__name__}({kwargs}) raises {exc.__name__}")
    except exc as e:
        check(needle in str(e), f"{fn.__name__}({kwargs}): '{e}' says '{needle}'")


# A result's fields, and its JSON against the CLI's.
r = zerosim.simulate(cluster="dgx-h100", nodes=4, model="llama-3-8b", strategy="zeropp")
check(isinstance(r, zerosim.StepResult), "simulate returns a StepResult")
check(r.scenario.world_size == 32 and r.scenario.gpus_per_node == 8, "world size 4 x 8")
check(r.scenario.model.name == "llama-3-8b", "model echo")
check(r.scenario.strategy.name == "zeropp" and r.scenario.strategy.qgz, "strategy echo")
b = r.breakdown
parts = (b.compute_s + b.recompute_s + b.optimizer_s + b.param_fetch_s + b.exposed_comm.total_s +
         b.exposed_kernels_s + b.idle_s)
check(abs(parts - r.step_time_s) <= 1e-9 * r.step_time_s, "breakdown adds up to the step")
check(r.tokens_per_s == r.scenario.world_size * r.scenario.tokens_per_gpu / r.step_time_s,
      "tokens/s = GPUs x tokens / step")
check(set(r.comm.by_collective) >= {"all_gather", "all_to_all"}, "ZeRO++ gathers and all-to-alls")
check(r.offload is None and b.exposed_offload_s == 0, "nothing offloaded")
o = zerosim.simulate(cluster="dgx-h100", nodes=2, model="llama-3-8b", tier="analytic",
                     deepspeed=root / "workloads/deepspeed/published/axolotl-zero3_bf16_cpuoffload_all.json")
check(o.offload is not None and o.offload.h2d_bytes_per_gpu > 0 and o.breakdown.host_optimizer_s > 0,
      "ZeRO-Offload (deepspeed= a pathlib.Path): bytes and CPU Adam")
f = zerosim.simulate(cluster="dgx-a100", nodes=1, model="mpt-125m", tier="analytic", seq_len=2048,
                     tokens_per_gpu=2048, fsdp_config=root / "workloads/fsdp/llm-foundry-mpt-7b.yaml")
check(f.scenario.strategy.name == "fsdp" and f.scenario.activation_checkpointing and
      any("FSDP config" in w for w in f.warnings), "fsdp_config= an LLM Foundry YAML (a pathlib.Path)")
ob = o.breakdown
check(abs(ob.compute_s + ob.recompute_s + ob.optimizer_s + ob.param_fetch_s + ob.exposed_comm.total_s +
          ob.exposed_kernels_s + ob.exposed_offload_s + ob.idle_s - o.step_time_s) <= 1e-9 * o.step_time_s,
      "offload breakdown adds up to the step")

version = run_cli("--version")
check(version.splitlines()[0] == "zerosim " + zerosim.__version__, "__version__ is the CLI's --version")
check(r.scenario.strategy.dtype == "bf16", "flags on an H100 train in BF16")
check(r.scenario.attention == "flash", "llama-3-8b on an H100 runs FlashAttention (auto)")
eager = zerosim.simulate(cluster="dgx-h100", nodes=4, model="llama-3-8b", strategy="zeropp",
                         attention="eager", tier="analytic")
check(eager.scenario.attention == "eager", "attention='eager' is simulated as asked")
check(eager.scenario.sm_share, "SM sharing is on by default")
unshared = zerosim.simulate(cluster="dgx-h100", nodes=4, model="llama-3-8b", strategy="zeropp",
                            attention="eager", tier="analytic", sm_share=False)
check(not unshared.scenario.sm_share, "sm_share=False is simulated as asked")
check(unshared.step_time_s <= eager.step_time_s, "SM sharing never shortens an analytic step")

out = run_cli("simulate", "--cluster", "dgx-h100", "--nodes", "4", "--model", "llama-3-8b",
              "--strategy", "zeropp", "--json")
check(r.to_json() + "\n" == out, "to_json() is the CLI's --json text, byte for byte")
check(r.to_dict() == json.loads(out), "to_dict() is the CLI's --json document")
check(r.to_dataframe().iloc[0].to_dict() == r.row(), "to_dataframe() is row() in one row")
check(repr(r).startswith("StepResult(dgx-h100 x4 (32 GPUs), llama-3-8b, zeropp: step_time_s="),
      f"repr: {r!r}")

# Total and active parameters: Mixtral 8x7B's published 46.7B and 12.9B, and the 6 of 8 experts a
# token does not use (3 matrices of hidden x ffn each, in every layer) as their exact difference.
mix = zerosim.simulate(cluster="dgx-h100", nodes=4, model=root / "workloads/hf/mixtral-8x7b-v0.1.json",
                       tier="analytic")
m = mix.scenario.model
check(m.moe and round(m.total_params / 1e9, 1) == 46.7 and round(m.active_params / 1e9, 1) == 12.9,
      f"Mixtral 8x7B: {m.total_params} total, {m.active_params} active parameters")
check(m.total_params - m.active_params == (8 - 2) * 3 * 4096 * 14336 * 32, "experts not used")
check(mix.scenario.params == m.total_params and mix.row()["active_params"] == m.active_params,
      "params and active_params in the scenario and the row")
check(r.scenario.model.active_params == r.scenario.model.total_params == r.scenario.params,
      "a dense model: active == total")

# Signatures, docstrings, errors in Python's words.
sig = inspect.signature(zerosim.simulate)
check(all(p.kind == p.KEYWORD_ONLY for p in sig.parameters.values()), "keyword-only")
check(sig.parameters["nodes"].annotation == "int | None" and sig.parameters["nodes"].default is None,
      "nodes: int | None = None")
check(sig.parameters["model"].default is inspect.Parameter.empty, "model is required")
check(sig.parameters["deepspeed"].annotation == "str | os.PathLike | None" and
      sig.parameters["fsdp_config"].annotation == "str | os.PathLike | None" and
      sig.parameters["strategy"].annotation == "str | None", "paths where files are named")
check("number of server nodes" in zerosim.simulate.__doc__, "simulate's docstring has the flags' help")
check("threads" in inspect.signature(zerosim.sweep).parameters, "sweep(threads=...)")
for cls, prop in [(zerosim.StepResult, "step_time_s"), (zerosim.Scenario, "world_size"),
                  (zerosim.ModelShape, "active_params"), (zerosim.MemoryEstimate, "fits")]:
    check(bool(getattr(cls, prop).__doc__), f"{cls.__name__}.{prop} has a docstring")
raises(ValueError, "nodes must be an int in 1..1048576, got '2'", zerosim.simulate,
       cluster="dgx-h100", nodes="2", model="llama-3-8b")
raises(TypeError, "missing 1 required keyword-only argument: 'model'", zerosim.simulate,
       cluster="dgx-h100", nodes=2)
raises(TypeError, "unexpected keyword argument 'colour'", zerosim.simulate,
       cluster="dgx-h100", nodes=1, model="gpt-18b", colour="red")
raises(ValueError, "nodes must be an int in 1..1048576, got 0", zerosim.simulate,
       cluster="dgx-h100", nodes=0, model="gpt-18b")
raises(ValueError, "nic_gbps must be a number in 0.001..1e+06, got True", zerosim.simulate,
       cluster="dgx-h100", nodes=1, model="gpt-18b", nic_gbps=True)
raises(ValueError, "strategy: strategy 'zero4'", zerosim.simulate,
       cluster="dgx-h100", nodes=1, model="gpt-18b", strategy="zero4")
raises(ValueError, "attention must be 'auto', 'flash' or 'eager', got 'sdpa'", zerosim.simulate,
       cluster="dgx-h100", nodes=1, model="gpt-18b", attention="sdpa")
raises(ValueError, "fabric must be 'rail' or 'fat-tree', got 'fat-tre' (did you mean 'fat-tree'?)",
       zerosim.simulate, cluster="dgx-h100", nodes=1, model="gpt-18b", fabric="fat-tre")
raises(ValueError, "nodes takes one value in simulate(), got [1, 2] (sweep() takes lists)",
       zerosim.simulate, cluster="dgx-h100", model="gpt-18b", nodes=[1, 2])
raises(TypeError, "missing 1 required keyword-only argument: 'cluster'", zerosim.sweep, model="gpt-18b")
# What no node count fits is refused before its cluster is built, by simulate(), sweep() and plan().
raises(ValueError, "seq_len: the configuration does not fit in GPU memory on any number of nodes",
       zerosim.simulate, cluster="dgx-h100", nodes=4096, model="gpt-18b", seq_len=16777216)
unfit = zerosim.sweep(cluster="dgx-h100", nodes=2, model="gpt-18b", seq_len=[2048, 16777216],
                      tier="analytic", threads=1)
check(len(unfit) == 1 and len(unfit.invalid) == 1 and
      "on any number of nodes" in unfit.invalid[0]["error"], "sweep() lists the unfit scenario")
raises(ValueError, "no configuration of the 276 searched fits", zerosim.plan, cluster="dgx-h100",
       nodes=4096, model="gpt-18b", seq_len=16777216)
# A plan runs hundreds of steps of its cluster: past 131072 GPUs it is refused unbuilt, as by the CLI.
raises(ValueError, "1048576 GPUs, more than a plan's limit of 131072", zerosim.plan,
       cluster="dgx-h100", nodes=131072, model="gpt-18b")

# A sweep: its rows in a DataFrame equal to single simulations.
rows = zerosim.sweep(cluster="dgx2-v100", nodes=4, model="gpt-18b", nics_per_node=[1, 4],
                     strategy=["zero3", "zeropp"], tier="analytic", threads=2)
df = pandas.DataFrame(rows)
check(len(df) == 4 and df.equals(rows.to_dataframe()), "2 x 2 rows; DataFrame(sweep) == to_dataframe()")
check(list(df["strategy"]) == ["zero3", "zeropp", "zero3", "zeropp"], "sweep order: last axis fastest")
one = zerosim.simulate(cluster="dgx2-v100", nodes=4, model="gpt-18b", nics_per_node=4,
                       strategy="zeropp", tier="analytic")
check(df.iloc[3]["step_time_s"] == one.step_time_s, "a sweep row equals simulate()")
check(one.row() == rows[3] and one == rows.results[3], "row() is the sweep's row")
check(rows.invalid == [], "nothing invalid")

# A bad combination (hpZ groups of 3 do not divide 16 GPUs) is set aside; the rest runs, and both
# are the CLI sweep's.
sweep_args = ["--cluster", "dgx-h100", "--nodes", "2", "--model", "llama-3-8b", "--strategy",
              "zero3+hpz", "--hpz-size", "8,3", "--tier", "analytic"]
mixed = zerosim.sweep(cluster="dgx-h100", nodes=2, model="llama-3-8b", strategy="zero3+hpz",
                      hpz_size=[8, 3], tier="analytic")
run_cli("sweep", *sweep_args, "--out", scratch / "mixed.json", ok=(2,))
doc = json.loads((scratch / "mixed.json").read_text())
check(len(mixed) == 1 and [x.to_dict() for x in mixed.results] == doc["results"],
      "the valid scenario ran, as in the CLI's sweep")
check(len(mixed.invalid) == 1 and mixed.invalid[0]["scenario"] == doc["invalid"][0]["scenario"]
      and "hpz_size" in mixed.invalid[0]["error"] and "--" not in mixed.invalid[0]["error"],
      f"the invalid one, as the CLI's, its error said of keywords: {mixed.invalid}")
# Its error is the ValueError simulate() raises for that combination, word for word (no CLI
# "<command line>:" prefix), and so is a missing node count's.
for kw in (dict(cluster="dgx-h100", nodes=2, model="llama-3-8b", strategy="zero3+hpz", hpz_size=3,
                tier="analytic"), dict(cluster="dgx-h100", model="llama-3-8b", tier="analytic")):
    listed = zerosim.sweep(**kw).invalid
    try:
        zerosim.simulate(**kw)
        check(False, f"simulate({kw}) raises ValueError")
    except ValueError as e:
        check(len(listed) == 1 and listed[0]["error"] == str(e),
              f"sweep({kw}) lists simulate()'s ValueError: {listed} vs '{e}'")

# plan() against `zerosim plan`: the same document, table and DeepSpeed config.
plan_kw = dict(cluster="dgx-h100", nodes=2, model="llama-3-8b", micro_batches=[1, 2],
               activation_checkpointing=[True], confirm=2, threads=2)
plan_args = ["--cluster", "dgx-h100", "--nodes", "2", "--model", "llama-3-8b", "--micro-batches",
             "1,2", "--activation-checkpointing", "true", "--confirm", "2", "--threads", "2"]
p = zerosim.plan(**plan_kw)
run_cli("plan", *plan_args, "--out", scratch / "plan.json", "--emit-deepspeed", scratch / "ds.json")
check(p.to_dict() == json.loads((scratch / "plan.json").read_text()), "plan.to_dict() is the CLI's plan")
check(p.deepspeed_config() == json.loads((scratch / "ds.json").read_text()),
      "deepspeed_config() is --emit-deepspeed's")
check(str(p) == run_cli("plan", *plan_args), "str(plan) is the CLI's table")
recommended = p.to_dict()["recommended_rank"]
check(p.winner is not None and p.winner.result == p.ranked[recommended - 1].result and
      all(a.tokens_per_s >= b.tokens_per_s for a, b in zip(p.ranked[:2], p.ranked[1:2])) and
      repr(p).startswith("Plan("), "the winner is the plan's recommendation; ranked fastest first")
raises(ValueError, "qwz_bits must hold 4 or 8", zerosim.plan, cluster="dgx-h100", nodes=1,
       model="gpt-18b", qwz_bits=[6])

# collective() against `zerosim collective --json`.
coll = zerosim.collective(cluster="dgx-h100", nodes=2, op="all_reduce", min_bytes="1MiB",
                          max_bytes="64MiB", step_factor=8)
check(coll == json.loads(run_cli("collective", "--cluster", "dgx-h100", "--nodes", "2", "--op",
                                  "all_reduce", "--min-bytes", "1MiB", "--max-bytes", "64MiB",
                                  "--step-factor", "8", "--json")),
      "collective() is the CLI's --json document")
check([row["size_bytes"] for row in coll["rows"]] == [1 << 20, 8 << 20, 64 << 20], "its sizes")
raises(ValueError, "ranks", zerosim.collective, cluster="dgx-h100", nodes=1, op="all_reduce",
       bytes=1024, ranks=1)
raises(ValueError, "nodes: required with cluster dgx-h100", zerosim.simulate, cluster="dgx-h100",
       model="llama-3-8b")

# report() against `zerosim report`.
(scratch / "results.json").write_text(r.to_json() + "\n")  # report() names its document so
for fmt in ("md", "csv"):
    check(zerosim.report(r, format=fmt) == run_cli("report", scratch / "results.json", "--format", fmt),
          f"report(result, format={fmt!r}) is the CLI's")
check(zerosim.report(scratch / "mixed.json") == run_cli("report", scratch / "mixed.json"),
      "report(a results file)")
check(zerosim.report(mixed) == zerosim.report(mixed.results), "report(SweepResult) == report(list)")
check(zerosim.report(p, format="html").lstrip().lower().startswith("<!doctype html"), "report(plan) in HTML")
raises(ValueError, "format must be 'md', 'html' or 'csv', got 'pdf'", zerosim.report, results=r,
       format="pdf")

print(f"{len(failures)} failures")
sys.exit(1 if failures else 0)
