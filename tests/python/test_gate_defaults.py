"""The worker's default tolerances (compare.py's DEFAULT_TOLERANCES, used when a request carries none) are the
engine's (verify::Tolerances in engine/src/verify/cascade.h), read from what `kernelopt verify --help` and
`kernelopt optimize --help` show as defaults: a change on either side alone fails here. docs/gates.md's table
against the engine's struct is kopt_tests' GateDefaults.DocsTableStatesCascadeOptions."""

import re
import subprocess

import pytest
import torch

from kernelopt.worker.measure import compare

FLAGS = {"fp32": (torch.float32, torch.float64), "half": (torch.float16, torch.bfloat16)}


def help_defaults(kernelopt_bin: str, command: str) -> dict[str, float]:
    """--flag -> the default its help line shows (`--atol-fp32 FLOAT:NONNEGATIVE=0.0001`)."""
    r = subprocess.run([kernelopt_bin, command, "--help"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    number = r"^\s+(--[\w-]+) \S*?=([-+.0-9eE]+)(?=\s|$)"  # flags whose default is a number
    return {m.group(1): float(m.group(2)) for m in re.finditer(number, r.stdout, re.M)}


@pytest.mark.parametrize("command", ["verify", "optimize"])
def test_worker_default_tolerances_are_the_engines(kernelopt_bin, command):
    shown = help_defaults(kernelopt_bin, command)
    for kind, dtypes in FLAGS.items():
        engine = (shown[f"--atol-{kind}"], shown[f"--rtol-{kind}"])
        for dtype in dtypes:
            assert compare.DEFAULT_TOLERANCES[dtype] == engine, (command, kind, dtype)
    # Every floating dtype the worker compares with a tolerance has its default from one of the two pairs.
    assert set(compare.DEFAULT_TOLERANCES) == {d for ds in FLAGS.values() for d in ds}


def test_verify_and_optimize_show_the_same_gate_defaults(kernelopt_bin):
    verify, optimize = help_defaults(kernelopt_bin, "verify"), help_defaults(kernelopt_bin, "optimize")
    shared = ["--seeds", "--gamma", "--atol-fp32", "--rtol-fp32", "--atol-half", "--rtol-half", "--timeout"]
    assert {f: verify[f] for f in shared} == {f: optimize[f] for f in shared}
    assert "--reps" in verify and "--reps" not in optimize
