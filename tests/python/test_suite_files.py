"""The problem files of benchmarks/suite: convention, sizes, README table, and a reduced-size CPU forward.

Nothing here allocates a realistic-size tensor: footprints come from the meta device, and the forward
pass runs at each file's SMALL sizes (see benchmarks/suite/README.md, "File convention").
"""

import functools
import re
import sys

import pytest
import torch

from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import suite_info  # noqa: E402

FILES = suite_info.problem_files()
README = (ROOT / "benchmarks/suite/README.md").read_text()
MB = 2**20


def _ids(paths):
    return [f"{p.parent.name}/{p.stem}" for p in paths]


@functools.lru_cache(maxsize=None)
def _realistic_footprint(path):
    return suite_info.footprint(suite_info.load(path))  # meta device: shapes and dtypes, no memory


def _readme_rows():
    """{stem: (min_mb, eager_mb)} from the README's problem tables."""
    rows = {}
    for m in re.finditer(r"^\| (\w+) \|.*\| (\d+) \| (\d+) \|$", README, flags=re.M):
        rows[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    return rows


def test_suite_has_the_promised_problems():
    by_level = {lv: [p for p in FILES if p.parent.name == lv] for lv in suite_info.LEVELS}
    assert len(by_level["level1"]) >= 30
    assert len(by_level["level2"]) >= 20
    assert len(by_level["level3"]) >= 10
    assert sum("bf16" in p.stem for p in by_level["level2"]) >= 6
    assert len({p.stem for p in FILES}) == len(FILES), "two problems share a name"


def test_readme_lists_exactly_the_files():
    assert set(_readme_rows()) == {p.stem for p in FILES}


@pytest.mark.parametrize("path", FILES, ids=_ids(FILES))
def test_realistic_footprint(path):
    module = suite_info.load(path)
    for name in ("Model", "get_inputs", "get_init_inputs", "SMALL"):
        assert hasattr(module, name), f"{path.name} lacks {name}"
    assert module.__doc__ and module.__doc__.strip(), f"{path.name} has no docstring"
    fp = _realistic_footprint(path)
    # Realistic for one H200: some tensor of tens of MB or more, the whole problem well inside 141 GB.
    assert fp["largest"] >= 16 * MB, f"largest tensor {fp['largest'] / MB:.1f} MB"
    assert suite_info.total(fp) <= 8 * 2**30
    assert fp["eager"] <= 64 * 2**30
    # The name states the precision: bf16 problems feed bf16, the rest fp32.
    want = "bfloat16" if "bf16" in path.stem else "float32"
    assert fp["dtype"] in (want, ""), f"float inputs are {fp['dtype']}, name says {want}"
    # The README table states these numbers; it must follow the code.
    min_mb, eager_mb = _readme_rows()[path.stem]
    assert abs(min_mb - suite_info.total(fp) / MB) <= max(1.0, 0.01 * min_mb)
    assert abs(eager_mb - fp["eager"] / MB) <= max(1.0, 0.10 * eager_mb)


@pytest.mark.parametrize("path", FILES, ids=_ids(FILES))
def test_small_forward(path):
    real = _realistic_footprint(path)
    module = suite_info.shrink(suite_info.load(path))
    small = suite_info.footprint(module)
    assert suite_info.total(small) < min(suite_info.total(real), 4 * MB), "SMALL does not shrink the problem"

    model, inputs = suite_info.build(module)
    tensors = [x for x in inputs if isinstance(x, torch.Tensor)]
    assert tensors, "get_inputs() returned no tensor"
    for x in tensors:
        assert x.device.type == "cpu"
        assert torch.count_nonzero(x) > 0, "an input is all zeros"
        if x.is_floating_point():
            assert torch.isfinite(x).all()
    if path.parent.name != "level1":  # weights are in the problem's precision (small fp32 pieces allowed)
        want = torch.bfloat16 if "bf16" in path.stem else torch.float32
        params = [p for p in model.parameters() if p.is_floating_point()]
        assert sum(p.numel() for p in params if p.dtype == want) >= 0.9 * sum(p.numel() for p in params)
    assert not any(isinstance(m, torch.nn.Dropout) for m in model.modules())

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
        assert torch.equal(o, o2), "forward is not deterministic (randomness in forward?)"
    # Not a constant: some output varies (catches a model that ignores its input).
    vectors = [o for o in outs if o.numel() > 1]
    assert not vectors or any(not torch.all(o == o.flatten()[0]) for o in vectors), "constant output"
