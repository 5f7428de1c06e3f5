"""`zerosim simulate --memory` prints DeepSpeed's ZeRO-3 estimator table exactly as DeepSpeed's own
code prints it: the functions estimate_zero3_model_states_mem_needs and
estimate_zero3_model_states_mem_needs_all_cold are taken from DeepSpeed's stage3.py (the reference
copy of a release, read with ast, no torch needed) and run on the total and largest-layer
parameter counts zerosim states, for several models and clusters; the printed table must equal
zerosim's line for line. Exit 77 (skipped) without the reference source.

Usage: deepspeed_estimator.py ZEROSIM STAGE3_PY
"""
import ast
import contextlib
import enum
import io
import os
import re
import subprocess
import sys

CASES = [
    ["--cluster", "dgx-h100", "--nodes", "1", "--model", "llama-2-70b", "--strategy", "zero3"],
    ["--cluster", "dgx2-v100", "--nodes", "24", "--model", "gpt-18b", "--strategy", "zeropp"],
    ["--cluster", "dgx-a100", "--nodes", "2", "--model", "llama-3-8b", "--strategy", "zero3+hpz"],
    ["--cluster", "dgx-h100", "--nodes", "4", "--model", "workloads/hf/mixtral-8x7b-v0.1.json",
     "--strategy", "zero3"],
    ["--cluster", "dgx-a100-40gb", "--nodes", "3", "--model", "mpt-7b", "--strategy", "zero3"],
]


class OffloadDeviceEnum(str, enum.Enum):  # deepspeed.runtime.zero.offload_config's
    none = "none"
    cpu = "cpu"
    nvme = "nvme"

    def __format__(self, spec):
        return format(self.value, spec)


def deepspeed_functions(stage3_py):
    tree = ast.parse(open(stage3_py).read())
    wanted = {"estimate_zero3_model_states_mem_needs",
              "estimate_zero3_model_states_mem_needs_all_cold"}
    body = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in wanted]
    assert len(body) == 2, f"{stage3_py}: {wanted} not found"
    scope = {"OffloadDeviceEnum": OffloadDeviceEnum}
    exec(compile(ast.Module(body=body, type_ignores=[]), stage3_py, "exec"), scope)
    return scope["estimate_zero3_model_states_mem_needs_all_cold"]


def main():
    zerosim, stage3_py = sys.argv[1], sys.argv[2]
    if not os.path.isfile(stage3_py):
        print(f"skipped: no DeepSpeed reference source at {stage3_py}")
        return 77
    all_cold = deepspeed_functions(stage3_py)
    failures = 0
    for case in CASES:
        args = [zerosim, "simulate", *case, "--tier", "analytic", "--memory"]
        out = subprocess.run(args, capture_output=True, text=True).stdout
        m = re.search(r"total_params (\d+), largest_layer_params (\d+)", out)
        assert m, f"{' '.join(case)}: no counts in\n{out}"
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            all_cold(total_params=int(m.group(1)), largest_layer_params=int(m.group(2)),
                     num_gpus_per_node=int(re.search(r" x (\d+) ", out).group(1)),
                     num_nodes=int(re.search(r" on (\d+) x ", out).group(1)))
        if buf.getvalue() not in out:
            failures += 1
            print(f"FAIL {' '.join(case)}: DeepSpeed prints\n{buf.getvalue()}zerosim printed\n{out}")
        else:
            print(f"ok {' '.join(case)}: {buf.getvalue().splitlines()[-2].strip()}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
