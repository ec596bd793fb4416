"""The large tier (benchmarks/large): 4-9 GB inputs, file convention, README table, CPU forward, fullgraph.

Nothing here allocates a large tensor: realistic sizes are measured on the meta device
(benchmarks/suite_info.py's build/footprint), and forward passes run at each file's SMALL sizes.
"""

import functools
import re
import sys

import pytest
import torch

from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import suite_info  # noqa: E402

LARGE = ROOT / "benchmarks/large"
FILES = suite_info.problem_files(LARGE, levels=("level1",))
README = (LARGE / "README.md").read_text()
MIN_INPUT, MAX_INPUT = 4.0e9, 9.0e9  # bytes per input tensor
MAX_TOTAL = 56e9  # inputs + parameters + outputs: ~40% of one H200's 141 GB
GB = 1e9

# File-name substrings the tier must cover, each by at least one file.
FAMILIES = {
    "softmax": ("softmax",),
    "log_softmax": ("log_softmax",),
    "normalize": ("normalize",),
    "instance norm": ("instance_norm",),
    "group norm": ("group_norm",),
    "rms norm": ("rms_norm",),
    "layer norm": ("layer_norm",),
    "pool": ("pool",),
    "arg-reduction": ("argmax", "argmin"),
    "sum": ("sum_",),
    "cumsum": ("cumsum",),
}


def _ids(paths):
    return [p.stem for p in paths]


@functools.lru_cache(maxsize=None)
def _footprint(path):
    return suite_info.footprint(suite_info.load(path))  # meta device: shapes and dtypes, no memory


def _readme_rows():
    """{stem: (input_gb, output_gb)} from the README's table."""
    rows = {}
    for m in re.finditer(r"^\| (\w+) \|[^\n]*\| ([\d.]+) \| ([\d.]+) \|$", README, flags=re.M):
        rows[m.group(1)] = (float(m.group(2)), float(m.group(3)))
    return rows


def test_tier_covers_the_families():
    stems = [p.stem for p in FILES]
    assert len(stems) >= 12, stems
    assert len(set(stems)) == len(stems)
    for family, needles in FAMILIES.items():
        assert any(n in s for s in stems for n in needles), f"no {family} problem in benchmarks/large/level1"
    # The arg-reductions: both argmax and argmin.
    assert any("argmax" in s for s in stems) and any("argmin" in s for s in stems)


def test_readme_lists_exactly_the_files():
    assert set(_readme_rows()) == {p.stem for p in FILES}


@pytest.mark.parametrize("path", FILES, ids=_ids(FILES))
def test_convention_and_real_size(path):
    module = suite_info.load(path)
    for name in ("Model", "get_inputs", "get_init_inputs", "SMALL"):
        assert hasattr(module, name), f"{path.name} lacks {name}"
    assert module.__doc__ and module.__doc__.strip(), f"{path.name} has no docstring"
    assert "large tier" in module.__doc__.lower()
    assert isinstance(module.SMALL, dict) and module.SMALL
    for name in module.SMALL:
        assert name.isupper() and hasattr(module, name), f"SMALL names {name}"

    model, inputs = suite_info.build(module, device="meta")
    tensors = [x for x in inputs if isinstance(x, torch.Tensor)]
    assert tensors
    for x in tensors:
        assert x.device.type == "meta"
        assert MIN_INPUT <= x.nbytes <= MAX_INPUT, f"input {tuple(x.shape)} is {x.nbytes / GB:.2f} GB"
    fp = _footprint(path)
    assert fp["inputs"] + fp["outputs"] <= MAX_TOTAL
    assert suite_info.total(fp) <= MAX_TOTAL
    assert fp["outputs"] <= max(t.nbytes for t in tensors), "output larger than the input"
    want = "bfloat16" if "bf16" in path.stem else "float32"
    assert fp["dtype"] == want, f"float inputs are {fp['dtype']}, name says {want}"
    # The README's numbers follow the code.
    gb_in, gb_out = _readme_rows()[path.stem]
    assert abs(gb_in - fp["inputs"] / GB) <= 0.01
    assert abs(gb_out - fp["outputs"] / GB) <= 0.001


@pytest.mark.parametrize("path", FILES, ids=_ids(FILES))
def test_small_forward_and_fullgraph(path):
    module = suite_info.shrink(suite_info.load(path))
    small = suite_info.footprint(module)
    assert suite_info.total(small) < 4 * 2**20, "SMALL does not shrink the problem to a CPU size"

    model, inputs = suite_info.build(module)
    tensors = [x for x in inputs if isinstance(x, torch.Tensor)]
    for x in tensors:
        assert x.device.type == "cpu"
        assert torch.count_nonzero(x) > 0, "an input is all zeros"
        assert not torch.all(x == x.flatten()[0]), "an input is constant"
    before = [x.clone() for x in tensors]
    with torch.no_grad():
        out = model(*inputs)
        again = model(*inputs)
    outs = suite_info._tensors(out)
    assert outs, "forward returned no tensor"
    for a, b in zip(tensors, before):
        assert torch.equal(a, b), "forward wrote into an input"
    for o, o2 in zip(outs, suite_info._tensors(again)):
        if o.is_floating_point():
            assert torch.isfinite(o.float()).all(), "non-finite output at reduced size"
        assert torch.equal(o, o2), "forward is not deterministic"
    assert any(not torch.all(o == o.flatten()[0]) for o in outs if o.numel() > 1), "constant output"

    # One graph: dynamo traces the whole forward with fullgraph=True (a graph break raises).
    torch._dynamo.reset()
    compiled = torch.compile(model, fullgraph=True, backend="eager")
    with torch.no_grad():
        traced = compiled(*inputs)
    for o, t in zip(outs, suite_info._tensors(traced)):
        assert o.shape == t.shape and o.dtype == t.dtype
        if o.is_floating_point():
            torch.testing.assert_close(t, o)
        else:
            assert torch.equal(t, o)
    torch._dynamo.reset()
