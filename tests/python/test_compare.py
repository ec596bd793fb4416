"""The worker's comparison rules (compare.py) on constructed tensors: the elementwise rule G2
uses, the scaled rule of the model-level gates, and the rounding-level criterion that lets G2
pass a changed summation order only on condition of G3's float64 comparison."""

import pytest
import torch

from kernelopt.worker.measure import compare as cmp


def prefix_sums(n=200_000, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, generator=g, dtype=torch.float64).cumsum(0)


def test_reordered_prefix_sum_is_rounding_level_not_elementwise_close():
    # The same prefix sums in float32, accumulated in two orders: where the running sum crosses zero
    # its partial sums are large, so the elementwise rule fails there on pure rounding.
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 4096, generator=g)
    seq = x.reshape(-1).cumsum(0)
    blocked = (x.cumsum(1) + torch.nn.functional.pad(x.sum(1).cumsum(0)[:-1], (1, 0))[:, None]).reshape(-1)
    c = cmp.compare_tensor(blocked, seq)
    assert c["max_abs"] > 0
    assert c["rounding_ok"] and c["scaled_ok"]
    assert c["max_rel"] <= cmp.ROUNDING_FRACTION * c["rtol"]
    tight = cmp.compare_tensor(blocked, seq, {torch.float32: (0.0, 1e-4)})
    assert not tight["ok"] and tight["rounding_ok"]


def test_rounding_criterion_rejects_errors_beyond_a_tenth_of_rtol_and_nan_mismatches():
    want = prefix_sums().float()
    scale = float(want.abs().max())
    small = want + 0.05 * 1e-4 * scale  # half the rounding bound
    large = want + 0.5 * 1e-4 * scale  # within the scaled rule, five times the rounding bound
    assert cmp.compare_tensor(small, want)["rounding_ok"]
    c = cmp.compare_tensor(large, want)
    assert c["scaled_ok"] and not c["rounding_ok"] and not c["ok"]
    nan = small.clone()
    nan[7] = float("nan")
    assert not cmp.compare_tensor(nan, want)["rounding_ok"]


def test_compare_args_reports_rounding_only_when_every_mismatch_is_rounding_level():
    want = prefix_sums().float()
    scale = float(want.abs().max())
    close = want + 0.05 * 1e-4 * scale
    exact = torch.arange(10.0)
    r = cmp.compare_args([close, exact], [want, exact.clone()], {torch.float32: (0.0, 1e-4)})
    assert not r["ok"] and r["rounding_only"]
    r = cmp.compare_args([close, exact + 1], [want, exact.clone()], {torch.float32: (0.0, 1e-4)})
    assert not r["ok"] and not r["rounding_only"]
    r = cmp.compare_args([want.clone()], [want])
    assert r["ok"] and not r["rounding_only"]


def test_a_device_over_its_soft_target_still_compares_in_large_slices(monkeypatch):
    # Over the soft target the plan's room is 0; slices of the 1K floor made a 6 GB comparison take
    # minutes. A sixteenth of the target stays available to a comparison, within the hard budget.
    from kernelopt.worker.measure import memory

    monkeypatch.setattr(memory, "room", lambda: 0)
    monkeypatch.setattr(memory, "target", lambda: 32 << 30)
    monkeypatch.setattr(memory, "free", lambda: 100 << 30)
    assert cmp.slice_elements(48) >= 1 << 24
    monkeypatch.setattr(memory, "free", lambda: 1 << 20)  # the hard budget still bounds it
    assert cmp.slice_elements(48) == (1 << 20) // 2 // 48


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64])
def test_self_comparison_reports_what_comparing_with_a_copy_reports(dtype):
    # The lean path compares a shared input with itself by identity: the record must be the one a
    # comparison with an equal copy gives (the whole path's), specials and all.
    g = torch.Generator().manual_seed(3)
    w = (torch.randn(257, 33, generator=g) * 50).to(dtype)
    if dtype.is_floating_point:
        w[3, 4], w[7, 1], w[9, 9] = float("nan"), float("inf"), -float("inf")
    assert cmp.self_comparison(w) == cmp.compare_tensor(w.clone(), w)


def test_an_inf_against_the_largest_finite_value_is_rounding_level_only():
    """A long bf16 product of special values, taken in two orders: the same true value just past bfloat16's
    largest finite one rounds to inf in one order and to that value in the other. Rounding-level (G2 then
    rests on the float64 rule), never `ok`; an inf against a value far from the edge, of the other sign, or
    a NaN is no rounding."""
    top = torch.finfo(torch.bfloat16).max
    g = torch.Generator().manual_seed(3)
    want = (torch.rand(4096, generator=g) * 100).to(torch.bfloat16)
    want[10], want[20] = float("inf"), float("-inf")
    got = want.clone()
    got[10], got[20] = top, -top
    c = cmp.compare_tensor(got, want)
    assert not c["ok"] and not c["inf_positions_match"]
    assert c["infs_at_overflow"] and c["rounding_ok"]
    assert cmp.compare_tensor(want, got)["rounding_ok"]  # the candidate overflowed where the original did not
    for value in (1e30, -top, float("nan")):
        bad = got.clone()
        bad[10] = value
        c = cmp.compare_tensor(bad, want)
        assert not c["rounding_ok"] and not c["ok"], value
    flipped = want.clone()
    flipped[10] = float("-inf")
    assert not cmp.compare_tensor(flipped, want)["rounding_ok"]
