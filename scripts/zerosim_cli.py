"""Runs `zerosim simulate --json` for the report scripts.

A configuration that does not fit in GPU memory still prints its result, then exits 2: that result
is returned like any other (its memory.fits is false). Anything else that fails ends the script with
the command and zerosim's message.
"""
import json
import subprocess
import sys


def simulate_json(cmd):
    """cmd: the zerosim command line (a list) including "simulate" and "--json"."""
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode == 2 and out.stdout.lstrip().startswith("{"):
        result = json.loads(out.stdout)
        if result.get("memory", {}).get("fits") is False:
            return result
    if out.returncode:
        sys.exit(f"{' '.join(cmd)} failed ({out.returncode}):\n{out.stderr}")
    return json.loads(out.stdout)
