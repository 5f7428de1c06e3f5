#!/usr/bin/env python3
"""Validates result documents against docs/result-schema.json with the jsonschema package
(Debian's python3-jsonschema): every golden simulate result, every result of the golden sweep, and
a result the CLI writes now. Then checks that the schema refuses a document with an extra key, one
with a key missing and one with another schema_version, so the test can fail.
Usage: validate_schema.py ZEROSIM_CLI SOURCE_DIR. Exit 77 (CTest: skipped) without jsonschema."""
import copy
import json
import pathlib
import subprocess
import sys

try:
    import jsonschema
except ImportError:
    print("python3-jsonschema is not installed: skipped")
    sys.exit(77)

cli, root = sys.argv[1], pathlib.Path(sys.argv[2])
schema = json.loads((root / "docs/result-schema.json").read_text())
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)

docs = {}
golden = root / "tests/golden/expected"
for path in sorted(golden.glob("simulate-*.json")):
    docs[path.name] = json.loads(path.read_text())
for i, r in enumerate(json.loads((golden / "sweep-dgx2-nics-strategies.json").read_text())["results"]):
    docs[f"sweep result {i}"] = r
out = subprocess.run([cli, "simulate", "--cluster", "dgx-h100", "--nodes", "2", "--model", "llama-3-8b",
                      "--strategy", "zero3+hpz", "--tier", "analytic", "--json"],
                     check=True, capture_output=True, text=True, cwd=root).stdout
docs["simulate now"] = json.loads(out)
# Architectures with the model's "arch": MoE (Mixtral) and MLA with shared experts (DeepSeek).
for name in ("mixtral-8x7b-v0.1", "deepseek-v2-lite"):
    out = subprocess.run([cli, "simulate", "--cluster", "dgx-h100", "--nodes", "2", "--model",
                          f"workloads/hf/{name}.json", "--seq-len", "4096", "--tokens-per-gpu", "4096",
                          "--tier", "analytic", "--json"],
                         check=True, capture_output=True, text=True, cwd=root).stdout
    docs[f"simulate {name}"] = json.loads(out)
# ZeRO-Offload: the optional "offload" object, the strategy's devices and the breakdown's offload keys.
out = subprocess.run([cli, "simulate", "--cluster", "dgx-h100", "--nodes", "2", "--model", "llama-3-8b",
                      "--deepspeed", "workloads/deepspeed/published/axolotl-zero3_bf16_cpuoffload_all.json",
                      "--tier", "analytic", "--json"],
                     check=True, capture_output=True, text=True, cwd=root).stdout
docs["simulate offload"] = json.loads(out)
assert "offload" in docs["simulate offload"] and "exposed_offload_s" in docs["simulate offload"]["breakdown"]
# ZeRO stages 1 and 2 (the parameter_all_gather phase), HSDP and FSDP2 on a 2-D mesh
# (strategy.shard_size).
for strategy in ("zero1", "zero2", "hsdp", "fsdp2 --hsdp-size 8"):
    out = subprocess.run([cli, "simulate", "--cluster", "dgx-h100", "--nodes", "2", "--model", "llama-3-8b",
                          "--strategy", *strategy.split(), "--tier", "analytic", "--json"],
                         check=True, capture_output=True, text=True, cwd=root).stdout
    docs[f"simulate {strategy}"] = json.loads(out)

failed = 0
for name, doc in docs.items():
    errors = list(validator.iter_errors(doc))
    for e in errors[:5]:
        print(f"{name}: {'/'.join(map(str, e.absolute_path))}: {e.message}")
    failed += bool(errors)
print(f"{len(docs) - failed} of {len(docs)} results follow docs/result-schema.json")

base = docs["simulate now"]
bad = {"extra key": copy.deepcopy(base), "missing key": copy.deepcopy(base),
       "other version": copy.deepcopy(base)}
bad["extra key"]["breakdown"]["gpu_s"] = 1.0
del bad["missing key"]["comm"]["flows"]
bad["other version"]["schema_version"] = 1
for name, doc in bad.items():
    if validator.is_valid(doc):
        print(f"the schema accepts a result with an {name}: it is not closed")
        failed += 1
sys.exit(1 if failed else 0)
