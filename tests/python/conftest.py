"""Shared fixtures: where the engine binary and the corpus are.

CPU mode runs Triton kernels in Triton's interpreter, which @triton.jit chooses
when it decorates: TRITON_INTERPRET must be set before anything imports triton.
"""

import os

os.environ.setdefault("TRITON_INTERPRET", "1")
import pathlib
import shutil

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpus"


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


def corpus_bundles():
    return sorted(p.parent for p in CORPUS.glob("*/meta.json"))
