"""The few-rows tier (benchmarks/few_rows): file convention, real sizes on the meta device, and a forward at each
file's SMALL sizes on the CPU. Nothing here allocates a real-size tensor."""

import sys

import pytest
import torch

from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import suite_info  # noqa: E402

TIER = ROOT / "benchmarks/few_rows"
FILES = suite_info.problem_files(TIER, levels=("level1",))
MIN_INPUT, MAX_INPUT = 100e6, 2e9  # bytes per input tensor: real sizes, one job on the GPU


def test_tier_has_the_shapes_the_split_was_built_for():
    stems = [p.stem for p in FILES]
    assert len(stems) >= 6, stems
    for needle in ("softmax_", "log_softmax", "layer_norm", "rms_norm", "instance_norm", "dim0"):
        assert any(needle in s for s in stems), needle


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_convention_real_size_and_small_forward(path):
    module = suite_info.load(path)
    for name in ("Model", "get_inputs", "get_init_inputs", "SMALL"):
        assert hasattr(module, name), f"{path.name} lacks {name}"
    assert module.__doc__ and module.__doc__.strip()
    _, inputs = suite_info.build(module, device="meta")
    for x in inputs:
        assert MIN_INPUT <= x.nbytes <= MAX_INPUT, f"input {tuple(x.shape)} is {x.nbytes / 1e9:.2f} GB"
        assert ("bf16" in path.stem) == (x.dtype == torch.bfloat16)

    small = suite_info.shrink(suite_info.load(path))
    model, inputs = suite_info.build(small)
    with torch.no_grad():
        out, again = model(*inputs), model(*inputs)
    assert out.numel() > 1 and torch.isfinite(out.float()).all()
    assert torch.equal(out, again)
    assert not torch.all(out == out.flatten()[0]), "constant output"
