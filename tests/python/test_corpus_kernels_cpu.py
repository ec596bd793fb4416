"""Every kernel of every corpus bundle, alone, in CPU mode: run on the real
arguments recorded from its launch inside the module, it leaves exactly what it
left there (outputs, in-place buffers, untouched inputs), within tolerance.
Together with test_cpu_runtime's whole-module check against eager, this is the
CPU acceptance of running bundles and single kernels."""

import os

import pytest
from conftest import corpus_bundles

os.environ["KERNELOPT_DEVICE"] = "cpu"
from kernelopt.worker import bundle_state  # noqa: E402
from kernelopt.worker.ops import bundle_ops  # noqa: E402


@pytest.mark.parametrize("bundle", corpus_bundles(), ids=lambda p: p.name)
def test_each_kernel_alone_reproduces_the_module(bundle):
    req = {"bundle": str(bundle)}
    base = bundle_ops.run_baseline(req)
    assert base["match"], base["comparison"]
    state = bundle_state.get_bundle(req)
    if not state.launches:
        pytest.fail("no Triton launches recorded") if state.modules[0].__kernel_vars__ else None
    for rec in state.launches:
        name = state.kernel_name(rec.graph, rec.kernel)
        r = bundle_ops.run_kernel(dict(req, graph=rec.graph, kernel=name, launch=rec.index))
        assert r["match"], (name, r["comparison"])
        assert r["isolated_vs_module"]["ok"], (name, r["isolated_vs_module"])
    # Free the bundle's recorded tensors before the next one.
    bundle_state.loaded_bundles.clear()
