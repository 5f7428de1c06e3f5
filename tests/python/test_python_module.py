#!/usr/bin/env python3
"""The Python module against the CLI: a result's typed fields, its JSON equal byte for byte to
`zerosim simulate --json`, a sweep's rows in a pandas DataFrame equal to single simulations, and bad
input raising ValueError with the CLI's message. Usage: test_python_module.py ZEROSIM_CLI (PYTHONPATH
holds the built module). Exit 77 (CTest: skipped) without pandas."""
import pathlib
import subprocess
import sys

import zerosim

try:
    import pandas
except ImportError:
    print("python3-pandas is not installed: skipped")
    sys.exit(77)

cli = sys.argv[1]
root = pathlib.Path(__file__).resolve().parents[2]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAILED:", what)


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
                     deepspeed=str(root / "workloads/deepspeed/published/axolotl-zero3_bf16_cpuoffload_all.json"))
check(o.offload is not None and o.offload.h2d_bytes_per_gpu > 0 and o.breakdown.host_optimizer_s > 0,
      "ZeRO-Offload: bytes and CPU Adam")
ob = o.breakdown
check(abs(ob.compute_s + ob.recompute_s + ob.optimizer_s + ob.param_fetch_s + ob.exposed_comm.total_s +
          ob.exposed_kernels_s + ob.exposed_offload_s + ob.idle_s - o.step_time_s) <= 1e-9 * o.step_time_s,
      "offload breakdown adds up to the step")

version = subprocess.run([cli, "--version"], check=True, capture_output=True, text=True).stdout
check(version.splitlines()[0] == "zerosim " + zerosim.__version__, "__version__ is the CLI's --version")
check(r.scenario.strategy.dtype == "bf16", "flags on an H100 train in BF16")
check(r.scenario.attention == "flash", "llama-3-8b on an H100 runs FlashAttention (auto)")
eager = zerosim.simulate(cluster="dgx-h100", nodes=4, model="llama-3-8b", strategy="zeropp",
                         attention="eager", tier="analytic")
check(eager.scenario.attention == "eager", "attention='eager' is simulated as asked")

cmd = [cli, "simulate", "--cluster", "dgx-h100", "--nodes", "4", "--model", "llama-3-8b",
       "--strategy", "zeropp", "--json"]
out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
check(r.to_json() + "\n" == out, "to_json() is the CLI's --json text, byte for byte")

rows = zerosim.sweep(cluster="dgx2-v100", nodes=4, model="gpt-18b", nics_per_node=[1, 4],
                     strategy=["zero3", "zeropp"], tier="analytic", threads=2)
df = pandas.DataFrame(rows)
check(len(df) == 4, "2 x 2 rows")
check(list(df["strategy"]) == ["zero3", "zeropp", "zero3", "zeropp"], "sweep order: last axis fastest")
one = zerosim.simulate(cluster="dgx2-v100", nodes=4, model="gpt-18b", nics_per_node=4,
                       strategy="zeropp", tier="analytic")
check(df.iloc[3]["step_time_s"] == one.step_time_s, "a sweep row equals simulate()")
check(one.row() == rows[3], "row() is the sweep's row")

for kwargs, needle in [({"cluster": "dgx-h100", "nodes": 0, "model": "gpt-18b"}, "--nodes"),
                       ({"cluster": "dgx-h100", "model": "gpt-18b", "strategy": "zero4"}, "--strategy"),
                       ({"cluster": "dgx-h100", "model": "gpt-18b", "colour": "red"}, "--colour"),
                       ({"cluster": "dgx-h100", "model": "gpt-18b", "attention": "sdpa"}, "--attention"),
                       ({"cluster": "dgx-h100", "model": "gpt-18b", "nodes": [1, 2]}, "sweep()")]:
    try:
        zerosim.simulate(**kwargs)
        check(False, f"{kwargs} raises")
    except ValueError as e:
        check(needle in str(e), f"the error of {kwargs} names {needle}: {e}")

print(f"{len(failures)} failures")
sys.exit(1 if failures else 0)
