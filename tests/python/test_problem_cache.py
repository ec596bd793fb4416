"""The worker rebuilds a bundle's problem (weights and inputs on the CPU under fixed seeds) once and
hands out fresh copies: a run that writes to its inputs or buffers leaves the next run untouched."""

import json

import pytest
import torch
from conftest import CORPUS

from kernelopt.worker import bundle_state


def _state(name="conv_bn_relu"):
    d = CORPUS / name
    meta = json.loads((d / "meta.json").read_text())
    return bundle_state.BundleState(d, meta, "cpu", [], [])


@pytest.fixture
def builds(monkeypatch):
    """The problem rebuilds the worker makes, counted."""
    made = []
    real = bundle_state.rebuild_problem
    monkeypatch.setattr(bundle_state, "rebuild_problem", lambda *a: made.append(a) or real(*a))
    return made


def test_built_once_and_every_call_gets_fresh_inputs_and_buffers(builds):
    state = _state()
    model, inputs = bundle_state.problem_of(state)
    first = inputs[0].clone()
    buffers = {n: b.clone() for n, b in model.named_buffers()}
    assert buffers and first.abs().sum() > 0  # a model with buffers, inputs that are not zeros
    inputs[0].mul_(-3.0)
    for b in model.buffers():
        b.add_(1)
    model2, inputs2 = bundle_state.problem_of(state)
    assert model2 is model and len(builds) == 1
    assert torch.equal(inputs2[0], first)
    for n, b in model2.named_buffers():
        assert torch.equal(b, buffers[n]), n


def test_float64_is_a_converted_copy(builds):
    state = _state()
    base, _ = bundle_state.problem_of(state)
    up, up_inputs = bundle_state.problem_of(state, torch.float64)
    assert next(up.parameters()).dtype == torch.float64 and up_inputs[0].dtype == torch.float64
    assert next(base.parameters()).dtype == torch.float32  # the baseline's model is untouched
    assert len(builds) == 1
    with torch.no_grad():
        want = base(*bundle_state.problem_of(state)[1]).double()
        got = bundle_state.eager_model(state, torch.float64)
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)


def test_references_are_computed_once_per_bundle(monkeypatch):
    runs = []
    monkeypatch.setattr(bundle_state, "run_model", lambda state, modules=None: runs.append("baseline") or [1.0])
    monkeypatch.setattr(bundle_state, "eager_model", lambda state, dtype=None: runs.append(str(dtype)) or [2.0])
    # The float64 reference of a module bundle is its own run (the model upcast, on the device or the host).
    monkeypatch.setattr(bundle_state, "_fp64_reference", lambda state: runs.append("torch.float64") or [2.0])
    state = _state()
    for _ in range(3):
        assert bundle_state.reference(state, "baseline") == [1.0]
        assert bundle_state.reference(state, "eager") == [2.0]
        assert bundle_state.reference(state, "fp64") == [2.0]
    assert sorted(runs) == ["None", "baseline", "torch.float64"]
    # Another bundle state (another problem) computes its own.
    bundle_state.reference(_state(), "baseline")
    assert runs.count("baseline") == 2
