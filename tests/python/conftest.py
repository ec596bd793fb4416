"""Shared fixtures: where the engine binary and the corpus are.

CPU mode runs Triton kernels in Triton's interpreter, which @triton.jit chooses
when it decorates: TRITON_INTERPRET must be set before anything imports triton.
"""

import os

os.environ.setdefault("TRITON_INTERPRET", "1")
import contextlib  # noqa: E402
import json  # noqa: E402
import pathlib  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpus"
TEST_DEVICE = os.environ.get("KERNELOPT_TEST_DEVICE", "cpu")


def _gpu_tier_runs() -> bool:
    if os.environ.get("KERNELOPT_TEST_DEVICE") != "cuda" or os.environ.get("TRITON_INTERPRET") == "1":
        return False
    import torch

    return torch.cuda.is_available()


# The GPU tier's tests (docs/testing.md) run only when asked for, on a CUDA machine, outside the interpreter.
gpu_tier = pytest.mark.skipif(not _gpu_tier_runs(),
                              reason="GPU tier: KERNELOPT_TEST_DEVICE=cuda TRITON_INTERPRET=0 on a CUDA machine")


def engine_binary() -> str:
    """$KERNELOPT_BIN, else `kernelopt` on PATH, else build/engine/kernelopt."""
    for cand in (os.environ.get("KERNELOPT_BIN"), shutil.which("kernelopt"), str(ROOT / "build/engine/kernelopt")):
        if cand and os.path.exists(cand):
            return cand
    pytest.fail("kernelopt binary not found: run ./setup.sh, or set KERNELOPT_BIN")


@pytest.fixture(scope="session")
def kernelopt_bin() -> str:
    return engine_binary()


def candidate_manifest(kernelopt_bin, bundle, out, device=TEST_DEVICE) -> dict:
    """`kernelopt candidates BUNDLE -o OUT` (on the test device unless given): the manifest of every candidate
    the built-in coder proposes (none run)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    r = subprocess.run([kernelopt_bin, "candidates", str(bundle), "-o", str(out), "--device", device, "-q"],
                       capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stderr
    return json.loads((pathlib.Path(out) / "manifest.json").read_text())


def verify_gates(kernelopt_bin, bundle, kernel, candidate, db, seeds=1, timeout=900, device=TEST_DEVICE) -> dict:
    """`kernelopt verify --json` of one candidate file for `kernel` of `bundle` (on the test device unless
    given), results in the database `db`: the gates by name."""
    env = dict(os.environ, KERNELOPT_DB=str(db), PYTHONPATH=str(ROOT / "python"))
    v = subprocess.run([kernelopt_bin, "verify", str(bundle), "--kernel", kernel, "--candidate", str(candidate),
                        "--device", device, "--json", "-q", "--seeds", str(seeds)],
                       capture_output=True, text=True, timeout=timeout, env=env)
    assert v.stdout.strip(), v.stderr
    return {g["gate"]: g for g in json.loads(v.stdout)["gates"]}


def corpus_bundles():
    return sorted(p.parent for p in CORPUS.glob("*/meta.json"))


@contextlib.contextmanager
def worker_process(device: str):
    """A worker (`python -m kernelopt.worker`) on `device` over its JSON-lines protocol: yields
    ask(op, **fields) -> reply. In CPU mode its kernels run in Triton's interpreter; no memory cap
    of the environment is inherited (tests set the budget through the `memory` op)."""
    env = dict(os.environ, KERNELOPT_DEVICE=device, PYTHONPATH=str(ROOT / "python"))
    env.pop("KERNELOPT_WORKER_MEMORY", None)
    if device == "cpu":
        env["TRITON_INTERPRET"] = "1"
    else:
        env.pop("TRITON_INTERPRET", None)
    p = subprocess.Popen([sys.executable, "-m", "kernelopt.worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True, env=env)
    n = [0]

    def ask(op, **kw):
        n[0] += 1
        p.stdin.write(json.dumps({"id": n[0], "op": op, **kw}) + "\n")
        p.stdin.flush()
        reply = json.loads(p.stdout.readline())
        assert reply["id"] == n[0]
        return reply

    try:
        yield ask
    finally:
        p.stdin.close()
        p.wait(timeout=60)
